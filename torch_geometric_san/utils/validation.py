r"""Argument checks shared by the constructors, transforms and datasets.

Each returns the checked value or raises a :class:`TypeError` (wrong type) or
:class:`ValueError` (wrong value) whose message names the argument, so that bad
input fails where it enters the package, never deep inside NumPy or PyTorch.
"""
import math
import os
import numbers
from typing import Any, Optional, Tuple

import numpy as np
import torch


def check_int(value: Any, name: str, minimum: Optional[int] = None,
              maximum: Optional[int] = None) -> int:
    r"""Checks that :obj:`value` is an integer (a Python or NumPy integer, not a
    :obj:`bool`) in ``[minimum, maximum]``.

    Args:
        value (Any): The argument.
        name (str): Its name, for the error message.
        minimum (int, optional): The smallest value allowed.
        maximum (int, optional): The largest value allowed.

    Returns:
        int: :obj:`value` as a Python :obj:`int`.

    Raises:
        TypeError: If :obj:`value` is not an integer (:obj:`True` is refused).
        ValueError: If it is out of range.
    """
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"{name} must be an int, not {type(value).__name__}")
    value = int(value)
    if minimum is not None and value < minimum:
        raise ValueError(f"{name} must be at least {minimum}, got {value}")
    if maximum is not None and value > maximum:
        raise ValueError(f"{name} must be at most {maximum}, got {value}")
    return value


def check_counts(**counts: Any) -> Tuple[int, ...]:
    r"""Checks that every keyword argument is an int of at least 1 (the sizes and
    counts of a model: channels, layers, ...), with :func:`check_int`.

    Args:
        **counts (Any): The arguments by name, e.g.
            ``check_counts(hidden_channels=hidden_channels)``; the messages name
            each in quotes.

    Returns:
        Tuple[int, ...]: The values as Python ints, in the order given.

    Raises:
        TypeError: If a value is not an integer.
        ValueError: If a value is below 1.
    """
    return tuple(check_int(value, f"'{name}'", minimum=1)
                 for name, value in counts.items())


def check_in_channels(value: Any, name: str) -> int:
    r"""Checks an input size of a layer or model: an int of at least 1, or
    :obj:`-1` for lazy initialisation (the size read from the first input, as
    PyG's layers do), with :func:`check_int`.

    Args:
        value (Any): The argument.
        name (str): Its name, for the error message.

    Returns:
        int: :obj:`value` as a Python :obj:`int`.

    Raises:
        TypeError: If :obj:`value` is not an integer.
        ValueError: If it is neither :obj:`-1` nor at least 1.
    """
    value = check_int(value, name)
    if value != -1 and value < 1:
        raise ValueError(f"{name} must be at least 1, or -1 to take the size of the "
                         f"first input (lazy initialisation), got {value}")
    return value


def check_bool(value: Any, name: str) -> bool:
    r"""Checks that :obj:`value` is :obj:`True` or :obj:`False` (a flag given as
    e.g. the string ``"no"`` would otherwise count as true).

    Args:
        value (Any): The argument.
        name (str): Its name, for the error message.

    Returns:
        bool: :obj:`value`.

    Raises:
        TypeError: If :obj:`value` is not a :obj:`bool`.
    """
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{name} must be True or False, not {type(value).__name__}")
    return bool(value)


def check_real(value: Any, name: str) -> float:
    r"""Checks that :obj:`value` is a finite real number (not a :obj:`bool`).

    Args:
        value (Any): The argument.
        name (str): Its name, for the error message.

    Returns:
        float: :obj:`value` as a Python :obj:`float`.

    Raises:
        TypeError: If :obj:`value` is not a real number.
        ValueError: If it is NaN or infinite.
    """
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a real number, not {type(value).__name__}")
    try:
        out = float(value)
    except OverflowError:  # (an int or Fraction beyond the floats)
        out = math.inf
    if not math.isfinite(out):
        shown = str(value)
        raise ValueError(f"{name} must be finite, got "
                         f"{shown if len(shown) <= 40 else shown[:37] + '...'}")
    return out


