"""The operators benchmark measures both ways on a small complex (no timing
assertions)."""
from torch_geometric_san.sparse import SimplicialOperators


def test_step_times_of_both_ways(operators, monkeypatch):
    # 'per layer' converts the earlier arguments in every layer (4 per step),
    # 'shared' passes one value to all of them (no conversion).
    conversions = []
    convert = SimplicialOperators.from_inputs.__func__

    def counted(cls, *args, **kwargs):
        conversions.append(cls)
        return convert(cls, *args, **kwargs)

    monkeypatch.setattr(SimplicialOperators, 'from_inputs', classmethod(counted))
    data = operators.delaunay(60)
    times = operators.step_times(data, 1, steps=2)
    assert set(times) == {'shared', 'per layer'}
    assert all(t > 0 for t in times.values())
    assert len(conversions) == 2 * 4
