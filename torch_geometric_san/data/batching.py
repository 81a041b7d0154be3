r"""Batching complexes of different orders.

PyG's :meth:`~torch_geometric.data.Batch.from_data_list` (which
:class:`torch_geometric.loader.DataLoader` calls) collates the attributes of the
*first* data object of a list: batched after a complex of lower order, the higher orders
of a complex are left out (the batch then refuses access to its top order with a
:class:`ValueError`), and batched before one, PyG asks the other for attributes it
does not have, which raises :class:`~torch_geometric_san.data.MixedOrderError`. PyG
offers no hook that sees the whole list, so the complexes of a batch must have the
same order. :func:`pad_order` pads one complex with empty orders
(as the :obj:`order` arguments of the constructors and
:class:`~torch_geometric_san.transforms.LiftToCliqueComplex` do), and
:func:`batch_complexes` pads a list to its highest order and batches it.
"""
import collections.abc
import copy
from typing import Any, Iterable, List, Optional, Sequence, Set, Tuple

import torch
from torch import Tensor
from torch_geometric.data import Batch
from torch_geometric.data.data import BaseData

from torch_geometric_san.data.simplicial_complex_data import (_COMPUTED, _FEATURE,
                                                              SimplicialComplexData,
                                                              _check_complex_arg)
from torch_geometric_san.utils.validation import check_int

__all__ = ['pad_order', 'batch_complexes']



def pad_order(data: SimplicialComplexData, order: int) -> SimplicialComplexData:
    r"""The complex :obj:`data` padded with empty orders up to :obj:`order`: the same
    object as the constructors build with that :obj:`order` argument (the tensors of
    the orders :obj:`data` has are shared, not copied). :obj:`data` is not modified.

    Args:
        data (SimplicialComplexData): A single complex (not a batch).
        order (int): The order :math:`K` of the result, at least :obj:`data.order`.

    Returns:
        SimplicialComplexData: The padded complex (:obj:`data` itself, copied, if it
        already has that order).

    Raises:
        TypeError: If :obj:`data` is not a single complex or :obj:`order` not an int.
        ValueError: If :obj:`order` is below the order of :obj:`data`.

    Example:
        >>> data = SimplicialComplexData.from_simplices([[0, 1], [1, 2]])
        >>> padded = pad_order(data, 2)
        >>> padded.order, padded.num_simplices(2), padded.up_laplacian(1)[0].shape
        (2, 0, torch.Size([2, 0]))
    """
    _check_complex_arg(data, 'data', 'pad and batch single complexes')
    order = check_int(order, 'order', minimum=data.order)
    out = copy.copy(data)
    top = data.order
    device, dtype = data._device(), data._weight_dtype()
    # the Laplacians of the padded orders where the complex stores Laplacians; the
    # boundaries (and spectra) always
    names = ('boundary', 'down', 'up', 'hodge') if 'hodge_index_0' in data._store \
        else ('boundary', )

    def empty_operator(name: str, k: int) -> None:
        out[f'{name}_index_{k}'] = torch.empty((2, 0), dtype=torch.long, device=device)
        out[f'{name}_weight_{k}'] = torch.empty((0, ), dtype=dtype, device=device)

    if order > top and 'up' in names and f'up_index_{top}' not in data._store:
        empty_operator('up', top)  # a complex stored without it (the plain constructor)
    for k in range(top + 1, order + 1):
        out[f'simplices_{k}'] = torch.empty((0, k + 1), dtype=torch.long, device=device)
        for name in names:
            empty_operator(name, k)
        if 'hodge' in names:
            # as the constructors store it: the Hodge index of an order without upper
            # Laplacian is the lower Laplacian's index tensor
            out[f'hodge_index_{k}'] = out[f'down_index_{k}']
        if 'spectrum_0' in data:  # the largest eigenvalues of empty Laplacians
            out[f'spectrum_{k}'] = torch.zeros((1, 2), dtype=dtype, device=device)
    return out


