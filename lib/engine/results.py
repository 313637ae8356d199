"""The released (or retrained) runs as the chapters read them: which runs of a plan exist, which are
left out and why, their summaries and histories as tables, the rows a verdict may pool, the floor
test, and the trained models and per-batch losses read back from their checkpoints. Everything above
this module reads runs through it."""

from __future__ import annotations

import os
from dataclasses import dataclass

import numpy as np
import pandas as pd
import torch

from . import plans
from .config import Experiment
from .data import Batches, fixed_val_batches, load_corpus
from .experiment import build_model
from .files import RunError, load_torch_file
from .floors import unigram_floor, unigram_floor_on
from .host import ROOT
from .probe_reads import released_run
from .runs import RUNS_DIR, RunDir, as_experiment
from .thresholds import ESCAPE_MARGIN, escape_step, judged_floor, left_floor


def one_run(hist: pd.DataFrame, config: str, seed: int, source: str) -> pd.DataFrame:
    """The history of one run: ``config`` at ``seed`` from ``source`` (released or retrained)."""
    h = hist[(hist.config == config) & (hist.seed == seed)]
    # Released and retrained rows can share one table: a curve is read from one source, so
    # that two runs of a (config, seed) can never interleave as one. A table without a source
    # column is read as one source.
    return h[h.source == source] if "source" in h else h


def layer0_ffn(row: dict) -> float:
    """Block 0's FFN gradient norm in one evaluation row: the mean of its two weight matrices' norms
    where the run recorded it (``grad_norm_ffn_weights``, the author's definition), else the norm
    over the FFN's parameters (``grad_norm_mlp``: weights and, in nanoGPT, biases), which the
    released stand-in runs recorded."""
    g = row.get("grad_norm_ffn_weights")
    # [0]: block 0, the paper's "Layer 0". A list test, not a None test: in a table that mixes older
    # and newer runs, a row without the key holds pandas' NaN.
    return float(g[0]) if isinstance(g, list) else float(row["grad_norm_mlp"][0])


def load_model(rd: RunDir):
    """The trained model of a run, from ``weights.pt`` (fp16 stored, fp32 returned), in eval
    mode; a RunError naming the file where the run is not sound (``RunDir.problems``,
    which checks the weights too)."""
    # The file first, as RunDir.weights checks it: a damaged or foreign weights.pt is named as
    # itself, even in a folder whose other files are missing.
    blob = load_torch_file(
        rd.path / "weights.pt", "the run is left out; python -m lib export-weights rebuilds it"
    )
    exp = as_experiment(blob.get("experiment")) if isinstance(blob, dict) else None
    if exp is None:
        raise RunError(
            f"{rd.path / 'weights.pt'} is not a weights file this project wrote (no experiment and "
            "model)"
        )
    if exp != rd.experiment():
        raise RunError(
            f"{rd.path / 'weights.pt'} is not this run's: it holds another experiment than "
            "config.json"
        )
    # The one decision whether the run is sound, weights included (their
    # keys, shapes, step and values).
    if problems := rd.problems(exp):
        raise RunError("; ".join(problems))
    # Built by the same function that trained it, so a runtime-gain wrapper and its ``inner.``
    # keys are there to load into; problems has checked every key and shape against this model,
    # so the strict load cannot fail.
    model = build_model(exp)
    # fp16 on disk halves the released files; the probes and losses are
    # computed in fp32 as in training
    model.load_state_dict(
        {k: v.float() if v.is_floating_point() else v for k, v in blob["model"].items()}
    )
    return model.eval(), exp


@torch.no_grad()
def per_batch_val_losses(
    model, exp: Experiment, n_batches: int, mode: str, seed: int = 0
) -> np.ndarray:
    """Loss of each validation batch: the fixed set (``mode='fixed'``) or fresh random batches, in
    eval mode and under the run's own precision, as the trainer evaluated it."""
    from .train import autocast

    model.eval()
    corpus = load_corpus(exp.dataset)
    # The run's own batch shape and val_seed: with ``mode='fixed'`` and the run's eval_batches,
    # these are the very batches it was evaluated on (that draw depends on val_seed and the shape
    # alone). ``seed`` moves only the random batches.
    b = Batches(
        corpus,
        exp.model.block_size,
        exp.train.batch_size,
        seed,
        eval_batches=n_batches,
        val_seed=exp.train.val_seed,
    )
    batches = b.val_batches(mode)
    device = next(model.parameters()).device.type
    with torch.no_grad(), autocast(device, exp.train.precision):  # an evaluation: no graph to keep
        return np.array([model(x, y)[1].float().item() for x, y in batches])


