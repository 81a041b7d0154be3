import io

import numpy as np
import pytest
import scipy.linalg
import torch
from torch_geometric.data import Batch, Data
from torch_geometric.loader import DataLoader

from torch_geometric_san.data import (MixedOrderError, SimplicialComplexData,
                                      batch_complexes, pad_order)

K = 2


def with_features(data, seed):
    gen = torch.Generator().manual_seed(seed)
    data.x_0 = torch.randn(data.num_simplices(0), 3, generator=gen)
    data.x_1 = torch.randn(data.num_simplices(1), 2, generator=gen)
    return data


@pytest.fixture
def complexes(annulus, hollow_tetrahedron, rips_tree):
    out = [
        SimplicialComplexData.from_simplices(annulus, close=True),
        SimplicialComplexData.from_simplex_tree(rips_tree(5, 30, K, 0.3)),
        SimplicialComplexData.from_simplices([[0, 1], [1, 2], [0, 2]], order=K),
        SimplicialComplexData.from_simplices([], num_nodes=1, order=K),
        SimplicialComplexData.from_simplices(hollow_tetrahedron, close=True),
    ]
    return [with_features(data, seed) for seed, data in enumerate(out)]


def block_diagonal(complexes):
    r"""The disjoint union, built from scratch: simplices shifted by vertex offsets."""
    offsets = np.cumsum([0] + [data.num_nodes for data in complexes])
    blocks = [data[f'simplices_{k}'].numpy() + offset
              for k in range(1, K + 1) for data, offset in zip(complexes, offsets)]
    blocks = sorted(blocks, key=lambda b: b.shape[1])  # order by order, stable
    return SimplicialComplexData.from_simplices(
        [b for b in blocks if len(b)], num_nodes=int(offsets[-1]), order=K,
        x_0=torch.cat([data.x_0 for data in complexes]),
        x_1=torch.cat([data.x_1 for data in complexes]))


def test_batch_equals_block_diagonal_complex(complexes):
    batch = next(iter(DataLoader(complexes, batch_size=len(complexes))))
    union = block_diagonal(complexes)
    assert set(batch.keys()) == set(union.keys()) | {'batch', 'ptr'}
    for key in union.keys():
        if key == 'num_nodes':
            assert batch.num_nodes == union.num_nodes
        elif key.startswith('spectrum'):  # one row of eigenvalues per complex
            assert torch.equal(batch[key], torch.cat([d[key] for d in complexes])), key
        elif not key.startswith('hodge_weight'):
            assert torch.equal(batch[key], union[key]), key
    # Each complex keeps its own Hodge normalisation: per complex, the batch's weights
    # are the union's up to one positive factor (the ratio of largest eigenvalues).
    for k in range(K + 1):
        index, weight = batch.hodge_laplacian(k)
        assert torch.equal(index, union[f'hodge_index_{k}'])
        owner = batch.simplex_batch(k)[index[1]]
        ratio = weight / union[f'hodge_weight_{k}']
        for i in owner.unique():
            assert torch.allclose(ratio[owner == i], ratio[owner == i][0])
            assert ratio[owner == i][0] > 0


def test_simplex_batch_per_order(complexes):
    batch = next(iter(DataLoader(complexes, batch_size=len(complexes))))
    for k in range(K + 1):
        sizes = torch.tensor([data.num_simplices(k) for data in complexes])
        expected = torch.repeat_interleave(torch.arange(len(complexes)), sizes)
        assert torch.equal(batch.simplex_batch(k), expected)
        assert batch.num_simplices(k) == int(sizes.sum())


def test_to_data_list_gives_back_the_originals(complexes, assert_data_equal):
    batches = list(DataLoader(complexes, batch_size=2))
    assert len(batches) == 3
    recovered = [data for batch in batches for data in batch.to_data_list()]
    for original, data in zip(complexes, recovered, strict=True):
        assert_data_equal(data, original)


def test_batch_to_device_and_save_load(complexes, device, assert_data_equal):
    batch = next(iter(DataLoader(complexes, batch_size=len(complexes)))).to(device)
    buffer = io.BytesIO()
    torch.save(batch, buffer)
    buffer.seek(0)
    loaded = torch.load(buffer)  # the default weights_only=True: no code runs
    assert type(loaded) is type(batch)
    for k in range(K + 1):
        assert loaded.simplex_batch(k).device.type == device
        assert torch.equal(loaded.simplex_batch(k), batch.simplex_batch(k))
    for original, data in zip(complexes, loaded.to_data_list(), strict=True):
        assert_data_equal(data.to('cpu'), original)


