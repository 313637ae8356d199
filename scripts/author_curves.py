"""Read the losses the author's 10M notebooks printed while training, into data files.

Two notebooks of pratik376/Why-Partial-Residuals-fails, cells numbered from 0:

``phase2``: ``Notebooks/10M/10M_MIXTURE_EXPERIMENT.ipynb`` prints one line per evaluation,
every 100 steps, in its cell 8::

      AttnOnly_std seed=1337 step=  100 train=3.3206 val=3.3672 best=3.3672@100 (14s)

``nanogpt10m``: ``Notebooks/10M/NanoGPT_10M.ipynb`` evaluates every 300 steps and at the
last step (cell 8's ``it % EVAL_INTERVAL == 0 or it == MAX_ITERS - 1``) and prints a
line per evaluation in cell 8::

      iter 2999 | train 3.3121 | val 3.3475 | gap 0.0354 | dead_L0 53.0% | h_norm_L5 92.06 | tok/s 26,006

but its live dashboard clears the cell's output before each of them, so the saved notebook keeps
only the last one, named by the ``FFN-Only Res done`` line after it. Its cell 13 prints every
configuration's final train and val loss (``train_losses[-1]``, the evaluation at step
``MAX_ITERS - 1``) without the step; the step and the seed are read from cell 4's ``MAX_ITERS`` and
``SEED``. (Cell 13's saved output was printed by a slightly different version of its saved source,
whose columns it does not match; the step is the saved source's reading, which cell 8's surviving
line, the same evaluation at iter 2999, bears out.) Each row names the cell it was printed in.

The script reads a local copy of the notebook (it downloads nothing) and writes one row
per printed evaluation: the notebook's path in the repository, the cell, configuration,
seed, step and the two losses.

    python scripts/author_curves.py path/to/10M_MIXTURE_EXPERIMENT.ipynb [--cell 8] [--out FILE.csv]
    python scripts/author_curves.py --source nanogpt10m path/to/NanoGPT_10M.ipynb [--out FILE.csv]
"""  # noqa: E501 (the notebook's printed line, a table row, above)

from __future__ import annotations

import argparse
import csv
import json
import re
import sys
from pathlib import Path

DATA = Path(__file__).resolve().parent.parent / "data"
COLUMNS = ("notebook", "cell", "config", "seed", "step", "train_loss", "val_loss")

# where the file sits in the author's repository
NOTEBOOK = "Notebooks/10M/10M_MIXTURE_EXPERIMENT.ipynb"
CELL = 8
OUT = DATA / "author_phase2_curves.csv"
LINE = re.compile(
    r"^\s+(?P<config>[A-Za-z]+?)(?:_std)? seed=(?P<seed>\d+) step=\s*(?P<step>\d+) "
    r"train=(?P<train_loss>[\d.]+) val=(?P<val_loss>[\d.]+) best=[\d.]+@\d+"
)

NANOGPT10M = "Notebooks/10M/NanoGPT_10M.ipynb"
NANOGPT10M_OUT = DATA / "author_nanogpt10m_curves.csv"
SETTINGS_CELL, LOG_CELL, SUMMARY_CELL = 4, 8, 13
NAMES = {
    "Full Residual": "FullResidual",
    "No Residual": "NoResidual",  # the notebook's names, ours
    "Attn-Only Res": "AttnOnly",
    "FFN-Only Res": "FFNOnly",
}
ITER_LINE = re.compile(
    r"^\s*iter\s+(?P<step>\d+) \| train (?P<train_loss>[\d.]+) \| val (?P<val_loss>[\d.]+) \|"
)
DONE_LINE = re.compile(r"^\s*(?P<name>\S.*?) done \|")
# the loss table, not the % one
SUMMARY_LINE = re.compile(
    r"^\s*(?P<name>[A-Za-z][A-Za-z -]*?)\s+\|\s+(?P<train_loss>\d+\.\d+) \|"
    r"\s+(?P<val_loss>\d+\.\d+) \|\s+-?\d+\.\d+ \|\s+[+-]"
)


def _cell(cells: list, path: Path, cell: int) -> dict:
    if not 0 <= cell < len(cells):
        raise ValueError(f"{path}: no cell {cell}; it has cells 0-{len(cells) - 1}")
    return cells[cell]


