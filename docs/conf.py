"""Sphinx configuration of the torch-geometric-san documentation.

Build with ``make docs`` (or ``sphinx-build -W -b html docs docs/_build/html``).
"""
import os
import sys

# Document the package of this source tree, installed or not.
sys.path.insert(0, os.path.abspath('..'))

import torch_geometric_san  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from inventories import write_inventories  # noqa: E402

project = 'torch-geometric-san'
author = 'torch-geometric-san contributors'
copyright = '2026, torch-geometric-san contributors'
release = version = torch_geometric_san.__version__

extensions = [
    'sphinx.ext.autodoc',
    'sphinx.ext.napoleon',
    'sphinx.ext.mathjax',
    'sphinx.ext.viewcode',
    'sphinx.ext.intersphinx',
    'myst_parser',
]

source_suffix = {'.rst': 'restructuredtext', '.md': 'markdown'}
root_doc = 'index'
exclude_patterns = ['_build', 'examples', 'scripts']

# Docstrings: Google style (Args:, Returns:), and PyG's "Shapes:" section.
napoleon_google_docstring = True
napoleon_numpy_docstring = False
napoleon_custom_sections = ['Shapes']
autodoc_member_order = 'bysource'
autodoc_typehints = 'none'  # the types are in the docstrings, as in PyG
autodoc_default_options = {'show-inheritance': True}
autoclass_content = 'class'

# Links to torch, PyG, Python, NumPy and SciPy: inventories written here (offline) of
# the objects the docs name, see inventories.py.
intersphinx_mapping = write_inventories(
    os.path.join(os.path.dirname(os.path.abspath(__file__)), '_build', 'inventories'))

# Markdown pages: $...$ math, ::: fences, and anchors for headings (#some-section).
myst_enable_extensions = ['dollarmath', 'amsmath', 'colon_fence']
myst_heading_anchors = 3

html_theme = 'alabaster'
html_static_path = ['_static']
html_theme_options = {
    'description': 'Simplicial Attention Networks for PyTorch Geometric',
    'fixed_sidebar': True,
}