class _Stacked(SimplicialComplexData):
    # PyG's recipe for an attribute stacked along a new dimension in a batch.
    def __cat_dim__(self, key, value, *args, **kwargs):
        return None if key == 'stats' else super().__cat_dim__(key, value, *args,
                                                                **kwargs)


def test_a_batch_of_a_subclass_keeps_its_class_when_pickled():
    # A batch was pickled as a batch of SimplicialComplexData (torch.save, and the
    # loader's worker processes): its examples lost the subclass and its rules
    # ('stats' came back as [1, 3] instead of [3]). PyG keeps a Data subclass.
    import pickle
    complexes = [_Stacked.from_simplices([[0, 1, 2]], close=True,
                                         stats=torch.full((3, ), float(i)))
                 for i in range(2)]
    batch = Batch.from_data_list(complexes)
    assert batch.stats.shape == (2, 3)
    again = pickle.loads(pickle.dumps(batch))
    assert type(again) is type(batch) and isinstance(again.get_example(1), _Stacked)
    assert torch.equal(again.get_example(1).stats, complexes[1].stats)
    loaded = next(iter(DataLoader(complexes, batch_size=2, num_workers=1)))
    assert isinstance(loaded, _Stacked) and loaded.get_example(0).stats.shape == (3, )
    # A weights-only load names the subclass to allow-list, with its batch class,
    # rather than giving a batch of another class.
    buffer = io.BytesIO()
    torch.save(batch, buffer)
    buffer.seek(0)
    with pytest.raises(Exception, match="_Stacked"):
        torch.load(buffer, weights_only=True)  # (the default from PyTorch 2.6)
    buffer.seek(0)
    if hasattr(torch.serialization, 'safe_globals'):  # (from PyTorch 2.5)
        with torch.serialization.safe_globals([_Stacked, type(batch)]):
            assert type(torch.load(buffer, weights_only=True)) is type(batch)


# Complexes of different orders -----------------------------------------------------

def mixed_orders(laplacians=True):
    r"""An edge (order 1), a triangle (order 2), a tetrahedron (order 3) and isolated
    vertices (order 0), each with features on its vertices."""
    out = [
        SimplicialComplexData.from_simplices([[0, 1]], laplacians=laplacians),
        SimplicialComplexData.from_simplices([[0, 1, 2]], close=True,
                                             laplacians=laplacians),
        SimplicialComplexData.from_simplices([[0, 1, 2, 3]], close=True,
                                             laplacians=laplacians),
        SimplicialComplexData.from_simplices([], num_nodes=2, laplacians=laplacians),
    ]
    for seed, data in enumerate(out):
        data.x_0 = torch.randn(data.num_nodes, 2,
                               generator=torch.Generator().manual_seed(seed))
    return out


def rebuilt(data, order):
    r"""``data`` built again by the constructor with the given ``order``."""
    simplices = [data[f'simplices_{k}'] for k in range(1, data.order + 1)]
    return SimplicialComplexData.from_simplices(
        [s for s in simplices if len(s)], num_nodes=data.num_nodes, order=order,
        x_0=data.x_0, laplacians='hodge_index_0' in data._store)


LAPLACIANS = pytest.mark.parametrize('laplacians', [True, False],
                                     ids=['laplacians', 'boundaries-only'])


@LAPLACIANS
@pytest.mark.parametrize('order', [3, 4])
def test_pad_order_equals_the_constructor_with_order(order, laplacians,
                                                     assert_data_equal):
    for data in mixed_orders(laplacians):
        before = {key: value.clone() for key, value in data.items()
                  if isinstance(value, torch.Tensor)}
        padded = pad_order(data, order)
        assert_data_equal(padded, rebuilt(data, order))
        # the input is left as it was
        assert set(data.keys()) == set(before) | {'num_nodes'}
        assert all(torch.equal(data[key], value) for key, value in before.items())


