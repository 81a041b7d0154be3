r"""Vectorised algebra of oriented simplicial complexes (NumPy/SciPy).

A complex of order :math:`K` is held as a list ``simplices`` of integer arrays,
``simplices[k]`` of shape ``[N_k, k + 1]`` with ascending vertex ids per row (the
reference orientation of the simplex), and ``simplices[0] = arange(N_0)[:, None]``: vertex
ids are the indices of the 0-simplices, as node indices are in PyG.

The boundary matrix :math:`\mathbf{B}_k \in \{-1, 0, 1\}^{N_{k-1} \times N_k}` has
:math:`(\mathbf{B}_k)_{f, s} = (-1)^i` where the face :math:`f` is the simplex :math:`s`
with its :math:`i`-th vertex deleted. From them

.. math::
    \mathbf{L}_k^{(d)} = \mathbf{B}_k^{\top} \mathbf{B}_k, \qquad
    \mathbf{L}_k^{(u)} = \mathbf{B}_{k+1} \mathbf{B}_{k+1}^{\top}, \qquad
    \mathbf{L}_k = \mathbf{L}_k^{(d)} + \mathbf{L}_k^{(u)}.

No function here loops over simplices in Python: faces are found by deleting columns,
rows are encoded into order-preserving integer keys and looked up with
:func:`numpy.searchsorted`, and the Laplacians are SciPy sparse products.

These are the building blocks of the constructors of
:class:`~torch_geometric_san.data.SimplicialComplexData`, which check what users give
and pass them NumPy integer arrays and SciPy sparse arrays of the documented shapes.
They check the properties they are named for (:func:`check_simplex_rows`,
:func:`check_distinct`, :func:`check_chain_complex`), not the types of their arguments;
called directly, they need arrays like the constructors'.
"""
from array import array
from itertools import chain
from typing import Dict, Iterator, List, Optional, Sequence, Tuple

import gudhi
import numpy as np
import scipy.sparse as sp
import torch

# The eigenvalue solver lives with the sparse operators (which scale by it too).
from torch_geometric_san.sparse.operator import (  # noqa: F401 (re-exported)
    DENSE_EIGEN_LIMIT, EIGEN_TOL, _largest_eigenvalue, largest_eigenvalue)

_INT64_MAX = int(np.iinfo(np.int64).max)


def row_keys(rows: np.ndarray, base: int) -> np.ndarray:
    r"""Encodes the rows of a non-negative integer array as ``int64`` keys.

    Equal rows get equal keys, and the keys are increasing in the lexicographic order of
    the rows. Rows are read as numbers in base :obj:`base`; where that would overflow,
    the partial keys are first replaced by their ranks (which keeps the order).

    Args:
        rows (numpy.ndarray): Integer array of shape ``[M, m]`` with entries in
            ``[0, base)``.
        base (int): An upper bound on the entries.

    Returns:
        numpy.ndarray: Keys of shape ``[M]``.
    """
    if rows.shape[0] == 0 or rows.shape[1] == 0:
        return np.zeros(rows.shape[0], dtype=np.int64)
    key = rows[:, 0].astype(np.int64)
    for j in range(1, rows.shape[1]):
        if key.size and int(key.max()) > (_INT64_MAX - base) // base:
            key = np.unique(key, return_inverse=True)[1].reshape(-1).astype(np.int64)
        key *= base
        key += rows[:, j]
    return key


def group_by_length(flat: np.ndarray, lengths: np.ndarray) -> Dict[int, np.ndarray]:
    r"""Splits concatenated rows of different lengths into one array per length.

    Args:
        flat (numpy.ndarray): The rows, concatenated, shape ``[sum(lengths)]``.
        lengths (numpy.ndarray): The length of each row, shape ``[M]``.

    Returns:
        Dict[int, numpy.ndarray]: Maps each length :math:`m` to the rows of that length,
        shape ``[M_m, m]``, in their original order.
    """
    starts = np.cumsum(lengths) - lengths
    return {
        int(m): flat[starts[lengths == m][:, None] + np.arange(m)]
        for m in np.unique(lengths)
    }


