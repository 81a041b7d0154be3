"""Tutorial 2: classify ocean drifter trajectories with a SAN.

Each of the 200 drifters of the dataset is an edge flow on one shared
2-complex around Madagascar (133 vertices, 320 edges, 186 triangles), labelled
by the direction it turns around the island (clockwise or counter-clockwise).
A one-layer SAN on the flows, followed by a linear readout of the features of
all edges, learns the label on the 160 training drifters and is tested on the
40 others.

    python docs/examples/ocean_drifters.py [--root data/ocean_drifters] [--epochs 50]

The raw file ``dataBuoys.jld2`` is downloaded into ``ROOT/raw`` (or put it
there by hand, e.g. from ``../shared/data/ocean_drifters/``).
"""
import argparse

import torch
import torch.nn.functional as F

from torch_geometric_san.datasets import OceanDriftersDataset
from torch_geometric_san.nn.models import SAN


def main(root='data/ocean_drifters', epochs=50, batch_size=32, seed=0):
    torch.manual_seed(seed)

    # 1. The two splits share one complex; dataset.x_1 stacks the flows of
    #    all drifters as [num_drifters, N_1, 1] and dataset.y their labels.
    train = OceanDriftersDataset(root, split='train', log=False)
    test = OceanDriftersDataset(root, split='test', log=False)
    complex = train.complex
    num_edges = complex.num_simplices(1)
    print(f'{len(train)} training and {len(test)} test drifters on '
          f'{[complex.num_simplices(k) for k in range(3)]} simplices')

    # 2. The order-1 operators of the complex, once for all drifters: the
    #    layers see the same tensors at every step and reuse what they built.
    ops = complex.operators(1)

    # 3. One SANConv layer (J_u = J_d = 3, harmonic filter of order 5) with 4
    #    features per edge, tanh, then a linear map of the flattened
    #    [N_1 * 4] edge features to the two class logits.
    model = SAN(in_channels=1, hidden_channels=4, num_layers=1, out_channels=2,
                readout='flatten', num_simplices=num_edges, readout_layers=1,
                act='tanh', conv_kwargs=dict(J_up=3, J_down=3, J_harmonic=5, eps=0.9))
    optimizer = torch.optim.Adam(model.parameters(), lr=0.01, weight_decay=0.003)

    # 4. Train on mini-batches of drifters: a [B, N_1, 1] signal on the shared
    #    complex gives [B, 2] logits.
    for epoch in range(1, epochs + 1):
        model.train()
        total = 0.0
        for batch in torch.randperm(len(train)).split(batch_size):
            optimizer.zero_grad()
            loss = F.cross_entropy(model(train.x_1[batch], ops), train.y[batch])
            loss.backward()
            optimizer.step()
            total += loss.item() * len(batch)
        if epoch % 10 == 0:
            print(f'epoch {epoch:3d}, training loss {total / len(train):.4f}')

    # 5. Test accuracy on the 40 held-out drifters.
    model.eval()
    with torch.no_grad():
        pred = model(test.x_1, ops).argmax(dim=-1)
    accuracy = (pred == test.y).float().mean().item()
    print(f'test accuracy: {accuracy:.3f}')
    return accuracy


if __name__ == '__main__':
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--root', default='data/ocean_drifters')
    parser.add_argument('--epochs', type=int, default=50)
    parser.add_argument('--batch-size', type=int, default=32)
    parser.add_argument('--seed', type=int, default=0)
    args = parser.parse_args()
    main(args.root, args.epochs, args.batch_size, args.seed)