@LAPLACIANS
@pytest.mark.parametrize('reverse', [False, True], ids=['lower-first', 'higher-first'])
def test_batch_complexes_of_different_orders(reverse, laplacians, assert_data_equal):
    complexes = mixed_orders(laplacians)[::-1] if reverse else mixed_orders(laplacians)
    batch = batch_complexes(complexes)
    expected = Batch.from_data_list([rebuilt(data, 3) for data in complexes])
    assert batch.order == 3 and batch.num_graphs == 4
    for k in range(4):
        assert torch.equal(batch.simplex_batch(k), expected.simplex_batch(k))
        assert torch.equal(batch.simplex_batch(k), torch.repeat_interleave(
            torch.arange(4), torch.tensor([data.num_simplices(k) if k <= data.order
                                           else 0 for data in complexes])))
        for accessor in ('boundary', 'down_laplacian', 'up_laplacian',
                         'hodge_laplacian')[:4 if laplacians else 1]:
            for got, want in zip(getattr(batch, accessor)(k),
                                 getattr(expected, accessor)(k)):
                assert torch.equal(got, want), (accessor, k)
    for data, got in zip(complexes, batch.to_data_list(), strict=True):
        assert_data_equal(got, rebuilt(data, 3))


def test_batch_complexes_pads_the_features_of_orders_without_simplices():
    # (a complex of lower order cannot be given x_2: the constructor refuses it)
    edge, triangle, _, _ = mixed_orders()
    triangle.x_1 = torch.randn(3, 4, dtype=torch.float64)
    triangle.x_2 = torch.randn(1, 5, dtype=torch.float64)
    edge.x_1 = torch.randn(1, 4, dtype=torch.float64)
    for complexes in ([edge, triangle], [triangle, edge]):
        batch = batch_complexes(complexes)
        assert torch.equal(batch.x_2, triangle.x_2) and batch.x_2.dtype == torch.float64
        where = complexes.index(triangle)
        assert torch.equal(batch.simplex_batch(2), torch.tensor([where]))
    assert 'x_2' not in edge  # the inputs are left as they were
    # a complex that has k-simplices but no x_k is still refused
    other = SimplicialComplexData.from_simplices(
        [[0, 1, 2]], close=True, x_1=torch.randn(3, 4, dtype=torch.float64))
    other.x_0 = triangle.x_0
    with pytest.raises(ValueError, match=r"data_list\[1\] has no \['x_2'\]"):
        batch_complexes([triangle, other])


def test_batch_complexes_as_collate_fn_of_a_torch_loader():
    complexes = mixed_orders()
    loader = torch.utils.data.DataLoader(complexes, batch_size=3,
                                         collate_fn=batch_complexes)
    first, second = list(loader)
    assert (first.order, first.num_graphs) == (3, 3)
    assert (second.order, second.num_graphs) == (0, 1)


def test_pyg_loader_refuses_the_top_order_it_truncated():
    # PyG's collation keeps the attributes of the first complex: an edge first leaves
    # out the triangles of the complexes after it, and the batch says so instead of
    # answering without them.
    edge, triangle, tetrahedron, _ = mixed_orders()
    batch = next(iter(DataLoader([edge, triangle, edge, tetrahedron], batch_size=4)))
    assert batch.order == 1
    for access in (lambda: batch.operators(1), lambda: batch.num_simplices(1),
                   lambda: batch.up_laplacian(1), lambda: batch.operators(0)):
        with pytest.raises(ValueError, match=r"complexes \[1, 3\] have an upper "
                           r"Laplacian of order 1: either they have 2-simplices.*"
                           r"batch_complexes"):
            access()
    # the same complexes padded to one order batch as they should
    padded = next(iter(DataLoader([pad_order(data, 3) for data in
                                   (edge, triangle, edge, tetrahedron)], batch_size=4)))
    assert padded.operators(2).up.shape == (5, 5)
    assert padded.num_simplices(3) == 1


def test_batch_complexes_of_sub_complexes_sampled_at_their_top_order(dense):
    # A sub-complex sampled at its top order keeps the restriction of its complex's
    # upper Laplacian there, which a batch of that order would take for a member
    # whose higher orders PyG's collation left out: PyG's loader refuses the batch
    # naming both causes, and batch_complexes batches it one order higher.
    from torch_geometric_san.loader import simplicial_subcomplex
    triangle = SimplicialComplexData.from_simplices([[0, 1, 2], [1, 2, 3]], close=True)
    subs = [simplicial_subcomplex(triangle, 1, torch.tensor(ids))
            for ids in ([0], [1, 2], [4])]
    assert all(sub.order == 1 and sub.up_laplacian(1)[0].size(1) > 0 for sub in subs)
    plain = next(iter(DataLoader(subs, batch_size=3)))
    with pytest.raises(ValueError, match=r"complexes \[0, 1, 2\] have an upper "
                       r"Laplacian of order 1.*sub-complexes sampled at their top "
                       r"order.*batch_complexes.*pad_order\(data, 2\)"):
        plain.operators(1)
    batch = batch_complexes(subs)
    assert batch.order == 2 and batch.num_simplices(2) == 0
    for accessor in ('boundary', 'down_laplacian', 'up_laplacian', 'hodge_laplacian'):
        got = getattr(batch, accessor)(1)
        # (the boundary B_1 is [N_0, N_1], the Laplacians [N_1, N_1])
        shapes = [(sub.num_simplices(0 if accessor == 'boundary' else 1),
                   sub.num_simplices(1)) for sub in subs]
        blocks = [dense(*getattr(sub, accessor)(1), shape)
                  for sub, shape in zip(subs, shapes)]
        rows, cols = map(sum, zip(*shapes))
        np.testing.assert_array_equal(dense(*got, (rows, cols)),
                                      scipy.linalg.block_diag(*blocks), accessor)


