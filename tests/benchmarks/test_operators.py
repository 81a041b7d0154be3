"""The operators benchmark measures its three ways on a small complex (no timing
assertions)."""
from torch_geometric_san.sparse import SimplicialOperators, SparseOperator


def test_step_times_of_the_three_ways(operators, monkeypatch):
    # 'per layer' converts the earlier arguments in every layer (4 per step),
    # 'shared' passes one value to all of them (no conversion), built anew per
    # step; 'kept' gets the same value at every step.
    conversions, structures = [], []
    convert = SimplicialOperators.from_inputs.__func__
    derive = SparseOperator._structure

    def counted(cls, *args, **kwargs):
        conversions.append(cls)
        return convert(cls, *args, **kwargs)

    def derived(op):
        structures.append(op)
        return derive(op)

    monkeypatch.setattr(SimplicialOperators, 'from_inputs', classmethod(counted))
    data = operators.delaunay(60)
    first = data.operators(1)
    monkeypatch.setattr(SparseOperator, '_structure', derived)
    times = operators.step_times(data, 1, steps=2)
    assert set(times) == {'shared', 'per layer', 'kept'}
    assert all(t > 0 for t in times.values())
    assert len(conversions) == 2 * 4
    assert data.operators(1) is first  # 'kept' used (and kept) this value
    # Its forms (attention neighbourhoods, shifted Hodge Laplacian) got their
    # compressed rows once, for the 2 steps of 4 layers.
    forms = [form for op in (first.up, first.down, first.hodge)
             for form in op._cache.values() if isinstance(form, SparseOperator)]
    assert len(forms) == 3
    assert [sum(op is form for op in structures) for form in forms] == [1, 1, 1]
