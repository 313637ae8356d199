"""Read the per-step validation losses the author's Phase-2 notebook printed, into a data file.

The author's ``Notebooks/10M/10M_MIXTURE_EXPERIMENT.ipynb`` (pratik376/Why-Partial-Residuals-fails) prints
one line per evaluation while it trains, every 100 steps, in its cell 8 (cells numbered from 0)::

      AttnOnly_std seed=1337 step=  100 train=3.3206 val=3.3672 best=3.3672@100 (14s)

This script reads those lines from a local copy of the notebook (it downloads nothing) and writes one row per
line: the notebook's path in the repository, the cell, configuration, seed, step and the two losses.

    python scripts/author_curves.py path/to/10M_MIXTURE_EXPERIMENT.ipynb [--cell 8] [--out FILE.csv]
"""
from __future__ import annotations

import argparse
import csv
import json
import re
import sys
from pathlib import Path

NOTEBOOK = "Notebooks/10M/10M_MIXTURE_EXPERIMENT.ipynb"  # where the file sits in the author's repository
CELL = 8
OUT = Path(__file__).resolve().parent.parent / "data" / "author_phase2_curves.csv"
LINE = re.compile(r"^\s+(?P<config>[A-Za-z]+?)(?:_std)? seed=(?P<seed>\d+) step=\s*(?P<step>\d+) "
                  r"train=(?P<train_loss>[\d.]+) val=(?P<val_loss>[\d.]+) best=[\d.]+@\d+")
COLUMNS = ("notebook", "cell", "config", "seed", "step", "train_loss", "val_loss")


def read_curves(path: Path, cell: int = CELL) -> list[dict]:
    """Every evaluation line printed by ``cell`` of the notebook at ``path``, in the order printed."""
    cells = json.loads(Path(path).read_text())["cells"]
    if not 0 <= cell < len(cells):
        raise ValueError(f"{path}: no cell {cell}; it has cells 0-{len(cells) - 1}")
    text = "".join("".join(o.get("text", "")) for o in cells[cell].get("outputs", []))
    rows = [{"notebook": NOTEBOOK, "cell": cell, **m.groupdict()}
            for m in map(LINE.match, text.splitlines()) if m]
    if not rows:
        raise ValueError(f"{path}: cell {cell} prints no line of the form {LINE.pattern!r}")
    return rows


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("notebook", type=Path, help=f"a local copy of {NOTEBOOK}")
    ap.add_argument("--cell", type=int, default=CELL)
    ap.add_argument("--out", type=Path, default=OUT)
    args = ap.parse_args(argv)
    try:
        rows = read_curves(args.notebook, args.cell)
    except (OSError, ValueError) as e:
        print(f"author_curves: error: {e}", file=sys.stderr)
        return 2
    with open(args.out, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=COLUMNS)
        w.writeheader()
        w.writerows(rows)
    runs = sorted({(r["config"], int(r["seed"])) for r in rows})
    print(f"wrote {len(rows)} evaluations of {len(runs)} runs to {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
