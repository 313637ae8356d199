"""The runs each chapter shows, in the order they are trained (``python -m lib sweep --plan ...``).

A chapter lists its plan's runs, loads those present, and for each missing one
prints the command that produces it.

Longer than the house's ~350 lines because it is the one list of every run the book trains (the
release, the mechanism, the recipes, the paper-shape prefixes) and of the plan names the CLI and the
chapters resolve: split, the same experiments would be defined in two places.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import NamedTuple

from .config import (
    CONFIGS,
    PAPER_SEED,
    ConfigError,
    Experiment,
    get_preset,
    off_preset_fields,
    off_preset_precision,
    off_preset_steps,
    replace,
)
from .gain import GAINS, gain_experiments

SEEDS_10M = (PAPER_SEED, 42, 123)  # Table 3
SEEDS_10M_EXTRA = (0, 7, 1, 2, 3)  # AttnOnly/FFNOnly only; Phase 3 had 8 AttnOnly seeds
SEEDS_124M = (PAPER_SEED, 42, 123, 0, 7)  # Table 5


def joint_collapse(scale: str = "cpu", seeds=(PAPER_SEED,)) -> list[Experiment]:
    # §4, Table 2: nanoGPT, all four configurations; seed by seed, so a
    # sweep cut short leaves whole seeds
    return [get_preset(scale, "nanogpt", c, s) for s in seeds for c in CONFIGS]


def gain_confound(scale: str = "cpu", seed: int = PAPER_SEED) -> list[Experiment]:
    # AttnOnly: the configuration whose apparent recovery at g = 2 §5.1 reports and then withdraws
    base = get_preset(scale, "residualgpt", "AttnOnly", seed)
    return gain_experiments(base, gains=GAINS)


# the runtime gains whose AttnOnly leaves the floor at the stand-in: the curves (b) compares
TWIN_GAINS = (2.0, 4.0)
# ResidualGPT's SDPA written as a masked softmax: at dropout 0 the same arithmetic, reordered
TWIN_KERNEL = "manual"


def gain_twins(scale: str = "cpu") -> list[Experiment]:
    """§5.1(b)'s null: the runtime-gain runs at ``TWIN_GAINS``, each with the attention computed by
    the other kernel (``TWIN_KERNEL``), which at the stand-in's dropout 0 changes only the order of
    floating-point operations (tests/test_model.py). How far a curve moves under that alone is the
    yardstick a spread between gains is read against."""
    base = [e for e in gain_confound(scale) if e.gain_mode == "runtime" and e.gain in TWIN_GAINS]
    # with dropout the kernels draw different masks: no longer rounding-only
    if any(e.model.dropout for e in base):
        raise ConfigError(
            f"gain_twins at {scale!r}: dropout {base[0].model.dropout} makes the kernel swap more "
            "than a change of rounding"
        )
    return [replace(e, attn_kernel=TWIN_KERNEL) for e in base]


# §5.1's verdicts read on more than one seed: the paper's other two seeds (Table 3's), so
# that a gain that decides where AttnOnly ends at seed 1337 is not mistaken for a seed
# that sits near the floor's edge
GAIN_SEEDS = (42, 123)


def gain_seeds(scale: str = "cpu", seeds=GAIN_SEEDS) -> list[Experiment]:
    """The paper's four runtime gains at ``seeds``, seed by seed (a sweep cut short leaves whole
    seeds). The plain run (g = 1) of each seed is the asymmetry chapter's, already trained; the
    weight-level gains stay seed 1337's."""
    return [e for s in seeds for e in gain_confound(scale, s) if e.gain_mode == "runtime"]


NOISE_PAIR = ("AttnOnly", "FFNOnly")  # the two configurations whose gap fixed_val_batches weighs


def fixed_val_batches(scale: str = "cpu") -> list[Experiment]:
    """The two checkpoints whose evaluation noise the chapter measures (seed 1337, with weights)."""
    return [get_preset(scale, "residualgpt", c, PAPER_SEED) for c in NOISE_PAIR]


def asymmetry_10m(
    scale: str = "cpu", seeds=SEEDS_10M, extra_seeds=SEEDS_10M_EXTRA
) -> list[Experiment]:
    exps = [get_preset(scale, "residualgpt", c, s) for s in seeds for c in CONFIGS]
    # Eight AttnOnly seeds in all, as Phase 3 (§8.1); FFNOnly at the same seeds, so
    # every AttnOnly seed has its FFNOnly twin. The two anchors (one seed each in the
    # paper) stay at the first three.
    exps += [
        get_preset(scale, "residualgpt", c, s) for s in extra_seeds for c in ("AttnOnly", "FFNOnly")
    ]
    return exps


def sweep_124m(scale: str = "cpu-bpe", seeds=SEEDS_124M) -> list[Experiment]:
    exps = [
        get_preset(scale, "residualgpt", c, s)
        for s in seeds
        for c in ("FullResidual", "AttnOnly", "FFNOnly")
    ]
    # the anchor seed's NoResidual
    return exps + [get_preset(scale, "residualgpt", "NoResidual", PAPER_SEED)]


LONGER_BUDGET = 3  # the 124M stand-in's probe trains this many times the preset's steps


def longer_budget_124m(scale: str = "cpu-bpe") -> list[Experiment]:
    """AttnOnly and FFNOnly at seed 1337 of the 124M stand-in with ``LONGER_BUDGET`` times its steps
    (the same recipe, its cosine stretched over the longer run): does a configuration that stays on
    the floor for the stand-in's budget leave it later, and does the asymmetry appear then? Both are
    probed, so that one leaving the floor is not mistaken for the asymmetry. A stand-in question
    only; at 124M the budget is the paper's."""
    exps = [get_preset(scale, "residualgpt", c, PAPER_SEED) for c in ("AttnOnly", "FFNOnly")]
    return with_steps(exps, LONGER_BUDGET * exps[0].train.max_steps)


# --- book/124m_sweep.ipynb: the search for a stand-in that shows the 124M phenomenon (issue 60) ---
# `cpu-bpe` keeps AttnOnly on the floor at every seed, as the escape map predicts at 12 layers; the
# paper's 124M left it (seed 123 by step 300) under another optimisation. Each probe is ResidualGPT
# at `cpu-bpe`'s shape (12 x 128, block 128, TinyShakespeare in GPT-2 BPE) given the 124M preset's
# optimisation (peak and final rate, dropout, a warm-up of 10% of the run), plus one lever, then
# levers combined. The rule that picks among them is ``lib.claims.search_124m.choose``, committed
# before the first probe was trained. Each run is at most about 15 minutes on 2 cores: a lever that
# multiplies the tokens of a step divides the steps.
# AttnOnly: the 124M's seed that left (123) is kept for the sweep
SEARCH_SEEDS = (PAPER_SEED, 42)
# seed 1337, trained for a probe whose AttnOnly leaves the floor
SEARCH_CONTROLS = ("FullResidual", "FFNOnly")


