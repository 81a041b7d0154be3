r"""Mini-batches of one large complex: neighbour sampling of k-simplices."""
from typing import Any, Callable, Dict, Iterator, List, Optional, Sequence, Tuple, Union

import weakref

import torch
from torch import Tensor

from torch_geometric_san.data import SimplicialComplexData, simplex_attr_orders
from torch_geometric_san.loader.simplicial_neighbor_sampler import \
    SimplicialNeighborSampler
from torch_geometric_san.loader.utils import (GraphRows, SimplicialAdjacency,
                                              _check_boundaries,
                                              _check_one_complex, _subcomplex,
                                              edge_rows)
from torch_geometric_san.utils.validation import check_int, check_simplex_ids

__all__ = ["PermutationSampler", "SimplicialNeighborLoader"]


class SimplicialNeighborLoader(torch.utils.data.DataLoader):
    r"""A data loader that samples the neighbourhoods of seed k-simplices of one
    complex, the analogue of :class:`torch_geometric.loader.NeighborLoader` for the
    k-simplices of a :class:`~torch_geometric_san.data.SimplicialComplexData`.

    It is a :class:`torch.utils.data.DataLoader` over the seeds: each mini-batch of
    :obj:`batch_size` seeds is expanded by
    :class:`~torch_geometric_san.loader.SimplicialNeighborSampler` (for each hop, up
    to :obj:`num_neighbors[h]` neighbours per simplex over the union of the upper
    and lower adjacency; :obj:`-1` takes all) and turned into the sub-complex of the
    sampled simplices by :func:`~torch_geometric_san.loader.simplicial_subcomplex`:
    a :class:`~torch_geometric_san.data.SimplicialComplexData` of order
    :math:`k` holding

    * the sampled k-simplices, relabelled: the seeds first (local ids
      ``0..batch_size - 1``), then hop by hop, with ``x_k`` and every other
      attribute of first dimension :math:`N_k` (labels, masks) indexed accordingly;
    * all their faces (orders :math:`0..k-1`, with their ``x_j``), so that it is a
      complex and ``batch.operators(k)`` gives what the layers take; vertex
      attributes (e.g. ``pos``) follow the kept vertices, and a lifted graph's
      ``edge_index`` (with its edge attributes) becomes the subgraph they induce;
    * the full complex's ``up``, ``down`` and normalised ``hodge`` Laplacians
      restricted to the sampled simplices, with the full complex's ``spectrum_k``:
      nothing is normalised again on a sample, so a seed's output equals its
      full-batch output when the hops cover the receptive field of the model
      (``num_neighbors=[-1] * L`` for a model that looks :math:`L` hops far: a
      :class:`~torch_geometric_san.nn.conv.SANConv` looks
      :math:`\max(J_u, J_d, J_h)` hops, a stack of layers the sum);
    * ``n_id`` (the ids in the full complex of the sampled k-simplices, ``[M]``),
      ``n_id_j`` for the faces of order :math:`j < k`, ``batch_size`` (the number
      of seeds: the loss is taken on ``out[:batch.batch_size]``) and
      ``num_sampled_simplices`` (the seeds and the simplices first reached in each
      hop).

    Simplices at the border of a sample lack some neighbours, so their rows of the
    restricted operators differ from the full complex's: with all neighbours of
    :math:`L` hops and a model that looks :math:`R \le L` hops far, the outputs of
    the simplices at most :math:`L - R` hops from a seed (the seeds among them) are
    exact, the others are not. This is for models of order :math:`k`: a multi-order
    model (:class:`~torch_geometric_san.nn.models.MultiOrderSAN`) also reads the lower
    orders, of which a sample holds only the faces of its k-simplices, so its outputs
    are exact only where every lower simplex they depend on is such a face. The
    sampling runs where :obj:`data` lives: keep it on
    the CPU and move each batch (``batch.to(device)``).

    Changes to :obj:`data` after the loader was made (attributes set or replaced,
    tensors edited in place) and a new :attr:`transform` reach the next batch made
    in this process (:obj:`num_workers=0`, as in PyG) and, with worker processes, the
    next epoch: worker processes get the complex and the transform as they are when
    they start (batches made ahead in them keep the state they were made with), and
    persistent workers (:obj:`persistent_workers=True`) are started again for an
    epoch where either changed. Attributes that belong to no simplices (e.g. a
    graph-level tensor) are the complex's own tensors in every batch, as in PyG's
    loaders: a transform should not edit them in place.

    For DistributedDataParallel, give each rank its share of the seeds, e.g.
    ``sampler=DistributedSampler(range(len(input_ids)), ...)`` (see
    ``docs/distributed.md``).

    Args:
        data (SimplicialComplexData): One complex, with its ``spectrum_k`` (as the
            constructors store it). It is not modified.
        num_neighbors (Sequence[int]): The number of neighbours drawn per simplex in
            each hop; :obj:`-1` takes all of them.
        order (int, optional): The order :math:`k` of the seeds. (default: :obj:`1`)
        input_simplices (torch.Tensor, optional): The seeds: a boolean mask
            :obj:`[N_k]` or distinct ids of k-simplices. (default: :obj:`None`, all
            k-simplices)
        transform (callable, optional): A function applied to each mini-batch.
            (default: :obj:`None`)
        attrs (Dict[str, int], optional): The order of attributes whose first
            dimension alone does not tell it (e.g. :obj:`{'pos': 0}` where there
            are as many edges as vertices), as for
            :class:`~torch_geometric_san.transforms.ReorderSimplices`; the loader
            warns about the ambiguous ones it copies.
            (default: :obj:`None`)
        **kwargs (optional): Arguments of :class:`torch.utils.data.DataLoader`, such
            as :obj:`batch_size`, :obj:`shuffle`, :obj:`num_workers`,
            :obj:`drop_last` or :obj:`sampler`. :obj:`shuffle=True` draws the order
            of the seeds with :class:`PermutationSampler` (and :obj:`generator`),
            which holds it as one tensor instead of a Python list.

    Raises:
        TypeError: A wrong type of :obj:`data`, :obj:`input_simplices` or
            :obj:`num_neighbors`, or a :obj:`dataset` or :obj:`collate_fn`
            argument (the loader sets both).
        ValueError: An order out of range, a complex not on the CPU, without its
            spectrum or with boundary entries not laid out as the constructors
            store them, seeds out of range or repeated, a mask of the wrong size,
            a feature ``x_j``
            or an attribute of :obj:`attrs` missing or without :math:`N_j` rows;
            a :obj:`sampler` (or :obj:`batch_sampler`) that draws with
            replacement (:obj:`replacement=True`, e.g.
            :class:`~torch.utils.data.WeightedRandomSampler`); while iterating,
            another sampler that gives a seed twice in one batch.

    Example:
        >>> from torch_geometric_san.data import SimplicialComplexData
        >>> data = SimplicialComplexData.from_simplices(
        ...     [[0, 1, 2], [1, 2, 3], [2, 3, 4]], close=True,
        ...     x_1=torch.arange(7.).view(-1, 1))
        >>> loader = SimplicialNeighborLoader(data, num_neighbors=[-1], order=1,
        ...                                   input_simplices=torch.tensor([0, 6]),
        ...                                   batch_size=1)
        >>> batch = next(iter(loader))
        >>> batch.n_id, batch.batch_size, batch.num_sampled_simplices
        (tensor([0, 1, 2, 3]), 1, [1, 3])
        >>> batch.x_1.view(-1)
        tensor([0., 1., 2., 3.])
        >>> batch.operators(1)  # doctest: +NORMALIZE_WHITESPACE
        SimplicialOperators(num_simplices=4, up=12, down=14, hodge=6, boundary=8,
                            coboundary=0)
    """
    def __init__(
        self,
        data: SimplicialComplexData,
        num_neighbors: Sequence[int],
        order: int = 1,
        input_simplices: Optional[Tensor] = None,
        transform: Optional[Callable[[SimplicialComplexData], Any]] = None,
        attrs: Optional[Dict[str, int]] = None,
        **kwargs: Any,
    ):
        for name in ('dataset', 'collate_fn'):
            if name in kwargs:
                raise TypeError(f"SimplicialNeighborLoader sets '{name}' itself; "
                                f"pass the seeds as input_simplices")
        for name in ('sampler', 'batch_sampler'):
            sampler = kwargs.get(name)
            if getattr(sampler, 'replacement', False) or \
                    getattr(getattr(sampler, 'sampler', None), 'replacement', False):
                # (refused at once, not when a batch happens to repeat a seed)
                raise ValueError(f"the {name} draws with replacement, so a batch may "
                                 f"hold a seed twice; a sampled sub-complex holds each "
                                 f"simplex once: use a sampler without replacement, "
                                 f"or weight the loss instead")
        _check_one_complex(data)
        order = check_int(order, 'order', minimum=0, maximum=data.order)
        if f'spectrum_{order}' not in data:
            raise ValueError(f"the complex has no 'spectrum_{order}' (the largest "
                             f"eigenvalues of its Laplacians), which the sampled "
                             f"operators need; build it with a constructor of "
                             f"SimplicialComplexData")
        _check_transform(transform)
        self.data = data
        self.order = order
        self.input_ids = torch.arange(data.num_simplices(order)) \
            if input_simplices is None else check_simplex_ids(
                input_simplices, data.num_simplices(order), order, 'input_simplices')
        _check_boundaries(data, order)
        self.simplex_sampler = SimplicialNeighborSampler(data, order, num_neighbors)
        self.adjacency = [SimplicialAdjacency(data, j) for j in range(order)] + [
            self.simplex_sampler.adjacency]
        self.attrs = attrs
        # What the workers get (the collate function is sent to each): the sampling
        # state alone, not the loader, whose generator a spawned worker cannot
        # rebuild.
        self._collate = _Collate(data, order, self.input_ids, self.simplex_sampler,
                                 self.adjacency, attrs, transform)
        if (kwargs.get('shuffle') and kwargs.get('sampler') is None
                and kwargs.get('batch_sampler') is None):
            kwargs['shuffle'] = False  # (the DataLoader refuses shuffle with a sampler)
            kwargs['sampler'] = PermutationSampler(self.input_ids.numel(),
                                                   kwargs.get('generator'))
        super().__init__(range(self.input_ids.numel()), collate_fn=self._collate,
                         **kwargs)
        self._started: Optional[List[Any]] = None  # (the state persistent workers got)

    def __iter__(self) -> Iterator[Any]:
        # Persistent workers keep the collate function they were started with (the
        # DataLoader sends it once): dropped, so that the DataLoader starts new ones,
        # where the complex or the transform changed since.
        if self.persistent_workers and self.num_workers > 0:
            state = self._collate.state()
            if self._started is not None and not _same_state(state, self._started):
                self._iterator = None
            self._started = state
        return super().__iter__()

    def collate_fn(self, index: Union[Tensor, List[int], int]) -> Any:
        r"""The mini-batch of the seeds at positions :obj:`index` of the input.

        Args:
            index (torch.Tensor or List[int] or int): Positions in the seeds (one
                position where :obj:`batch_size` is :obj:`None`).

        Returns:
            SimplicialComplexData: The sampled sub-complex (after :obj:`transform`).
        """
        return self._collate(index)

    @property
    def transform(self) -> Optional[Callable[[SimplicialComplexData], Any]]:
        r"""The transform of each sampled batch (may be replaced between epochs)."""
        return self._collate.transform

    @transform.setter
    def transform(self, transform: Optional[Callable[[SimplicialComplexData], Any]]
                  ) -> None:
        self._collate.transform = _check_transform(transform)

    @property
    def edge_rows(self) -> Optional[GraphRows]:
        r"""The columns of the complex's graph ``edge_index`` by source vertex
        (:func:`~torch_geometric_san.loader.edge_rows`), or :obj:`None`."""
        return self._collate.current()[0]

    @property
    def attr_orders(self) -> Dict[str, Union[int, str]]:
        r"""The per-simplex attributes of the complex, as
        :func:`~torch_geometric_san.data.simplex_attr_orders` gives them now."""
        return self._collate.current()[1]

    def __repr__(self) -> str:
        return (f'{self.__class__.__name__}(order={self.order}, '
                f'num_neighbors={self.simplex_sampler.num_neighbors})')


