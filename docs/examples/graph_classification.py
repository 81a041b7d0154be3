"""Tutorial 5: graph classification with lifting.

Each graph of a TU dataset (PROTEINS by default) is lifted to its clique
2-complex, its node features are carried to the edges and triangles, and a
MultiOrderSAN (one SANConv per order, messages between neighbouring orders,
a readout over all orders) classifies the complexes.

    python docs/examples/graph_classification.py [--root data/TU] [--dataset PROTEINS]
                                                 [--epochs 60] [--seed 0]
"""
import argparse

import torch
import torch.nn.functional as F
from torch_geometric.datasets import TUDataset
from torch_geometric.loader import DataLoader

from torch_geometric_san.nn.models import MultiOrderSAN
from torch_geometric_san.transforms import LiftToCliqueComplex


@torch.no_grad()
def accuracy(model, loader):
    model.eval()
    correct = sum(int((model(batch).argmax(-1) == batch.y).sum()) for batch in loader)
    return correct / len(loader.dataset)


def main(root='data/TU', name='PROTEINS', epochs=60, seed=0):
    torch.manual_seed(seed)

    # 1. The graphs (downloaded into root/name/raw unless the files are there).
    dataset = TUDataset(root, name)

    # 2. Lift every graph once: k + 1 cliques become k-simplices, and
    #    lift_x=True gives each edge and triangle the mean of its vertices'
    #    features; an edge also keeps its own labels (edge_attr, e.g. the bond
    #    types of molecules), as features without an orientation.
    lift = LiftToCliqueComplex(max_order=2, edge_attr='feature', lift_x=True)
    complexes = [lift(graph) for graph in dataset]
    channels = [complexes[0].num_simplex_features(k) for k in range(3)]
    print(f'{len(complexes)} complexes; simplices per order in the first: '
          f'{[complexes[0].num_simplices(k) for k in range(3)]}; features per '
          f'order: {channels}')

    # 3. A random 50 / 25 / 25 % split into training, validation and test.
    perm = torch.randperm(len(complexes))
    n_train, n_val = len(perm) // 2, len(perm) // 4
    splits = perm[:n_train], perm[n_train:n_train + n_val], perm[n_train + n_val:]
    train_loader, val_loader, test_loader = (
        DataLoader([complexes[i] for i in idx], batch_size=64, shuffle=shuffle)
        for idx, shuffle in zip(splits, (True, False, False)))

    # 4. The network: two layers, each a SANConv per order plus the messages
    #    from the faces and cofaces; the readout sums each order over each
    #    complex, concatenates the three sums and an MLP gives the logits.
    model = MultiOrderSAN(channels, 32, num_layers=2,
                          out_channels=dataset.num_classes, max_order=2,
                          readout='sum', combine='cat', dropout=0.2,
                          conv_kwargs=dict(J_up=1, J_down=1, J_harmonic=0))
    optimizer = torch.optim.Adam(model.parameters(), lr=0.005)

    # 5. Train; keep the test accuracy of the epoch with the best validation
    #    accuracy (the test split plays no part in the choice).
    best_val, test_at_best = -1.0, 0.0
    for epoch in range(1, epochs + 1):
        model.train()
        for batch in train_loader:  # a Batch of complexes: block-diagonal operators
            optimizer.zero_grad()
            F.cross_entropy(model(batch), batch.y).backward()
            optimizer.step()
        val = accuracy(model, val_loader)
        if val > best_val:
            best_val, test_at_best = val, accuracy(model, test_loader)
        if epoch % 10 == 0:
            print(f'epoch {epoch:3d}: validation accuracy {val:.3f}')
    print(f'test accuracy at the best validation epoch: {test_at_best:.3f}')
    return test_at_best


if __name__ == '__main__':
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--root', default='data/TU')
    parser.add_argument('--dataset', default='PROTEINS')
    parser.add_argument('--epochs', type=int, default=60)
    parser.add_argument('--seed', type=int, default=0)
    args = parser.parse_args()
    main(args.root, args.dataset, args.epochs, args.seed)