def test_sub_complexes_sampled_at_and_below_the_top_batch_together():
    # A sub-complex sampled at the top order of its complex stored no upper
    # Laplacian there, one sampled below the top of its complex (of the same order)
    # an empty one: batch_complexes refused the pair for their different keys.
    from torch_geometric_san.loader import simplicial_subcomplex
    edges = SimplicialComplexData.from_simplices([[0, 1], [1, 2]])
    triangle = SimplicialComplexData.from_simplices([[0, 1, 2], [2, 3]], close=True)
    at_top = simplicial_subcomplex(edges, 1, torch.tensor([0]))
    below = simplicial_subcomplex(triangle, 1, torch.tensor([triangle.simplices_1
                                                             .tolist().index([2, 3])]))
    assert at_top.up_index_1.shape == (2, 0) and at_top.up_weight_1.shape == (0, )
    assert below.up_index_1.shape == (2, 0) and at_top.validate()
    for pair in ([at_top, below], [below, at_top]):
        batch = batch_complexes(pair)
        assert batch.order == 1 and batch.operators(1).up.nnz == 0


def test_sparse_attributes_joined_block_diagonally_batch():
    # PyG joins a sparse adjacency block-diagonally (its cat dim a tuple), which
    # failed in batch_complexes' checks with a bare TypeError.
    complexes = [_triangle(), _triangle()]
    for data in complexes:
        data.adj_t = torch.eye(3).to_sparse()
    batch = batch_complexes(complexes)
    assert batch.adj_t.shape == (6, 6)
    assert torch.equal(batch.adj_t.to_dense(), torch.eye(6))


def test_pyg_loader_refuses_a_higher_order_before_a_lower_one():
    # PyG's collation looks up the first complex's attributes in every complex: a
    # triangle first asks an edge for its 2-simplices, and the edge says why (a
    # ValueError, and a KeyError as from PyG's own storage)
    edge, triangle, _, _ = mixed_orders()
    for error in (ValueError, KeyError, MixedOrderError):
        with pytest.raises(error, match=r"^this complex has no 2-simplices, so no "
                           r"attribute '\w+_2'.*pad_order.*batch_complexes$"):
            next(iter(DataLoader([triangle, edge], batch_size=2)))
    # a missing attribute of the complex's own orders is PyG's plain KeyError, and
    # lookups that expect misses answer as before
    with pytest.raises(KeyError) as info:
        edge['x_1']
    assert not isinstance(info.value, MixedOrderError)
    assert 'x_2' not in edge and edge.get('x_2') is None and not hasattr(edge, 'x_2')
    assert 'simplices_2' in triangle.clone() and 'simplices_2' not in edge.clone()


def test_pyg_loader_batch_of_lower_orders_without_loss_answers():
    # a member of higher order whose extra orders are empty loses nothing
    edge = SimplicialComplexData.from_simplices([[0, 1]])
    padded_edge = SimplicialComplexData.from_simplices([[1, 2]], order=2)
    batch = next(iter(DataLoader([edge, padded_edge], batch_size=2)))
    assert batch.order == 1
    assert batch.operators(1).down.shape == (2, 2)


def _triangle(**kwargs):
    return SimplicialComplexData.from_simplices([[0, 1, 2]], close=True, **kwargs)


def test_batch_complexes_leaves_out_excluded_attributes_of_any_complex():
    batch = batch_complexes([_triangle(y=torch.tensor([1])),
                             _triangle(y=torch.tensor([1]), mask=torch.ones(3))],
                            exclude_keys=['mask'])
    assert 'mask' not in batch and batch.y.tolist() == [1, 1]