class Probe(NamedTuple):
    """One probe of the search: its name, its levers (fields on top of ``search_base``), the step
    the CPU stops it at (``stop``; its ``max_steps`` unless the schedule is the 124M's own, cut
    short) and the scale it starts from (`cpu-bpe`, or `cpu-sotu` for the corpus lever: the same
    model on the SOTU addresses)."""

    name: str
    changes: dict
    stop: int
    scale: str = "cpu-bpe"


def search_base(
    config: str = "AttnOnly", seed: int = PAPER_SEED, scale: str = "cpu-bpe"
) -> Experiment:
    """``scale``'s preset with the 124M preset's optimisation: its peak and final
    rate and its dropout, read from the preset. The warm-up and the budget are
    each probe's (``_ten_percent``)."""
    paper = get_preset("124M")
    return replace(
        get_preset(scale, "residualgpt", config, seed),
        lr=paper.train.lr,
        min_lr=paper.train.min_lr,
        dropout=paper.model.dropout,
    )


def _ten_percent(steps: int, **levers) -> dict:
    """A budget of ``steps`` with the 124M's warm-up fraction (2,000 of 20,000
    steps), read from its preset."""
    paper = get_preset("124M").train
    return dict(
        max_steps=steps, warmup_steps=steps * paper.warmup_steps // paper.max_steps, **levers
    )


def _own_schedule(**levers) -> dict:
    """The 124M preset's own schedule (its warm-up over its budget): the same
    slope, cut short by ``Probe.stop``."""
    paper = get_preset("124M").train
    return dict(max_steps=paper.max_steps, warmup_steps=paper.warmup_steps, **levers)


# Round 1: each lever alone on the 124M's optimisation at the stand-in, and that optimisation alone.
# Round 2: levers combined. Every probe is listed here before it is trained, and ``choose`` judges
# them all alike. The list's order is the rule's last tie-break (after departures and tokens): the
# 124M's own schedule first, since the schedule is the lever the 10M chapters found to decide
# AttnOnly's escape; then the probes that keep more of the 124M's batch.
SEARCH_PROBES = (
    Probe("124M warm-up slope", dict(_own_schedule(), eval_interval=50), 1200),
    Probe(
        "124M warm-up slope, 4,096 tokens a step",
        dict(_own_schedule(grad_accum=4), eval_interval=25),
        300,
    ),
    Probe("8,192 tokens a step", dict(_ten_percent(150, grad_accum=8), eval_interval=25), 150),
    Probe("124M optimisation", dict(_ten_percent(800), eval_interval=50), 800),
    Probe("4,096 tokens a step", dict(_ten_percent(300, grad_accum=4), eval_interval=25), 300),
    # the corpus: TinyShakespeare in BPE is one text of 304K training tokens, which a probe's
    # 0.8-1.2M tokens go over three or four times; the SOTU addresses (lib.engine.data.sotu_gpt2)
    # are documents, 1.87M training tokens
    Probe("SOTU corpus", dict(_ten_percent(800), eval_interval=50), 800, scale="cpu-sotu"),
    Probe(
        "SOTU corpus, 124M warm-up slope",
        dict(_own_schedule(), eval_interval=50),
        1200,
        scale="cpu-sotu",
    ),
)


# A probe's stand-in, where one is a preset (lib.engine.config): the same model, data and rates for
# the probe's budget. Its seed-1337 and seed-42 runs are the probe's (another directory: its
# max_steps is the 124M's 20,000, stopped at the probe's stop), so Table 5's sweep there reads the
# four runs the search has instead of training them again (lib.engine.probe_reads).
SEARCH_STAND_INS = {"124M warm-up slope": "cpu-bpe-ramp"}
# The stand-in the 124M chapter reads Table 5 at: the one the search chose (``search_124m.choose``
# on the released probes; tests/test_search_124m.py pins that they agree). `cpu-bpe`, the first,
# stays as the chapter's earlier one.
STAND_IN_124M = "cpu-bpe-ramp"


def search_probe(name: str) -> Probe:
    """The probe called ``name``; an unknown name is refused with the valid ones."""
    found = [p for p in SEARCH_PROBES if p.name == name]
    if not found:
        raise ConfigError(
            f"unknown probe {name!r}; valid: {', '.join(p.name for p in SEARCH_PROBES)}"
        )
    return found[0]


def probe_runs(probe: Probe) -> dict[tuple[str, int], Experiment]:
    """A probe's runs: AttnOnly at ``SEARCH_SEEDS``, then the controls at seed
    1337, keyed (configuration, seed)."""
    keys = [("AttnOnly", s) for s in SEARCH_SEEDS] + [(c, PAPER_SEED) for c in SEARCH_CONTROLS]
    return {(c, s): replace(search_base(c, s, probe.scale), **probe.changes) for c, s in keys}


def search_124m() -> list[Experiment]:
    """Every probe's runs, probe by probe, AttnOnly first.
    ``sweep --plan 124m_search --configs AttnOnly`` trains the AttnOnly runs; a probe's controls are
    trained once its AttnOnly has left the floor."""
    return [e for p in SEARCH_PROBES for e in probe_runs(p).values()]


def search_stop(exp: Experiment) -> int:
    """Where the CPU stops a run of the search: its probe's ``stop``."""
    for p in SEARCH_PROBES:
        if exp in probe_runs(p).values():
            return p.stop
    raise ConfigError(
        f"{exp.config_name} seed {exp.seed} at {exp.scale} is no run of the 124M search"
    )


# the early-training claims are decided here (Fig. 2a's layer-0 gradient at 300)
PREFIX_STEPS = 300
# ResidualGPT's FullResidual, the control that leaves the floor, needs only this
PREFIX_CONTROL_STEPS = 100
# At the paper's shape a 50-batch evaluation costs minutes on 2 cores: 20 batches every 50 steps (5
# for the train-loss estimate). Each evaluation row records the standard error of its mean
# (``val_loss_se``), so the chapters can show that this noise is far below the 0.1 escape margin.
PREFIX_EVAL = dict(eval_interval=50, eval_batches=20, train_eval_batches=5)