def pooled(summaries: pd.DataFrame) -> pd.DataFrame:
    """The rows of ``summaries`` a mean, a table or a verdict may use: complete runs with a finite
    best loss (a diverged run's earlier best, or a NaN, never passes for a result)."""
    if summaries.empty:
        return summaries
    # A diverged run's best is None in summary.json; coerced to NaN it
    # fails the test below with any NaN.
    best = pd.to_numeric(summaries.best_val_loss, errors="coerce")
    ok = best.notna() & np.isfinite(best.astype(float))
    # "partial" stays: a prefix is only read where a chapter asked for prefixes (SHOWN_AS_PREFIX),
    # and there its best loss is the result the chapter is about
    if "status" in summaries:
        ok &= summaries.status.isin(["complete", "partial"])
    return summaries[ok]


def unigram_floors(exp: Experiment) -> dict[str, float]:
    """The unigram floor of ``exp``'s data on its whole validation split and on the fixed validation
    batches its runs are evaluated on (its own val_seed, eval_batches and shapes): the two
    ``judged_floor`` chooses between."""
    corpus = load_corpus(exp.dataset)
    fixed = fixed_val_batches(
        corpus,
        exp.model.block_size,
        exp.train.batch_size,
        exp.train.eval_batches,
        exp.train.val_seed,
    )
    return {"split": unigram_floor(corpus), "batches": unigram_floor_on(corpus, fixed)}


def floor_of(exp: Experiment) -> float:
    """The unigram floor ``exp``'s runs are judged on, like for like
    (``thresholds.judged_floor``): every run of one implementation at one scale and evaluation
    is judged on the same floor, whichever chapter reads it."""
    f = unigram_floors(exp)
    return judged_floor(exp.train.val_mode, f["split"], f["batches"])


def on_floor(s: pd.DataFrame, floor: float, margin: float) -> pd.Series:
    """Per row: the best loss did not reach ``floor - margin`` (a NaN is
    refused: ``pooled`` rows only)."""
    # A NaN compares False, so it would read as "left the floor": refused
    # rather than counted as an escape.
    if s.best_val_loss.isna().any():
        raise ValueError(
            "a run without a finite best loss reached a verdict; pass pooled(summaries)"
        )
    # the complement of the floor test escape_step dates escapes by: a run that escaped at some
    # evaluation has its best there or lower, so no run is both escaped and on the floor
    return ~left_floor(s.best_val_loss, floor, margin)


# the statuses training never changes again (only --force replaces such a run): a chapter reads only
# these unless it asks for prefixes
FINISHED = ("complete", "diverged")


SHOWN_AS_PREFIX = ("complete", "diverged", "partial")  # where a chapter shows a prefix as such


# git-ignored; rebuilt whenever it is missing
CACHE_DIR = ROOT / "_build" / ".cache" / "val_losses"


_CACHE_VERSION = 1  # bump when per_batch_val_losses changes what it computes