def test_a_batch_without_its_spectra_is_refused(complexes):
    # Excluded from a batch, spectrum_k left scaled() to divide every complex's
    # Laplacians by the largest eigenvalue of the whole batch (validate() passed).
    loader = DataLoader(complexes[:2], batch_size=2, exclude_keys=['spectrum_1'])
    batch = next(iter(loader))
    with pytest.raises(ValueError, match="the batch has no 'spectrum_1' .*exclude_keys"):
        batch.operators(1)
    with pytest.raises(ValueError, match="the batch has no 'spectrum_1'"):
        batch.validate()
    assert batch.operators(0) is not None and batch.operators(2) is not None
    # One complex without it computes its own, as before; so does a batch of one.
    single = complexes[0].clone()
    del single.spectrum_1
    assert single.validate()
    for data in (single, Batch.from_data_list([single])):
        assert torch.allclose(data.operators(1).up.scaled().to_dense(),
                              complexes[0].operators(1).up.scaled().to_dense())


BATCHING_CASES = {
    'pad-below-the-order': (pad_order, (SimplicialComplexData.from_simplices(
        [[0, 1, 2]], close=True), 1), {}, ValueError, "order must be at least 2, got 1"),
    'pad-order-bool': (pad_order, (SimplicialComplexData.from_simplices([[0, 1]]),
                                   True), {}, TypeError, "order must be an int, not bool"),
    'pad-a-graph': (pad_order, (Data(num_nodes=2), 2), {}, TypeError,
                    "data must be a SimplicialComplexData, not Data"),
    'pad-a-batch': (pad_order, (Batch.from_data_list(
        [SimplicialComplexData.from_simplices([[0, 1]])]), 2), {}, TypeError,
        "data is a batch"),
    'batch-nothing': (batch_complexes, ([], ), {}, ValueError, "data_list is empty"),
    'batch-one-complex': (batch_complexes, (SimplicialComplexData.from_simplices(
        [[0, 1]]), ), {}, TypeError, "data_list must be a list of complexes, not "
        "SimplicialComplexData"),
    'batch-a-number': (batch_complexes, (3, ), {}, TypeError,
                       "data_list must be a list of complexes, not int"),
    'batch-a-graph': (batch_complexes, ([SimplicialComplexData.from_simplices([[0, 1]]),
                                         Data(num_nodes=3)], ), {}, TypeError,
                      r"data_list\[1\] must be a SimplicialComplexData, not Data"),
    'batch-other-widths': (batch_complexes, ([_triangle(x_1=torch.zeros(3, 2)),
                                              _triangle(x_1=torch.zeros(3, 4))], ), {},
                           ValueError, r"'x_1' of data_list\[1\] is torch.float32 of "
                           r"shape \[3, 4\] but that of data_list\[0\] is "
                           r"torch.float32 of shape \[3, 2\]"),
    'batch-missing-attribute': (batch_complexes, ([_triangle(x_1=torch.zeros(3, 2)),
                                                   _triangle()], ), {}, ValueError,
                                r"data_list\[1\] has no \['x_1'\], which "
                                r"data_list\[0\] has"),
    'batch-extra-attribute': (batch_complexes, ([_triangle(),
                                                 _triangle(x_1=torch.zeros(3, 2))], ),
                              {}, ValueError, r"data_list\[1\] has \['x_1'\], which "
                              r"data_list\[0\] has not \(they would be left out"),
    'batch-other-dtypes': (batch_complexes, ([_triangle(), _triangle(
        dtype=torch.float64)], ), {}, ValueError, "the operators of data_list\\[1\\] "
        "are torch.float64 but those of data_list\\[0\\] torch.float32"),
    'batch-exclude-a-str': (batch_complexes, ([_triangle(y=torch.tensor([1]))], ),
                            dict(exclude_keys='y_mask'), TypeError,
                            r"exclude_keys must be a list of attribute names, not str "
                            r"\(write \['y_mask'\]\)"),
    'batch-follow-an-int': (batch_complexes, ([_triangle()], ), dict(follow_batch=1),
                            TypeError, "follow_batch must be a list of attribute names, "
                            "not int"),
    'batch-exclude-ints': (batch_complexes, ([_triangle()], ), dict(exclude_keys=[5]),
                           TypeError, r"exclude_keys must hold attribute names \(strs\)"),
    'batch-other-label-dtype': (batch_complexes, ([_triangle(y=torch.tensor([1])),
                                                   _triangle(y=torch.tensor([1.0]))], ),
                                {}, ValueError, "'y' of data_list\\[1\\] is "
                                "torch.float32"),
}