def batch_complexes(data_list: Sequence[SimplicialComplexData],
                    follow_batch: Optional[Iterable[str]] = None,
                    exclude_keys: Optional[Iterable[str]] = None) -> Batch:
    r"""Batches complexes of any orders: each is padded to the highest order of the
    list (:func:`pad_order`), with empty features ``x_k`` of the others' width where
    it has no k-simplices, then :meth:`torch_geometric.data.Batch.from_data_list`
    makes their disjoint union. Pass it as :obj:`collate_fn` to a
    :class:`torch.utils.data.DataLoader` (PyG's own loader always uses PyG's collate;
    there, pad the complexes first).

    Args:
        data_list (Sequence[SimplicialComplexData]): The complexes (not modified).
        follow_batch (Iterable[str], optional): As for
            :meth:`~torch_geometric.data.Batch.from_data_list`.
        exclude_keys (Iterable[str], optional): As for
            :meth:`~torch_geometric.data.Batch.from_data_list`.

    Returns:
        torch_geometric.data.Batch: The batch, of the highest order of the list; one
        above a sub-complex's order where it was sampled at its top order
        (:func:`~torch_geometric_san.loader.simplicial_subcomplex`,
        :class:`~torch_geometric_san.loader.SimplicialNeighborLoader` on a complex of
        higher order), whose upper Laplacian there (the restriction of its complex's)
        needs the empty order above it in a batch.

    Raises:
        TypeError: If :obj:`data_list` is not a list of single complexes.
        ValueError: If :obj:`data_list` is empty, or its complexes differ in their
            attributes (besides :obj:`exclude_keys`), or in the dtype or the sizes
            beyond the simplices of one (e.g. feature widths): PyG's collate would
            drop or promote them silently, or fail inside :func:`torch.cat`; or if
            ids that batching shifts (``simplices_k``, a graph's ``edge_index``) are
            of another integer dtype than :obj:`torch.int64` or :obj:`torch.int32`
            (:meth:`~torch_geometric_san.data.SimplicialComplexData.__inc__`).

    Example:
        >>> edge = SimplicialComplexData.from_simplices([[0, 1]])
        >>> triangle = SimplicialComplexData.from_simplices([[0, 1, 2]], close=True)
        >>> batch = batch_complexes([edge, triangle])
        >>> batch.order, batch.simplex_batch(1).tolist(), batch.simplex_batch(2)
        (2, [0, 1, 1, 1], tensor([1]))
    """
    if isinstance(data_list, BaseData) or \
            not isinstance(data_list, collections.abc.Iterable):
        raise TypeError(f"data_list must be a list of complexes, not "
                        f"{type(data_list).__name__}")
    data_list = list(data_list)
    if not data_list:
        raise ValueError("data_list is empty: a batch needs at least one complex")
    for i, data in enumerate(data_list):
        _check_complex_arg(data, f'data_list[{i}]', 'pad and batch single complexes')
    follow_batch, exclude_keys = (_check_keys(keys, name) for keys, name in (
        (follow_batch, 'follow_batch'), (exclude_keys, 'exclude_keys')))
    order = max(_batch_order(data) for data in data_list)
    padded = _pad_features([pad_order(data, order) if data.order < order else data
                            for data in data_list])
    _check_same_attributes(padded, set(exclude_keys or ()))
    return Batch.from_data_list(padded, follow_batch=follow_batch,
                                exclude_keys=exclude_keys)


def _check_keys(keys: Any, name: str) -> Optional[List[str]]:
    # follow_batch or exclude_keys: None or names (a str was taken for the set of
    # its characters, and dropped or followed other attributes, silently).
    if keys is None:
        return None
    if isinstance(keys, (str, bytes)) or not isinstance(keys, collections.abc.Iterable):
        raise TypeError(f"{name} must be a list of attribute names, not "
                        f"{type(keys).__name__}" + (f" (write [{keys!r}])"
                                                   if isinstance(keys, str) else ''))
    keys = list(keys)
    if not all(isinstance(key, str) for key in keys):
        raise TypeError(f"{name} must hold attribute names (strs), got {keys!r}")
    return keys