def check_slope(value: Any, name: str = 'negative_slope') -> float:
    r"""Checks the slope of a LeakyReLU of attention scores: a real number in
    :math:`[-1, 1]`, so that the LeakyReLU of a finite score stays finite (the
    scores that overflowed are clamped to the largest finite values first).

    Args:
        value (Any): The argument.
        name (str, optional): Its name, for the error message.
            (default: :obj:`'negative_slope'`)

    Returns:
        float: :obj:`value` as a Python :obj:`float`.

    Raises:
        TypeError: If :obj:`value` is not a real number.
        ValueError: If it is not finite or lies outside :math:`[-1, 1]`.
    """
    value = check_real(value, name)
    if not -1.0 <= value <= 1.0:  # (beyond, a clamped score times it overflowed: NaN)
        raise ValueError(f"{name} must lie in [-1, 1], got {value}")
    return value


def check_dropout(value: Any, name: str) -> float:
    r"""Checks that :obj:`value` is a dropout probability: a real number in
    :math:`[0, 1)`.

    Args:
        value (Any): The argument.
        name (str): Its name, for the error message.

    Returns:
        float: :obj:`value` as a Python :obj:`float`.

    Raises:
        TypeError: If :obj:`value` is not a real number.
        ValueError: If it lies outside :math:`[0, 1)`.
    """
    p = check_real(value, name)
    if not 0.0 <= p < 1.0:
        raise ValueError(f"{name} must lie in [0, 1) (got {value})")
    return p


#: The floating dtypes of the complexes' values and the layers' signals.
FLOAT_DTYPES = (torch.float16, torch.bfloat16, torch.float32, torch.float64)
#: Their names, for the error messages: "float16, bfloat16, float32 or float64".
FLOAT_DTYPE_NAMES = (', '.join(str(d).removeprefix('torch.') for d in FLOAT_DTYPES[:-1])
                     + f" or {str(FLOAT_DTYPES[-1]).removeprefix('torch.')}")


def check_float_dtype(dtype: Any, name: str = "dtype") -> torch.dtype:
    r"""Checks that :obj:`dtype` is a floating :class:`torch.dtype` that torch
    computes in: :obj:`torch.float16`, :obj:`torch.bfloat16`, :obj:`torch.float32`
    or :obj:`torch.float64` (the float8 types have no arithmetic).

    Args:
        dtype (Any): The argument.
        name (str, optional): Its name, for the error message.

    Returns:
        torch.dtype: :obj:`dtype`.

    Raises:
        TypeError: If it is not one of these.
    """
    if dtype not in FLOAT_DTYPES:
        raise TypeError(f"{name} must be a floating torch.dtype ({FLOAT_DTYPE_NAMES}), "
                        f"not {dtype!r}")
    return dtype


def check_arithmetic_dtype(value: torch.Tensor, name: str) -> None:
    r"""Checks that a floating-point :obj:`value` is of a dtype torch computes in
    (:data:`FLOAT_DTYPES`; the float8 types have no arithmetic).

    Args:
        value (torch.Tensor): The tensor.
        name (str): Its name, for the error message.

    Raises:
        TypeError: If it is floating-point in another dtype.
    """
    if value.is_floating_point() and value.dtype not in FLOAT_DTYPES:
        raise TypeError(f"{name} is {value.dtype}, in which torch has no arithmetic: "
                        f"convert it to {FLOAT_DTYPE_NAMES}")


def check_float_tensor(value: Any, name: str) -> torch.Tensor:
    r"""Checks that :obj:`value` is a dense floating-point :class:`torch.Tensor`
    (a signal of the layers: torch's sparse layouts lack the operations they
    run).

    Args:
        value (Any): The argument.
        name (str): Its name, for the error message.

    Returns:
        torch.Tensor: :obj:`value`.

    Raises:
        TypeError: If it is not a floating-point tensor, or not a dense one.
    """
    if not isinstance(value, torch.Tensor) or not value.is_floating_point():
        got = value.dtype if isinstance(value, torch.Tensor) else type(value).__name__
        raise TypeError(f"'{name}' must be a floating-point tensor (got {got})")
    check_arithmetic_dtype(value, f"'{name}'")
    if value.layout != torch.strided or value.is_nested:
        found = 'nested' if value.is_nested else value.layout
        raise TypeError(f"'{name}' must be a dense tensor (got a {found} one: "
                        f"convert it with to_dense())")
    return value


