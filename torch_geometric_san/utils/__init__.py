"""Small shared helpers. Plotting needs the ``plot`` extra (matplotlib),
imported only when :func:`plot_complex` is called."""
from torch_geometric_san.utils.plot import plot_complex

__all__ = ["plot_complex"]
