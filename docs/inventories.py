"""Offline intersphinx inventories of the outside objects these docs refer to.

Sphinx's intersphinx links ``:class:`torch_geometric.data.Data``` and the like to the
projects' own documentation, reading each project's ``objects.inv``; the machines that
build these docs have no internet access, so :func:`write_inventories` writes small
inventories (Sphinx's version 2 format) of exactly the objects the docs name, and
``conf.py`` hands them to intersphinx as local files. Links point at each project's
stable documentation. ``tests/docs/test_inventories.py`` checks that every name here is
an object of the installed package, so a renamed object shows up as a failing test;
add a name here when the docs start to refer to one (``sphinx-build -n`` lists the
references left unresolved).
"""
import os
import zlib
from typing import Dict, List, Tuple

# project: (documentation root, [(name, role, page#anchor or '' for '<name>.html#<name>')])
# Roles are Sphinx's Python object types: class, function, method, property, module,
# data, exception.
Entry = Tuple[str, str, str]
INVENTORIES: Dict[str, Tuple[str, List[Entry]]] = {
    'torch': ('https://docs.pytorch.org/docs/stable/', [
        ('torch', 'module', 'index.html'),
        ('torch.Tensor', 'class', 'tensors.html#torch.Tensor'),
        ('torch.Tensor.to', 'method', 'generated/torch.Tensor.to.html#torch.Tensor.to'),
        ('torch.dtype', 'class', 'tensor_attributes.html#torch.dtype'),
        ('torch.float32', 'data', 'tensor_attributes.html#torch.dtype'),
        ('torch.float64', 'data', 'tensor_attributes.html#torch.dtype'),
        ('torch.long', 'data', 'tensor_attributes.html#torch.dtype'),
        ('torch.sparse', 'module', 'sparse.html#module-torch.sparse'),
        ('torch.compile', 'function', ''),
        ('torch.save', 'function', ''),
        ('torch.load', 'function', ''),
        ('torch.nn.Module', 'class', ''),
        ('torch.nn.modules.module.Module', 'class',
         'generated/torch.nn.Module.html#torch.nn.Module'),
        ('torch.nn.Module.to', 'method',
         'generated/torch.nn.Module.html#torch.nn.Module.to'),
        ('torch.nn.SyncBatchNorm', 'class', ''),
        ('torch.nn.SyncBatchNorm.convert_sync_batchnorm', 'method',
         'generated/torch.nn.SyncBatchNorm.html'
         '#torch.nn.SyncBatchNorm.convert_sync_batchnorm'),
        ('torch.nn.parallel.DistributedDataParallel', 'class', ''),
        ('torch.utils.data.DataLoader', 'class',
         'data.html#torch.utils.data.DataLoader'),
        ('torch.utils.data.dataloader.DataLoader', 'class',
         'data.html#torch.utils.data.DataLoader'),
        ('torch.utils.data.distributed.DistributedSampler', 'class',
         'data.html#torch.utils.data.distributed.DistributedSampler'),
        ('torch.utils.data.WeightedRandomSampler', 'class',
         'data.html#torch.utils.data.WeightedRandomSampler'),
        ('torch.utils.cpp_extension.load', 'function',
         'cpp_extension.html#torch.utils.cpp_extension.load'),
    ]),
    'torch_geometric': ('https://pytorch-geometric.readthedocs.io/en/stable/', [
        ('torch_geometric.data.Data', 'class', ''),
        ('torch_geometric.data.data.Data', 'class',
         'generated/torch_geometric.data.Data.html#torch_geometric.data.Data'),
        ('torch_geometric.data.Data.to', 'method',
         'generated/torch_geometric.data.Data.html#torch_geometric.data.Data.to'),
        ('torch_geometric.data.Data.num_node_features', 'property',
         'generated/torch_geometric.data.Data.html'
         '#torch_geometric.data.Data.num_node_features'),
        ('torch_geometric.data.Data.num_edge_features', 'property',
         'generated/torch_geometric.data.Data.html'
         '#torch_geometric.data.Data.num_edge_features'),
        ('torch_geometric.data.Batch', 'class', ''),
        ('torch_geometric.data.Batch.from_data_list', 'method',
         'generated/torch_geometric.data.Batch.html'
         '#torch_geometric.data.Batch.from_data_list'),
        ('torch_geometric.data.Dataset', 'class', ''),
        ('torch_geometric.data.Dataset.num_features', 'property',
         'generated/torch_geometric.data.Dataset.html'
         '#torch_geometric.data.Dataset.num_features'),
        ('torch_geometric.data.Dataset.num_node_features', 'property',
         'generated/torch_geometric.data.Dataset.html'
         '#torch_geometric.data.Dataset.num_node_features'),
        ('torch_geometric.data.Dataset.num_edge_features', 'property',
         'generated/torch_geometric.data.Dataset.html'
         '#torch_geometric.data.Dataset.num_edge_features'),
        ('torch_geometric.data.InMemoryDataset', 'class', ''),
        ('torch_geometric.data.in_memory_dataset.InMemoryDataset', 'class',
         'generated/torch_geometric.data.InMemoryDataset.html'
         '#torch_geometric.data.InMemoryDataset'),
        ('torch_geometric.datasets.TUDataset', 'class', ''),
        ('torch_geometric.loader.DataLoader', 'class', ''),
        ('torch_geometric.loader.NeighborLoader', 'class', ''),
        ('torch_geometric.sampler.NeighborSampler', 'class', ''),
        ('torch_geometric.nn.conv.GATConv', 'class', ''),
        ('torch_geometric.nn.conv.MessagePassing', 'class', ''),
        ('torch_geometric.nn.conv.message_passing.MessagePassing', 'class',
         'generated/torch_geometric.nn.conv.MessagePassing.html'
         '#torch_geometric.nn.conv.MessagePassing'),
        ('torch_geometric.transforms.BaseTransform', 'class', ''),
        ('torch_geometric.transforms.base_transform.BaseTransform', 'class',
         'generated/torch_geometric.transforms.BaseTransform.html'
         '#torch_geometric.transforms.BaseTransform'),
        ('torch_geometric.utils.softmax', 'function', ''),
        ('torch_geometric.utils.to_networkx', 'function', ''),
    ]),
    'python': ('https://docs.python.org/3/', [
        ('copy.deepcopy', 'function', 'library/copy.html#copy.deepcopy'),
        ('os.PathLike', 'class', 'library/os.html#os.PathLike'),
        ('os.replace', 'function', 'library/os.html#os.replace'),
        ('pickle.Unpickler', 'class', 'library/pickle.html#pickle.Unpickler'),
        ('pickle.UnpicklingError', 'exception',
         'library/pickle.html#pickle.UnpicklingError'),
    ]),
    'numpy': ('https://numpy.org/doc/stable/', [
        ('numpy.ndarray', 'class', 'reference/generated/numpy.ndarray.html'
         '#numpy.ndarray'),
        ('numpy.searchsorted', 'function', 'reference/generated/numpy.searchsorted.html'
         '#numpy.searchsorted'),
        ('numpy.random.Generator', 'class', 'reference/random/generator.html'
         '#numpy.random.Generator'),
        ('numpy.random.RandomState', 'class', 'reference/random/legacy.html'
         '#numpy.random.RandomState'),
    ]),
    'scipy': ('https://docs.scipy.org/doc/scipy/', [
        (name, role, f'reference/generated/{name}.html#{name}') for name, role in [
            ('scipy.sparse.csc_array', 'class'), ('scipy.sparse.csr_array', 'class'),
            ('scipy.sparse.sparray', 'class'),
            ('scipy.sparse.csgraph.reverse_cuthill_mckee', 'function'),
            ('scipy.spatial.Delaunay', 'class')]
    ]),
}


def inventory_bytes(project: str, entries: List[Entry]) -> bytes:
    r"""The ``objects.inv`` of :obj:`entries` (Sphinx's inventory format, version 2:
    four header lines, then zlib-compressed lines ``name domain:role priority uri
    dispname``, where a ``-`` display name is the name itself)."""
    header = (f'# Sphinx inventory version 2\n# Project: {project}\n# Version: \n'
              '# The remainder of this file is compressed using zlib.\n')
    lines = ''.join(f'{name} py:{role} 1 {uri or f"generated/{name}.html#{name}"} -\n'
                    for name, role, uri in entries)
    return header.encode() + zlib.compress(lines.encode())


def write_inventories(directory: str) -> Dict[str, Tuple[str, str]]:
    r"""Writes one inventory per project into :obj:`directory` and returns the
    ``intersphinx_mapping`` that reads them (documentation root, local file)."""
    os.makedirs(directory, exist_ok=True)
    mapping = {}
    for project, (root, entries) in INVENTORIES.items():
        path = os.path.join(directory, f'{project}.inv')
        with open(path, 'wb') as f:
            f.write(inventory_bytes(project, entries))
        mapping[project] = (root, path)
    return mapping