def cached_losses(rd: RunDir, compute, exp: Experiment, n: int, mode: str):
    """``compute()`` (a checkpoint's per-batch validation losses), kept on disk under a key of the
    weights' bytes, the experiment, the batches asked for and torch's version: the front page, the
    closing chapter and the fixed-batch chapter read the same checkpoints, and every build executes
    them twice (the book, nbval). A cache file is only ever the result for exactly that key; a
    missing or unreadable one is recomputed."""
    import hashlib

    # The weights' bytes, not their path or date: a weights.pt replaced by other weights never
    # reuses old losses. The experiment fixes the batches (shape, val_seed) and the precision;
    # torch's version, the kernels' rounding.
    key = hashlib.sha256()
    key.update((rd.path / "weights.pt").read_bytes())
    key.update(f"{exp.to_json()}|{n}|{mode}|{torch.__version__}|{_CACHE_VERSION}".encode())
    path = CACHE_DIR / f"{key.hexdigest()}.npy"
    try:
        return np.load(path)
    except (OSError, ValueError):  # missing or unreadable: recomputed rather than trusted
        values = compute()
        CACHE_DIR.mkdir(parents=True, exist_ok=True)
        # The pid keeps two processes that miss the same key at once from writing one temporary
        # file; the name ends in .npy because np.save appends it otherwise, and os.replace would
        # then look for the wrong file.
        tmp = path.with_suffix(f".{os.getpid()}.tmp.npy")
        np.save(tmp, values)
        os.replace(tmp, path)  # atomic: a reader finds the whole file or none
        return values


def left_out(located, statuses=FINISHED) -> list[str]:
    """Why each run among ``(experiment, RunDir, source)`` that has finished is not used: a file
    that fails ``RunDir.problems`` (named), or a diverged run (its step and reason).
    ``summaries_of`` and ``histories_of`` leave the first out everywhere; a diverged run is drawn
    (as diverged) but never pooled."""
    out = []
    for exp, rd, source in located:
        status = rd.status
        # An unreadable summary is always named, whatever the chapter reads: it has no status to
        # filter by, and in silence it would look like a run not yet trained. Unfinished runs are
        # not named here: ``unfinished`` prints their commands instead.
        if status not in (*statuses, "unreadable"):
            continue
        problems = rd.problems(exp)
        if problems:
            out.extend(f"{p}: left out" for p in problems)
        elif status == "diverged":
            s = rd.summary
            out.append(
                f"{rd.path}: diverged at step {s.get('diverged_step')} "
                f"({s.get('diverged_reason', '?')}): drawn as diverged, left out of every mean and "
                "verdict"
            )
    return out


def usable(located, statuses):
    """The runs among ``located`` whose status is in ``statuses`` and whose
    files pass ``RunDir.problems``."""
    for exp, rd, source in located:
        if rd.status in statuses and not rd.problems(exp):
            yield exp, rd, source


def summaries_of(
    located, statuses=FINISHED, floor: float | None = None, margin: float = ESCAPE_MARGIN
) -> pd.DataFrame:
    """Summaries of the runs among ``(experiment, RunDir, source)`` triples whose status is in
    ``statuses`` (by default the finished ones; a ``partial`` prefix only where a chapter shows it
    as one), each checked against its own files first (``left_out`` says which were not used, and
    why). A diverged run's row has no best loss; ``pooled`` keeps only the rows a mean may use.

    ``floor``: the floor the reader's verdicts use. A run recorded its ``escape_step`` against its
    whole validation split's unigram floor; a chapter judges on its own floor (the fixed batches',
    or the empirical NoResidual one on BPE data), so with ``floor`` given the escape step is
    recomputed from the run's history by the same rule (``thresholds.escape_step``) against it, and
    the recorded one is kept as ``escape_step_recorded``: one definition for the step a table shows
    and the floor a verdict reads."""
    rows = []
    for exp, rd, source in usable(located, statuses):
        # kept, for the reader to compare
        s = {**rd.summary, "escape_step_recorded": rd.summary.get("escape_step")}
        if floor is not None:
            s["escape_step"] = escape_step(rd.history(), floor, margin)
        # The path relative to the repository where it can be: a built page then shows the same path
        # on every machine, not the builder's home directory. The schedule comes from the
        # experiment: no summary records it.
        rows.append(
            {
                **s,
                "budget": exp.train.max_steps,
                "schedule": exp.train.schedule,
                "source": source,
                "path": str(rd.path.relative_to(ROOT))
                if rd.path.is_relative_to(ROOT)
                else str(rd.path),
            }
        )
    cols = [
        "impl",
        "config",
        "seed",
        "gain_mode",
        "gain",
        "best_val_loss",
        "best_step",
        "final_val_loss",
        "escape_step",
        "escape_step_recorded",
        "unigram_floor",
        "status",
        "steps",
        "max_steps",
        "budget",
        "schedule",
        "wall_s",
        "tokens_per_s",
        "source",
        "path",
    ]
    df = pd.DataFrame(rows)
    # The same columns with or without runs: a chapter's filters and tables also
    # run on a --runs-dir with none.
    return df.reindex(columns=cols) if len(df) else pd.DataFrame(columns=cols)


