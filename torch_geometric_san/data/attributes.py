r"""Which attributes of a complex belong to its simplices, row by row."""
from typing import Dict, Optional, Union

import torch
from torch import Tensor

from torch_geometric_san.data.simplicial_complex_data import (_COMPUTED, _FEATURE,
                                                              SimplicialComplexData,
                                                              _check_complex_arg)
from torch_geometric_san.utils.validation import check_int, rows_problem
from torch_geometric_san.utils.warn import warn_user

#: The owner of the rows of attributes that follow the columns of a graph's
#: ``edge_index`` kept on the complex (a lifted graph's edge attributes).
GRAPH_EDGES = 'edge_index'


def _check_attr_orders(attrs: Optional[Dict[str, int]]) -> Dict[str, int]:
    r"""Checks an :obj:`attrs` argument (attribute names to orders) and returns a
    copy of it.

    Args:
        attrs (Dict[str, int], optional): The orders that settle attributes whose
            first dimension alone does not tell it.

    Returns:
        Dict[str, int]: A copy (empty for :obj:`None`).

    Raises:
        TypeError: If :obj:`attrs` is not a dict of names to ints.
        ValueError: If an order is negative.
    """
    if attrs is None:
        return {}
    if not isinstance(attrs, dict):
        raise TypeError(f"attrs must be a dict of attribute names to orders, not "
                        f"{type(attrs).__name__}")
    checked = {}
    for key, k in attrs.items():
        if not isinstance(key, str):
            raise TypeError(f"attrs keys must be attribute names, got {key!r}")
        checked[key] = check_int(k, f"the order of attribute '{key}' (0: the vertices)",
                                 minimum=0)
    return checked