def check_dense(value: torch.Tensor, name: str) -> None:
    r"""Checks that a tensor is dense: neither of a sparse layout nor nested.

    Args:
        value (torch.Tensor): The tensor.
        name (str): Its name, for the error message.

    Raises:
        TypeError: If it is sparse or nested.
    """
    if value.layout != torch.strided or value.is_nested:
        found = 'a nested tensor' if value.is_nested else value.layout
        raise TypeError(f"{name} must be a dense tensor, not {found} (use .to_dense())")


def check_sparse_precision(x: torch.Tensor) -> None:
    r"""Checks that the sparse products can take :obj:`x`: torch's CPU kernels of
    compressed-row products take neither float16 nor bfloat16.

    Args:
        x (torch.Tensor): An operand of the products.

    Raises:
        TypeError: If :obj:`x` is float16 or bfloat16 on the CPU.
    """
    if x.device.type == 'cpu' and x.dtype in (torch.float16, torch.bfloat16):
        raise TypeError(f"{x.dtype} is not supported on the CPU by the sparse products "
                        f"(they need float32 or float64)")


def check_same_dtype(x: torch.Tensor, dtype: torch.dtype, name: str, owner: str,
                     hint: str) -> None:
    r"""Checks that the signal :obj:`x` has the dtype of the parameters it meets.

    Args:
        x (torch.Tensor): The signal.
        dtype (torch.dtype): The dtype of the parameters.
        name (str): The signal's name, for the message.
        owner (str): What holds the parameters (e.g. :obj:`"model"`).
        hint (str): The object to convert in the message's example.

    Raises:
        TypeError: If the dtypes differ.
    """
    if x.dtype != dtype:
        raise TypeError(f"'{name}' is {x.dtype} but the {owner}'s parameters are "
                        f"{dtype}; convert one of them (e.g. {hint}.to({x.dtype}))")


def check_batch(batch: Any, num_items: int, num_graphs: Any) -> Optional[int]:
    r"""Checks a batch vector (the complex of each of :obj:`num_items` simplices)
    and a number of complexes, as the readouts take them.

    Args:
        batch (torch.Tensor, optional): :obj:`[num_items]` integer ids, or
            :obj:`None` (one complex).
        num_items (int): The number of simplices.
        num_graphs (int, optional): The number of complexes, or :obj:`None`.

    Returns:
        int, optional: :obj:`num_graphs`.

    Raises:
        TypeError: If :obj:`batch` is not a :obj:`torch.long` or
            :obj:`torch.int32` tensor or :obj:`num_graphs` not an int.
        ValueError: If :obj:`batch` has another length or negative ids, or
            :obj:`num_graphs` does not exceed its largest id (or is above 1
            without :obj:`batch`).
    """
    if num_graphs is not None:
        num_graphs = check_int(num_graphs, 'num_graphs', minimum=1)
    if batch is None:
        if num_graphs not in (None, 1):  # (the readout gave one row, silently)
            raise ValueError(f"'num_graphs' is {num_graphs} but no 'batch' vector is "
                             f"given: without one, the simplices are one complex")
        return num_graphs
    if not isinstance(batch, torch.Tensor) or batch.dtype not in (torch.long,
                                                                   torch.int32):
        # (the readouts' scatter takes these two; int16 or uint8 failed inside it)
        got = batch.dtype if isinstance(batch, torch.Tensor) else type(batch).__name__
        raise TypeError(f"'batch' must be a torch.long (or torch.int32) tensor "
                        f"(got {got})")
    if batch.shape != (num_items, ):
        raise ValueError(f"'batch' must have shape [{num_items}], one complex id per "
                         f"simplex (got {list(batch.shape)})")
    if num_items:
        low, high = int(batch.min()), int(batch.max())
        if low < 0:
            raise ValueError(f"'batch' holds a negative complex id ({low})")
        if num_graphs is not None and high >= num_graphs:
            raise ValueError(f"'batch' holds complex id {high}, but num_graphs is "
                             f"{num_graphs}")
    return num_graphs


#: Bytes a complex needs per vertex at the least (vertex ids, the index pointers
#: of the order-0 operators, a batch vector), for :func:`check_num_nodes`.
_BYTES_PER_VERTEX = 64


