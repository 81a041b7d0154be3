"""LiftToRipsComplex and LiftToAlphaComplex: hand-checked clouds, invariances, options
and errors."""
import itertools
import math

import numpy as np
import pytest
import torch
from torch_geometric.data import Batch, Data
from torch_geometric.loader import DataLoader

from torch_geometric_san.data import SimplicialComplexData
from torch_geometric_san.transforms import LiftToAlphaComplex, LiftToRipsComplex

SQUARE = torch.tensor([[0., 0.], [1., 0.], [0., 1.], [1., 1.]])
TRIANGLE = torch.tensor([[0., 0.], [1., 0.], [0.5, math.sqrt(3) / 2]])


def simplices(data: SimplicialComplexData):
    return [data[f'simplices_{k}'].tolist() for k in range(1, data.order + 1)]


def random_cloud(seed: int, n: int = 30, dim: int = 2) -> torch.Tensor:
    return torch.from_numpy(np.random.default_rng(seed).random((n, dim)))


def test_rips_of_the_unit_square():
    sides = LiftToRipsComplex(max_edge_length=1.1)(Data(pos=SQUARE))
    assert simplices(sides) == [[[0, 1], [0, 2], [1, 3], [2, 3]], []]
    full = LiftToRipsComplex(max_edge_length=1.5, max_order=3)(Data(pos=SQUARE))
    assert simplices(full) == [
        [list(e) for e in itertools.combinations(range(4), 2)],
        [list(t) for t in itertools.combinations(range(4), 3)], [[0, 1, 2, 3]]]
    alone = LiftToRipsComplex(max_edge_length=0.5)(Data(pos=SQUARE))
    assert alone.num_nodes == 4 and simplices(alone) == [[], []]


def test_a_threshold_beyond_floats_takes_every_edge():
    # an int of 10**400 raised an OverflowError in float()
    assert simplices(LiftToRipsComplex(max_edge_length=10 ** 400)(Data(pos=SQUARE))) == \
        simplices(LiftToRipsComplex(max_edge_length=float('inf'))(Data(pos=SQUARE)))


def test_rips_matches_the_distances():
    pos = random_cloud(0)
    data = LiftToRipsComplex(max_edge_length=0.3, max_order=3)(Data(pos=pos))
    close = torch.cdist(pos, pos) <= 0.3
    for k in (1, 2, 3):
        expected = [list(s) for s in itertools.combinations(range(len(pos)), k + 1)
                    if all(close[i, j] for i, j in itertools.combinations(s, 2))]
        assert data[f'simplices_{k}'].tolist() == expected


@pytest.mark.parametrize('seed', range(4))
def test_rips_is_gudhis_rips_complex(seed):
    # The edges come from a k-d tree (gudhi.RipsComplex measured every pair); on a
    # grid, many pairs lie exactly at the threshold, and GUDHI's rule decides them.
    import gudhi
    from torch_geometric_san.data import algebra
    rng = np.random.default_rng(seed)
    pos = np.round(rng.random((40, 1 + seed % 3)) * 4) / 4
    clouds = [(pos, (0.0, 0.25, math.sqrt(2) / 4, 0.5, 0.6))]
    # In 8 dimensions and more NumPy's sums round otherwise than GUDHI's, term by
    # term: thresholds at distances of the cloud, computed as GUDHI does.
    pos = rng.standard_normal((40, 8 + 4 * seed))
    i, j = np.triu_indices(40, 1)
    gap = pos[i] - pos[j]
    clouds.append((pos, np.sqrt(np.cumsum(gap * gap, axis=1)[:, -1])[::97]))
    # coordinates whose squares overflow (SciPy's k-d tree failed on them)
    clouds.append((np.array([[0., 0.], [1., 0.], [1e200, 0.], [1e200, 1.]]), (2.0, )))
    for pos, lengths in clouds:
        for length in lengths:
            data = LiftToRipsComplex(max_edge_length=float(length), max_order=3)(
                Data(pos=torch.from_numpy(pos)))
            tree = gudhi.RipsComplex(points=pos, max_edge_length=float(length))
            expected = algebra.simplex_tree_to_arrays(
                tree.create_simplex_tree(max_dimension=3), 3)
            assert data.num_nodes == len(pos)
            for k in (1, 2, 3):  # (the tree lists the orders it holds)
                rows = expected[k] if k < len(expected) else []
                assert np.array_equal(data[f'simplices_{k}'].numpy(),
                                      np.asarray(rows).reshape(-1, k + 1))


def test_alpha_of_an_equilateral_triangle():
    # Edges: empty balls of squared radius 1/4; the triangle: its circumradius^2 1/3.
    assert simplices(LiftToAlphaComplex()(Data(pos=TRIANGLE))) == [
        [[0, 1], [0, 2], [1, 2]], [[0, 1, 2]]]
    edges = LiftToAlphaComplex(max_alpha_square=0.3)(Data(pos=TRIANGLE))
    assert simplices(edges) == [[[0, 1], [0, 2], [1, 2]], []]
    points = LiftToAlphaComplex(max_alpha_square=0.2)(Data(pos=TRIANGLE))
    assert points.num_nodes == 3 and simplices(points) == [[], []]