def _printed(cells: list, path: Path, cell: int) -> list[str]:
    """What ``cell`` printed (its stream outputs), line by line."""
    outputs = _cell(cells, path, cell).get("outputs", [])
    return "".join("".join(o.get("text", "")) for o in outputs).splitlines()


def _cells(path: Path) -> list:
    return json.loads(Path(path).read_text())["cells"]


def read_curves(path: Path, cell: int = CELL) -> list[dict]:
    """Every evaluation line printed by ``cell`` of the Phase-2 notebook at
    ``path``, in the order printed."""
    rows = [
        {"notebook": NOTEBOOK, "cell": cell, **m.groupdict()}
        for m in map(LINE.match, _printed(_cells(path), path, cell))
        if m
    ]
    if not rows:
        raise ValueError(f"{path}: cell {cell} prints no line of the form {LINE.pattern!r}")
    return rows


def _setting(cells: list, path: Path, name: str) -> int:
    source = "".join(_cell(cells, path, SETTINGS_CELL).get("source", ""))
    m = re.search(rf"^{name}\s*=\s*(\d+)", source, re.MULTILINE)
    if not m:
        raise ValueError(f"{path}: cell {SETTINGS_CELL} sets no {name}")
    return int(m.group(1))


def _config(path: Path, name: str) -> str:
    if name not in NAMES:
        raise ValueError(f"{path}: unknown configuration {name!r}; known: {', '.join(NAMES)}")
    return NAMES[name]


def read_nanogpt10m(path: Path) -> list[dict]:
    """The evaluations ``NanoGPT_10M.ipynb`` printed: cell 8's surviving
    lines, then cell 13's final losses."""
    cells = _cells(path)
    seed, last_step = _setting(cells, path, "SEED"), _setting(cells, path, "MAX_ITERS") - 1
    rows, pending = [], []
    # a run's lines are named by the 'done' line that ends it
    for line in _printed(cells, path, LOG_CELL):
        if m := ITER_LINE.match(line):
            pending.append(m.groupdict())
        elif m := DONE_LINE.match(line):
            config = _config(path, m["name"])
            rows += [
                {"notebook": NANOGPT10M, "cell": LOG_CELL, "config": config, "seed": seed, **p}
                for p in pending
            ]
            pending = []
    if pending:
        raise ValueError(f"{path}: cell {LOG_CELL} prints evaluations that no 'done' line names")
    final = [m for m in map(SUMMARY_LINE.match, _printed(cells, path, SUMMARY_CELL)) if m]
    if not final:
        raise ValueError(
            f"{path}: cell {SUMMARY_CELL} prints no line of the form {SUMMARY_LINE.pattern!r}"
        )
    return rows + [
        {
            "notebook": NANOGPT10M,
            "cell": SUMMARY_CELL,
            "config": _config(path, m["name"]),
            "seed": seed,
            "step": last_step,
            "train_loss": m["train_loss"],
            "val_loss": m["val_loss"],
        }
        for m in final
    ]


SOURCES = {"phase2": (NOTEBOOK, OUT), "nanogpt10m": (NANOGPT10M, NANOGPT10M_OUT)}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument(
        "notebook",
        type=Path,
        help=f"a local copy of {NOTEBOOK} (or, with --source nanogpt10m, of {NANOGPT10M})",
    )
    ap.add_argument("--source", choices=SOURCES, default="phase2")
    ap.add_argument("--cell", type=int, help=f"the Phase-2 notebook's log cell (default {CELL})")
    ap.add_argument("--out", type=Path, help="default: data/author_<source>_curves.csv")
    args = ap.parse_args(argv)
    if args.source == "nanogpt10m" and args.cell is not None:
        ap.error(
            f"--cell is for the Phase-2 notebook; {NANOGPT10M} is read from cells "
            f"{SETTINGS_CELL}, {LOG_CELL} and {SUMMARY_CELL}"
        )
    out = args.out or SOURCES[args.source][1]
    try:
        rows = (
            read_nanogpt10m(args.notebook)
            if args.source == "nanogpt10m"
            else read_curves(args.notebook, CELL if args.cell is None else args.cell)
        )
    except (OSError, ValueError) as e:
        print(f"author_curves: error: {e}", file=sys.stderr)
        return 2
    with open(out, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=COLUMNS)
        w.writeheader()
        w.writerows(rows)
    runs = sorted({(r["config"], int(r["seed"])) for r in rows})
    print(f"wrote {len(rows)} evaluations of {len(runs)} runs to {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