def check_num_nodes(num_nodes: Any) -> int:
    r"""Checks a number of vertices :math:`N_0`. Every id in ``0..num_nodes - 1`` is
    a vertex, with arrays of that length: a count whose arrays cannot fit in this
    machine's memory (e.g. from one huge vertex id) is refused here rather than
    failing in NumPy's allocator (or being killed by the kernel).

    Args:
        num_nodes (Any): The argument.

    Returns:
        int: :obj:`num_nodes`.

    Raises:
        TypeError: If it is not an integer.
        ValueError: If it is negative or too large for this machine's memory.
    """
    num_nodes = check_int(num_nodes, 'num_nodes', minimum=0)
    try:
        memory = os.sysconf('SC_PAGE_SIZE') * os.sysconf('SC_PHYS_PAGES')
    except (AttributeError, ValueError, OSError):  # no sysconf: nothing to compare
        return num_nodes
    if num_nodes * _BYTES_PER_VERTEX > memory:
        raise ValueError(
            f"num_nodes={num_nodes} (one more than the largest vertex id, unless "
            f"given) needs more memory than this machine has ({memory / 2**30:.0f} "
            f"GiB): vertex ids are node indices 0..num_nodes - 1, so renumber them "
            f"consecutively, e.g. with numpy.unique(ids, return_inverse=True)")
    return num_nodes


def rows_problem(key: str, value: Any, k: int, count: int) -> Optional[str]:
    r"""What is wrong with a feature of the k-simplices, which needs one row per
    simplex, or :obj:`None` where nothing is (for a check that raises or warns).

    Args:
        key (str): Its name, for the message.
        value (Any): The feature.
        k (int): The order of its simplices.
        count (int): The number of k-simplices.

    Returns:
        str, optional: The problem, or :obj:`None`.
    """
    if isinstance(value, torch.Tensor) and value.dim() > 0 and value.size(0) == count:
        return None
    shape = list(value.shape) if isinstance(value, torch.Tensor) else type(value).__name__
    return f"'{key}' needs one row per {k}-simplex, {count} (found {shape})"


def range_problem(what: str, ids: torch.Tensor, bound: int,
                  kind: str = 'ids') -> Optional[str]:
    r"""What is wrong with integer ids that must lie in :math:`[0, \text{bound})`,
    or :obj:`None` where nothing is (for a check that raises or warns).

    Args:
        what (str): The tensor, for the message.
        ids (torch.Tensor): The ids.
        bound (int): Their bound.
        kind (str, optional): What they are, for the message. (default: :obj:`'ids'`)

    Returns:
        str, optional: The problem, or :obj:`None`.
    """
    if ids.numel() and (int(ids.min()) < 0 or int(ids.max()) >= bound):
        return (f"{what} holds {kind} outside [0, {bound}) (found {int(ids.min())} to "
                f"{int(ids.max())})")
    return None


def check_simplex_ids(value: Any, n: int, order: int, name: str) -> torch.Tensor:
    r"""Checks a selection of k-simplices: a boolean mask :math:`[N_k]`, or a 1-D
    integer tensor of distinct ids in :math:`[0, N_k)`.

    Args:
        value (Any): The argument.
        n (int): The number :math:`N_k` of k-simplices.
        order (int): The order :math:`k`, for the messages.
        name (str): The argument's name, for the messages.

    Returns:
        torch.Tensor: The selected ids :obj:`[M]` (``long``, a new tensor): those of
        a mask ascending, given ids in their order.

    Raises:
        TypeError: If it is not a mask or a 1-D integer tensor.
        ValueError: If a mask has the wrong size, or ids are out of range or repeated.
    """
    if not isinstance(value, torch.Tensor):
        raise TypeError(f"{name} must be a tensor (a boolean mask or ids of "
                        f"{order}-simplices), not {type(value).__name__}")
    if value.dtype == torch.bool:
        if value.shape != (n, ):
            raise ValueError(f"the mask {name} must have shape [{n}] (the "
                             f"{order}-simplices), got {list(value.shape)}")
        return value.nonzero().view(-1)
    if value.is_floating_point() or value.is_complex() or value.dim() != 1:
        raise TypeError(f"{name} must be a boolean mask or a 1-D integer tensor of "
                        f"ids, got dtype {value.dtype} and shape {list(value.shape)}")
    ids = value.to(torch.long)
    problem = range_problem(name, ids, n)
    if problem:
        raise ValueError(f"{problem}, the {order}-simplices of the complex")
    if torch.unique(ids).numel() != ids.numel():
        raise ValueError(f"{name} holds repeated ids; each {order}-simplex can be "
                         f"taken once")
    return ids.clone()


