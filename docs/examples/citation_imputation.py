"""Tutorial 3: impute missing citation counts on a co-authorship complex.

A k-simplex of the complex is a set of k + 1 co-authors, its value the number
of citations of their joint papers. A random 30 % of the k-simplices hide
their value (the input there is the median of the known values); a network of
SANConv layers on the k-simplices is trained on the known values and predicts
the hidden ones, transductively on the one complex.

    python docs/examples/citation_imputation.py [--root data/citation_complex] [--order 1]

The raw files ``150250_simplices.npy`` and ``150250_cochains.npy`` are
downloaded into ``ROOT/raw`` (or put them there by hand, e.g. from
``../shared/data/citation_complex/``).
"""
import argparse

import torch
import torch.nn.functional as F

from torch_geometric_san.datasets import CitationComplexDataset
from torch_geometric_san.nn.models import SAN


def within_5_percent(pred, target):
    # The paper's criterion: a prediction within +-5 % of the true count.
    return ((pred - target).abs() <= 0.05 * target.abs()).float().mean().item()


def main(root='data/citation_complex', order=1, epochs=300, input_masking=0.3, seed=0):
    torch.manual_seed(seed)

    # 1. One item per mask: the complex up to order k + 1, with x_k (the counts,
    #    the hidden ones replaced by the median of the known ones), y (the true
    #    counts), train_mask (known) and test_mask (hidden).
    dataset = CitationComplexDataset(root, order=order, missing_rate=0.3, num_masks=1,
                                     log=False)
    data = dataset[0]
    x, y = data[f'x_{order}'], data.y
    known, hidden = data.train_mask, data.test_mask
    print(f'{data.num_simplices(order)} {order}-simplices, {int(hidden.sum())} hidden')

    # 2. Three SANConv layers on the k-simplices; SAN(order=k) reads x_k and the
    #    order-k Laplacians from the data object, or takes them as arguments.
    model = SAN(in_channels=1, hidden_channels=32, num_layers=3, out_channels=1,
                order=order, conv_kwargs=dict(J_up=2, J_down=2, J_harmonic=0))
    optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
    ops = data.operators(order)
    median = x[hidden][0]  # the input of a hidden simplex: the known values' median

    # 3. Train on the known simplices (L1 loss). The known inputs equal their
    #    targets, so a network could just copy its input; hiding a further
    #    random part of the known inputs at every epoch (set to the median, as
    #    the hidden ones are) makes it learn to impute from the neighbours.
    for epoch in range(1, epochs + 1):
        model.train()
        optimizer.zero_grad()
        drop = known & (torch.rand(known.shape) < input_masking)
        out = model(torch.where(drop.view(-1, 1), median, x), ops)
        loss = F.l1_loss(out[known], y[known])
        loss.backward()
        optimizer.step()
        if epoch % 100 == 0:
            print(f'epoch {epoch:3d}, training L1 loss {loss.item():.2f}')

    # 4. Evaluate on the hidden simplices only, against the median input.
    model.eval()
    with torch.no_grad():
        pred = model(x, ops)
    scores = {'median': within_5_percent(x[hidden], y[hidden]),
              'SAN': within_5_percent(pred[hidden], y[hidden])}
    l1 = {'median': F.l1_loss(x[hidden], y[hidden]).item(),
          'SAN': F.l1_loss(pred[hidden], y[hidden]).item()}
    for name in scores:
        print(f'{name:>6}: {100 * scores[name]:.1f} % of the hidden counts within 5 %, '
              f'mean absolute error {l1[name]:.1f}')
    return scores, l1


if __name__ == '__main__':
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--root', default='data/citation_complex')
    parser.add_argument('--order', type=int, default=1)
    parser.add_argument('--epochs', type=int, default=300)
    parser.add_argument('--input-masking', type=float, default=0.3)
    parser.add_argument('--seed', type=int, default=0)
    args = parser.parse_args()
    main(args.root, args.order, args.epochs, args.input_masking, args.seed)
