"""Small shared helpers. Plotting needs the ``plot`` extra (matplotlib),
imported only when :func:`plot_complex` is called."""
from torch_geometric_san.utils.memory import keep_freed_memory
from torch_geometric_san.utils.plot import plot_complex
from torch_geometric_san.utils.progress import progress_bar

__all__ = ["keep_freed_memory", "plot_complex", "progress_bar"]