def _same_state(state: List[Any], other: List[Any]) -> bool:
    # Whether two _Collate.state() are of the same complex and transform.
    return len(state) == len(other) and all(
        a[0] == b[0] and a[1]() is b[1]() and a[2:] == b[2:]
        for a, b in zip(state, other))


def _check_transform(transform: Any) -> Any:
    # A transform of the batches: None or a callable.
    if transform is not None and not callable(transform):
        raise TypeError(f"transform must be callable, not {type(transform).__name__}")
    return transform


class _Collate:
    # The loader's collate function: the sub-complex of a batch of seed positions,
    # from the complex, the sampler and the adjacency tables (picklable without the
    # loader). Which attributes follow which simplices, and the graph's edges by
    # source vertex, are worked out again where the complex's attributes changed
    # (an attribute set after the loader was made, such as labels or a mask, was
    # copied whole into every batch).
    def __init__(self, data: SimplicialComplexData, order: int, input_ids: Tensor,
                 sampler: SimplicialNeighborSampler,
                 adjacency: List[SimplicialAdjacency], attrs: Optional[Dict[str, int]],
                 transform: Optional[Callable[[SimplicialComplexData], Any]]):
        self.data, self.order, self.input_ids = data, order, input_ids
        self.sampler, self.adjacency = sampler, adjacency
        self.attrs, self.transform = attrs, transform
        self._layout: Any = None
        self._graph: Any = None
        self.current()

    def current(self) -> Tuple[Optional[GraphRows], Dict[str, Any]]:
        # (edge_rows, attr_orders) of the complex as it is now.
        data = self.data
        graph = data.edge_index  # a lifted graph's, kept on the complex (or None)
        layout = (tuple((key, tuple(value.shape) if isinstance(value, Tensor) else None)
                        for key, value in data._store.items()),
                  # (an inference tensor has no version counter; it cannot be
                  # changed in place outside inference mode either)
                  graph._version if isinstance(graph, Tensor) and
                  not graph.is_inference() else None)
        # (the graph itself is compared, not its id: a new edge_index may take the id
        # of a freed one)
        if self._layout is None or graph is not self._graph or \
                layout[1] != self._layout[1]:
            self.edge_rows = (edge_rows(graph, data.num_simplices(0))
                              if isinstance(graph, Tensor) else None)
            self._graph = graph
        if layout != self._layout:
            self.attr_orders = simplex_attr_orders(data, self.attrs,
                                                   'SimplicialNeighborLoader')
            self._layout = layout
        return self.edge_rows, self.attr_orders

    def state(self) -> List[Any]:
        # What the batches depend on: (name, reference, version counter) of the
        # transform and of each value of the complex, tensors by weak reference
        # and version (not kept alive), other values by identity (changes inside
        # them, e.g. an item appended to a list, are not seen).
        def entry(name: str, value: Any) -> Tuple[Any, ...]:
            if not isinstance(value, Tensor):
                return name, lambda: value, None
            return (name, weakref.ref(value),
                    None if value.is_inference() else value._version)
        return [entry('transform', self.transform)] + [
            entry(key, value) for key, value in self.data._store.items()]

    def __getstate__(self) -> Dict[str, Any]:
        # (sent to spawned workers: the graph's rows as of its contents sent with it)
        self.current()
        return self.__dict__.copy()

    def __setstate__(self, state: Dict[str, Any]) -> None:
        # A tensor's version counter is not pickled: the rows were computed for the
        # contents of the graph as it was sent, whose own counter is the unpickled one.
        self.__dict__.update(state)
        graph = self._graph
        if isinstance(graph, Tensor) and not graph.is_inference():
            self._layout = (self._layout[0], graph._version)

    def __call__(self, index: Union[Tensor, List[int], int]) -> Any:
        # (one position, not a list, where the DataLoader has batch_size=None)
        seeds = self.input_ids[torch.as_tensor(index, dtype=torch.long).view(-1)]
        if seeds.numel() > 1 and torch.unique(seeds).numel() < seeds.numel():
            # (the sub-complex would hold the simplex twice: the faces' messages of
            # a multi-order model counted it twice)
            raise ValueError(
                "the sampler gave a seed twice in one batch (a sampler with "
                "replacement, such as WeightedRandomSampler?); a sampled sub-complex "
                "holds each simplex once: use a sampler without replacement, or "
                "weight the loss instead")
        graph_rows, attr_orders = self.current()
        n_id, num_sampled = self.sampler.sample(seeds)
        batch = _subcomplex(self.data, self.order, n_id, self.adjacency,
                           graph_rows, attr_orders)
        batch.batch_size = seeds.numel()
        batch.num_sampled_simplices = num_sampled
        return batch if self.transform is None else self.transform(batch)


