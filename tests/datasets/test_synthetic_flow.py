import numpy as np
import pytest
import scipy.sparse
import torch
from torch_geometric.loader import DataLoader

from torch_geometric_san.datasets import SyntheticFlowDataset
from torch_geometric_san.datasets.synthetic_flow import (
    END_REGION,
    HOLES,
    START_REGION,
    WAYPOINT_REGIONS,
    make_holey_triangulation,
    sample_trajectory,
)


def _inside(point, region):
    return bool(np.all((point >= region[0]) & (point <= region[1])))


def _edges(triangles):
    return np.unique(np.concatenate([triangles[:, [0, 1]],
                                     triangles[:, [0, 2]],
                                     triangles[:, [1, 2]]]), axis=0)


def _adjacency(num_vertices, edges):
    a = scipy.sparse.coo_matrix((np.ones(len(edges)), (edges[:, 0],
                                                       edges[:, 1])),
                                shape=(num_vertices, num_vertices))
    return (a + a.T).tocsr()


@pytest.fixture(scope="module")
def triangulation():
    return make_holey_triangulation(400, np.random.default_rng(0))


def test_make_holey_triangulation(triangulation):
    points, triangles = triangulation
    assert points.shape[1] == 2 and 300 < len(points) < 400
    assert (np.diff(triangles, axis=1) > 0).all()
    # every vertex is used, none lies in a hole, no triangle touches a hole
    assert np.array_equal(np.unique(triangles), np.arange(len(points)))
    for hole in HOLES:
        assert not any(_inside(p, hole) for p in points)
    # both holes are real holes: Euler characteristic V - E + T = 1 - 2
    edges = _edges(triangles)
    assert len(points) - len(edges) + len(triangles) == -1


def test_make_holey_triangulation_seeded():
    a = make_holey_triangulation(400, np.random.default_rng(1))
    b = make_holey_triangulation(400, np.random.default_rng(1))
    c = make_holey_triangulation(400, np.random.default_rng(2))
    assert np.array_equal(a[0], b[0]) and np.array_equal(a[1], b[1])
    assert a[0].shape != c[0].shape or not np.array_equal(a[0], c[0])


@pytest.mark.parametrize("label", [0, 1])
def test_sample_trajectory(triangulation, label):
    points, triangles = triangulation
    edges = _edges(triangles)
    adjacency = _adjacency(len(points), edges)
    edge_set = {tuple(e) for e in edges}
    rng = np.random.default_rng(label)
    for _ in range(20):
        path = sample_trajectory(points, adjacency, label, rng)
        assert _inside(points[path[0]], START_REGION)
        assert _inside(points[path[-1]], END_REGION)
        assert any(_inside(points[v], WAYPOINT_REGIONS[label]) for v in path)
        assert not any(_inside(points[v], WAYPOINT_REGIONS[1 - label])
                       for v in path[1:-1])
        assert len(set(path.tolist())) == len(path)  # self-avoiding
        assert all((min(u, v), max(u, v)) in edge_set
                   for u, v in zip(path[:-1], path[1:]))


def test_sample_trajectory_needs_vertices_in_regions():
    points = np.array([[0.5, 0.5], [0.5, 0.6]])
    adjacency = _adjacency(2, np.array([[0, 1]]))
    with pytest.raises(ValueError, match="No vertex lies in the region"):
        sample_trajectory(points, adjacency, 0, np.random.default_rng(0))


# ---------------------------------------------------------------------------
# The dataset class.


def _dataset(root, **kwargs):
    return SyntheticFlowDataset(str(root), log=False, **kwargs)


@pytest.fixture(scope="module")
def splits(tmp_path_factory):
    root = tmp_path_factory.mktemp("synthetic")
    return {
        "train": _dataset(root, split="train"),
        "test": _dataset(root, split="test"),
        "test_random": _dataset(root, split="test", orientation="random"),
        "test_per_trajectory": _dataset(root, split="test",
                                        orientation="random_per_trajectory"),
    }


def _divergence(data, dense):
    num_vertices, num_edges = data.num_simplices(0), data.num_simplices(1)
    index, weight = data.boundary(1)
    return dense(index, weight, (num_vertices, num_edges)) @ data.x_1.double()