# The two schedules' names, each written once: the factor labels, the prefix
# table and the figures read these.
WARMUP_COSINE = "warm-up + cosine"  # ResidualGPT's: linear warm-up, cosine decay
CONSTANT_LR = "constant lr"  # nanoGPT's: one rate from step 0, no warm-up, no decay
# TrainConfig.schedule -> its name
SCHEDULE_NAMES = {"cosine": WARMUP_COSINE, "constant": CONSTANT_LR}


def own_schedule(impl: str, scale: str = "cpu") -> str:
    """The schedule an implementation's preset trains with
    (``TrainConfig.schedule``), read from the preset."""
    return get_preset(scale, impl).train.schedule


def warmup_cosine(scale: str = "cpu") -> dict:
    """ResidualGPT's schedule (linear warm-up, cosine decay) given to nanoGPT at nanoGPT's own peak,
    decayed to the same fraction of it as ResidualGPT's."""
    nano, res = get_preset(scale, "nanogpt").train, get_preset(scale, "residualgpt").train
    # Rounded to 6 significant digits: at `cpu` the product is 2.9999999999999997e-05. The directory
    # name rounds it (:g) but config.json keeps every digit, so unrounded it would share the
    # directory of --set min_lr=3e-05 and fail that run's config check.
    return dict(
        schedule=res.schedule,
        warmup_steps=res.warmup_steps,
        min_lr=float(f"{nano.lr * res.min_lr / res.lr:.6g}"),
    )


def constant_lr(scale: str = "cpu") -> dict:
    """ResidualGPT at a constant learning rate, its own peak, no warm-up and no decay: the Phase-2
    notebook's schedule (``Notebooks/10M/10M_MIXTURE_EXPERIMENT.ipynb``), and nanoGPT's."""
    res = get_preset(scale, "residualgpt").train
    # min_lr = lr, as nanoGPT's recipe writes its constant rate: lr_at ignores min_lr there, but the
    # config reads as what it is, a schedule without decay.
    return dict(schedule="constant", warmup_steps=0, min_lr=res.lr)


def paper_10m_prefix(seed: int = PAPER_SEED) -> list[Experiment]:
    """The paper's exact 10M runs (Table 1: 6 x 384, block 256, batch 64, dropout 0.2, the
    3,000-step schedule, fp32 as the author ran them), evaluated on ``PREFIX_EVAL``. On a 2-core CPU
    only their first steps are affordable (``sweep --plan 10m_prefix --until 300``: each run stops
    at ``prefix_steps``, status ``partial``); on a GPU the same plan without ``--until`` trains them
    to the end. In order: the joint collapse (nanoGPT AttnOnly), the paper's central contrast
    (ResidualGPT AttnOnly), each with the other's schedule, the two FFNOnly runs (the floor and the
    layer-0 gradient), the FullResidual controls."""

    # Every run is a 10M preset plus only the evaluation cadence (and the schedule swap): the
    # paper's shape exactly, which is the point of the plan, since the stand-ins differ from it in
    # shape, learning rate and dropout.
    def at(impl, config, **changes):
        return replace(get_preset("10M", impl, config, seed), **PREFIX_EVAL, **changes)

    return [
        at("nanogpt", "AttnOnly"),
        at("residualgpt", "AttnOnly"),
        at("nanogpt", "AttnOnly", **warmup_cosine("10M")),
        at("residualgpt", "AttnOnly", **constant_lr("10M")),
        at("nanogpt", "FFNOnly"),
        at("residualgpt", "FFNOnly"),
        at("nanogpt", "FullResidual"),
        at("residualgpt", "FullResidual"),
        # Table 2's third partial configuration, its floor at this shape (issue 59)
        at("nanogpt", "NoResidual"),
    ]


def prefix_steps(exp: Experiment) -> int:
    """How far the CPU trains a run of ``paper_10m_prefix``: ResidualGPT's FullResidual only to
    ``PREFIX_CONTROL_STEPS``; nanoGPT's to ``PREFIX_STEPS`` like the rest, since Fig. 2b orders it
    beside the two collapsed nanoGPT configurations at the same step."""
    short = exp.config_name == "FullResidual" and exp.impl == "residualgpt"
    return PREFIX_CONTROL_STEPS if short else PREFIX_STEPS


# The paper's own 10M runs trained whole (all 3,000 steps), in the order issue 35 gives: the joint
# collapse (nanoGPT AttnOnly), Table 3's anchor (ResidualGPT AttnOnly, the Phase-3 preset), then
# nanoGPT's control. On 2 cores a run is 5-9 hours, so it trains in segments (``--until``), each
# committed as ``partial``. Evaluated every 100 steps (20 batches, 5 for the train loss): about 7%
# of a run's cost, where the prefixes' 50-step cadence cost 14%; so these are runs of their own
# beside the prefixes, whose directories differ by the cadence.
WHOLE_EVAL = dict(PREFIX_EVAL, eval_interval=100)


def paper_10m_whole(seed: int = PAPER_SEED) -> list[Experiment]:
    """The paper's exact 10M runs (``paper_10m_prefix``'s shape and recipes), trained to the
    end, evaluated on ``WHOLE_EVAL``."""
    return [
        replace(get_preset("10M", impl, config, seed), **WHOLE_EVAL)
        for impl, config in (
            ("nanogpt", "AttnOnly"),
            ("residualgpt", "AttnOnly"),
            ("nanogpt", "FullResidual"),
            # Table 2's FFNOnly and Fig. 2b's growth order at the end (issue 59)
            ("nanogpt", "FFNOnly"),
        )
    ]


# The schedule at the paper's shape over five seeds (issue 35, item 2): ResidualGPT AttnOnly on the
# Phase-3 preset (warm-up + cosine) and on the Phase-2 notebook's recipe (a constant 3e-4, no
# warm-up, no decay), evaluated as the prefixes (every 50 steps). Each trains only as far as its
# question needs (``schedule_10m_until``).
# a warm-up + cosine run trains at least this far, past its 100-step warm-up
SCHEDULE_10M_WARMUP_STEPS = 200
# either schedule, a run still on the floor: Phase 2's 1337 and 123 left near 200, 300
SCHEDULE_10M_MAX_STEPS = 600
# a run trains this far past its escape, to show it stays off the floor
SCHEDULE_10M_AFTER = 100


