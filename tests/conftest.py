"""Shared fixtures: offline data paths and tiny experiments that train in seconds."""

import os
from pathlib import Path

import pytest

SHARED = Path(__file__).resolve().parents[2] / "shared" / "data"
os.environ.setdefault("TINYSHAKESPEARE_PATH", str(SHARED / "tinyshakespeare" / "input.txt"))
os.environ.setdefault("TIKTOKEN_CACHE_DIR", str(SHARED / "tiktoken-cache"))

from lib.engine.config import get_preset, replace  # noqa: E402


def raise_at(at, exc):
    """A callback that stops a run by raising ``exc`` as the evaluation at step ``at`` reaches
    the callbacks: before the run's files are written when it comes before the recorder, after
    them when it comes after (tests/test_runs.py's kill). Built on call, so that collecting
    the tests does not import torch."""
    from lib.engine.train import Callback

    class RaiseAt(Callback):
        def on_history(self, trainer, step):
            if step == at:
                raise exc

    return RaiseAt()


@pytest.fixture(autouse=True)
def _close_figures():
    """Every figure a test draws is closed after it: pyplot keeps them open,
    and past 20 it warns of memory."""
    yield
    import matplotlib.pyplot as plt

    plt.close("all")


@pytest.fixture
def tiny():
    """A 2-layer, 32-wide AttnOnly model on TinyShakespeare characters: ~10 s for 20 steps."""

    def make(config="AttnOnly", seed=1337, **kw):
        exp = get_preset("cpu", "residualgpt", config, seed)
        base = dict(
            n_layer=2,
            n_embd=32,
            n_head=2,
            block_size=32,
            batch_size=8,
            max_steps=20,
            eval_interval=5,
            eval_batches=3,
            train_eval_batches=2,
            warmup_steps=5,
        )
        return replace(exp, **{**base, **kw})

    return make


def write_fake_run(
    exp,
    runs_dir,
    best=2.0,
    escape=None,
    status="complete",
    steps=None,
    config=None,
    n_evals=2,
    floor=3.35,
):
    """A run directory as lib writes it (config.json, history.jsonl, summary.json) without training:
    a history of ``n_evals`` evaluations from 4.2 (or above ``best`` and ``floor``) down to
    ``best`` at ``steps`` (the budget by default); a diverged run ends with lib's divergence row.
    ``escape``: the step at which the history first goes ``ESCAPE_MARGIN`` below ``floor`` (the
    first evaluation after it moves there, or one is added); None: wherever the history does, so
    that the summary agrees with its history (``RunDir.problems`` checks it). ``config`` replaces
    the config.json (an edited file)."""
    from lib.engine.files import write_json_atomic, write_jsonl_atomic
    from lib.engine.runs import run_path
    from lib.engine.thresholds import ESCAPE_MARGIN, escape_step

    d = run_path(exp, runs_dir)
    d.mkdir(parents=True)
    steps = exp.train.max_steps if steps is None else steps
    at = [round(steps * i / (n_evals - 1)) for i in range(n_evals)]
    if escape is not None and escape not in at:
        # the first evaluation after the escape moves to it (as many
        # evaluations), else one is added there
        later = [s for s in at[1:-1] if s > escape]
        at = sorted({*at, escape} - set(later[:1]))
    # above the best (the summary's best is the history's) and on the floor or above
    # it (no escape before `escape`)
    start = max(4.2, best + 0.5, floor)
    # From the escape on, halfway between the escape line and the best: below the
    # line, above the last row's best.
    below = (min(floor - ESCAPE_MARGIN, start) + best) / 2
    assert escape is None or status == "diverged" or below > best, (
        "an escape needs a best below floor - margin"
    )
    hist = [
        {"step": s, "val_loss": start if escape is None or s < escape else below} for s in at[:-1]
    ] + [{"step": steps, "val_loss": best}]
    summary = {
        "status": status,
        "config": exp.config_name,
        "seed": exp.seed,
        "gain_mode": exp.gain_mode,
        "gain": exp.gain,
        "best_val_loss": best,
        "best_step": steps,
        "final_val_loss": best,
        "escape_step": escape,
        "unigram_floor": floor,
        "steps": steps,
        "max_steps": exp.train.max_steps,
        "wall_s": 600.0,
        "tokens_per_s": 1.0,
    }
    if status == "diverged":
        hist[-1].update(val_loss=None, diverged=True, reason="non-finite training loss (nan)")
        # the best before the divergence, as the trainer records it
        finite = [r for r in hist if r["val_loss"] is not None]
        summary["best_step"] = min(finite, key=lambda r: r["val_loss"])["step"] if finite else None
        summary.update(
            best_val_loss=None,
            best_val_loss_before_divergence=best,
            diverged_step=steps,
            diverged_reason="non-finite training loss (nan)",
            final_val_loss=None,
        )
    if escape is None:
        summary["escape_step"] = escape_step(hist, floor)
    write_json_atomic(d / "config.json", config or exp.to_dict())
    write_json_atomic(
        d / "env.json", {"device": "cpu", "git_commit": "0" * 40, "git_dirty_lib": False}
    )
    write_jsonl_atomic(d / "history.jsonl", hist)
    write_json_atomic(d / "summary.json", summary)
    return d


@pytest.fixture
def fake_run():
    """``write_fake_run``: a finished run directory without training."""
    return write_fake_run


def cli(*args, tmp_path=None):
    """``python -m lib ARGS`` in this process (``lib.cli.main``, what ``__main__`` calls): its exit
    code and what it printed. In-process because a fresh interpreter spends seconds importing torch
    for each refusal; tests/test_cli.py keeps one test of the real entry point."""
    import contextlib
    import io
    from types import SimpleNamespace

    from lib.cli import main

    # --runs-dir points into tmp: even a wrongly accepted command could not touch runs/.
    extra = ["--runs-dir", str(tmp_path)] if tmp_path is not None else []
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main([*args, *extra])
        except SystemExit as e:  # argparse's refusals
            code = e.code if isinstance(e.code, int) else 1
    return SimpleNamespace(returncode=code or 0, stdout=out.getvalue(), stderr=err.getvalue())
