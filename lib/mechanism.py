"""book/mechanism.ipynb's data: the ladder of floors, the probes of the released weights, and the released
runs of the three mechanism plans (``lib.plans.mixer_test``, ``escape_map``, ``bundle_factors``), each with the
commands that train what is missing. The verdict lines are ``lib.analysis.claim_*``."""
from __future__ import annotations

import pandas as pd

from . import plans
from .config import CONFIGS, Experiment, get_preset, replace
from .data import bigram_floor_on, fixed_val_batches, load_corpus, ngram_floor, unigram_floor_on
from .experiment import build_model
from .probes import PROBE_SEQUENCES, probe
from .results import (
    Runs,
    as_released,
    load_model,
    model_label,
    plan_runs,
    pooled,
    unfinished,
    usable,
)
from .runs import RUNS_DIR, RunDir, run_path

FLOOR_ORDERS = {1: "unigram: no context", 2: "bigram: the current token", 3: "trigram: the last two tokens",
                4: "4-gram: the last three tokens"}


def floors(dataset: str = "shakespeare_char", orders=(1, 2, 3, 4), scale: str = "cpu") -> pd.DataFrame:
    """The n-gram floors of ``dataset`` (``lib.data.ngram_floor``: estimated on the train split with
    add-1/2 smoothing, scored on the val split), one row per order; for the unigram and the bigram also
    scored on the fixed validation batches of ``scale``'s preset, the very tokens its runs are evaluated on."""
    corpus = load_corpus(dataset)
    e = get_preset(scale)
    fixed = fixed_val_batches(corpus, e.model.block_size, e.train.batch_size, e.train.eval_batches,
                              e.train.val_seed)
    on_batches = {1: unigram_floor_on(corpus, fixed), 2: bigram_floor_on(corpus, fixed)}
    return pd.DataFrame([dict(order=n, floor=FLOOR_ORDERS[n].split(":")[0], sees=FLOOR_ORDERS[n].split(": ")[1],
                              nats=ngram_floor(corpus, n), on_fixed_batches=on_batches.get(n)) for n in orders])


def like_for_like(ladder: pd.DataFrame) -> dict[int, float]:
    """The floors to compare runs with: on the fixed batches where computed, else on the whole split."""
    return {int(r.order): float(r.on_fixed_batches if pd.notna(r.on_fixed_batches) else r.nats)
            for r in ladder.itertuples()}


# -- what the residual stream still knows ---------------------------------------------------------------


def probe_experiments() -> list[Experiment]:
    """The `cpu` seed-1337 runs whose weights are released: the four configurations, and the mixer runs."""
    return ([get_preset("cpu", "residualgpt", c, plans.PROBE_SEED) for c in CONFIGS]
            + plans.mixer_test(seeds=(plans.PROBE_SEED,)))


def probe_table(runs_dir=RUNS_DIR, n_seqs: int = PROBE_SEQUENCES) -> tuple[pd.DataFrame, list[str]]:
    """Probe rows (``lib.probes.probe``) of every released model of ``probe_experiments`` at initialisation
    (the same seed's untrained model) and trained (its ``weights.pt``), on the first ``n_seqs`` sequences
    of the fixed validation batch; and the commands for the models whose weights are not released."""
    frames, missing = [], []
    for exp in probe_experiments():
        rd = RunDir(run_path(exp, runs_dir))
        if not (rd.path / "weights.pt").exists():
            missing.append(plans.command_for(exp))  # --keep-weights: also recovers a finished run's weights
            continue
        idx = fixed_val_batches(load_corpus(exp.dataset), exp.model.block_size, n_seqs, 1,
                                exp.train.val_seed)[0][0]
        trained, _ = load_model(rd)
        for state, model in (("init", build_model(exp).eval()), ("trained", trained)):
            t = probe(model, idx)
            t.insert(0, "state", state)
            t.insert(0, "model", model_label(exp))
            frames.append(t)
    return (pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(
        columns=["model", "state", "depth", "position_cosine", "token_accuracy", "token_chance", "effective_rank"]),
        missing)


# -- the local-mixer test ----------------------------------------------------------------------------------