def paper_10m_schedule_seeds(seeds=None) -> list[Experiment]:
    """ResidualGPT AttnOnly at the paper's 10M shape on its own warm-up + cosine and at a constant
    rate (``constant_lr``: its peak 3e-4, the Phase-2 recipe), seed by seed (``SCHEDULE_SEEDS``).
    Seed 1337's two runs are the released prefixes of ``paper_10m_prefix``, the same experiments."""

    def at(seed, **changes):
        return replace(get_preset("10M", "residualgpt", "AttnOnly", seed), **PREFIX_EVAL, **changes)

    return [
        e
        for s in (SCHEDULE_SEEDS if seeds is None else seeds)
        for e in (at(s), at(s, **constant_lr("10M")))
    ]


# The schedule at the paper's shape for nanoGPT, over the same five seeds (issue 56): the author's
# recipe (a constant 3e-4 from step 0) and the same recipe with only ResidualGPT's warm-up and
# cosine, each to the prefix's step 300 (its ``Plan.options``) on the prefixes' cadence. Seed 1337's
# two runs are the released prefixes of ``paper_10m_prefix``.
def paper_10m_nanogpt_schedule_seeds(seeds=None) -> list[Experiment]:
    """nanoGPT AttnOnly at the paper's 10M shape on its own constant rate and with
    ``warmup_cosine``, seed by seed (``SCHEDULE_SEEDS``), evaluated on ``PREFIX_EVAL``."""

    def at(seed, **changes):
        return replace(get_preset("10M", "nanogpt", "AttnOnly", seed), **PREFIX_EVAL, **changes)

    return [
        e
        for s in (SCHEDULE_SEEDS if seeds is None else seeds)
        for e in (at(s), at(s, **warmup_cosine("10M")))
    ]