def test_sizes_and_shared_complex(splits):
    train, test = splits["train"], splits["test"]
    assert len(train) == 1000 and len(test) == 200
    complex = train.complex
    num_edges = complex.num_simplices(1)
    assert 300 < complex.num_simplices(0) < 400
    assert complex.num_simplices(0) - num_edges + complex.num_simplices(
        2) == -1  # two holes
    assert torch.equal(complex.simplices_2, test.complex.simplices_2)
    assert complex.pos.shape == (complex.num_simplices(0), 2)
    data = train[3]
    assert data.x_1.shape == (num_edges, 1) and data.y.shape == (1, )
    assert train.x_1.shape == (1000, num_edges, 1)
    assert torch.equal(train.x_1[3], data.x_1)
    assert int(train.y[3]) == int(data.y)
    assert train.num_classes == 2
    # The item's complex tensors are the dataset's, not copies.
    assert (data.boundary_index_1.data_ptr() ==
            train.complex.boundary_index_1.data_ptr())


def test_processed_file_holds_the_complex_once(splits):
    out = torch.load(splits["train"].processed_paths[0], weights_only=True)
    assert set(out) == {"complex", "items", "extra"}
    assert set(out["items"]) == {"x_1", "y"}
    assert out["items"]["x_1"].shape[0] == 1000
    assert "x_1" not in out["complex"]