class PermutationSampler(torch.utils.data.Sampler):
    r"""The positions :math:`0, \ldots, n - 1` in a new random order on every
    pass, as :class:`torch.utils.data.RandomSampler` gives them, held as one
    tensor (8 bytes a position) and handed out in chunks, where
    :class:`~torch.utils.data.RandomSampler` makes a Python list of them (about 40
    bytes a position: hundreds of MB for the millions of seeds of a large
    complex). :class:`SimplicialNeighborLoader` uses it for :obj:`shuffle=True`.

    Args:
        n (int): The number of positions.
        generator (torch.Generator, optional): The random generator of the
            permutations. (default: :obj:`None`: as
            :class:`~torch.utils.data.RandomSampler`, a generator seeded on each
            pass by one draw of PyTorch's global one)
    """
    chunk = 65536

    def __init__(self, n: int, generator: Optional[torch.Generator] = None):
        if generator is not None and not isinstance(generator, torch.Generator):
            raise TypeError(f"generator must be a torch.Generator, not "
                            f"{type(generator).__name__}")
        self.n = check_int(n, 'n', minimum=0)
        self.generator = generator

    def __len__(self) -> int:
        return self.n

    def __iter__(self) -> Iterator[int]:
        generator = self.generator
        if generator is None:  # (as RandomSampler: one draw of the global generator)
            generator = torch.Generator().manual_seed(
                int(torch.empty((), dtype=torch.int64).random_()))
        order = torch.randperm(self.n, generator=generator)
        for part in order.split(self.chunk):
            yield from part.tolist()
