import math
import pickle

import numpy as np
import pytest

from torch_geometric_san.datasets.citation_complex import (
    citation_simplices,
    imputation_masks,
    read_citation_raw,
)

# A small co-authorship complex: authors 17, 42, 100, 205 (vertices 0..3 by
# raw index of their 0-simplex below), closed under faces. The raw indices of
# the edges are deliberately not in sorted order.
SMALL_SIMPLICES = [
    [(17, ), (42, ), (100, ), (205, )],
    [(42, 100), (17, 42), (17, 100), (100, 205)],
    [(17, 42, 100)],
]
SMALL_COUNTS = [[3, 5, 8, 1], [4, 2, 6, 9], [7]]


@pytest.fixture
def small_files(tmp_path, write_citation_files):
    return write_citation_files(str(tmp_path), SMALL_SIMPLICES, SMALL_COUNTS)


def test_read_citation_raw(small_files):
    simplices, cochains = read_citation_raw(*small_files)
    assert [len(d) for d in simplices] == [4, 4, 1]
    assert simplices[1][frozenset({17, 100})] == 2
    assert cochains[1][frozenset({100, 205})] == 9


def test_citation_simplices_keeps_raw_index_order(small_files):
    arrays, counts, authors = citation_simplices(*read_citation_raw(
        *small_files), max_order=2)
    np.testing.assert_array_equal(authors, [17, 42, 100, 205])
    np.testing.assert_array_equal(arrays[1], [[1, 2], [0, 1], [0, 2], [2, 3]])
    np.testing.assert_array_equal(counts[1], [4, 2, 6, 9])
    np.testing.assert_array_equal(arrays[2], [[0, 1, 2]])
    with pytest.raises(ValueError, match="orders up to 2"):
        citation_simplices(*read_citation_raw(*small_files), max_order=3)


def test_read_citation_raw_rejects_bad_structure(tmp_path,
                                                 write_citation_files):
    bad = [[(1, ), (2, )], [(1, 2, 3)]]  # a 3-set among the edges
    paths = write_citation_files(str(tmp_path), bad, [[1, 1], [1]])
    with pytest.raises(ValueError, match="frozensets of 2 author ids"):
        read_citation_raw(*paths)


def test_read_citation_raw_refuses_tampered_file(tmp_path,
                                                 write_citation_files):
    simplices_path, cochains_path = write_citation_files(
        str(tmp_path), SMALL_SIMPLICES, SMALL_COUNTS)
    with open(cochains_path, "r+b") as f:
        np.lib.format.read_magic(f)
        np.lib.format.read_array_header_1_0(f)
        f.truncate(f.tell())
        f.write(b"\x80\x02cposix\nsystem\nX\x04\x00\x00\x00true\x85R.")
    with pytest.raises(pickle.UnpicklingError, match="posix.system"):
        read_citation_raw(simplices_path, cochains_path)


@pytest.mark.parametrize("rate", [0.1, 0.2, 0.3, 0.4, 0.5])
@pytest.mark.parametrize("num", [352, 1474, 5000])
def test_imputation_masks_sizes(rate, num):
    hidden = imputation_masks(num, rate, num_masks=3, seed=0)
    assert hidden.shape == (3, num) and hidden.dtype == bool
    assert (hidden.sum(axis=1) == math.ceil(round(rate * num, 6))).all()
    assert len({row.tobytes() for row in hidden}) == 3  # masks differ


def test_imputation_masks_seeding():
    a = imputation_masks(1000, 0.3, 10, seed=0)
    np.testing.assert_array_equal(a, imputation_masks(1000, 0.3, 10, seed=0))
    assert not np.array_equal(a, imputation_masks(1000, 0.3, 10, seed=1))
    # mask m does not depend on num_masks; lower rates hide subsets
    np.testing.assert_array_equal(a[:4], imputation_masks(1000, 0.3, 4, 0))
    low = imputation_masks(1000, 0.1, 10, seed=0)
    assert not (low & ~a).any()
    with pytest.raises(ValueError, match="fraction"):
        imputation_masks(1000, 30, 10, seed=0)