def mixer_runs(runs_dir=RUNS_DIR) -> Runs:
    """The mixer runs beside the released attention runs of the same configurations and seeds."""
    mixer = plans.mixer_test()
    attention = [replace(e, mixer="attention") for e in mixer]
    runs = plan_runs(attention + mixer, {"mixer": lambda e: e.model.mixer, "model": model_label}, runs_dir)
    runs.planned = len(mixer)
    runs.missing = unfinished(as_released(mixer, runs_dir))
    return runs


def ladder_ends(runs_dir=RUNS_DIR) -> Runs:
    """The released `cpu` stand-in runs at the 1,500-step budget, each configuration with attention at the
    10M chapter's seeds and with the local mixer (``plans.mixer_test``): where each model ends on the ladder."""
    exps = [get_preset("cpu", "residualgpt", c, s) for c in CONFIGS for s in plans.SEEDS_10M] + plans.mixer_test()
    return plan_runs(plans.unique(exps), {"model": model_label}, runs_dir)


def floor_names(ladder: pd.DataFrame) -> dict[int, str]:
    """{order: name} of the ladder's floors ("unigram", "bigram", ...)."""
    return {int(r.order): r.floor for r in ladder.itertuples()}


def mixer_summary(table: pd.DataFrame) -> pd.DataFrame:
    """Best validation loss per configuration and mixer: seeds, mean, min and max."""
    table = pooled(table)  # a diverged seed is not a result (the chapter names it above)
    if table.empty:
        return pd.DataFrame(columns=["config", "mixer", "seeds", "mean", "min", "max"])
    g = table.groupby(["config", "mixer"], sort=False).best_val_loss
    return pd.DataFrame({"seeds": g.size(), "mean": g.mean(), "min": g.min(), "max": g.max()}).reset_index()


# -- the escape map and the bundle ------------------------------------------------------------------------
def escape_runs(runs_dir=RUNS_DIR) -> Runs:
    """The escape map's runs; ``scaled_init`` False marks the run without GPT-2's 1/√(2L) scaling."""
    return plan_runs(plans.escape_map(), {"depth": lambda e: e.model.n_layer,  # gain: the summary's
                                      "scaled_init": lambda e: e.model.scaled_init}, runs_dir)


def escape_long_runs(runs_dir=RUNS_DIR) -> Runs:
    """The escape map's boundary cells at the preset's full budget (``plans.escape_long_budget``)."""
    return plan_runs(plans.escape_long_budget(), {"depth": lambda e: e.model.n_layer}, runs_dir)


def bundle_runs(runs_dir=RUNS_DIR) -> Runs:
    factors = plans.bundle_factors()
    name = {e.to_json(): k for k, e in factors.items()}
    runs = plan_runs(list(factors.values()), {"factor": lambda e: name[e.to_json()]}, runs_dir)
    table = pd.DataFrame({"factor": list(factors)}).merge(runs.table, on="factor", how="left")
    table["status"] = table.status.fillna("not trained")
    runs.table = table
    return runs


def baseline_seeds(runs_dir=RUNS_DIR) -> dict[int, float]:
    """nanoGPT AttnOnly's escape step (NaN: never) at the released seeds other than the bundle's
    (``plans.bundle_baseline_seeds``: the joint-collapse chapter's runs), finished and consistent: how far the
    seed alone moves the escape that the bundle's factors are read against."""
    exps = plans.bundle_baseline_seeds()
    ok = [(e, rd) for e, rd, _ in usable(as_released(exps, runs_dir), ("complete",))]
    return {e.seed: rd.summary.get("escape_step", float("nan")) for e, rd in ok}


def twin_gap(hist: pd.DataFrame, factor: str) -> pd.DataFrame:
    """nanoGPT (factor ``"none"``) beside the run with ``factor`` switched, at every evaluation both reached:
    step, both validation losses, and the absolute difference of their training losses (``gap``). A factor that
    changes the computation only by rounding starts the two runs a rounding error apart; the gap shows how
    that difference grows."""
    cols = ["step", "val_none", "val_factor", "gap"]
    if hist.empty or "train_loss" not in hist:
        return pd.DataFrame(columns=cols)
    a, b = (hist[hist.factor == f].set_index("step") for f in ("none", factor))
    both = a.index.intersection(b.index)
    return pd.DataFrame({"step": both, "val_none": a.val_loss[both].to_numpy(),
                         "val_factor": b.val_loss[both].to_numpy(),
                         "gap": (a.train_loss[both] - b.train_loss[both]).abs().to_numpy()}).reindex(columns=cols)