@pytest.mark.parametrize('name', BATCHING_CASES)
def test_bad_batching_input(name, assert_rejected):
    assert_rejected(*BATCHING_CASES[name])


def test_a_batch_without_the_simplices_of_an_order_is_refused_by_name():
    # Excluded from a batch below the top order, simplices_1 read as "order k=1 out
    # of range for a complex of order 2"; at the top order the message did not name
    # exclude_keys.
    complexes = [_triangle(), _triangle()]
    batch = Batch.from_data_list(complexes, exclude_keys=['simplices_1'])
    with pytest.raises(ValueError, match="2-simplices but no 'simplices_1' .*exclude_keys"):
        batch.operators(1)
    with pytest.raises(ValueError, match="no 'simplices_1' .*exclude_keys"):
        batch.num_simplices(1)
    batch = Batch.from_data_list(complexes, exclude_keys=['simplices_2'])
    with pytest.raises(ValueError, match="drops those named in `exclude_keys`"):
        batch.operators(1)
    complex_ = _triangle()
    del complex_.simplices_1
    with pytest.raises(ValueError, match="2-simplices but no 'simplices_1' .*deleted"):
        complex_.operators(1)


def test_a_batch_made_into_one_complex_is_refused_by_its_spectra(complexes):
    # from_dict(batch.to_dict()) kept one spectrum row per complex; as one complex
    # every simplex read the first row, so scaled() divided each block by the first
    # complex's eigenvalue (SCNN's outputs several times too large), and validate()
    # passed.
    batch = next(iter(DataLoader(complexes[:2], batch_size=2)))
    merged = SimplicialComplexData.from_dict(batch.to_dict())
    with pytest.raises(ValueError, match=r"'spectrum_1' must have shape \[1, 2\].*"
                       r"got \[2, 2\].*to_data_list"):
        merged.operators(1)
    with pytest.raises(ValueError, match=r"'spectrum_0' must have shape \[1, 2\]"):
        merged.validate()
    batch.spectrum_1 = batch.spectrum_1[:1]
    with pytest.raises(ValueError, match=r"'spectrum_1' must have shape \[2, 2\].*each "
                       r"complex of the batch"):
        batch.validate()


@pytest.mark.parametrize('key', ['simplices_1', 'edge_index'])
@pytest.mark.parametrize('dtype', [torch.uint8, torch.int8, torch.int16, torch.uint16,
                                   torch.uint32])
@pytest.mark.parametrize('collate', ['batch_complexes', 'pyg'])
def test_ids_that_cannot_be_shifted_are_refused(key, dtype, collate, assert_rejected):
    # PyG's collate shifted them in their own dtype: the second path's edge (56, 57)
    # came out as (0, 1) in uint8; uint16 and uint32 failed inside torch.
    edges = torch.stack([torch.arange(99), torch.arange(1, 100)], 1)
    path = SimplicialComplexData.from_simplices(edges)
    path[key] = (edges if key == 'simplices_1' else edges.t()).to(dtype)
    function = batch_complexes if collate == 'batch_complexes' else Batch.from_data_list
    assert_rejected(function, ([path, path], ), {}, ValueError,
                    f"'{key}' holds ids in {dtype}, which batching shifts")


def test_narrow_ids_of_an_excluded_key_are_left_out():
    # (refused although they were not batched)
    path = SimplicialComplexData.from_simplices([[0, 1], [1, 2]])
    path.edge_index = torch.tensor([[0, 1], [1, 2]], dtype=torch.int16)
    batch = batch_complexes([path, path], exclude_keys=['edge_index'])
    assert 'edge_index' not in batch and batch.num_nodes == 6


def test_the_first_mismatched_attribute_by_name_is_named(assert_rejected):
    # The attributes were compared in the order of a set of their names, which
    # changes with Python's hash seed: another one was named in another run.
    complexes = [SimplicialComplexData.from_simplices([[0, 1]]) for _ in range(2)]
    for name in ('echo', 'alpha', 'delta', 'charlie', 'bravo'):
        complexes[0][name] = torch.zeros(1, 2)
        complexes[1][name] = torch.zeros(1, 3)
    assert_rejected(batch_complexes, (complexes, ), {}, ValueError,
                    "'alpha' of data_list\\[1\\] is torch.float32 of shape \\[1, 3\\]")