def test_label_balance(splits):
    for split, n in (("train", 1000), ("test", 200)):
        y = splits[split].y
        assert int((y == 0).sum()) == int((y == 1).sum()) == n // 2
        assert 0 < int(y[:n // 2].sum()) < n // 2  # labels are shuffled


def test_flows_are_paths_from_start_to_end(splits, dense):
    # A path's flow has divergence -1 at its start, +1 at its end (or the
    # opposite, by the boundary's sign convention) and 0 elsewhere.
    dataset = splits["test"]
    pos = dataset.complex.pos
    for i in range(0, 200, 17):
        data = dataset[i]
        div = _divergence(data, dense).view(-1)
        ends = div.nonzero().view(-1)
        assert len(ends) == 2 and div[ends].abs().tolist() == [1.0, 1.0]
        start, end = sorted(ends.tolist(), key=lambda v: -pos[v, 1])
        assert pos[start, 0] <= 0.2 and pos[start, 1] >= 0.8
        assert pos[end, 0] >= 0.8 and pos[end, 1] <= 0.2
        assert set(data.x_1.view(-1).tolist()) <= {-1.0, 0.0, 1.0}


def test_random_orientation(splits, dense):
    default, flipped = splits["test"], splits["test_random"]
    signs = flipped.edge_orientation
    assert set(signs.tolist()) == {-1, 1}
    assert torch.equal(default.edge_orientation, torch.ones_like(signs))
    assert torch.equal(flipped.x_1, default.x_1 * signs.view(1, -1, 1))
    assert torch.equal(flipped.y, default.y)
    a, b = default.complex, flipped.complex
    n0, n1, n2 = (a.num_simplices(k) for k in range(3))
    s = torch.diag(signs.double())
    assert torch.equal(dense(*b.boundary(1), (n0, n1)),
                       dense(*a.boundary(1), (n0, n1)) @ s)
    assert torch.equal(dense(*b.boundary(2), (n1, n2)),
                       s @ dense(*a.boundary(2), (n1, n2)))
    for op in ("down_laplacian", "up_laplacian", "hodge_laplacian"):
        la = dense(*getattr(a, op)(1), (n1, n1))
        lb = dense(*getattr(b, op)(1), (n1, n1))
        assert torch.allclose(lb, s @ la @ s), op
    # The flows' divergence does not depend on the orientation.
    for i in (0, 99):
        assert torch.equal(_divergence(flipped[i], dense),
                           _divergence(default[i], dense))


def test_random_orientation_per_trajectory(splits, dense):
    default, flipped = splits["test"], splits["test_per_trajectory"]
    signs = flipped.edge_orientation
    n1 = default.complex.num_simplices(1)
    assert signs.shape == (200, n1) and set(signs.view(-1).tolist()) == {-1, 1}
    assert torch.equal(flipped.signal_orientation, signs)
    assert not torch.equal(signs[0], signs[1])  # its own draw per trajectory
    assert torch.equal(flipped.x_1, default.x_1 * signs.unsqueeze(-1))
    assert torch.equal(flipped.y, default.y)
    # The complex is shared and stays in the default orientation ...
    a, b = default.complex, flipped.complex
    for op in ("boundary", "down_laplacian", "up_laplacian", "hodge_laplacian"):
        assert all(torch.equal(u, v) for u, v in zip(getattr(a, op)(1), getattr(b, op)(1)))
    # ... and an item by index carries its own re-oriented operators, on
    # which its flow has the same divergence as the default one.
    for i in (0, 7):
        item = flipped[i]
        s = torch.diag(signs[i].double())
        for op in ("down_laplacian", "up_laplacian", "hodge_laplacian"):
            assert torch.allclose(dense(*getattr(item, op)(1), (n1, n1)),
                                  s @ dense(*getattr(a, op)(1), (n1, n1)) @ s), op
        assert torch.equal(item.x_1, flipped.x_1[i])
        assert torch.equal(item.edge_orientation, signs[i])
        assert torch.equal(_divergence(item, dense), _divergence(default[i], dense))
    # Subsets keep their rows; the train split and the other options differ.
    assert torch.equal(flipped[10:20].signal_orientation, signs[10:20])
    assert default.signal_orientation is None
    assert splits["test_random"].signal_orientation is None


def test_reproducible(tmp_path, splits):
    again = _dataset(tmp_path / "a", split="test")
    assert torch.equal(again.x_1, splits["test"].x_1)
    assert torch.equal(again.y, splits["test"].y)
    assert torch.equal(again.complex.pos, splits["test"].complex.pos)
    random_again = _dataset(tmp_path / "a", split="test",
                            orientation="random")
    assert torch.equal(random_again.edge_orientation,
                       splits["test_random"].edge_orientation)
    other = _dataset(tmp_path / "b", split="test", seed=1)
    assert not torch.equal(other.complex.pos, splits["test"].complex.pos)
    assert other.x_1.shape[1] != again.x_1.shape[1] or not torch.equal(
        other.x_1, again.x_1)


def test_dataloader_batches_items(splits):
    dataset = splits["train"]
    num_edges = dataset.complex.num_simplices(1)
    batch = next(iter(DataLoader(dataset[:5], batch_size=5)))
    assert batch.x_1.shape == (5 * num_edges, 1)
    assert torch.equal(batch.y, dataset.y[:5])
    assert batch.num_simplices(1) == 5 * num_edges
    assert torch.equal(batch.simplex_batch(1),
                       torch.arange(5).repeat_interleave(num_edges))
    subset = dataset.shuffle()[:7]
    assert torch.equal(subset.x_1,
                       torch.stack([subset[i].x_1 for i in range(7)]))


def test_bad_arguments(tmp_path):
    with pytest.raises(ValueError, match="'split'"):
        _dataset(tmp_path, split="val")
    with pytest.raises(ValueError, match="'orientation'"):
        _dataset(tmp_path, orientation="flipped")


def test_refused_arguments_leave_no_processed_folder(tmp_path):
    # (process() refused them after making root/processed)
    with pytest.raises(ValueError, match="No vertex lies in the region"):
        SyntheticFlowDataset(str(tmp_path), num_points=30, log=False)
    assert not (tmp_path / "processed").exists()
    with pytest.raises(ValueError, match="No vertex lies in the region"):
        SyntheticFlowDataset(str(tmp_path / "new" / "root"), num_points=30, log=False)
    assert list(tmp_path.iterdir()) == []  # (nor a root it made)


def test_interrupted_processing_leaves_no_trusted_file(tmp_path, monkeypatch):
    real_save = torch.save

    def interrupted(obj, f, *args, **kwargs):
        f.write(b"partial")
        raise KeyboardInterrupt

    monkeypatch.setattr(torch, "save", interrupted)
    with pytest.raises(KeyboardInterrupt):
        _dataset(tmp_path, split="test", num_test=10)
    processed = tmp_path / "processed"  # (removed where nothing was left in it)
    assert not processed.exists() or not any(p.suffix == ".pt"
                                             for p in processed.iterdir())
    monkeypatch.setattr(torch, "save", real_save)
    dataset = _dataset(tmp_path, split="test", num_test=10)
    assert len(dataset) == 10


def test_progress_bar_on_a_terminal(tmp_path, terminal_stderr):
    with terminal_stderr() as err:
        SyntheticFlowDataset(str(tmp_path), split="test", num_test=6, log=True)
    assert "Sampling trajectories" in err.getvalue()


def test_no_progress_bar_when_the_output_is_not_a_terminal(tmp_path, capfd):
    SyntheticFlowDataset(str(tmp_path), split="test", num_test=6, log=True)
    assert "Sampling trajectories" not in capfd.readouterr().err


def test_to_device(tmp_path):
    dataset = _dataset(tmp_path, split="test", num_test=4)
    assert dataset.to("cpu") is dataset
    assert dataset[0].x_1.device.type == "cpu"