def train_loss_gap(hist: pd.DataFrame, factor: str) -> tuple[float, int]:
    """The largest difference in training loss between nanoGPT and the run with ``factor`` switched, over the
    evaluations both reached, and their number (NaN, 0 while either is missing): a factor that changes only
    the measurement leaves the training unchanged."""
    t = twin_gap(hist, factor)
    return (float(t.gap.max()), len(t)) if len(t) else (float("nan"), 0)


def cost_table(parts: dict[str, tuple[pd.DataFrame, int]]) -> pd.DataFrame:
    """What each part of the chapter cost on the machine that trained it, from the runs' own summaries.
    ``parts``: ``{name: (finished runs' table, runs planned)}``; diverged runs, cut short, are counted as not
    trained. Per part: the runs trained of those planned,
    the steps of one run, the fastest and the median wall time of a trained run (the fastest is the closest to
    an idle machine's), their total, and the estimate for the rest
    (their count × the median; the escape map's runs differ in depth, so there it is rough)."""
    rows = []
    for name, (t, planned) in parts.items():
        t = t[t.status == "complete"] if "status" in t else t  # a diverged run stopped early: not its cost
        med = float(t.wall_s.median()) / 60 if len(t) else float("nan")
        steps = sorted({int(b) for b in t.budget}) if len(t) else []
        rows.append({"part": name, "trained": len(t), "planned": planned,
                     "steps per run": "/".join(f"{b:,}" for b in steps) or "-",
                     "fastest minutes per run": float(t.wall_s.min()) / 60 if len(t) else float("nan"),
                     "median minutes per run": med, "minutes trained": float(t.wall_s.sum()) / 60,
                     "minutes left (estimate)": (planned - len(t)) * med if len(t) else float("nan")})
    return pd.DataFrame(rows)


# -- the probes during training ------------------------------------------------------------------------
def probe_during_runs(runs_dir=RUNS_DIR) -> Runs:
    """The runs of ``plans.probe_during``; their histories carry the probes of every evaluation."""
    return plan_runs(plans.probe_during(), {}, runs_dir)


def probes_over_training(hist: pd.DataFrame) -> pd.DataFrame:
    """From histories with probe columns (``lib.diagnostics.ProbeCallback``): one row per run and evaluation,
    the three measures after the last block, and the chance level."""
    if hist.empty or "probe_token" not in hist:
        return pd.DataFrame(columns=["config", "seed", "step", "position_cosine", "token_accuracy", "token_chance",
                                     "effective_rank"])
    h = hist.dropna(subset=["probe_token"])
    return pd.DataFrame({"config": h.config, "seed": h.seed, "step": h.step,
                         "position_cosine": h.probe_cosine.map(lambda v: v[-1]),
                         "token_accuracy": h.probe_token.map(lambda v: v[-1]),
                         "token_chance": h.probe_chance,
                         "effective_rank": h.probe_rank.map(lambda v: v[-1])}).reset_index(drop=True)


# -- the author's values and the schedule, with seeds (issue "The author's recipes") ------------------------------
def author_value_runs(runs_dir=RUNS_DIR) -> Runs:
    """The stand-in with the author's values (``plans.author_values``) beside the released stand-in runs of the
    same implementations, configurations and seeds; ``values`` says which."""
    ours = plans.author_values()
    released = plans.unique([get_preset("cpu", e.impl, e.config_name, e.seed) for e in ours])
    runs = plan_runs(released + ours, {"values": lambda e: "stand-in" if e in released else "author's"}, runs_dir)
    runs.planned, runs.missing = len(ours), unfinished(as_released(ours, runs_dir))
    return runs


def schedule_runs(runs_dir=RUNS_DIR) -> Runs:
    """``plans.schedule_seeds``: each run's factor (``plans.schedule_factor``) and implementation."""
    return plan_runs(plans.schedule_seeds(), {"factor": plans.schedule_factor}, runs_dir)
