"""scripts/author_curves.py on a small notebook of the author's format, and the committed data file it wrote."""
import importlib.util
import json
from pathlib import Path

import pandas as pd
import pytest

from lib.chapters import paper_shape

ROOT = Path(__file__).resolve().parent.parent
spec = importlib.util.spec_from_file_location("author_curves", ROOT / "scripts" / "author_curves.py")
author_curves = importlib.util.module_from_spec(spec)
spec.loader.exec_module(author_curves)

LOG = ("\n======\nRunning: AttnOnly_std (seed=42)\n======\n"
       "  AttnOnly_std seed=42 step=  100 train=3.3206 val=3.3672 best=3.3672@100 (14s)\n"
       "  AttnOnly_std seed=42 step= 1000 train=2.5000 val=2.6000 best=2.6000@1000 (140s)\n"
       "  done: best 2.6000\n"
       "  FFNOnly_std seed=123 step=  100 train=3.3092 val=3.3497 best=3.3497@100 (12s)\n")


def notebook(tmp_path, cell_text, cell=1):
    cells = [{"cell_type": "code", "source": [], "outputs": []} for _ in range(cell + 1)]
    cells[cell]["outputs"] = [{"output_type": "stream", "name": "stdout", "text": cell_text.splitlines(True)}]
    path = tmp_path / "nb.ipynb"
    path.write_text(json.dumps({"cells": cells}))
    return path


def test_every_evaluation_line_becomes_a_row_and_nothing_else(tmp_path):
    out = tmp_path / "curves.csv"
    assert author_curves.main([str(notebook(tmp_path, LOG)), "--cell", "1", "--out", str(out)]) == 0
    df = pd.read_csv(out)
    assert list(df.columns) == list(author_curves.COLUMNS)
    assert df[["config", "seed", "step", "train_loss", "val_loss"]].values.tolist() == [
        ["AttnOnly", 42, 100, 3.3206, 3.3672], ["AttnOnly", 42, 1000, 2.5, 2.6], ["FFNOnly", 123, 100, 3.3092, 3.3497]]
    assert set(df.cell) == {1} and set(df.notebook) == {author_curves.NOTEBOOK}


@pytest.mark.parametrize("cell, message", [(5, "no cell 5"), (0, "prints no line")])
def test_a_wrong_cell_is_refused_in_one_line(tmp_path, capsys, cell, message):
    path = notebook(tmp_path, LOG)
    assert author_curves.main([str(path), "--cell", str(cell), "--out", str(tmp_path / "x.csv")]) == 2
    assert message in capsys.readouterr().err and not (tmp_path / "x.csv").exists()


def test_the_committed_file_holds_the_phase2_runs_the_paper_reports():
    """AttnOnly seeds 42 and 123 end at the paper's Phase-2 values (3.354, 2.130, §8.1) to within the notebook's
    rounding; every run has 30 evaluations, every 100 steps to 3,000."""
    df = pd.read_csv(author_curves.OUT)
    best = df.groupby(["config", "seed"]).val_loss.min()
    assert best["AttnOnly", 42] == pytest.approx(3.354, abs=6e-4)
    assert best["AttnOnly", 123] == pytest.approx(2.130, abs=2e-3)
    for (config, seed), g in df.groupby(["config", "seed"]):
        assert list(g.step) == list(range(100, 3001, 100)), (config, seed)
    assert {(c, s) for c in ("AttnOnly", "FFNOnly") for s in (1337, 42, 123)} <= set(best.index)


def test_the_chapter_line_reads_each_phase2_seeds_escape_and_best_from_the_file():
    from lib.paper import author_phase2_curves
    curves = author_phase2_curves()
    line = paper_shape.phase2_curves_reading(curves, floor=3.3473)
    for fact in ("seed 1337 leaves the floor by step 200 (best 1.9683)", "seed 42 never leaves the floor (best 3.3543)",
                 "seed 123 leaves the floor by step 300 (best 2.1313)", "FFNOnly stays on the floor in 3 of 3 seeds",
                 "1.580 ± 0.003"):
        assert fact in line
    empty = paper_shape.phase2_curves_reading(curves.iloc[0:0], floor=3.3473)
    assert empty.endswith("none in data/author_phase2_curves.csv.")


def test_the_phase2_figure_draws_the_authors_six_curves_with_or_without_our_prefixes():
    from types import SimpleNamespace

    from lib import plots
    from lib.paper import author_phase2_curves
    empty = SimpleNamespace(histories=pd.DataFrame(columns=["step", "val_loss", "impl", "config", "schedule"]))
    fig = plots.phase2_figure(author_phase2_curves(), empty, 3.3473, 1.580, "t")
    labels = [ln.get_label() for ln in fig.axes[0].lines]
    assert sum(label.startswith("author's Phase-2 notebook") for label in labels) == 6
    ours = pd.DataFrame({"step": [0, 50], "val_loss": [4.2, 3.4], "impl": "residualgpt", "config": "AttnOnly",
                         "schedule": "constant"})
    fig = plots.phase2_figure(author_phase2_curves(), SimpleNamespace(histories=ours), 3.3473, 1.580, "t")
    assert ("this book, ResidualGPT AttnOnly, 10M paper shape, constant (first 50 steps)"
            in [ln.get_label() for ln in fig.axes[0].lines])  # the implementation, and how far the prefix trained