def test_alpha_is_the_delaunay_triangulation_up_to_the_dimension():
    import scipy.spatial
    pos = random_cloud(1, n=25)
    data = LiftToAlphaComplex(max_order=4)(Data(pos=pos))
    triangles = np.sort(scipy.spatial.Delaunay(pos.numpy()).simplices, axis=1)
    assert sorted(data.simplices_2.tolist()) == sorted(triangles.tolist())
    assert data.num_simplices(3) == data.num_simplices(4) == 0  # padded above D = 2
    # The 3-D alpha complex has tetrahedra; order 2 keeps its 2-skeleton.
    cloud = Data(pos=random_cloud(2, n=20, dim=3))
    assert LiftToAlphaComplex(max_order=3)(cloud).num_simplices(3) > 0
    assert LiftToAlphaComplex(max_order=2)(cloud).order == 2


LIFTS = {'rips': lambda **kw: LiftToRipsComplex(max_edge_length=0.35, max_order=3, **kw),
         'alpha': lambda **kw: LiftToAlphaComplex(max_order=2, max_alpha_square=0.01,
                                                  **kw)}


@pytest.mark.parametrize('name', LIFTS)
def test_invariant_to_rotation_and_translation(name):
    pos = random_cloud(3)
    angle = 0.7
    rotation = torch.tensor([[math.cos(angle), -math.sin(angle)],
                             [math.sin(angle), math.cos(angle)]], dtype=pos.dtype)
    moved = pos @ rotation.T + torch.tensor([5., -2.], dtype=pos.dtype)
    lift = LIFTS[name]()
    before, after = lift(Data(pos=pos)), lift(Data(pos=moved))
    assert simplices(before) == simplices(after)
    assert before.num_simplices(1) > 0 and before.num_simplices(2) > 0
    for key in ('hodge_weight_1', 'up_weight_1', 'down_weight_2'):
        torch.testing.assert_close(before[key], after[key])


@pytest.mark.parametrize('name', LIFTS)
def test_relabelling_points_relabels_vertices(name):
    pos = random_cloud(4)
    perm = torch.from_numpy(np.random.default_rng(5).permutation(len(pos)))
    lift = LIFTS[name]()
    before, after = lift(Data(pos=pos)), lift(Data(pos=pos[perm]))
    # Point perm[i] of the original cloud is vertex i of the relabelled one.
    for k in range(1, before.order + 1):
        mapped = perm[after[f'simplices_{k}']].sort(dim=1).values
        assert sorted(mapped.tolist()) == sorted(before[f'simplices_{k}'].tolist())


@pytest.mark.parametrize('name', LIFTS)
@pytest.mark.parametrize('reduce', ['mean', 'sum'])
def test_node_features_and_other_attributes(name, reduce):
    pos = random_cloud(6)
    graph = Data(pos=pos, x=torch.randn(len(pos), 3), y=torch.tensor([1]),
                 edge_index=torch.tensor([[0, 1], [1, 2]]))
    before = graph.clone()
    lift = LIFTS[name]()
    lift.lift_x, lift.reduce = True, reduce
    data = lift(graph)
    for key in ('pos', 'y', 'edge_index'):
        assert torch.equal(data[key], graph[key])
    assert torch.equal(data.x_0, graph.x) and 'x' not in data
    for k in range(1, data.order + 1):
        vertices = data[f'simplices_{k}']
        expected = graph.x[vertices].sum(1) / (k + 1 if reduce == 'mean' else 1)
        torch.testing.assert_close(data[f'x_{k}'], expected)
        assert data.num_simplex_features(k) == 3
    for key in before.keys():
        assert torch.equal(graph[key], before[key])


def test_lifted_clouds_batch():
    clouds = [Data(pos=random_cloud(seed, n=10 + seed), x=torch.ones(10 + seed, 2))
              for seed in range(3)]
    lifted = [LiftToAlphaComplex(lift_x=True)(cloud) for cloud in clouds]
    batch = next(iter(DataLoader(lifted, batch_size=3)))
    assert batch.num_simplices(2) == sum(d.num_simplices(2) for d in lifted)
    assert batch.x_2.shape == (batch.num_simplices(2), 2)


def test_repr():
    assert repr(LiftToRipsComplex(max_edge_length=0.5)) == (
        "LiftToRipsComplex(max_edge_length=0.5, max_order=2, lift_x=False, "
        "reduce='mean')")
    assert repr(LiftToAlphaComplex(max_order=3, max_alpha_square=1)) == (
        "LiftToAlphaComplex(max_order=3, max_alpha_square=1.0, lift_x=False, "
        "reduce='mean')")
    # Every option that changes the complex is in it: PyG compares the repr of a
    # dataset's pre_transform to tell stale processed files (dtype was missing).
    assert repr(LiftToAlphaComplex(dtype=torch.float64)).endswith(
        "reduce='mean', dtype=torch.float64)")