def simplex_tree_to_arrays(simplex_tree: gudhi.SimplexTree, order: int,
                           copy: bool = True) -> List[np.ndarray]:
    r"""The simplices of a GUDHI :class:`~gudhi.SimplexTree` up to :obj:`order`, one
    array ``[N_k, k + 1]`` per order present, each in lexicographic order.

    GUDHI offers the simplices only through a Python iterator, so the tree is read
    from its serialisation instead, the state GUDHI pickles it with
    (:meth:`gudhi.SimplexTree.__getstate__`), decoded with NumPy
    (:func:`_decode_serialised`). Its records are found by their filtration values,
    which are first reset to a marker value
    (:meth:`gudhi.SimplexTree.reset_filtration`): on a copy of the tree, or with
    :obj:`copy=False` on the tree itself. Where the serialisation is not in the format
    this reads (another GUDHI version), GUDHI's iterator is used, streamed into flat
    arrays.

    Args:
        simplex_tree (gudhi.SimplexTree): The complex.
        order (int): The largest order :math:`K` to read.
        copy (bool, optional): Leave the tree unmodified (read a copy); with
            :obj:`False` its filtration values are overwritten. (default: :obj:`True`)

    Returns:
        List[numpy.ndarray]: One ``int64`` array per order present, by increasing order.
    """
    tree = simplex_tree.copy() if copy else simplex_tree
    out = None
    if hasattr(tree, '__getstate__') and hasattr(tree, 'reset_filtration'):
        tree.reset_filtration(_MARK, 0)
        out = _decode_serialised(tree.__getstate__(), order)
    return _iterate(tree, order) if out is None else out


#: The filtration value every simplex gets before the tree is serialised: a record
#: is then a vertex id, the low word 0 and the high word ``_MARK_HIGH`` (negative).
_MARK = -1.0
_MARK_HIGH = int(np.array([_MARK], dtype='<f8').view('<i4')[1])
#: The header of the serialisations :func:`_decode_serialised` reads.
_HEADER = bytes([1, 0, 1, 0, 0, 0])