def schedule_10m_until(exp: Experiment, summary: dict | None) -> int:
    """Where the CPU stops a run of ``paper_10m_schedule_seeds``, given its summary so far (None:
    not started): ``SCHEDULE_10M_AFTER`` steps past its escape, or at ``SCHEDULE_10M_MAX_STEPS`` if
    it has not left the floor by then, under either schedule; a warm-up + cosine run trains at least
    to ``SCHEDULE_10M_WARMUP_STEPS``, past its warm-up. One budget for both schedules, so that the
    rank rule's "never" (a run still on the floor at its stop) means the same under each: a warm-up
    run stopped on the floor at step 200 would be read as never leaving by 600. Trained in segments
    of ``SCHEDULE_10M_AFTER`` steps, so the stop is moved as soon as an escape is seen
    (``sweep.train_queue`` asks again after each)."""
    # a summary that is no JSON object is read as no progress: the sweep then refuses the damaged
    # run by name (RunDir.refuse_damaged), which this rule must not pre-empt with a crash of its own
    s = summary if isinstance(summary, dict) else {}
    done = s.get("steps") if isinstance(s.get("steps"), int) else 0
    escape = s.get("escape_step") if isinstance(s.get("escape_step"), int) else None
    least = 0 if exp.train.schedule == "constant" else SCHEDULE_10M_WARMUP_STEPS
    target = (
        SCHEDULE_10M_MAX_STEPS
        if escape is None
        else min(max(escape + SCHEDULE_10M_AFTER, least), SCHEDULE_10M_MAX_STEPS)
    )
    return min(target, (done // SCHEDULE_10M_AFTER + 1) * SCHEDULE_10M_AFTER)


# a prefix past the escape, which the `cpu` AttnOnly makes by step 100 (see ESCAPE_BUDGET)
AGREEMENT_STEPS = 300


def bf16_agreement() -> list[Experiment]:
    """The `cpu` stand-in's AttnOnly and FFNOnly seed 1337 in bf16 autocast, for their first
    ``AGREEMENT_STEPS`` steps, to set beside the released fp32 runs."""
    # precision is the only change: a bf16 run gets its own directory
    # (``_bf16``), never the fp32 run's
    return [
        replace(get_preset("cpu", "residualgpt", c, PAPER_SEED), precision="bf16")
        for c in NOISE_PAIR
    ]


# --- book/mechanism.ipynb and book/escape_and_bundle.ipynb -----------------------
# Three questions the paper leaves open (§7.2, §8.3), each a set of `cpu` stand-in runs; all
# `residualgpt` unless said, all on this CPU. Their cost is measured in the chapter's budget table.
# AttnOnly and FullResidual are the test; FFNOnly with the mixer is the control the
# probes suggest: its attention, without a skip, replaces each position by an average of the
# positions before it, and the token identity is gone after the first block
# (book/mechanism.ipynb); a token-wise mixer cannot.
MIXER_CONFIGS = ("AttnOnly", "FullResidual", "FFNOnly")


def mixer_test(seeds=SEEDS_10M) -> list[Experiment]:
    """§7.2's falsification test: attention replaced by the position-blind local mixer
    (same 4d² weights, no information across positions) at the preset's full budget.
    Seed 1337 of each configuration first."""
    return [
        replace(get_preset("cpu", "residualgpt", c, s), mixer="local")
        for s in seeds
        for c in MIXER_CONFIGS
    ]


ESCAPE_DEPTHS = (2, 4, 6, 8, 12)
ESCAPE_GAINS = GAINS  # weight-level gain on the FFN output projection (lib.engine.gain)
# A shortened budget (the cosine over 400 steps, the same warm-up), evaluated every 25 steps on 20
# fixed batches: the `cpu` AttnOnly leaves the floor by its first evaluation at step 100, so the
# escape step must be placed more finely than the preset's 100-step interval.
ESCAPE_BUDGET = dict(max_steps=400, eval_interval=25, eval_batches=20, train_eval_batches=5)


# The depth at which AttnOnly is also trained without GPT-2's 1/√(2L) scaling
# of the two output projections.
ESCAPE_UNSCALED_DEPTH = 12


def escape_map(seed: int = PAPER_SEED) -> list[Experiment]:
    """AttnOnly over depth x the FFN output's scale at initialisation, and FFNOnly at depth 6 as the
    control (issue "The mechanism, measured", §4). g = 1 is the plain run at that depth. Last,
    AttnOnly at the deepest depth and gain 1 without the 1/√(2L) scaling (``scaled_init=False``):
    the gain scales only the FFN output, but the scaling shrinks attention's output projection too,
    so only this run removes what GPT-2's scaling does as a whole."""
    exps = []
    for config, depths in (("AttnOnly", ESCAPE_DEPTHS), ("FFNOnly", (6,))):
        for depth in depths:
            base = replace(
                get_preset("cpu", "residualgpt", config, seed), n_layer=depth, **ESCAPE_BUDGET
            )
            exps += [
                base if g == 1 else replace(base, gain_mode="weight", gain=float(g))
                for g in ESCAPE_GAINS
            ]
    deep = replace(
        get_preset("cpu", "residualgpt", "AttnOnly", seed),
        n_layer=ESCAPE_UNSCALED_DEPTH,
        **ESCAPE_BUDGET,
    )
    return exps + [replace(deep, scaled_init=False)]


# A cell of the map that stayed on the floor for the shortened budget while a neighbouring
# cell (one step of depth or of gain away) left it, trained again for the preset's full
# budget: is its "never" a slow escape or a plateau? Depth 12 at gain 1 is GPT-2's own
# initialisation at the map's deepest depth.
ESCAPE_LONG_CELLS = ((12, 1.0),)  # (depth, gain)


def escape_long_budget(seed: int = PAPER_SEED) -> list[Experiment]:
    """AttnOnly at the map's boundary cells (``ESCAPE_LONG_CELLS``), the preset's budget and cosine,
    evaluated as often as the map (every 25 steps on 20 batches)."""
    cadence = {k: v for k, v in ESCAPE_BUDGET.items() if k != "max_steps"}
    exps = []
    for depth, g in ESCAPE_LONG_CELLS:
        base = replace(get_preset("cpu", "residualgpt", "AttnOnly", seed), n_layer=depth, **cadence)
        exps.append(base if g == 1 else replace(base, gain_mode="weight", gain=float(g)))
    return exps


# The 124M search's lever at the `cpu` stand-in (issue 60 item 6): the warm-up slope, a lever the
# 10M chapters also vary (the schedule), which the search's first probe trains. If the search names
# it, the escape map gains it as an axis: AttnOnly at depths 6, 8 and 12 against warm-ups of 100
# steps (the preset's: the map's own runs), 400 and 1,600 (4 and 16 times gentler; the last still
# climbing at the budget's end), on the map's budget and cadence.
ESCAPE_WARMUP_DEPTHS = (6, 8, 12)
ESCAPE_WARMUPS = (400, 1600)


def escape_warmup(seed: int = PAPER_SEED) -> list[Experiment]:
    """AttnOnly on the escape map's budget at ``ESCAPE_WARMUP_DEPTHS`` x ``ESCAPE_WARMUPS`` (the
    preset's 100-step warm-up is the map's own column): does a gentler warm-up free the depth at
    which the map's AttnOnly stays?"""
    return [
        replace(
            get_preset("cpu", "residualgpt", "AttnOnly", seed),
            n_layer=d,
            warmup_steps=w,
            **ESCAPE_BUDGET,
        )
        for d in ESCAPE_WARMUP_DEPTHS
        for w in ESCAPE_WARMUPS
    ]


def probe_during(seed: int = PAPER_SEED) -> list[Experiment]:
    """The four configurations on the escape map's budget (evaluations every 25 steps), for the
    probes during training (``lib.engine.diagnostics.ProbeCallback``): the released
    seed-1337 runs were trained before the probes existed. AttnOnly and FFNOnly are the
    escape map's depth-6, gain-1 runs."""
    return [replace(get_preset("cpu", "residualgpt", c, seed), **ESCAPE_BUDGET) for c in CONFIGS]


# the factor §5.2 calls "one relevant implementation difference"
FIXED_VALIDATION = "fixed validation"
# computes nanoGPT's attention exactly; only floating-point rounding differs
ROUNDING_CONTROL = "SDPA kernel"


def bundle_factors(
    scale: str = "cpu", config: str = "AttnOnly", seed: int = PAPER_SEED
) -> dict[str, Experiment]:
    """nanoGPT (the author's recipe) with one factor of the ResidualGPT bundle switched on
    its own, by name; ``"none"`` is nanoGPT itself. The ResidualGPT values are read from
    its preset at ``scale``. Dropout after the embeddings is not a factor here: the
    stand-ins train without dropout."""
    nano = get_preset(scale, "nanogpt", config, seed)
    res = get_preset(scale, "residualgpt", config, seed).train
    factors = {
        "none": {},
        WARMUP_COSINE: warmup_cosine(scale),
        # constant, at ResidualGPT's peak
        "peak learning rate": dict(lr=res.lr),
        "AdamW beta2": dict(beta2=res.beta2),
        "weight decay": dict(weight_decay=res.weight_decay, decay_all=res.decay_all),
        "gradient clipping": dict(grad_clip=res.grad_clip),
        "tied embedding": dict(tie_weights=True),
        "GPT-2 init": dict(scaled_init=True),
        "no biases": dict(bias=False, head_bias=False),
        ROUNDING_CONTROL: dict(attn_kernel="sdpa"),
        FIXED_VALIDATION: dict(val_mode=res.val_mode),
    }
    return {name: replace(nano, **changes) for name, changes in factors.items()}


def rounding_twins(scale: str = "cpu") -> list[Experiment]:
    """The rounding-only twin (``ROUNDING_CONTROL``) of nanoGPT AttnOnly at the joint-collapse
    chapter's seeds other than the bundle's, whose twin is a bundle factor: whether each seed's
    escape survives a change of floating-point order decides whether the stand-in's joint collapse
    is a knife-edge or a contradiction."""
    # the bundle's own twin: its fields, at the other seeds
    twin = bundle_factors(scale)[ROUNDING_CONTROL]
    return [replace(e, attn_kernel=twin.model.attn_kernel) for e in bundle_baseline_seeds(scale)]


def bundle_baseline_seeds(scale: str = "cpu") -> list[Experiment]:
    """nanoGPT AttnOnly at the joint-collapse chapter's other seeds: the bundle
    reads its factors against them."""
    # A factor that moves seed 1337 off the floor means little if nanoGPT
    # itself leaves it at another seed.
    return [e for e in joint_collapse(scale, seeds=(42,)) if e.config_name == "AttnOnly"]


def bundle(scale: str = "cpu") -> list[Experiment]:
    """The factors one at a time, then nanoGPT at the other seeds they are read against."""
    return [*bundle_factors(scale).values(), *bundle_baseline_seeds(scale)]


# --- issue "The author's recipes, phase by phase": the stand-in's departures and the schedule, with
# seeds ----------
# The stand-in departs from the author's ResidualGPT in three ways: GPT-2's scaled initialisation,
# dropout 0 and a peak of 1e-3. AUTHOR_VALUES gives it the stability notebook's
# (Notebooks/10M/AttnOnly_seed_stability.ipynb): plain N(0, 0.02), dropout 0.2 and a peak of 3e-4
# decayed to 3e-5 after the same warm-up; everything else stays the stand-in's (shape, batch,
# steps). nanoGPT at the stand-in departs from its notebook in dropout only.
AUTHOR_VALUES = dict(scaled_init=False, dropout=0.2, lr=3e-4, min_lr=3e-5)
AUTHOR_DROPOUT = dict(dropout=0.2)
SCHEDULE_SEEDS = SEEDS_124M  # Table 5's five seeds, one tuple: the schedule over seeds reuses them
# every 25 steps, on the escape map's 20 fixed batches: the escape step placed to within 25 steps
SCHEDULE_CADENCE = {k: v for k, v in ESCAPE_BUDGET.items() if k != "max_steps"}


def author_values(seeds=SEEDS_10M) -> list[Experiment]:
    """Do the stand-in's headline results survive the author's values? ResidualGPT AttnOnly, FFNOnly
    and FullResidual with ``AUTHOR_VALUES`` (the asymmetry), and nanoGPT AttnOnly with the author's
    dropout (the joint collapse)."""
    exps = [
        replace(get_preset("cpu", "residualgpt", c, s), **AUTHOR_VALUES)
        for s in seeds
        for c in ("AttnOnly", "FFNOnly", "FullResidual")
    ]
    return exps + [
        replace(get_preset("cpu", "nanogpt", "AttnOnly", s), **AUTHOR_DROPOUT) for s in seeds
    ]


class ScheduleFactor(NamedTuple):
    """One row of ``schedule_factors``: the fields a factor changes in its implementation's preset,
    and the seeds whose runs picked it as a candidate, which are no evidence for it
    (``claims.schedule_seeds`` judges it on the others)."""

    changes: dict
    chosen_by: tuple[int, ...] = ()


def rate_words(x: float) -> str:
    """A learning rate as the paper writes it: 3e-4, 1e-3."""
    mantissa, exponent = f"{x:e}".split("e")
    return f"{float(mantissa):g}e{int(exponent)}"


# The Phase-2 notebook's rate (Notebooks/10M/10M_MIXTURE_EXPERIMENT.ipynb: a constant 3e-4),
# which is the 10M preset's peak; the stand-in's ResidualGPT peaks at 1e-3, so its "constant lr"
# differs from Phase 2 in the rate too.
PHASE2_LR = get_preset("10M", "residualgpt").train.lr
# the factor: ResidualGPT at Phase 2's rate, from step 0
CONSTANT_PHASE2 = f"{CONSTANT_LR} at {rate_words(PHASE2_LR)}"


def schedule_factors(scale: str = "cpu") -> dict[tuple[str, str], ScheduleFactor]:
    """The schedule plan as a table, as ``bundle_factors`` is: (implementation, factor) ->
    ``ScheduleFactor``. "none" is the implementation's own recipe; each swaps in the other
    implementation's schedule, named by ``SCHEDULE_NAMES``; ResidualGPT's constant rate is trained
    twice, at its own peak and at Phase 2's 3e-4, so the rate is told apart from the schedule's
    shape (``schedule_factor_changes`` names what each changes). The one-seed bundle's three
    candidates (nanoGPT's warm-up + cosine, gradient clipping and no biases) train every seed and
    are judged on the seeds other than the bundle's, whose runs chose them. The one place each label
    is written: ``schedule_factor`` reads it back by lookup."""
    res = get_preset(scale, "residualgpt").train
    swap = {"nanogpt": warmup_cosine(scale), "residualgpt": constant_lr(scale)}
    # the one-seed bundle's seed, whose runs picked its three candidates: nanoGPT's
    # warm-up + cosine, clipping, biases
    chosen = (bundle_factors(scale)["none"].seed,)
    table = {}
    for impl in ("nanogpt", "residualgpt"):
        table[impl, "none"] = ScheduleFactor({})
        table[impl, SCHEDULE_NAMES[swap[impl]["schedule"]]] = ScheduleFactor(
            swap[impl], chosen_by=chosen if impl == "nanogpt" else ()
        )
    if res.lr != PHASE2_LR:  # at the paper's shape the two are one run
        table["residualgpt", CONSTANT_PHASE2] = ScheduleFactor(
            dict(constant_lr(scale), lr=PHASE2_LR, min_lr=PHASE2_LR)
        )
    table["nanogpt", "gradient clipping"] = ScheduleFactor(
        dict(grad_clip=res.grad_clip), chosen_by=chosen
    )
    table["nanogpt", "no biases"] = ScheduleFactor(
        dict(bias=False, head_bias=False), chosen_by=chosen
    )
    return table


def schedule_factor_changes(scale: str = "cpu") -> list[dict]:
    """What each schedule factor of ``schedule_factors`` changes, in the three parts a
    schedule has: the peak rate, the warm-up and the decay, each "kept" or "from → to"
    against the implementation's own preset."""
    rows = []
    for (impl, name), f in schedule_factors(scale).items():
        if name == "none" or "schedule" not in f.changes:
            continue
        own = get_preset(scale, impl).train
        new = replace(get_preset(scale, impl), **f.changes).train

        def decay(t):
            return f"cosine to {rate_words(t.min_lr)}" if t.schedule == "cosine" else "none"

        def warmup(t):
            return (
                f"{t.warmup_steps} steps" if t.schedule == "cosine" and t.warmup_steps else "none"
            )

        parts = {
            "peak rate": (rate_words(own.lr), rate_words(new.lr)),
            "warm-up": (warmup(own), warmup(new)),
            "decay": (decay(own), decay(new)),
        }
        rows.append(
            {
                "implementation": impl,
                "factor": name,
                **{k: f"kept ({a})" if a == b else f"{a} → {b}" for k, (a, b) in parts.items()},
            }
        )
    return rows


def _schedule_run(impl: str, seed: int, changes: dict, scale: str = "cpu") -> Experiment:
    return replace(get_preset(scale, impl, "AttnOnly", seed), **SCHEDULE_CADENCE, **changes)


def schedule_factor(exp: Experiment) -> str:
    """The factor a run of ``schedule_seeds`` switches ("none": its implementation's recipe as it
    is), found in ``schedule_factors`` by the run it builds; a run outside the plan is refused."""
    table = schedule_factors(exp.scale)
    for (impl, name), f in table.items():
        if impl == exp.impl and _schedule_run(impl, exp.seed, f.changes, exp.scale) == exp:
            return name
    raise ValueError(
        (
            f"{exp.impl} {exp.config_name} seed {exp.seed} is no run of the schedule plan; its "
            "factors: "
        )
        + ", ".join(f"{i} {n}" for i, n in table)
    )


def schedule_seeds(seeds=SCHEDULE_SEEDS) -> list[Experiment]:
    """The learning-rate schedule as a factor, over five seeds, evaluated every 25 steps
    (``schedule_factors``): nanoGPT AttnOnly at its constant rate and with ResidualGPT's warm-up and
    cosine; ResidualGPT AttnOnly with its warm-up and cosine and at a constant rate, its own peak
    and Phase 2's; then gradient clipping and no biases on nanoGPT AttnOnly."""
    return [
        _schedule_run(impl, s, f.changes)
        for (impl, _), f in schedule_factors().items()
        for s in seeds
    ]


def recipes() -> list[Experiment]:
    """Both, seed 1337 of each kind first, so every question has an answer as early as possible."""
    both = [*author_values(), *schedule_seeds()]
    return unique([e for e in both if e.seed == PAPER_SEED] + both)


def mechanism() -> list[Experiment]:
    """What book/mechanism.ipynb and book/escape_and_bundle.ipynb train, cheapest answer first: the
    mixer test at seed 1337, the four short runs probed during training, the mixer's other seeds,
    the bundle one factor at a time and the rounding twin of its other seed, the escape map and its
    boundary cells at the full budget. The schedule over seeds, which the second chapter reads too,
    is a recipe plan of its own (``schedule_seeds``, in ``RECIPE_PLANS``)."""
    return unique(
        [
            *mixer_test(seeds=(PAPER_SEED,)),
            *probe_during(),
            *mixer_test(),
            *bundle(),
            *rounding_twins(),
            *escape_map(),
            *escape_long_budget(),
        ]
    )


def release() -> list[Experiment]:
    """Everything the default (CPU) book's first six chapters show, most important first; duplicates
    removed. The mechanism chapter trains its own plan (``MECHANISM_PLANS``)."""
    # Seed 1337 of every chapter first (the 124M stand-in's four seed-1337 runs right after the
    # gain sweep, so that every chapter has measured numbers as early as possible), then a second
    # seed so the seed plots have a choice, the remaining seeds, the 124M stand-in's longer-budget
    # probe (it decides what that chapter's budget cannot), and last nanogpt seed 42, which the
    # issue asks for only if time allows.
    order = [
        *asymmetry_10m(seeds=(PAPER_SEED,), extra_seeds=()),
        *joint_collapse(),
        *asymmetry_10m(seeds=(42,), extra_seeds=()),
        *gain_confound(),
        *sweep_124m(seeds=(PAPER_SEED,)),
        *asymmetry_10m(),
        *sweep_124m(),
        *longer_budget_124m(),
        *joint_collapse(seeds=(42,)),
    ]
    return unique(order)


def unique(exps: list[Experiment]) -> list[Experiment]:
    """``exps`` in order, each experiment once."""
    # Keyed by the resolved JSON, the same key planned() uses; the first occurrence keeps its place,
    # so a plan's "most important first" order survives.
    seen, out = set(), []
    for e in exps:
        key = e.to_json()
        if key not in seen:
            seen.add(key)
            out.append(e)
    return out


def keeps_weights(exp: Experiment) -> bool:
    """Released runs whose final weights the book probes (fixed_val_batches): seed 1337 of the
    plain `residualgpt` stand-in runs, about 2.4 MB each."""
    # Seed 1337 only and the preset's budget and depth only: the release stays small, and a probe of
    # "the trained model" never reads a shortened or deeper run.
    return (
        exp.scale == "cpu"
        and exp.impl == "residualgpt"
        and exp.seed == PAPER_SEED
        and exp.gain_mode is None
        and exp.train.max_steps == get_preset("cpu").train.max_steps
        and exp.model.n_layer == get_preset("cpu").model.n_layer
    )


PREFIX_PLANS = (
    "10m_prefix",
    "bf16_agreement",
    "10m_whole",
    "10m_schedule_seeds",
    "10m_nanogpt_schedule_seeds",
    # the search: a probe on the 124M's own schedule stops short of its end
    "124m_search",
)
# book/mechanism.ipynb's plans: hours of CPU time beyond the release, trained with their own
# ``sweep --plan mechanism`` (or one part of it), so that ``release`` stays the first six chapters.
MECHANISM_PLANS = (
    "mechanism",
    "mixer_test",
    "probe_during",
    "escape_map",
    "escape_long",
    "bundle",
    "rounding_twins",
    "escape_warmup",
)
# The recipe questions' plans (issue "The author's recipes"): about 40 stand-in runs, trained with
# their own ``sweep --plan recipes``, so that ``release`` stays the first six chapters; §5.1(b)'s
# rounding twins (two) and §5.1's runtime gains at two more seeds (eight).
RECIPE_PLANS = ("recipes", "author_values", "schedule_seeds", "gain_twins", "gain_seeds")


def _prefix_stop(exp: Experiment, summary: dict | None, cap: int | None) -> int | None:
    # --until is the prefix; a control that needs fewer steps (``prefix_steps``) stops at its own
    if cap is None:
        return None
    return min(cap, prefix_steps(exp)) if prefix_steps(exp) < PREFIX_STEPS else cap


def _search_stop(exp: Experiment, summary: dict | None, cap: int | None) -> int:
    return search_stop(exp) if cap is None else min(search_stop(exp), cap)


def _schedule_stop(exp: Experiment, summary: dict | None, cap: int | None) -> int:
    at = schedule_10m_until(exp, summary)
    return at if cap is None else min(at, cap)


@dataclass(frozen=True)
class Plan:
    """A plan: the runs ``make`` lists (calling the plan calls it), the scales they resolve at (the
    first is the default; none: the runs' own fixed scales), the options its released runs were
    trained with on this CPU (``sweep --plan NAME OPTIONS``), and its stopping rule where its runs
    stop at steps of their own: (experiment, its summary so far or None, the command's --until or
    None) -> the step to train it to (None: its budget). ``sweep`` asks again after each segment, so
    a rule that reads the run moves its stop as the run goes. The CLI names no plan: it reads each
    plan's own rule and options here."""

    name: str
    make: Callable[..., list[Experiment]]
    scales: tuple[str, ...] = ()
    options: tuple[str, ...] = ()
    stop: Callable[[Experiment, dict | None, int | None], int | None] | None = None

    def __call__(self, *args, **kwargs) -> list[Experiment]:
        return self.make(*args, **kwargs)


# The paper's own 10M model on a CPU: micro-batches of 8 and the fast dropout mask
# (book/reproducibility.md), and the prefixes stopped at step 300 (book/joint_collapse.ipynb).
_PAPER_SHAPE_ON_CPU = ("--micro-batch 8", "--fast-dropout")
_PREFIX_ON_CPU = (f"--until {PREFIX_STEPS}", *_PAPER_SHAPE_ON_CPU)
_TEN_M = ("cpu", "10M")  # a chapter plan at its stand-in and at the paper's 10M
PLANS = {
    p.name: p
    for p in (
        Plan("release", release),
        Plan("joint_collapse", joint_collapse, _TEN_M),
        Plan("gain_confound", gain_confound, _TEN_M),
        Plan("fixed_val_batches", fixed_val_batches, _TEN_M),
        Plan("10m_asymmetry", asymmetry_10m, _TEN_M),
        Plan("124m_sweep", sweep_124m, ("cpu-bpe", "124M", "cpu-bpe-ramp")),
        Plan("124m_longer_budget", longer_budget_124m, ("cpu-bpe",)),
        Plan("124m_search", search_124m, stop=_search_stop),
        Plan("10m_prefix", paper_10m_prefix, options=_PREFIX_ON_CPU, stop=_prefix_stop),
        Plan("10m_whole", paper_10m_whole, options=_PAPER_SHAPE_ON_CPU),
        Plan(
            "10m_schedule_seeds",
            paper_10m_schedule_seeds,
            options=_PAPER_SHAPE_ON_CPU,
            stop=_schedule_stop,
        ),
        Plan(
            "10m_nanogpt_schedule_seeds", paper_10m_nanogpt_schedule_seeds, options=_PREFIX_ON_CPU
        ),
        Plan("gain_twins", gain_twins),
        Plan("gain_seeds", gain_seeds),
        Plan("bf16_agreement", bf16_agreement),
        Plan("mechanism", mechanism),
        Plan("mixer_test", mixer_test),
        Plan("probe_during", probe_during),
        Plan("escape_map", escape_map),
        Plan("escape_long", escape_long_budget),
        Plan("escape_warmup", escape_warmup),
        Plan("bundle", bundle),
        Plan("recipes", recipes),
        Plan("author_values", author_values),
        Plan("schedule_seeds", schedule_seeds),
        Plan("rounding_twins", rounding_twins),
    )
}


_PLANNED: set[str] = set()  # every plan's runs at every scale, filled on first use


def planned(exp: Experiment) -> bool:
    """Is ``exp`` a run of some plan, at any of the plan's scales (a run the
    released ``runs/`` may hold)?"""
    # The CLI asks before training into the released runs/ and the staging scan asks for every run
    # it finds, so the plans are resolved once and kept as JSON keys.
    if not _PLANNED:
        for plan in PLANS.values():
            for scale in plan.scales or (None,):
                _PLANNED.update(e.to_json() for e in (plan() if scale is None else plan(scale)))
    return exp.to_json() in _PLANNED


def resolve(
    name: str, scale: str | None = None, configs=None, seeds=None, impls=None
) -> list[Experiment]:
    """Plan ``name`` at ``scale`` (its default if None), narrowed to ``configs``, ``seeds`` and
    ``impls`` where given. A scale the plan does not have, or a configuration, seed or
    implementation that selects none of its runs, is refused with the valid choices: a plan never
    silently ignores an argument."""
    if name not in PLANS:
        raise ConfigError(f"unknown plan {name!r}; valid: {', '.join(PLANS)}")
    scales = PLANS[name].scales or None
    if scale is None:
        exps = PLANS[name]()
    elif scales is None:
        # refused, not ignored: --scale 10M on a `cpu`-only plan would train the stand-in anyway
        fixed = sorted({e.scale for e in PLANS[name]()})
        raise ConfigError(
            f"plan {name!r} has fixed scale(s) {', '.join(fixed)}; --scale is not valid with it "
            f"(plans with a scale: {', '.join(n for n, p in PLANS.items() if p.scales)})"
        )
    elif scale not in scales:
        raise ConfigError(f"plan {name!r} at scale {scale!r}: valid: {', '.join(scales)}")
    else:
        exps = PLANS[name](scale)
    narrow = (
        ("configuration", configs, lambda e: e.config_name),
        ("seed", seeds, lambda e: e.seed),
        ("implementation", impls, lambda e: e.impl),
    )
    narrowed = False  # the valid values named are those left after the options before it
    for key, wanted, of in narrow:
        if wanted is None:
            continue
        have = sorted({of(e) for e in exps})
        unknown = [w for w in wanted if w not in have]
        # one unknown value is enough to refuse: a typo among good ones would
        # otherwise quietly train fewer runs
        if unknown:
            among = " among the runs the other options select" if narrowed else ""
            raise ConfigError(
                f"plan {name!r} has no {key} {', '.join(map(str, unknown))}{among}; "
                f"valid: {', '.join(map(str, have))}"
            )
        exps, narrowed = [e for e in exps if of(e) in wanted], True
    return exps


def with_steps(exps: list[Experiment], steps: int | None) -> list[Experiment]:
    if steps is None:
        return exps
    # max_steps alone: the cosine stretches over the new budget (lr_at reads max_steps), and
    # runs.run_path names the run _steps<N>, so it never shares a directory with the preset's
    return unique(
        [dataclasses.replace(e, train=dataclasses.replace(e.train, max_steps=steps)) for e in exps]
    )


def command_for(exp: Experiment, runs_dir=None) -> str:
    """The CLI command that trains ``exp``."""
    cmd = (
        f"python -m lib train --scale {exp.scale} --impl {exp.impl} "
        f"--config {exp.config_name} --seed {exp.seed}"
    )
    if exp.gain_mode:
        cmd += f" --gain-mode {exp.gain_mode} --gain {exp.gain:g}"
    if off_preset_steps(exp):
        cmd += f" --steps {exp.train.max_steps}"
    if off_preset_precision(exp):
        cmd += f" --precision {exp.train.precision}"
    if exp.model.mixer != "attention":
        cmd += f" --mixer {exp.model.mixer}"
    # The fields in the order run_path names them, so the command and the directory read
    # alike; a bool as JSON (true/false), a number as Python prints it: lib.cli.parse_sets
    # reads each back as the same value.
    for key, value in sorted(off_preset_fields(exp).items()):
        cmd += f" --set {key}={json.dumps(value) if isinstance(value, bool) else value}"
    if keeps_weights(exp):  # the chapters probe its final weights
        cmd += " --keep-weights"
    if runs_dir is not None:
        cmd += f" --runs-dir {runs_dir}"
    return cmd
