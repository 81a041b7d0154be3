"""Tutorial 1: lift a graph to its clique complex and train SANConv on it.

The task is flow imputation on the edges of a random geometric graph: the
edge signal is the gradient of a smooth potential on the nodes, a random 30 %
of the edges hide their value, and a two-layer network of SANConv layers
predicts the hidden values from the known ones.

    python docs/examples/lift_and_train.py [--epochs 150] [--seed 0]
"""
import argparse

import numpy as np
import scipy.spatial
import torch
import torch.nn.functional as F
from torch_geometric.data import Data

from torch_geometric_san.nn import SANConv
from torch_geometric_san.transforms import LiftToCliqueComplex


def random_geometric_graph(num_nodes, radius, generator):
    # Nodes uniform in the unit square, an edge between nodes closer than
    # `radius`, each edge stored once in a random direction.
    pos = torch.rand(num_nodes, 2, generator=generator)
    pairs = scipy.spatial.cKDTree(pos.numpy()).query_pairs(radius, output_type='ndarray')
    edge_index = torch.from_numpy(pairs.T.astype(np.int64))
    flip = torch.rand(edge_index.size(1), generator=generator) < 0.5
    edge_index[:, flip] = edge_index.flip(0)[:, flip]
    return pos, edge_index


class Net(torch.nn.Module):
    def __init__(self, in_channels, hidden_channels):
        super().__init__()
        # Edge flows are oriented: orientation_equivariant=True lets the
        # layers use the signs of the Laplacians (see "SAN in five minutes").
        kwargs = dict(J_up=2, J_down=2, J_harmonic=2, orientation_equivariant=True,
                      bias=False)
        self.conv1 = SANConv(in_channels, hidden_channels, **kwargs)
        self.conv2 = SANConv(hidden_channels, 1, **kwargs)

    def forward(self, x, ops):
        # The same operators value for both layers: each operator form is
        # derived once, by the first layer that needs it.
        x = torch.tanh(self.conv1(x, ops))
        return self.conv2(x, ops)


def main(epochs=150, seed=0):
    torch.manual_seed(seed)
    generator = torch.Generator().manual_seed(seed)

    # 1. A graph with a signal on its edges: the gradient of a potential phi,
    #    phi[dst] - phi[src] along each edge's direction.
    pos, edge_index = random_geometric_graph(200, 0.12, generator)
    phi = torch.sin(4 * pos[:, 0]) + torch.cos(3 * pos[:, 1])
    src, dst = edge_index
    graph = Data(pos=pos, edge_index=edge_index,
                 edge_attr=(phi[dst] - phi[src]).view(-1, 1),
                 num_nodes=pos.size(0))

    # 2. Lift it: every k + 1 clique becomes a k-simplex. edge_attr becomes
    #    the edge signal x_1, re-oriented from the lower to the higher node id.
    data = LiftToCliqueComplex(max_order=2)(graph)
    print('simplices per order:', [data.num_simplices(k) for k in range(3)])
    low, high = data.simplices_1.t()
    assert torch.allclose(data.x_1.view(-1), phi[high] - phi[low])

    # 3. Hide 30 % of the edge values. Input: the value (0 where hidden) and
    #    an indicator of known values.
    flow = data.x_1
    num_edges = data.num_simplices(1)
    hidden = torch.rand(num_edges, generator=generator) < 0.3
    known = ~hidden

    def inputs(mask):
        return torch.cat([flow * mask.view(-1, 1), mask.float().view(-1, 1)], dim=1)

    # The order-1 operators, each as (index, weight): upper, lower and the
    # normalised Hodge Laplacian.
    ops = data.operators(1)

    model = Net(in_channels=2, hidden_channels=16)
    optimizer = torch.optim.Adam(model.parameters(), lr=0.01)

    # 4. Train: every epoch hides a further random 30 % of the known edges and
    #    learns to predict them. The hidden edges are never used.
    for epoch in range(1, epochs + 1):
        model.train()
        optimizer.zero_grad()
        drop = known & (torch.rand(num_edges, generator=generator) < 0.3)
        out = model(inputs(known & ~drop), ops)
        loss = F.mse_loss(out[drop], flow[drop])
        loss.backward()
        optimizer.step()
        if epoch % 50 == 0:
            print(f'epoch {epoch:3d}, training loss {loss.item():.4f}')

    # 5. Evaluate on the hidden edges: the squared error relative to the
    #    signal's (1.0 is what predicting zero gets).
    model.eval()
    with torch.no_grad():
        pred = model(inputs(known), ops)
    error = (pred[hidden] - flow[hidden]).pow(2).sum() / flow[hidden].pow(2).sum()
    error = error.item()
    print(f'relative squared error on the {int(hidden.sum())} hidden edges: {error:.3f}')
    return error


if __name__ == '__main__':
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--epochs', type=int, default=150)
    parser.add_argument('--seed', type=int, default=0)
    args = parser.parse_args()
    main(args.epochs, args.seed)