def _pad_features(data_list: List[SimplicialComplexData]
                  ) -> List[SimplicialComplexData]:
    # The features x_k that a complex lacks where it has no k-simplices (e.g. an
    # order it was padded to) and others have them: [0, ...] of the first one's
    # dtype and width, as PyG's collate needs them in every complex. (Copies; a
    # complex with k-simplices but no x_k is left to _check_same_attributes.)
    given = {}
    for data in data_list:
        for key in data._store.keys():
            if _FEATURE.fullmatch(key) and key not in given:
                given[key] = data._store[key]
    out = []
    for data in data_list:
        missing = [key for key in given if key not in data._store and
                   int(key[2:]) <= data.order and data.num_simplices(int(key[2:])) == 0]
        if missing:
            data = copy.copy(data)
            for key in missing:
                data[key] = given[key].new_empty((0, *given[key].shape[1:]))
        out.append(data)
    return out


def _batch_order(data: SimplicialComplexData) -> int:
    # The order of data in a batch: its own, or one above where it keeps a non-empty
    # upper Laplacian at its top order (a sampled sub-complex), which a batch of its
    # order would take for the trace of a member whose higher orders PyG's collation
    # left out (SimplicialComplexData._check_k).
    up = data._store.get(f'up_index_{data.order}')
    return data.order + int(up is not None and up.size(-1) > 0)


def _check_same_attributes(data_list: List[SimplicialComplexData],
                           exclude: Set[str]) -> None:
    # PyG collates the attributes of the first complex: another complex's extra
    # attributes would be left out silently, a missing one raises a bare KeyError,
    # tensors of other widths fail inside torch.cat and other dtypes are promoted
    # silently. Each of these is refused here, naming the complex and attribute.
    # The attributes the constructors compute have their shapes by construction and
    # the operators' dtype (_weight_dtype); the others are compared one by one.
    first = data_list[0]
    keys = first._store._mapping.keys() - exclude
    given = {}  # key: (dtype, shape with the concatenated dimension left out)
    for key in sorted(keys):  # (the first mismatch named the same in every run)
        value = first._store[key]
        if isinstance(value, Tensor) and not _COMPUTED.fullmatch(key):
            given[key] = _layout(first, key, value)
    dtype = first._weight_dtype()
    for i, data in enumerate(data_list[1:], start=1):
        other = data._store._mapping.keys() - exclude
        if other != keys:
            missing, extra = sorted(keys - other), sorted(other - keys)
            problem = (f"has no {missing}, which data_list[0] has" if missing else
                       f"has {extra}, which data_list[0] has not (they would be left "
                       f"out of the batch)")
            raise ValueError(f"data_list[{i}] {problem}: the complexes of a batch need "
                             f"the same attributes (or name the others in "
                             f"exclude_keys)")
        if data._weight_dtype() != dtype:
            raise ValueError(f"the operators of data_list[{i}] are "
                             f"{data._weight_dtype()} but those of data_list[0] "
                             f"{dtype}: the complexes of a batch need one dtype")
        for key, layout in given.items():
            value = data._store[key]
            if not isinstance(value, Tensor) or _layout(data, key, value) != layout:
                found = (f"{value.dtype} of shape {list(value.shape)}"
                         if isinstance(value, Tensor) else type(value).__name__)
                a = first._store[key]
                raise ValueError(f"'{key}' of data_list[{i}] is {found} but that of "
                                 f"data_list[0] is {a.dtype} of shape {list(a.shape)}: "
                                 f"the complexes of a batch need the same dtypes and "
                                 f"sizes beyond the simplices (the same feature widths)")


def _layout(data: SimplicialComplexData, key: str, value: Tensor) -> Tuple[Any, ...]:
    # What PyG's collate needs to agree between the tensors of one attribute.
    dim = data.__cat_dim__(key, value)
    shape = list(value.shape)
    if dim is not None and shape:  # (a tuple where PyG joins block-diagonally)
        for d in (dim if isinstance(dim, tuple) else (dim, )):
            shape[d % len(shape)] = -1
    return value.dtype, tuple(shape)