def _decode_serialised(state: np.ndarray, order: int) -> Optional[List[np.ndarray]]:
    r"""The simplices of a serialised simplex tree whose filtration values are all
    :data:`_MARK`, as :func:`simplex_tree_to_arrays` returns them, or :obj:`None`
    where :obj:`state` is not in the format below.

    After a 6-byte header, GUDHI writes a set of siblings (first the root's children,
    the vertices) as its size (``int32``), then one record per member (its vertex,
    ``int32``, and filtration, ``float64``), then, member by member, the set of the
    member's children in the same way (size 0 for a leaf). The words of the records
    are found by the filtration's high word (no size and no vertex id of a valid
    complex equals it), and the other words are the sizes, each of which must be
    followed by its records. Every record has one child set, so the sets, in the
    order they are written, are the nodes of a tree in preorder in which a set of size
    :math:`c` has :math:`c` children; the pending slots
    :math:`X_{i+1} = X_i + c_i - 1` (:math:`X_0 = 1`) give each set its depth, level
    by level: the children of a set of depth :math:`d` are the sets after it where
    :math:`X` reaches a new strict minimum before its subtree ends. The sets of depth
    :math:`d + 1`, in written order, are the child sets of the records of depth
    :math:`d` (the :math:`d`-simplices) in written order, which gives each record its
    parent simplex. GUDHI keeps siblings sorted, so written order is lexicographic.
    """
    state = np.asarray(state)
    if state.dtype.itemsize != 1 or state.ndim != 1 or len(state) < 10 or \
            (len(state) - 6) % 4 or state[:6].tobytes() != _HEADER:
        return None
    words = np.frombuffer(state[6:].tobytes(), dtype='<i4')  # an aligned copy
    high = np.flatnonzero(words == _MARK_HIGH)
    start = high - 2  # the vertex word of each record
    if high.size and (start[0] < 1 or (np.diff(high) < 3).any() or
                      (words[high - 1] != 0).any()):
        return None
    is_size = np.ones(len(words), dtype=bool)
    for i in range(3):
        is_size[start + i] = False
    sizes_at = np.flatnonzero(is_size)
    sizes = words[sizes_at].astype(np.int64)
    if len(sizes_at) != len(start) + 1 or (sizes < 0).any() or not np.array_equal(
            np.diff(sizes_at, append=len(words)) - 1, 3 * sizes):
        return None
    num_sets = len(sizes)
    pending = np.cumsum(sizes - 1) + 1  # X_{i+1}
    if pending[-1] != 0 or (pending[:-1] <= 0).any():
        return None
    pending = np.concatenate([[1], pending[:-1]])  # X_i
    depth = np.full(num_sets, -1, dtype=np.int64)
    depth[0] = 0
    shift = int(pending.max()) + 1
    for d in range(order):
        known = depth >= 0
        # X shifted down segment by segment (the sets after a known set, all in its
        # subtree, up to the next), so that one running minimum restarts at each.
        shifted = np.where(known, _INT64_MAX, pending - shift * np.cumsum(known))
        running = np.minimum.accumulate(shifted)
        child = ~known
        child[1:] &= shifted[1:] < running[:-1]
        depth[child] = d + 1
    vertex = words[start].astype(np.int64)
    record_set = np.repeat(np.arange(num_sets), sizes)
    record_depth = depth[record_set]
    out: List[np.ndarray] = []
    for d in range(order + 1):
        mine = np.flatnonzero(record_depth == d)
        if not mine.size:
            break
        if d == 0:
            rows = vertex[mine, None]
        else:
            sets = np.flatnonzero(depth == d)  # the child sets of the (d-1)-simplices
            if len(sets) != len(out[-1]):
                return None
            parent = np.empty(num_sets, dtype=np.int64)
            parent[sets] = np.arange(len(sets))
            rows = np.concatenate([out[-1][parent[record_set[mine]]],
                                   vertex[mine, None]], axis=1)
        out.append(rows)
    return out


def _iterate(simplex_tree: gudhi.SimplexTree, order: int) -> List[np.ndarray]:
    # GUDHI's iterator, its vertex lists streamed into one flat array (their lengths
    # into another) without being kept: holding millions of small lists keeps the
    # garbage collector busy.
    lengths = array('q')
    record = lengths.append

    def vertices(simplex: Tuple[List[int], float]) -> List[int]:
        record(len(simplex[0]))
        return simplex[0]

    flat = np.fromiter(chain.from_iterable(map(vertices,
                                               simplex_tree.get_skeleton(order))),
                       dtype=np.int64)
    if not flat.size:
        return []
    groups = group_by_length(flat, np.frombuffer(lengths, dtype=np.int64))
    if flat.min() < 0:  # not a valid complex; left for the caller to report
        return list(groups.values())
    base = int(flat.max()) + 1
    return [rows[np.argsort(row_keys(rows, base), kind='stable')]
            for rows in groups.values()]


def check_simplex_rows(rows: np.ndarray, k: int) -> None:
    r"""Checks that ``rows`` ``[N_k, k + 1]`` holds k-simplices as ascending vertex ids.

    Args:
        rows (numpy.ndarray): The k-simplices, shape ``[N_k, k + 1]``.
        k (int): Their order (named in the error messages).

    Raises:
        ValueError: On a negative vertex id, a repeated vertex or a descending pair.
    """
    if rows.size and rows.min() < 0:
        raise ValueError(f"{k}-simplex {_fmt(rows[np.flatnonzero(rows.min(1) < 0)[0]])} "
                         f"has a negative vertex id")
    step = np.diff(rows, axis=1)
    for bad, problem in ((step == 0, "repeats a vertex"),
                         (step < 0, "is not sorted in ascending vertex order")):
        if bad.any():
            row = rows[np.flatnonzero(bad.any(1))[0]]
            raise ValueError(f"{k}-simplex {_fmt(row)} {problem}; a simplex is given "
                             f"by its distinct vertex ids in ascending order")


