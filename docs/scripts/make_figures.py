"""Draws the README figures: one synthetic-flow trajectory per class and one
ocean drifter per class, as edge flows on their complexes.

    python docs/scripts/make_figures.py [--root DIR] [--shared-data DIR]

writes ``docs/_static/synthetic_flow.png`` and ``docs/_static/ocean_drifters.png``.
The ocean raw file is taken from ``--shared-data/ocean_drifters`` (default:
``../shared/data`` beside the repository) when present, and downloaded
otherwise.
"""
import argparse
import os
import shutil
import tempfile
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402

from torch_geometric_san.datasets import (  # noqa: E402
    OceanDriftersDataset,
    SyntheticFlowDataset,
)
from torch_geometric_san.utils import plot_complex  # noqa: E402

REPO = Path(__file__).resolve().parents[2]


def draw_one_per_class(dataset, titles, path):
    # Per class, a typical trajectory: the first whose number of edges is
    # the class median.
    length = (dataset.x_1 != 0).sum(dim=(1, 2))
    fig, axes = plt.subplots(1, 2, figsize=(11, 5.5))
    for label, (ax, title) in enumerate(zip(axes, titles)):
        median = length[dataset.y == label].median()
        idx = int(((dataset.y == label) & (length == median)).nonzero()[0])
        data = dataset[idx]
        # A colour bar only where edges are traversed more than once.
        plot_complex(data, edge_signal=data.x_1, ax=ax, title=title,
                     colorbar=bool(data.x_1.abs().max() > 1))
    fig.tight_layout()
    fig.savefig(path, dpi=100, bbox_inches="tight")
    plt.close(fig)
    print(f"wrote {path}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", help="dataset root (default: a temporary "
                        "directory)")
    parser.add_argument("--shared-data", default=str(REPO.parent / "shared" /
                                                     "data"))
    parser.add_argument("--out", default=str(REPO / "docs" / "_static"))
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(args.root or tmp)
        synthetic = SyntheticFlowDataset(str(root / "synthetic_flow"),
                                         split="train")
        draw_one_per_class(
            synthetic, ["Synthetic flow, label 0 (bottom-left hole)",
                        "Synthetic flow, label 1 (top-right hole)"],
            os.path.join(args.out, "synthetic_flow.png"))

        raw = Path(args.shared_data) / "ocean_drifters" / "dataBuoys.jld2"
        raw_dir = root / "ocean_drifters" / "raw"
        if raw.is_file() and not (raw_dir / raw.name).exists():
            os.makedirs(raw_dir, exist_ok=True)
            shutil.copy(raw, raw_dir / raw.name)
        ocean = OceanDriftersDataset(str(root / "ocean_drifters"),
                                     split="train")
        draw_one_per_class(
            ocean, ["Ocean drifter, clockwise (label 0)",
                    "Ocean drifter, counter-clockwise (label 1)"],
            os.path.join(args.out, "ocean_drifters.png"))


if __name__ == "__main__":
    main()