def unfinished(located) -> list[str]:
    """The commands that produce the runs among
    ``(experiment, RunDir, source)`` that are not finished."""
    # not for an unreadable run: training refuses to run over it, so its command would only mislead
    return [
        plans.command_for(e)
        for e, rd, _ in located
        if rd.status not in ("complete", "diverged", "unreadable")
    ]


def histories_of(located, statuses=FINISHED) -> pd.DataFrame:
    """Every evaluation of the runs among ``(experiment, RunDir, source)`` triples whose status is
    in ``statuses`` (long format)."""
    frames = []
    for exp, rd, source in usable(located, statuses):
        h = pd.DataFrame(rd.history())
        h["impl"], h["config"], h["seed"], h["source"] = exp.impl, exp.config_name, exp.seed, source
        h["status"] = rd.status
        # "none", not None: pandas' groupby drops NaN keys, and the plain run would
        # vanish from a group by mode
        h["gain_mode"], h["gain"], h["budget"] = (
            exp.gain_mode or "none",
            exp.gain,
            exp.train.max_steps,
        )
        h["schedule"] = exp.train.schedule
        frames.append(h)
    # empty but with its columns, so that a chapter's selections on them
    # work before any run is trained
    return (
        pd.concat(frames, ignore_index=True)
        if frames
        else pd.DataFrame(
            columns=[
                "step",
                "val_loss",
                "impl",
                "config",
                "seed",
                "source",
                "status",
                "gain_mode",
                "gain",
                "budget",
                "schedule",
            ]
        )
    )


def model_label(exp: Experiment) -> str:
    # the mixer runs share their configuration name with the attention runs beside them in one table
    return exp.config_name + (" + local mixer" if exp.model.mixer != "attention" else "")


def as_released(exps, runs_dir=None):
    """``(experiment, RunDir, "released")`` for each of ``exps`` under ``runs_dir``:
    the triples every reader takes."""
    # The source travels with each run, so a chapter can put a reader's own retrained seed beside
    # the released ones (lib.book.chapter) and the figures can draw it differently.
    # None: runs/, so a caller can pass "the default" down without naming it
    runs_dir = runs_dir or RUNS_DIR
    # its own directory, or the search probe's run of the same experiment (lib.engine.probe_reads)
    return [(e, released_run(e, runs_dir), "released") for e in exps]


@dataclass
class Runs:
    """Finished runs of a plan: one row per run with the plan's own columns, their histories, and
    the commands that train the rest."""

    table: pd.DataFrame
    histories: pd.DataFrame
    missing: list[str]
    planned: int


def plan_runs(exps, columns, runs_dir) -> Runs:
    """The finished, consistent runs of ``exps`` (``results.usable``: one bad run is left
    out, and named by the chapter's ``left_out`` line, never shifted onto another's
    row), with the plan's ``columns``."""
    located = as_released(exps, runs_dir)
    ok = list(usable(located, FINISHED))
    # printed into the chapter's output: the reader sees which runs were left out
    for line in left_out(located):
        print(line)
    # Both frames are built from the one list ``ok``, in its order, so row i of each is the same run
    # and they can be put side by side by position.
    summ = summaries_of(ok)
    extra = pd.DataFrame([{k: f(e) for k, f in columns.items()} for e, _, _ in ok])
    table = (
        pd.concat([extra.reset_index(drop=True), summ.reset_index(drop=True)], axis=1)
        if len(summ)
        else (summ.assign(**{k: [] for k in columns}))
    )
    hist = []
    for e, rd, _ in ok:
        h = histories_of([(e, rd, "released")])
        for k, f in columns.items():
            h[k] = f(e)
        hist.append(h)
    hist = (
        pd.concat(hist, ignore_index=True)
        if hist
        else pd.DataFrame(columns=["step", "val_loss", "config", *columns])
    )
    # commands and the planned count over every run of the plan, not only the usable ones
    return Runs(table, hist, unfinished(located), len(exps))