def is_integer_tensor(value: Any) -> bool:
    r"""Whether :obj:`value` is a tensor of integers (not floating, complex or
    bool), as ids and indices must be, of a dtype torch compares and converts
    (not :obj:`torch.uint16`, :obj:`torch.uint32` or :obj:`torch.uint64`, which
    failed inside torch's checks).

    Args:
        value (Any): The argument.

    Returns:
        bool: Whether it is an integer tensor.
    """
    return isinstance(value, torch.Tensor) and not (
        value.is_floating_point() or value.is_complex() or value.dtype in (
            torch.bool, torch.uint16, torch.uint32, torch.uint64))


def is_index_tensor(value: Any) -> bool:
    r"""Whether :obj:`value` is a tensor of the integer dtypes that torch indexes
    with, :obj:`torch.int32` or :obj:`torch.int64`, as an operator's index must be
    (:obj:`torch.int16` fails inside torch, and :obj:`torch.uint8` is read as a
    mask).

    Args:
        value (Any): The argument.

    Returns:
        bool: Whether it is an index tensor.
    """
    return isinstance(value, torch.Tensor) and value.dtype in (torch.int32, torch.int64)


def check_has_data(value: torch.Tensor, name: str) -> torch.Tensor:
    r"""Checks that a tensor whose values are read is not on 'meta', which holds
    shapes only (torch fails inside with "cannot be called on meta tensors").

    Args:
        value (torch.Tensor): The tensor.
        name (str): Its name in the message.

    Returns:
        torch.Tensor: :obj:`value`.

    Raises:
        ValueError: If it is on 'meta'.
    """
    if value.device.type == 'meta':
        raise ValueError(f"{name} is on 'meta', which holds no data: its values are "
                         f"read here, so it must be on a real device")
    return value


def check_edge_index(edge_index: Any, num_nodes: int) -> torch.Tensor:
    r"""Checks a graph's :obj:`edge_index`: an integer tensor :math:`[2, E]` of
    vertex ids in :math:`[0, \text{num_nodes})`.

    Args:
        edge_index (Any): The argument.
        num_nodes (int): The number of vertices.

    Returns:
        torch.Tensor: :obj:`edge_index` as :obj:`torch.long` (itself where it is one),
        PyG's index dtype.

    Raises:
        TypeError: If it is not a dense tensor of integers, or :obj:`num_nodes` not an
            int.
        ValueError: If its shape is not :math:`[2, E]`, an id is out of range, or it
            is on 'meta'.
    """
    num_nodes = check_int(num_nodes, 'num_nodes', minimum=0)
    if not isinstance(edge_index, torch.Tensor):
        raise TypeError(f"edge_index must be a tensor, not {type(edge_index).__name__}")
    if edge_index.is_nested:
        raise TypeError("edge_index must be a dense [2, num_edges] tensor, not a "
                        "nested tensor")
    if edge_index.layout != torch.strided:
        raise TypeError(f"edge_index must be a dense [2, num_edges] tensor, not "
                        f"{edge_index.layout} (an adjacency matrix: take its "
                        f".coalesce().indices())")
    if not is_integer_tensor(edge_index):
        raise TypeError(f"edge_index must hold integers (of a signed dtype, or "
                        f"uint8), got {edge_index.dtype}")
    if edge_index.dim() != 2 or edge_index.size(0) != 2:
        raise ValueError(f"edge_index must have shape [2, num_edges], got "
                         f"{list(edge_index.shape)}")
    check_has_data(edge_index, 'edge_index')
    # (in int64: num_nodes wraps in a narrower dtype, refusing valid ids)
    edge_index = edge_index.long()
    outside = (edge_index < 0) | (edge_index >= num_nodes)
    if bool(outside.any()):
        raise ValueError(f"edge_index holds node {int(edge_index[outside][0])}, out of "
                         f"range for {num_nodes} nodes")
    return edge_index
