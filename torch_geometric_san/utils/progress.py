r"""Progress bars that are shown on terminals only."""
from typing import Any, Iterable, Optional

from tqdm import tqdm

from torch_geometric_san.utils.validation import check_bool


def progress_bar(iterable: Iterable, desc: Optional[str] = None, enabled: bool = True,
                 **kwargs: Any) -> tqdm:
    r"""A :class:`tqdm.tqdm` bar over :obj:`iterable` that is drawn only when
    :obj:`enabled` and its output (:obj:`sys.stderr`, or the :obj:`file` passed) is a
    terminal: redirected to a file, a pipe or a CI log, a bar would write one line per
    update. Every bar of the package and of its benchmarks is made by this function.

    Args:
        iterable (Iterable): What to iterate over.
        desc (str, optional): The label of the bar.
        enabled (bool, optional): :obj:`False` never draws the bar (e.g. from a
            :obj:`log=False` or :obj:`--no-progress` argument). (default: :obj:`True`)
        **kwargs: Further arguments of :class:`tqdm.tqdm` (not :obj:`disable`).

    Returns:
        tqdm.tqdm: The bar, which iterates like :obj:`iterable`.
    """
    enabled = check_bool(enabled, 'enabled')  # (a str such as 'no' drew the bar)
    # tqdm's disable=None is its own "disable unless the output is a terminal".
    return tqdm(iterable, desc=desc, disable=None if enabled else True, **kwargs)