def check_distinct(rows: np.ndarray, k: int, base: int) -> None:
    r"""Checks that the k-simplices in ``rows`` are pairwise distinct.

    Args:
        rows (numpy.ndarray): The k-simplices, shape ``[N_k, k + 1]``, ascending rows.
        k (int): Their order.
        base (int): An upper bound on the vertex ids (see :func:`row_keys`).

    Raises:
        ValueError: Naming a duplicated simplex.
    """
    if len(rows) < 2:
        return
    keys = row_keys(rows, base)
    order = np.argsort(keys, kind='stable')
    same = np.flatnonzero(keys[order[1:]] == keys[order[:-1]])
    if same.size:
        raise ValueError(f"{k}-simplex {_fmt(rows[order[same[0]]])} is given more "
                         f"than once")


def faces(simplices: np.ndarray) -> Tuple[np.ndarray, np.ndarray]:
    r"""All faces of co-dimension one of each simplex, with their orientation signs.

    Args:
        simplices (numpy.ndarray): k-simplices, shape ``[N, k + 1]``, ascending rows.

    Returns:
        (numpy.ndarray, numpy.ndarray): The faces ``[(k + 1) N, k]``, where row
        ``i * N + s`` is simplex ``s`` without its ``i``-th vertex, and the signs
        :math:`(-1)^i` ``[(k + 1) N]``.
    """
    n, width = simplices.shape
    if n == 0:  # (an empty padded order: no k deletions of nothing)
        return np.empty((0, width - 1), dtype=simplices.dtype), np.empty(0)
    out = np.concatenate([np.delete(simplices, i, axis=1) for i in range(width)])
    sign = np.repeat(np.where(np.arange(width) % 2 == 0, 1.0, -1.0), n)
    return out, sign


def find_rows(queries: np.ndarray, table: np.ndarray,
              base: int) -> Tuple[np.ndarray, np.ndarray]:
    r"""Looks up each row of ``queries`` among the rows of ``table``.

    Args:
        queries (numpy.ndarray): Shape ``[Q, m]``.
        table (numpy.ndarray): Shape ``[T, m]``, distinct rows.
        base (int): An upper bound on all entries.

    Returns:
        (numpy.ndarray, numpy.ndarray): For each query the index of the matching table
        row (meaningless where not found) and whether it was found.
    """
    keys = row_keys(np.concatenate([table, queries]), base)
    table_keys, query_keys = keys[:len(table)], keys[len(table):]
    if len(table) == 0:
        return np.zeros(len(queries), dtype=np.int64), np.zeros(len(queries), bool)
    order = np.argsort(table_keys, kind='stable')
    pos = np.minimum(np.searchsorted(table_keys[order], query_keys), len(table) - 1)
    index = order[pos]
    return index, table_keys[index] == query_keys


def close_under_faces(simplices: List[np.ndarray]) -> List[np.ndarray]:
    r"""Adds every missing face, order by order from the top.

    Given simplices keep their rows and their order; missing faces of each order are
    appended after them in lexicographic order.

    Args:
        simplices (List[numpy.ndarray]): ``simplices[k]`` of shape ``[N_k, k + 1]``,
            with ``simplices[0] = arange(N_0)[:, None]`` covering every vertex id used.

    Returns:
        List[numpy.ndarray]: The closed complex (new arrays where anything was added).
    """
    out = list(simplices)
    base = len(out[0])
    for k in range(len(out) - 1, 1, -1):
        candidates = faces(out[k])[0]
        keys = row_keys(candidates, base)
        _, first = np.unique(keys, return_index=True)
        candidates = candidates[first]
        _, found = find_rows(candidates, out[k - 1], base)
        out[k - 1] = np.concatenate([out[k - 1], candidates[~found]])
    return out