def simplex_attr_orders(
    data: SimplicialComplexData,
    attrs: Optional[Dict[str, int]] = None,
    who: Optional[str] = None,
    settle: str = 'attrs',
) -> Dict[str, Union[int, str]]:
    r"""The attributes of :obj:`data` whose rows belong to its simplices, each
    mapped to the order :math:`k` of the simplices its rows follow, or to
    :obj:`'edge_index'` for the columns of a graph's ``edge_index`` kept on the
    complex. The one rule by which
    :class:`~torch_geometric_san.transforms.ReorderSimplices` and the neighbour
    loader's :func:`~torch_geometric_san.loader.simplicial_subcomplex` move or
    select attributes with their simplices:

    * ``x_k`` belongs to order :math:`k` by its name, and every attribute named in
      :obj:`attrs` to the order given there;
    * any other tensor concatenated along its first dimension (PyG's
      :meth:`__cat_dim__` is 0, so not index tensors) with more than one row
      belongs to the one order :math:`k` (vertices included) with :math:`N_k`
      rows, or to the graph's edges if its rows are as many as the columns of
      ``edge_index``, as PyG tells node from edge attributes by their sizes;
    * where several of these match, the name decides as in PyG (a key containing
      ``edge`` belongs to the graph's edges, another one to the only other match);
      if it does not, the attribute is ambiguous: it is left out, with a warning
      that says how :obj:`attrs` settles it;
    * the attributes the constructors compute (``simplices_k``, operators,
      spectra), ``edge_index`` itself and everything else are left out.

    Args:
        data (SimplicialComplexData): One complex.
        attrs (Dict[str, int], optional): Orders of attributes whose first
            dimension alone does not tell it; each must have :math:`N_k` rows.
            (default: :obj:`None`)
        who (str, optional): The caller, which copies ambiguous attributes
            unchanged, for the warning (:obj:`None`: the warning says that the
            attribute is left out of the table). (default: :obj:`None`)
        settle (str, optional): The caller's argument that settles an ambiguous
            attribute, for the warning: :obj:`'attrs'` (a dict of orders, as
            here) or :obj:`'attr_orders'` (a table made by this function).
            (default: :obj:`'attrs'`)

    Returns:
        Dict[str, Union[int, str]]: The owner of each per-simplex attribute.

    Raises:
        TypeError: If :obj:`data` is not one complex (a batch is refused),
            :obj:`attrs` not a dict of names to ints, or :obj:`who` not a
            :obj:`str`.
        ValueError: If :obj:`settle` is neither of its values, an attribute of
            :obj:`attrs` is missing, computed by the
            constructors (or ``edge_index``), a feature ``x_j`` given another order
            than :math:`j`, of an order above the complex's, or does not have
            :math:`N_k` rows, or a feature ``x_k`` is not a tensor of
            :math:`N_k` rows.

    Example:
        >>> import torch
        >>> data = SimplicialComplexData.from_simplices([[0, 1, 2], [1, 2, 3]],
        ...                                             close=True)
        >>> data.y = torch.zeros(5)  # 5 edges
        >>> data.pos = torch.zeros(4, 2)  # 4 vertices
        >>> data.mask = torch.ones(2, dtype=torch.bool)  # 2 triangles
        >>> simplex_attr_orders(data)
        {'y': 1, 'pos': 0, 'mask': 2}
    """
    _check_complex_arg(data, 'data', 'give one complex')
    attrs = _check_attr_orders(attrs)
    if who is not None and not isinstance(who, str):
        raise TypeError(f"who must be a str or None, not {type(who).__name__}")
    if settle not in ('attrs', 'attr_orders'):
        raise ValueError(f"settle must be 'attrs' or 'attr_orders', got {settle!r}")
    counts = [data.num_simplices(k) for k in range(data.order + 1)]
    for key, k in attrs.items():
        if key == 'edge_index' or _COMPUTED.fullmatch(key):
            raise ValueError(f"attrs names '{key}', which follows its simplices by "
                             f"construction; name only other attributes")
        feature = _FEATURE.fullmatch(key)
        if feature is not None and int(feature.group(1)) != k:
            raise ValueError(f"attrs gives '{key}' order {k}, but a feature x_k "
                             f"belongs to order k by its name")
        if k >= len(counts):
            raise ValueError(f"attribute '{key}' is of order {k} but the complex "
                             f"has order {data.order}")
        value = data._store.get(key)
        if rows_problem(key, value, k, counts[k]):
            shape = list(value.shape) if isinstance(value, Tensor) else None
            raise ValueError(f"attribute '{key}' must be a tensor with N_{k} = "
                             f"{counts[k]} rows (got {shape if shape else value!r})")
    graph = data.edge_index
    num_edges = graph.size(1) if isinstance(graph, Tensor) and graph.dim() == 2 \
        else None
    owners: Dict[str, Union[int, str]] = dict(attrs)
    for key, value in data._store.items():
        feature = _FEATURE.fullmatch(key)
        if key in attrs or key == 'edge_index' or _COMPUTED.fullmatch(key):
            continue
        if feature is not None:
            k = int(feature.group(1))
            if k < len(counts):  # (a NumPy array stayed where its simplices moved)
                problem = rows_problem(key, value, k, counts[k])
                if problem:  # (its rows would be moved as if they were the simplices')
                    raise ValueError(problem)
                owners[key] = k
            continue
        if not isinstance(value, Tensor) or value.dim() == 0 or \
                value.size(0) <= 1 or data.__cat_dim__(key, value) != 0:
            continue
        matches = [k for k, count in enumerate(counts) if count == value.size(0)]
        others = list(matches)
        if num_edges == value.size(0):
            matches.append(GRAPH_EDGES)
        if len(matches) == 1:
            owners[key] = matches[0]
        elif GRAPH_EDGES in matches and 'edge' in key:
            owners[key] = GRAPH_EDGES
        elif GRAPH_EDGES in matches and len(others) == 1:
            owners[key] = others[0]
        elif matches:
            places = [f'N_{k}' if k != GRAPH_EDGES else "edge_index's columns"
                      for k in matches]
            subject = f"{who} copies '{key}' unchanged" if who else \
                f"'{key}' is left out"
            example = f"attrs={{'{key}': {others[-1]}}}"
            remedy = (f"name its order in attrs (e.g. {example})" if settle == 'attrs'
                      else f"pass attr_orders=simplex_attr_orders(data, {example})")
            warn_user(f"{subject}: its {value.size(0)} rows match "
                      f"{' and '.join(places)}; {remedy} to settle it")
    return owners


def _select_attr_rows(data: SimplicialComplexData, owners: Dict[str, Union[int, str]],
                     rows: Dict[Union[int, str], Tensor]) -> Dict[str, Tensor]:
    r"""The per-simplex attributes of :obj:`data` whose owner (:obj:`owners`, from
    :func:`simplex_attr_orders`) is in :obj:`rows`, each with the rows
    :obj:`rows[owner]` (ids in a new order, or a boolean mask).

    Args:
        data (SimplicialComplexData): The complex.
        owners (Dict[str, Union[int, str]]): The owner of each attribute.
        rows (Dict[Union[int, str], torch.Tensor]): The rows to take per owner.

    Returns:
        Dict[str, torch.Tensor]: The selected attributes, by name.
    """
    out = {}
    for key, owner in owners.items():
        if owner in rows:
            value = data._store[key]
            ids = rows[owner].to(value.device)
            if value.layout == torch.strided:
                out[key] = value[ids]
            elif value.layout == torch.sparse_coo:  # (which takes no index by mask)
                out[key] = value.index_select(0, ids.nonzero().view(-1)
                                              if ids.dtype == torch.bool else ids)
            else:
                raise ValueError(f"attribute '{key}' follows its simplices but is a "
                                 f"{value.layout} tensor, whose rows torch cannot "
                                 f"select: convert it with to_sparse_coo() or "
                                 f"to_dense()")
    return out