def test_a_changed_dtype_of_the_pre_transform_is_noticed(tmp_path):
    from torch_geometric.data import InMemoryDataset

    class Clouds(InMemoryDataset):
        def process(self):
            clouds = [Data(pos=torch.rand(6, 2, generator=torch.Generator()
                                          .manual_seed(i))) for i in range(3)]
            self.save([self.pre_transform(c) for c in clouds], self.processed_paths[0])

        @property
        def processed_file_names(self):
            return ['data.pt']

    Clouds(str(tmp_path), pre_transform=LiftToRipsComplex(0.5), log=False)
    with pytest.warns(UserWarning, match="pre_transform"):
        Clouds(str(tmp_path), pre_transform=LiftToRipsComplex(0.5, dtype=torch.float64),
               log=False)


@pytest.mark.parametrize('dtype', [torch.float16, torch.bfloat16])
def test_the_mean_of_half_precision_features_does_not_overflow(dtype):
    # The sum over a simplex's vertices ran in the features' dtype: float16 features
    # of 40000 (finite) lifted to inf.
    cloud = Data(pos=torch.tensor([[0., 0.], [1., 0.], [0., 1.]]),
                 x=torch.tensor([[40000.], [40000.], [20000.]], dtype=dtype))
    for lift in (LiftToRipsComplex(2.0, lift_x=True), LiftToAlphaComplex(lift_x=True)):
        out = lift(cloud)
        assert out.x_1.dtype == dtype and out.x_2.dtype == dtype
        expected = torch.tensor([[40000.], [30000.], [30000.]]).to(dtype)
        assert torch.equal(out.x_1, expected)
        assert torch.equal(out.x_2, torch.tensor([[100000. / 3]]).to(dtype))


@pytest.mark.parametrize('data, error, pattern', [
    (Data(x=torch.ones(3, 1)), ValueError, "has no 'pos'"),
    (Data(pos=torch.ones(3, 2, dtype=torch.long)), TypeError, "pos must be a floating"),
    # (failed inside torch's isfinite)
    (Data(pos=torch.ones(3, 2).to(torch.float8_e4m3fn)), TypeError,
     "pos must be a floating tensor \\[N, D\\] \\(float16, bfloat16, float32 or "
     "float64\\), got torch.float8_e4m3fn"),
    (Data(pos=torch.ones(3)), ValueError, r"pos must have shape \[N, D\]"),
    (Data(pos=torch.tensor([[0., float('nan')]])), ValueError, "NaN or infinite"),
    # (the vertices silently became the points, whatever num_nodes said)
    (Data(pos=torch.ones(3, 2), num_nodes=5), ValueError,
     "sets num_nodes=5 but 'pos' holds 3 points"),
    (Data(pos=SQUARE, x=torch.ones(3, 1)), ValueError, "x_0 has 3 rows"),
    (torch.ones(3, 2), TypeError, "expects a torch_geometric.data.Data"),
    (LiftToRipsComplex(max_edge_length=1.5)(Data(pos=SQUARE)), TypeError,
     "lifted already"),
    (Batch.from_data_list([Data(pos=SQUARE), Data(pos=SQUARE)]), TypeError,
     "lifts one graph, not a DataBatch: lift each graph"),
])
@pytest.mark.parametrize('name', LIFTS)
def test_bad_input(name, data, error, pattern):
    with pytest.raises(error, match=pattern):
        LIFTS[name]()(data)


@pytest.mark.parametrize('make, error, pattern', [
    (lambda: LiftToRipsComplex(max_edge_length=-1.), ValueError, "non-negative"),
    (lambda: LiftToRipsComplex(max_edge_length='1'), TypeError, "must be a number"),
    (lambda: LiftToAlphaComplex(max_alpha_square=float('nan')), ValueError,
     "non-negative"),
    (lambda: LiftToAlphaComplex(max_order=0), ValueError, "max_order must be"),
    (lambda: LiftToRipsComplex(1., reduce='max'), ValueError, "reduce must be"),
])
def test_bad_options(make, error, pattern):
    with pytest.raises(error, match=pattern):
        make()


@pytest.mark.parametrize('name', LIFTS)
def test_without_laplacians(name):
    # the complex the loader samples: simplices, boundaries and spectra of the full one
    pos = random_cloud(7, n=40)
    full = LIFTS[name]()(Data(pos=pos))
    lift = LIFTS[name](laplacians=False)
    light = lift(Data(pos=pos))
    assert 'up_index_1' not in light and 'laplacians=False' in repr(lift)
    assert light.num_nodes == full.num_nodes
    for key in light.keys():
        if key != 'num_nodes':
            assert torch.equal(light[key], full[key]), key
    assert {key for key in full.keys() if key not in light} == {
        key for key in full.keys()
        if any(key.startswith(kind) for kind in ('up_', 'down_', 'hodge_'))}