def boundary_matrix(simplices: np.ndarray, face_table: np.ndarray) -> sp.csc_array:
    r"""The boundary matrix :math:`\mathbf{B}_k` of the k-simplices (``k >= 1``).

    Args:
        simplices (numpy.ndarray): The k-simplices ``[N_k, k + 1]``.
        face_table (numpy.ndarray): The (k-1)-simplices ``[N_{k-1}, k]``.

    Returns:
        scipy.sparse.csc_array: :math:`\mathbf{B}_k` of shape ``[N_{k-1}, N_k]`` with
        ``float32`` entries :math:`\pm 1` and sorted indices.

    Raises:
        ValueError: If a face is missing from ``face_table`` (the complex is not closed
            under faces).
    """
    n, width = simplices.shape
    face_rows, sign = faces(simplices)
    if width == 2:
        rows, found = face_rows[:, 0], face_rows[:, 0] < len(face_table)
    else:
        base = max(int(simplices.max(initial=0)), int(face_table.max(initial=0))) + 1
        rows, found = find_rows(face_rows, face_table, base)
    if not found.all():
        miss = np.flatnonzero(~found)[0]
        raise ValueError(
            f"the complex is not closed under faces: {width - 2}-simplex "
            f"{_fmt(face_rows[miss])}, a face of {width - 1}-simplex "
            f"{_fmt(simplices[miss % n])}, is missing (pass close=True to add "
            f"missing faces)")
    # Column s holds the faces rows[i * n + s] with signs (-1)^i; sorted within the
    # column, they are the CSC arrays, built directly. With a face table in
    # lexicographic order (as the liftings build) the faces of a simplex come in
    # descending order, and reversing them sorts them. 32-bit indices where they fit:
    # SciPy's products of such matrices run faster than with 64-bit ones (half the
    # index traffic).
    index_dtype = np.int32 if max(len(face_table), n * width) < 2**31 else np.int64
    rows = rows.reshape(width, n).T
    sign = sign.astype(np.float32).reshape(width, n).T
    if n == 0 or (np.diff(rows, axis=1) < 0).all():
        indices, data = rows[:, ::-1], sign[:, ::-1]
    else:
        order = np.argsort(rows, axis=1, kind='stable')
        indices = np.take_along_axis(rows, order, axis=1)
        data = np.take_along_axis(sign, order, axis=1)
    indptr = np.arange(0, n * width + 1, width, dtype=index_dtype)
    return sp.csc_array((np.ascontiguousarray(data).reshape(-1),
                         indices.astype(index_dtype).reshape(-1),
                         indptr), shape=(len(face_table), n))


def incidence_to_simplices(boundaries: Sequence[sp.csc_array]) -> List[np.ndarray]:
    r"""Recovers the simplices from boundary matrices :math:`\mathbf{B}_1, \ldots`.

    The vertex set of the k-simplex of column :math:`j` of :math:`\mathbf{B}_k` is the
    union of the vertex sets of its faces (the rows where the column is non-zero).

    Args:
        boundaries (Sequence[scipy.sparse.csc_array]): Canonical CSC matrices whose
            k-th has ``k + 1`` entries :math:`\pm 1` in each column.

    Returns:
        List[numpy.ndarray]: ``simplices[k]`` for ``k = 0..K``, ascending rows.

    Raises:
        ValueError: If the faces of a column do not span exactly ``k + 1`` vertices.
    """
    out = [np.arange(boundaries[0].shape[0] if boundaries else 0)[:, None]]
    for k, B in enumerate(boundaries, start=1):
        n = B.shape[1]
        spans = np.sort(out[k - 1][B.indices].reshape(n, (k + 1) * k), axis=1)
        new = np.ones(spans.shape, dtype=bool)
        new[:, 1:] = spans[:, 1:] != spans[:, :-1]
        counts = new.sum(1)
        if (counts != k + 1).any():
            col = np.flatnonzero(counts != k + 1)[0]
            raise ValueError(f"column {col} of B_{k} is not the boundary of a "
                             f"{k}-simplex: its faces span {counts[col]} vertices, "
                             f"not {k + 1}")
        out.append(spans[new].reshape(n, k + 1))
    return out