def cost_table(parts: dict[str, tuple[pd.DataFrame, int]]) -> pd.DataFrame:
    """What each part of the book cost on the machine that trained it, from the runs' own summaries:
    the one cost table, for the chapters (a part per chapter and configuration) and for the
    mechanism's plans. ``parts``: ``{name: (runs' summaries, runs planned)}``. A diverged run, cut
    short, counts as not trained; a prefix (status partial) costs the steps it trained, and says so
    in "steps per run". Per part: the runs trained of those planned, the steps of one, the fastest
    and the median minutes of a trained run (the fastest is the closest to an idle machine's), the
    median tokens/s, the hours trained, and the estimate for the rest (their count x the median; the
    escape map's runs differ in depth, so there it is rough)."""
    rows = []
    for name, (t, planned) in parts.items():
        # a diverged run stopped early: not what a run costs; a prefix is a run
        # trained as far as it was meant to
        t = t[t.status.isin(["complete", "partial"])] if "status" in t else t
        # wall_s is the run's own clock, every segment of a resumed run added up, on a machine that
        # may have been busy: the fastest run of a part is the fairest estimate of an idle machine
        minutes = t.wall_s.astype(float) / 60
        # The median, not the mean: runs trained beside other work on the same cores take
        # far longer, and one of them would drag a mean up. NaN where nothing is trained: a
        # cost not measured is not zero.
        med = float(minutes.median()) if len(t) else float("nan")
        # the steps each run trained (a prefix's, not its schedule's), every
        # distinct count shown, none hidden
        steps = sorted({int(b) for b in (t.steps if "steps" in t else t.budget)}) if len(t) else []
        tps = (
            t.tokens_per_s.astype(float).median()
            if "tokens_per_s" in t and len(t)
            else float("nan")
        )
        rows.append(
            {
                "part": name,
                "trained": len(t),
                "planned": planned,
                "steps per run": "/".join(f"{b:,}" for b in steps) or "-",
                "fastest minutes": float(minutes.min()) if len(t) else float("nan"),
                "median minutes": med,
                "median tokens/s": float(tps),
                "hours trained": float(minutes.sum()) / 60,
                "hours left (estimate)": (planned - len(t)) * med / 60 if len(t) else float("nan"),
            }
        )
    return pd.DataFrame(rows)


def trained_whole(runs: pd.DataFrame) -> pd.Series:
    """Which runs in ``runs`` (one row a run, with ``steps`` and ``max_steps``) trained every step
    of their schedule: a whole run, not a prefix or a whole run still in training; a run whose
    steps or budget is not recorded is not. The one test of "trained whole", for every count and
    range the book gives of such runs."""
    steps, budget = (pd.to_numeric(runs[k], errors="coerce") for k in ("steps", "max_steps"))
    return (steps >= budget).fillna(False).astype(bool)


def whole_cpu_hours(runs: pd.DataFrame) -> tuple[float, float] | None:
    """What a whole run took on a CPU: the wall-clock range, in hours, of the runs in ``runs``
    (one row a run, with ``steps``, ``max_steps``, ``wall_s`` and ``device``) that trained every
    step of their schedule on a CPU; ``None`` where none did. Evaluations, and whatever else the
    machine did, are in it. A GPU's run takes minutes and says nothing of a CPU; a run whose
    device is not recorded (no env.json) is counted as a CPU's, as every run before the first GPU
    run was. The one rule for what a whole run took, wherever the book says it."""
    if not len(runs) or not {"steps", "max_steps", "wall_s", "device"} <= set(runs.columns):
        return None
    whole = runs[
        trained_whole(runs) & runs.wall_s.notna() & ~runs.device.astype(str).str.contains("cuda")
    ]
    if not len(whole):
        return None
    return float(whole.wall_s.min() / 3600), float(whole.wall_s.max() / 3600)
