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
from typing import Iterable, List, Optional, Sequence

from torch_geometric.data import Batch
from torch_geometric.data.data import BaseData

from torch_geometric_san.data.simplicial_complex_data import (SimplicialComplexData,
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
    check_int(order, 'order', minimum=data.order)
    out = copy.copy(data)
    top = data.order
    index, weight = data.hodge_index_0, data.hodge_weight_0

    def empty_operator(name: str, k: int) -> None:
        out[f'{name}_index_{k}'] = index.new_empty((2, 0))
        out[f'{name}_weight_{k}'] = weight.new_empty((0, ))

    if order > top and f'up_index_{top}' not in data._store:
        empty_operator('up', top)  # a complex stored without it (the plain constructor)
    for k in range(top + 1, order + 1):
        out[f'simplices_{k}'] = index.new_empty((0, k + 1))
        for name in ('boundary', 'down', 'up', 'hodge'):
            empty_operator(name, k)
        # as the constructors store it: the Hodge index of an order without upper
        # Laplacian is the lower Laplacian's index tensor
        out[f'hodge_index_{k}'] = out[f'down_index_{k}']
        if 'spectrum_0' in data:  # the largest eigenvalues of empty Laplacians
            out[f'spectrum_{k}'] = weight.new_zeros((1, 2))
    return out


def batch_complexes(data_list: Sequence[SimplicialComplexData],
                    follow_batch: Optional[Iterable[str]] = None,
                    exclude_keys: Optional[Iterable[str]] = None) -> Batch:
    r"""Batches complexes of any orders: each is padded to the highest order of the
    list (:func:`pad_order`), then :meth:`torch_geometric.data.Batch.from_data_list`
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
        torch_geometric.data.Batch: The batch, of the highest order of the list.

    Raises:
        TypeError: If :obj:`data_list` is not a list of single complexes.
        ValueError: If :obj:`data_list` is empty.

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
    order = max(data.order for data in data_list)
    padded: List[SimplicialComplexData] = [
        pad_order(data, order) if data.order < order else data for data in data_list]
    return Batch.from_data_list(padded, follow_batch=follow_batch,
                                exclude_keys=exclude_keys)