def check_chain_complex(boundaries: Sequence[sp.csc_array]) -> None:
    r"""Checks :math:`\mathbf{1}^\top \mathbf{B}_1 = 0` and
    :math:`\mathbf{B}_k \mathbf{B}_{k+1} = 0`.

    Args:
        boundaries (Sequence[scipy.sparse.csc_array]): :math:`\mathbf{B}_1, \ldots,
            \mathbf{B}_K`.

    Raises:
        ValueError: Naming the first product that is not zero.
    """
    unbalanced = np.flatnonzero(boundaries[0].sum(axis=0)) if boundaries else []
    if len(unbalanced):
        col = unbalanced[0]
        raise ValueError(f"column {col} of B_1 must hold one +1 and one -1 "
                         f"(an oriented edge)")
    for k in range(1, len(boundaries)):
        product = (boundaries[k - 1] @ boundaries[k]).tocoo()
        bad = np.flatnonzero(product.data != 0)
        if bad.size:
            raise ValueError(
                f"B_{k} @ B_{k + 1} is not zero (entry ({product.row[bad[0]]}, "
                f"{product.col[bad[0]]}) is {product.data[bad[0]]:g}): the orientations "
                f"of B_{k + 1} are inconsistent with B_{k}")


def hodge_laplacians(boundaries: Sequence[sp.csc_array], num_nodes: int,
                     dtype: torch.dtype = torch.float32) -> Iterator[
        Tuple[int, sp.csr_array, sp.csr_array, sp.csr_array, float, float]]:
    r"""Yields, per order ``k = 0..K``, the down, up and Hodge Laplacians and
    :math:`\lambda_{\max}(\mathbf{L}_k)`.

    One order at a time, so that a caller converting and dropping them holds at most
    the Laplacians of two neighbouring orders. Since
    :math:`\mathbf{L}_k^{(d)} \mathbf{L}_k^{(u)} = 0`, the spectrum of
    :math:`\mathbf{L}_k` is the union of theirs, and the non-zero spectra of
    :math:`\mathbf{L}_k^{(d)} = \mathbf{B}_k^\top \mathbf{B}_k` and
    :math:`\mathbf{L}_{k-1}^{(u)} = \mathbf{B}_k \mathbf{B}_k^\top` agree; so
    :math:`\lambda_{\max}(\mathbf{L}_k) = \max(s_k, s_{k+1})` with
    :math:`s_k = \lambda_{\max}(\mathbf{B}_k^\top \mathbf{B}_k)`, computed once per
    ``k`` on the Gram matrix with fewer entries (judged by the squared numbers of
    faces per simplex and of cofaces per face, which bound them).

    Args:
        boundaries (Sequence[scipy.sparse.csc_array]): :math:`\mathbf{B}_1, \ldots,
            \mathbf{B}_K`.
        num_nodes (int): :math:`N_0`.
        dtype (torch.dtype, optional): The precision the eigenvalues are needed in
            (see :func:`largest_eigenvalue`).

    Yields:
        (int, scipy.sparse.csr_array, scipy.sparse.csr_array, scipy.sparse.csr_array,
        float, float): ``k``, :math:`\mathbf{L}_k^{(d)}`, :math:`\mathbf{L}_k^{(u)}`,
        :math:`\mathbf{L}_k` (CSR with sorted indices, ``float32``) and the largest
        eigenvalues of :math:`\mathbf{L}_k^{(d)}` and :math:`\mathbf{L}_k^{(u)}`
        (that of :math:`\mathbf{L}_k` is the larger of the two).
    """
    down, s_down = _zero(num_nodes), 0.0  # L_0^(d) = 0
    for k in range(len(boundaries) + 1):
        if k < len(boundaries) and boundaries[k].nnz == 0:  # e.g. a padded order
            up, next_down, s_up = _zero(down.shape[0]), _zero(boundaries[k].shape[1]), 0.0
        elif k < len(boundaries):
            columns = boundaries[k]
            rows = columns.tocsr()  # CSR @ CSR products need no further conversion
            up, next_down = _sorted(rows @ columns.T), _sorted(columns.T @ rows)
            s_up = _largest_eigenvalue(
                up if _up_gram_is_smaller(columns) else next_down, dtype)
        else:
            up, next_down, s_up = _zero(down.shape[0]), None, 0.0
        if up.nnz == 0:
            hodge = down
        elif down.nnz == 0:
            hodge = up
        else:
            hodge = _sorted(down + up)
        yield k, down, up, hodge, s_down, s_up
        down, s_down = next_down, s_up


def boundary_eigenvalues(boundaries: Sequence[sp.csc_array],
                         dtype: torch.dtype = torch.float32) -> List[float]:
    r"""The largest eigenvalues :math:`s_k = \lambda_{\max}(\mathbf{B}_k^\top
    \mathbf{B}_k)` for ``k = 1..K``, without the Laplacians of the complex.

    Each comes from the one of the two Gram matrices
    :math:`\mathbf{B}_k^\top \mathbf{B}_k` and :math:`\mathbf{B}_k \mathbf{B}_k^\top`
    (their non-zero spectra agree) with fewer entries, judged without forming
    either (a star graph's :math:`\mathbf{B}_1^\top \mathbf{B}_1` has the square
    of the hub's degree), as :func:`hodge_laplacians` computes it, so the two give
    the same values; the spectrum of order :math:`k` is
    :math:`(s_k, s_{k+1})` with :math:`s_0 = s_{K+1} = 0`.

    Args:
        boundaries (Sequence[scipy.sparse.csc_array]): :math:`\mathbf{B}_1, \ldots,
            \mathbf{B}_K`.
        dtype (torch.dtype, optional): The precision the eigenvalues are needed in
            (see :func:`largest_eigenvalue`).

    Returns:
        List[float]: :math:`s_1, \ldots, s_K`.
    """
    out = []
    for columns in boundaries:
        rows = columns.tocsr()
        if _up_gram_is_smaller(columns):
            gram = _sorted(rows @ columns.T)
        else:
            gram = _sorted(columns.T @ rows)
        out.append(_largest_eigenvalue(gram, dtype) if columns.nnz else 0.0)
        del rows, gram
    return out


def _up_gram_is_smaller(columns: sp.csc_array) -> bool:
    # Whether B B^T has at most the entries of B^T B, judged by bounds that need
    # neither product: each simplex pairs its faces (column counts squared), each
    # face its cofaces (row counts squared). Judged by their sizes instead, the
    # choice took B^T B of a star graph: the square of the hub's degree.
    faces_per_simplex = np.diff(columns.indptr).astype(np.int64)
    cofaces_per_face = np.bincount(columns.indices, minlength=columns.shape[0])
    return int((faces_per_simplex ** 2).sum()) <= \
        int((cofaces_per_face.astype(np.int64) ** 2).sum())


def _zero(n: int) -> sp.csr_array:
    return sp.csr_array((n, n), dtype=np.float32)


def _sorted(matrix: sp.sparray) -> sp.csr_array:
    out = matrix.tocsr()
    out.sort_indices()
    return out


def _fmt(row: np.ndarray) -> str:
    return "[" + ", ".join(str(int(v)) for v in row) + "]"
