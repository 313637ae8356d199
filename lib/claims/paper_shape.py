"""The paper's exact 10M shape, trained for its first steps on a CPU
(``plans.paper_10m_prefix``): where each run stands at the end of its prefix, and what the
prefix can and cannot say about where the full run ends.

Longer than the house's ~350 lines because it is the one place the paper-shape runs are read
(``prefix_table``, ``paper_shape_prefix``) and every claim judged on them, each of which reads
that table's rows: split, the table's columns and their readers would sit in two files that
change together. Fig. 2b's growth order, which reads the runs' histories rather than this
table's rows, is ``growth_10m``."""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from ..engine import plans
from ..engine.config import CONFIG_NAMES, get_preset
from ..engine.results import (
    SHOWN_AS_PREFIX,
    floor_of,
    histories_of,
    layer0_ffn,
    summaries_of,
    usable,
    whole_cpu_hours,
)
from ..engine.runs import RUNS_DIR, RunDir, run_path
from ..engine.thresholds import ESCAPE_MARGIN, escape_step, left_floor
from .joint_collapse import STARVED, starved_from
from .verdicts import Claim, and_list, claim, verdict

# Table 2 is the nanoGPT joint collapse; for ResidualGPT, Fig. 4 is Phase 3, the paper's primary 10M
# estimate (§8.1), whose recipe the 10M preset trains (Table 3 is the earlier record, kept as
# history): each prefix is set beside the values of the recipe it trains.
# where each implementation's 10M values are
PREFIX_PAPER_REF = {"nanogpt": "Table 2", "residualgpt": "Fig. 4"}


def schedule_variant(impl: str, schedule: str) -> str:
    """ "recipe" where a run trains on its implementation's own schedule,
    else the schedule it was given."""
    return (
        "recipe" if schedule == plans.own_schedule(impl, "10M") else plans.SCHEDULE_NAMES[schedule]
    )


def floor_for(floor: float | dict[str, float], impl: str) -> float:
    """One implementation's floor from a floor per implementation
    (``results.floor_of``), or the one floor given."""
    return floor[impl] if isinstance(floor, dict) else floor


def prefix_table(
    summaries: pd.DataFrame, hist: pd.DataFrame, floor: float | dict[str, float]
) -> pd.DataFrame:
    """One row per paper-shape run, partial or complete: how far it trained, its validation loss at
    its last evaluation and at best, whether and when it left the floor, its layer-0 gradient
    norm (attention and MLP together) on the step before its last evaluation, and the paper's
    best value for the same implementation and configuration (``PREFIX_PAPER_REF``, seed 1337
    where the paper has it, else its mean; none for a run on the other implementation's schedule,
    which the paper never trained)."""
    from .paper import paper_values

    rows = []
    for s in summaries.itertuples():
        # schedule is part of the match: each implementation's AttnOnly is trained
        # twice, differing only there
        h = hist[
            (hist.impl == s.impl)
            & (hist.config == s.config)
            & (hist.seed == s.seed)
            & (hist.schedule == s.schedule)
        ].sort_values("step")
        # the evaluations that recorded gradients (step 0 has none: no
        # backward pass yet), in step order
        rec = [
            r
            for r in h.to_dict("records")
            if isinstance(r.get("grad_norm_ffn_weights"), list)
            or isinstance(r.get("grad_norm_mlp"), list)
        ]
        grads = [layer0_ffn(r) for r in rec]
        # each evaluation's standard error (plans.PREFIX_EVAL): the table shows the largest, to read
        # against the 0.1 escape margin
        se = h.val_loss_se.dropna() if "val_loss_se" in h else pd.Series(dtype=float)
        paper = paper_values(
            ref=PREFIX_PAPER_REF[s.impl], impl=s.impl, config=s.config, metric="best_val_loss"
        )
        # Table 2's rows are seed 1337; Fig. 4's are means over its seeds (8 for AttnOnly, 3 for
        # FFNOnly) or anchors of no stated seed, and are used as they are
        paper = paper[paper.seed == s.seed] if (paper.seed == s.seed).any() else paper
        # a run on the other implementation's schedule has no paper value:
        # the paper trained no such run
        paper = paper if schedule_variant(s.impl, s.schedule) == "recipe" else paper.iloc[0:0]
        rows.append(
            {
                "impl": s.impl,
                "config": s.config,
                "seed": s.seed,
                "schedule": schedule_variant(s.impl, s.schedule),
                # micro-batches and the dropout masks' generator: how it ran, not what it trained
                "execution": getattr(s, "execution", None),
                # the whole runs evaluate every 100 steps, the prefixes every 50: an
                # escape is dated to within it
                "eval_every": getattr(s, "eval_every", None),
                # in words, so that no reader of the table takes a prefix for a complete run
                "trained": f"first {s.steps:,} of {s.max_steps:,} steps"
                if s.steps < s.max_steps
                else f"all {s.max_steps:,} steps",
                "steps": s.steps,
                "max_steps": s.max_steps,
                "status": s.status,
                "last_val": float(h.val_loss.iloc[-1]),
                "best_val": s.best_val_loss,
                "best_step": int(h.step[h.val_loss.idxmin()]),
                # the run's escape step against the floor its implementation is judged on (its
                # summary recorded one against the whole split's)
                "floor": floor_for(floor, s.impl),
                "left_floor_at": escape_step(h.to_dict("records"), floor_for(floor, s.impl)),
                "layer0_grad": grads[-1] if grads else None,
                # the joint-collapse chapter's threshold, so both chapters call
                # the same gradient starved
                "starved": None if not grads else grads[-1] < STARVED,
                # Fig. 2a's "from step 300 onward": the evaluation from which every
                # later gradient is starved
                "starved_from": starved_from([r["step"] for r in rec], grads),
                "max_val_se": float(se.max()) if len(se) else None,
                # what the run cost, and where (whole_run_cost)
                "wall_s": getattr(s, "wall_s", None),
                "device": getattr(s, "device", None),
                "paper_best": paper.reported.iloc[0] if len(paper) else None,
                "paper_best_value": float(paper.value.iloc[0]) if len(paper) else None,
                # the margin rides along in the table, so the contrast and asymmetry claims read
                # the one it was built with
                "margin": ESCAPE_MARGIN,
            }
        )
    cols = [
        "impl",
        "config",
        "seed",
        "schedule",
        "execution",
        "eval_every",
        "trained",
        "steps",
        "max_steps",
        "status",
        "last_val",
        "best_val",
        "best_step",
        "floor",
        "left_floor_at",
        "layer0_grad",
        "starved",
        "starved_from",
        "max_val_se",
        "wall_s",
        "device",
        "paper_best",
        "paper_best_value",
        "margin",
    ]
    return pd.DataFrame(rows, columns=cols)


def execution(rd: RunDir) -> str:
    """How a run was executed, from its env.json (each resumed segment too): the execution
    options, which change the random realisation of the masks but not the experiment
    (``--micro-batch``, ``--fast-dropout``)."""
    segments = rd.segments()
    if not segments:
        return "not recorded"  # no env.json

    def words(seg):
        mb = seg["micro_batch"]
        return (f"micro-batches of {mb}" if mb else "whole batch") + (
            ", fast dropout" if seg["fast_dropout"] else ""
        )

    said = [words(seg) for seg in segments]
    if len(set(said)) == 1:
        return said[0]
    return "; ".join(f"from step {seg['step']:,}: {w}" for seg, w in zip(segments, said))


def run_row(table: pd.DataFrame, impl: str, config: str, schedule: str = "recipe"):
    # one run per (implementation, configuration, schedule); None where it is not trained yet, which
    # each claim turns into NOT TESTED rather than an error
    r = table[(table.impl == impl) & (table.config == config) & (table.schedule == schedule)]
    return None if r.empty else r.iloc[0]


# a row's outcome in words, the floor given where it did not leave, so the
# reader sees what it was read against
def where_it_is(r) -> str:
    # the floor named with the tokens it is the floor of, at the digits the
    # chapters' floor notes give (issue 56)
    tokens = "whole validation split" if r.impl == "nanogpt" else "fixed validation batches"
    return (
        f"left the floor at step {int(r.left_floor_at):,}"
        if not pd.isna(r.left_floor_at)
        else f"on the floor ({r.floor:.4f}, unigram, {tokens})"
    )


def ends_where_the_paper_does(r) -> bool:
    """A run complete at its 10M preset's length, Table 1's 3,000 iterations (the same for every
    configuration): a run complete at another length (--steps) is not where the paper's runs end."""
    return bool(r.steps >= r.max_steps == get_preset("10M", r.impl, "FullResidual").train.max_steps)


@claim("Central contrast at the paper's shape, as far as both runs trained")
def claim_prefix_contrast(table: pd.DataFrame) -> Claim:
    """The paper's central contrast (Table 2 beside Phase 3, Fig. 4) at the paper's own shape, as
    far as the prefixes go (an early-training claim: "for the first N of 3,000 steps", never where
    the runs end): nanoGPT AttnOnly stays on the floor (best 3.3534 over 3,000 steps) while
    ResidualGPT AttnOnly leaves it. A best is a minimum over every evaluation, so a nanoGPT prefix
    already more than the margin below the paper's best contradicts it whatever else; a ResidualGPT
    prefix still on the floor has not shown the phenomenon yet (NOT TESTABLE HERE: a longer prefix
    would). Both are read at the step both reached; where both runs are complete at the paper's
    3,000 steps, that is where they end: the reading says so, and a ResidualGPT run that never left
    the floor then contradicts it."""
    nano, resid = run_row(table, "nanogpt", "AttnOnly"), run_row(table, "residualgpt", "AttnOnly")
    if nano is None or resid is None:
        return Claim("NOT TESTED", "the two paper-shape AttnOnly runs are not both released")
    # the two are compared at the step both reached: a longer prefix of one side is not an advantage
    step = int(min(nano.steps, resid.steps))
    lines = tuple(
        (
            f"{r.impl} AttnOnly, 10M, {r.trained}: best {r.best_val:.3f}, {where_it_is(r)}; paper "
            f"({PREFIX_PAPER_REF[r.impl]}) {r.paper_best} after 3,000 steps"
        )
        for r in (nano, resid)
    )
    # both read at the common step
    nano_left = not pd.isna(nano.left_floor_at) and nano.left_floor_at <= step
    resid_left = not pd.isna(resid.left_floor_at) and resid.left_floor_at <= step
    # The only outcome a prefix decides for good: the full run's best is a minimum over
    # more evaluations, so it can only be lower still, and Table 2's 3.3534 is already
    # beaten by more than the margin.
    below = nano.best_val < nano.paper_best_value - nano.margin
    facts = {"step": step, "nanogpt_left": bool(nano_left), "residualgpt_left": bool(resid_left)}
    if below:
        # a valid test that disagrees: the run has trained past where the claim could still be true
        return Claim(
            verdict(True, True, False),
            (
                f"nanoGPT AttnOnly is already {nano.paper_best_value - nano.best_val:.3f} below "
                f"the paper's best over its whole run (seed {int(nano.seed)}, the paper's seed)"
            ),
            facts,
            lines,
        )
    # Each case says what the prefix cannot say: where the runs end. ResidualGPT AttnOnly still on
    # the floor is the precondition unmet, not a disagreement.
    # once both runs are complete at the paper's own length the common step is where they end, and
    # the reading says so rather than "a prefix"
    whole = ends_where_the_paper_does(nano) and ends_where_the_paper_does(resid)
    facts["whole"] = whole
    # which side is still a prefix: a whole run's end is shown, a prefix's is not
    prefixes = [
        f"{name} ({r.trained})"
        for name, r in (("nanoGPT AttnOnly", nano), ("ResidualGPT AttnOnly", resid))
        if not ends_where_the_paper_does(r)
    ]
    unshown = (
        "a prefix cannot show where either run ends"
        if len(prefixes) != 1
        else f"{prefixes[0]} is a prefix, which cannot show where it ends"
    )
    if whole and not resid_left:  # a whole run that never left the floor is not Fig. 4's AttnOnly
        return Claim(
            verdict(True, True, False),
            (
                f"over all {step:,} steps ResidualGPT AttnOnly never left the floor, "
                f"where the paper's runs end at {resid.paper_best}"
            ),
            facts,
            lines,
        )
    why = (
        (
            f"over all {step:,} steps nanoGPT AttnOnly stayed on the floor and ResidualGPT "
            "AttnOnly left it, as the paper's runs end"
        )
        if whole and resid_left and not nano_left
        else (
            f"by step {step:,} (of 3,000) nanoGPT AttnOnly is on the floor and ResidualGPT "
            f"AttnOnly has left it, as the paper's runs; {unshown}"
        )
        if resid_left and not nano_left
        else f"both AttnOnly runs have left the floor by step {step:,}: not the paper's contrast"
        if resid_left
        else (
            f"by step {step:,} ResidualGPT AttnOnly has not left the floor (the paper gives no "
            "step at which it does), so the prefix has not shown the contrast yet; "
        )
        + (
            "the 3,000-step runs (--plan 10m_whole) would"
            if nano.steps >= nano.max_steps and resid.steps >= resid.max_steps
            else "a longer prefix (--until) would"
        )
    )
    # both leaving is CONTRADICTED at this step: nanoGPT AttnOnly off the
    # floor is not the joint collapse
    return Claim(verdict(True, resid_left, resid_left and not nano_left), why, facts, lines)


@claim("Layer-0 starvation at the paper's shape")
def claim_prefix_starvation(table: pd.DataFrame, from_step: int = plans.PREFIX_STEPS) -> Claim:
    """Fig. 2a (§4.1) at the paper's shape: the layer-0 gradient of every partial nanoGPT
    configuration that collapsed is 0.000 from step ``from_step`` onward, while Full Residual's is
    not (about 0.114). It needs a collapsed partial configuration that reached ``from_step`` beside
    Full Residual, the control (at its own, shorter prefix); a configuration that left the floor is
    not the collapsed model the figure measured. A collapsed run is starved in the figure's sense if
    every evaluation from ``from_step`` on, up to the last it trained, reads below ``STARVED`` (its
    ``starved_from`` at or before ``from_step``); one that wakes up at any later evaluation is not,
    however small its last gradient."""
    # Fig. 2 is the nanoGPT run; a row without gradients (no evaluation after
    # step 0 yet) has nothing to read
    nano = table[(table.impl == "nanogpt")].dropna(subset=["layer0_grad"])
    if nano.empty:
        return Claim("NOT TESTED", "no nanoGPT prefix with diagnostics is released")

    def since(r):
        return "" if pd.isna(r.starved_from) else f", starved from step {int(r.starved_from):,}"

    # every run with gradients is printed, ResidualGPT's and the swapped schedules too, though only
    # nanoGPT's recipe runs are judged
    parts = [
        (
            f"{r.impl} {r.config}{'' if r.schedule == 'recipe' else ' (' + r.schedule + ')'} at "
            f"step {int(r.steps):,}: {r.layer0_grad:.3g}{since(r)}"
        )
        for r in table.dropna(subset=["layer0_grad"]).itertuples()
    ]
    lines = (
        (
            "Layer-0 FFN weight gradient (the mean of the two weight matrices' norms, as the "
            "author's notebook measures it), on the step before the last evaluation, and the "
            f"evaluation from which every later one reads below {STARVED:g} (starved): "
        )
        + "; ".join(parts)
        + ".",
    )
    # the judged runs: nanoGPT on its own constant rate, as the author's Fig. 2 run
    nano = nano[nano.schedule == "recipe"]
    # A run must have reached ``from_step`` for its gradients to speak of Fig. 2a's "from step 300
    # onward"; a prefix speaks of it up to its last evaluation, a whole run of all of it.
    reached = nano[nano.steps >= from_step]
    collapsed = reached[(reached.config != "FullResidual") & reached.left_floor_at.isna()]
    # Full Residual is read at its own prefix (plans.PREFIX_CONTROL_STEPS): the control needs only
    # to show a gradient that is not starved
    full = nano[nano.config == "FullResidual"]
    throughout = {
        r.config: bool(not pd.isna(r.starved_from) and r.starved_from <= from_step)
        for r in collapsed.itertuples()
    }
    facts = {
        "collapsed": list(collapsed.config),
        "starved": {r.config: bool(r.starved) for r in nano.itertuples()},
        "starved_throughout": throughout,
        "through_step": {r.config: int(r.steps) for r in collapsed.itertuples()},
    }
    if collapsed.empty or full.empty:
        return Claim(
            "NOT TESTED",
            (
                f"Fig. 2a speaks of step {from_step} onward, of collapsed partial configurations "
                f"beside Full Residual; the nanoGPT prefixes that reach it do not include both"
            ),
            facts,
            lines,
        )
    holds = all(throughout.values()) and not bool(full.starved.iloc[0])
    how_far = ", ".join(f"{k} through step {v:,}" for k, v in facts["through_step"].items())
    why = (
        (
            "every collapsed partial nanoGPT configuration is starved at every evaluation from "
            f"step {from_step} on ({how_far}) and Full Residual is not"
        )
        if holds
        else (
            f"a collapsed partial configuration has a layer-0 gradient of at least {STARVED:g} at "
            f"an evaluation from step {from_step} on, or Full Residual is starved too"
        )
    )
    return Claim(verdict(True, True, holds), why, facts, lines)


def whole_run_cost(table: pd.DataFrame) -> str:
    """The command that trains the paper's whole 10M runs and what one took here: the reason a
    claim about where a run ends gives while its run is not there, so the reader knows what the
    answer costs. Measured, never typed: the wall-clock range of the whole runs in ``table`` that
    trained on a CPU, by the one rule the limitations page and the summary use
    (``results.whole_cpu_hours``)."""
    cost = "hours a 3,000-step run on a 2-core CPU"
    hours = whole_cpu_hours(table)
    if hours is not None:
        lo, hi = hours
        took = f"{lo:.1f}" if round(lo, 1) == round(hi, 1) else f"{lo:.1f} to {hi:.1f}"
        cost = f"a 3,000-step run took {took} hours here on a 2-core CPU"
    return (
        "python -m lib sweep --plan 10m_whole --micro-batch 8 --fast-dropout (in segments with "
        f"--until): {cost}; minutes on a GPU"
    )


# Table 2's partial configurations beside AttnOnly, the one trained whole first
OTHER_PARTIALS = ("FFNOnly", "NoResidual")


def _below_paper(r, margin: float) -> bool:
    """Is this run's best already below its Table 2 best by more than the escape margin (a best
    over the whole run, so a prefix below it stays below)? A run with no paper value is not."""
    return (
        r.paper_best_value is not None
        and not pd.isna(r.paper_best_value)
        and bool(r.best_val < r.paper_best_value - margin)
    )


@claim("Joint collapse at the paper's shape")
def claim_paper_shape_collapse(table: pd.DataFrame, margin: float = ESCAPE_MARGIN) -> Claim:
    """The joint collapse (Table 2) at the paper's exact 10M shape: nanoGPT AttnOnly on its own
    recipe. A prefix already below Table 2's best (a minimum over the whole run) contradicts it.
    Table 2's claim is where the run ends, so a prefix still on the floor is NOT TESTED (the verdict
    rule's ``reached``): it says "on the floor for the first N of 3,000 steps" beside its Full
    Residual control, and nothing about the steps after (the `cpu` stand-in's nanoGPT AttnOnly is on
    the floor at step 300 too, and leaves it at step 800). A complete run is judged against its own
    Full Residual, which must have left the floor. The collapse is joint: FFNOnly or No Residual
    already off the floor or below its own Table 2 best, even in a prefix, contradicts it; each of
    them trained whole on the floor joins the runs the verdict rests on, and a prefix on the floor
    is said as far as it trained."""
    # Table 2's runs: nanoGPT on its own constant rate; the swapped schedule is another question
    # (claims.schedule_10m, over seeds)
    t = table[(table.impl == "nanogpt") & (table.schedule == "recipe")].set_index("config")
    # Table 2's claim is joint: any of its other partial configurations that has left the floor, or
    # sits below its own Table 2 best, even in a prefix, has left the collapse for good, whatever
    # AttnOnly does (and whether or not AttnOnly is trained)
    below = [
        k
        for k in OTHER_PARTIALS
        if k in t.index and (_below_paper(t.loc[k], margin) or not pd.isna(t.loc[k].left_floor_at))
    ]
    if below:
        return Claim(
            verdict(True, True, False),
            "; ".join(
                f"{CONFIG_NAMES[k]} already off the floor (best {t.loc[k].best_val:.4f} in its "
                f"{t.loc[k].trained}, Table 2 {t.loc[k].paper_best})"
                for k in below
            ),
            {
                "below": below,
                "off": {k: (float(t.loc[k].best_val), t.loc[k].trained) for k in below},
            },
        )
    if "AttnOnly" not in t.index:
        return Claim("NOT TESTED", whole_run_cost(table))
    r = t.loc["AttnOnly"]
    left = not pd.isna(r.left_floor_at)
    # the control: only where Full Residual leaves the floor does staying on it mean a collapse
    full = t.loc["FullResidual"] if "FullResidual" in t.index else None
    full_left = full is not None and not pd.isna(full.left_floor_at)
    facts = {
        "trained": r.trained,
        "best": float(r.best_val),
        "seed": int(r.seed),
        "prefix": not ends_where_the_paper_does(r),
        "left_at": int(r.left_floor_at) if left else None,
        "full_left": full_left,
    }
    control = (
        ""
        if full is None
        else f"; Full Residual ({full.trained}) "
        + (f"left the floor at step {int(full.left_floor_at)}" if full_left else "on the floor")
    )
    # as in claim_prefix_contrast: a best already below Table 2's is below it for good
    if r.best_val < r.paper_best_value - margin:
        return Claim(
            verdict(True, True, False),
            "already below the paper's best over its whole run" + control,
            facts,
        )
    facts["below"] = []
    if full is None:
        return Claim(
            "NOT TESTED",
            f"its control, Full Residual, is not trained yet; {whole_run_cost(table)}",
            facts,
        )
    if facts["prefix"] and not left:
        # The claim is where the run ends; a prefix on the floor has not reached it, whatever its
        # control did: not tested yet, as the run is being trained to its end
        # (plans.paper_10m_whole). The early-training claims it does carry are claim_prefix_contrast
        # and claim_prefix_starvation.
        return Claim(
            verdict(True, full_left, True, reached=False),
            (
                f"on the floor for the {r.trained}, as Table 2's run; where the run ends (Table 2 "
                f"is the best over all {int(r.max_steps):,} steps) is decided when it has trained "
                "them all"
            )
            + control,
            facts,
        )
    best_at = getattr(r, "best_step", None)
    at = "" if best_at is None or pd.isna(best_at) else f" at step {int(best_at):,}"
    # the numbers after the first clause, never inside brackets in it: the
    # front page quotes the first clause
    why = (
        f"left the floor at step {int(r.left_floor_at):,}, which Table 2's run never does"
        if left
        else (
            f"on the floor for all {int(r.max_steps):,} steps; best {r.best_val:.4f}{at}, last "
            f"{r.last_val:.4f}, Table 2 {r.paper_best}"
        )
    )

    # Table 2 speaks of three partial configurations; at this shape only AttnOnly's run
    # is whole, and the card says so
    def status(k):
        if k not in t.index:
            return f"{CONFIG_NAMES[k]} not trained at this shape"
        o = t.loc[k]
        if not pd.isna(o.left_floor_at):
            return f"{CONFIG_NAMES[k]} left the floor at step {int(o.left_floor_at):,}"
        return (
            f"{CONFIG_NAMES[k]} on the floor for {'the ' * bool(o.steps < o.max_steps)}{o.trained}"
        )

    others = "; ".join(status(k) for k in OTHER_PARTIALS)
    # the partial configurations whose whole run this verdict rests on: AttnOnly's, and each
    # other one trained all its steps on the floor
    whole = ["AttnOnly"] + [
        k
        for k in OTHER_PARTIALS
        if k in t.index and ends_where_the_paper_does(t.loc[k]) and pd.isna(t.loc[k].left_floor_at)
    ]
    facts["whole"] = whole
    # §4: "Best val and Final val coincide ... still monotonically improving at the last logged
    # checkpoint". The whole run's own best and last, beside it: a finding, not the claim (the claim
    # is where the run sits). Only a last evaluation above the best by more than the noise says the
    # run was not still falling; within it, the curve is flat to the noise and §4's sentence can be
    # neither confirmed nor refuted on it.
    se = getattr(r, "max_val_se", None)
    rise = r.last_val - r.best_val
    lines = ()
    if not left and at:
        said = (
            "§4 says Table 2's best and final values coincide, the validation loss still falling "
            "at step 2,999; "
        )
        if int(best_at) == int(r.steps):
            lines = (said + "this run's best is its last evaluation too.",)
        elif se is None or pd.isna(se):
            lines = (
                said
                + (
                    f"this run's best is at step {int(best_at):,} and its last evaluation "
                    f"{rise:.4f} above it, with no standard error recorded to read that against."
                ),
            )
        else:
            beyond = rise > 2 * se
            lines = (
                said
                + (
                    f"this run's best is at step {int(best_at):,} and its last evaluation "
                    f"{rise:.4f} above it, {'beyond' if beyond else 'within'} twice its largest "
                    f"evaluation standard error ({se:.4f}): "
                )
                + (
                    "it was not still falling at its end."
                    if beyond
                    else (
                        "flat to within the noise since then, which can neither confirm nor "
                        "refute that sentence."
                    )
                ),
            )
    facts.update({"best_step": None if not at else int(best_at), "last": float(r.last_val)})
    return Claim(
        verdict(True, full_left, not left),
        why
        + control
        + (
            f"; {others} (Table 2's other partial "
            f"configurations: this verdict rests on the whole run"
            f"{'s' * (len(whole) > 1)} of {and_list([CONFIG_NAMES[k] for k in whole])})"
        ),
        facts,
        lines,
    )


def collapse_short(facts: dict) -> str:
    """The joint collapse at the paper's shape in a few words (``Row.short``), named for the runs
    that decide it (``claim_paper_shape_collapse``'s facts): nanoGPT AttnOnly's alone, or with
    each other partial configuration trained whole; all of nanoGPT's once a partial configuration
    has left the floor, since the joint claim then fails whichever did."""
    if facts.get("below"):
        return COLLAPSE_SHORTS[-1]
    whole = facts.get("whole") or ["AttnOnly"]
    if len(whole) == 1 + len(OTHER_PARTIALS):
        return COLLAPSE_SHORTS[-1]
    return f"nanoGPT {and_list([CONFIG_NAMES[k] for k in whole])}'s joint collapse"


def read_on(through: dict[str, int]) -> str:
    """Which partial nanoGPT configurations a paper-shape verdict read, and to which step
    (``through``: configuration -> last step read), as its row names them: "nanoGPT AttnOnly to
    step 3,000 and FFNOnly to step 300"; empty once all three were read to the run's end, where the
    paper's figure reads them."""
    end = get_preset("10M", "nanogpt").train.max_steps
    if not through or (
        set(through) == {"AttnOnly", *OTHER_PARTIALS} and min(through.values()) >= end
    ):
        return ""
    return "nanoGPT " + and_list([f"{CONFIG_NAMES[k]} to step {v:,}" for k, v in through.items()])


# every name collapse_short can give, for the tables that look a row up by it
COLLAPSE_SHORTS = (
    "nanoGPT AttnOnly's joint collapse",
    *(f"nanoGPT AttnOnly and {CONFIG_NAMES[k]}'s joint collapse" for k in OTHER_PARTIALS),
    "nanoGPT's joint collapse",
)


def stand_in_agreement(
    table: pd.DataFrame, stand_in_hist: pd.DataFrame, stand_in_floor: float | dict
) -> str:
    """Does the `cpu` stand-in (same seed, same implementation and configuration) say the same
    thing about leaving the floor by the step the paper-shape prefix reached? The stand-in's
    schedule and width differ, so agreement is evidence that the stand-in is a fair proxy
    for this question, not proof."""
    if table.empty:
        return "Stand-in against paper shape: no paper-shape run is released yet."
    lines, agree, compared = [], 0, 0
    # the stand-in trains each recipe as it is
    for r in table[table.schedule == "recipe"].itertuples():
        # the stand-in's evaluations up to the prefix's last step: both are asked the
        # same question at the same step
        h = stand_in_hist[
            (stand_in_hist.impl == r.impl)
            & (stand_in_hist.config == r.config)
            & (stand_in_hist.seed == r.seed)
            & (stand_in_hist.step <= r.steps)
        ]
        if h.empty:
            lines.append(f"{r.impl} {r.config}: no released stand-in run to compare.")
            continue
        # the rule the prefix's escape step was recorded by (floor minus the margin),
        # on the stand-in's evaluations
        s_left = bool(left_floor(h.val_loss, floor_for(stand_in_floor, r.impl)).any())
        p_left = not pd.isna(r.left_floor_at)
        agree += s_left == p_left
        compared += 1
        lines.append(
            (
                f"{r.impl} {r.config} by step {int(r.steps):,}: stand-in "
                f"{'left the floor' if s_left else 'on the floor'}, paper shape "
                f"{'left the floor' if p_left else 'on the floor'}"
            )
            + ("" if s_left == p_left else "  <- the stand-in does not predict this")
        )
    # A count, not a verdict: the stand-in is a proxy (its width, context, batch and schedule length
    # differ), and agreement is evidence for it, not a claim of the paper's.
    # and the floor each side was read against: one per set of runs, as each chapter judges that set
    shape = dict(zip(table.impl, table.floor))
    floors = (
        ""
        if not isinstance(stand_in_floor, dict)
        else " Each set of runs is read against its own floor: "
        + (
            "; ".join(
                f"{impl} at the stand-in {f:.4f}, at the paper's shape {shape[impl]:.4f}"
                for impl, f in stand_in_floor.items()
                if impl in shape
            )
        )
        + "."
    )
    return "\n".join(
        [
            *lines,
            # some of these runs are whole: "prefixes" undersold them (a hostile read)
            f"The stand-in predicts {agree} of {compared} paper-shape runs, each at the last step "
            "it trained." + floors,
        ]
    )


@claim("10M asymmetry at the paper's shape, as far as both runs trained")
def claim_prefix_asymmetry(table: pd.DataFrame) -> Claim:
    """The 10M asymmetry (Phase 3, Fig. 4) at the paper's shape, as far as the ResidualGPT prefixes
    go (an early-training claim): AttnOnly leaves the floor, FFNOnly stays on it. FFNOnly below the
    paper's FFNOnly best by more than the margin contradicts it (a best is a minimum over the whole
    run); an AttnOnly prefix still on the floor has not shown the phenomenon (NOT TESTABLE HERE)."""
    attn, ffn = run_row(table, "residualgpt", "AttnOnly"), run_row(table, "residualgpt", "FFNOnly")
    lines = tuple(
        (
            f"residualgpt {r.config}, 10M, {r.trained}: best {r.best_val:.3f}, {where_it_is(r)}; "
            f"paper ({PREFIX_PAPER_REF['residualgpt']}) {r.paper_best}"
        )
        for r in (attn, ffn)
        if r is not None
    )
    # FFNOnly below the paper's best contradicts for good, as a best only falls; it is checked
    # before anything else, as it needs no AttnOnly run
    if ffn is not None and ffn.best_val < ffn.paper_best_value - ffn.margin:
        return Claim(
            verdict(True, True, False),
            "FFNOnly is already below the paper's FFNOnly best",
            {},
            lines,
        )
    if attn is None or ffn is None:
        missing = [c for c, r in (("AttnOnly", attn), ("FFNOnly", ffn)) if r is None]
        return Claim(
            "NOT TESTED",
            (
                f"{' and '.join(missing)} {'have' if len(missing) > 1 else 'has'} no paper-shape "
                f"run yet; the asymmetry needs both"
            ),
            {},
            lines,
        )
    # AttnOnly still on the floor is the precondition unmet (NOT TESTABLE HERE): the paper gives no
    # step by which it leaves both read at the step both reached, as the contrast is: an escape
    # after FFNOnly's last step is not beside it
    step = int(min(attn.steps, ffn.steps))
    attn_left = not pd.isna(attn.left_floor_at) and attn.left_floor_at <= step
    why = (
        (
            f"by step {step:,} (of 3,000) AttnOnly has left the floor and FFNOnly has not; a "
            "prefix cannot show where either run ends"
        )
        if attn_left
        else f"by step {step:,} AttnOnly has not left the floor yet"
    )
    # so besides NOT TESTED this rule gives HOLDS, NOT TESTABLE HERE, or (above)
    # CONTRADICTED through FFNOnly alone
    return Claim(verdict(True, attn_left, attn_left), why, {"attn_left": attn_left}, lines)


def phase2_curves_reading(curves: pd.DataFrame, floor: float, margin: float | None = None) -> str:
    """What the author's Phase-2 curves show, and nothing more: for each AttnOnly seed of the
    constant-rate notebook, the first printed step at least ``margin`` below the unigram floor
    (or that it never gets there) and its best loss, beside the paper's Phase-3 mean. The
    printed steps are every 100, so an escape is placed to within 100 steps; ``floor`` is the
    one this book judges its own paper-shape ResidualGPT runs on (``Prefix.floors``), computed
    on our split of the same text."""
    from .paper import paper_values

    # None stands for the runs' escape margin: the author's curves are read by the rule our runs are
    margin = ESCAPE_MARGIN if margin is None else margin
    attn = curves[curves.config == "AttnOnly"]
    if attn.empty:
        return "The author's Phase-2 curves: none in data/author_phase2_curves.csv."
    # the paper's own Phase-2 record of each seed (§8.1), beside the notebook's:
    # whether the notebook is that run
    phase2 = paper_values(ref="§8.1", phase="phase2", config="AttnOnly", metric="best_val_loss")
    phase2 = phase2[phase2.seed.notna()].set_index("seed").reported
    parts = []
    for seed, g in attn.groupby("seed", sort=False):
        g = g.sort_values("step")
        # the same rule as a run's escape step, on the printed evaluations
        below = g[left_floor(g.val_loss, floor, margin)]
        when = (
            f"leaves the floor by step {int(below.step.iloc[0]):,}"
            if len(below)
            else "never leaves the floor"
        )
        record = (
            f"; §8.1's Phase 2 {phase2[seed]}"
            if seed in phase2.index
            else "; no Phase-2 record in §8.1"
        )
        parts.append(f"seed {seed} {when} (best {g.val_loss.min():.4f}{record})")
    # Phase 3 is the paper's primary 10M estimate (§8.1): the constant-rate
    # Phase-2 curves are set beside it
    p3 = paper_values(ref="Fig. 4", phase="phase3", config="AttnOnly").reported.iloc[0]
    ffn = curves[curves.config == "FFNOnly"]
    ffn_on = int((~left_floor(ffn.groupby("seed").val_loss.min(), floor, margin)).sum())
    ffn_text = (
        f"; FFNOnly stays on the floor in {ffn_on} of {ffn.seed.nunique()} seeds"
        if len(ffn)
        else ""
    )
    return (
        (
            "The author's Phase-2 notebook (constant learning rate, printed every 100 steps), "
            "AttnOnly: "
        )
        + "; ".join(parts)
        + ffn_text
        + (
            ". Phase 3 (§8.1; Table 1's warm-up and cosine by the paper's word, no notebook holds "
            f"it): AttnOnly {p3} over 8 seeds."
        )
    )


@dataclass
class Prefix:
    """The paper-shape 10M runs (``plans.paper_10m_prefix``) as far as they are trained, beside the
    `cpu` stand-in's seed-1337 runs of the same implementations and configurations."""

    summaries: pd.DataFrame
    histories: pd.DataFrame
    table: pd.DataFrame  # paper_shape.prefix_table
    stand_in_histories: pd.DataFrame
    # per implementation: the floor its paper-shape runs are judged on
    floors: dict[str, float]
    # per implementation: the floor its stand-in chapter judges its runs on
    stand_in_floors: dict[str, float]
    missing: list[str]  # the prefixes not started, with the commands that train them
    whole_missing: list[str]  # the same for the runs trained whole (plans.paper_10m_whole)


def furthest(exp, runs_dir) -> tuple:
    """The run the book reads for one paper-shape experiment of ``plans.paper_10m_prefix``: its
    prefix, or the same model and recipe trained whole (``plans.paper_10m_whole``, evaluated every
    100 steps rather than 50) where that run has reached further. One run per experiment, so a table
    row and a verdict never mix the two."""
    rd = RunDir(run_path(exp, runs_dir))
    key = (exp.impl, exp.config_name, exp.seed, exp.train.schedule)

    # how far a run the chapter can read has trained; 0 for one it leaves out (usable says why)
    def steps(e, r):
        return r.summary["steps"] if any(usable([(e, r, "released")], SHOWN_AS_PREFIX)) else 0

    for w in plans.paper_10m_whole(exp.seed):
        if (w.impl, w.config_name, w.seed, w.train.schedule) != key:
            continue
        wrd = RunDir(run_path(w, runs_dir))
        if steps(w, wrd) > steps(exp, rd):
            return w, wrd, "released"
    return exp, rd, "released"


def paper_shape_prefix(runs_dir=None) -> Prefix:
    """Released paper-shape 10M runs (in ``runs_dir``, None: runs/), partial or complete, and the
    commands for those not released yet."""
    # looked up when called, so a test's runs folder takes its place
    runs_dir = runs_dir or RUNS_DIR
    exps = plans.paper_10m_prefix()
    located = [furthest(e, runs_dir) for e in exps]
    # partial runs are shown, as prefixes: on a CPU these runs stop at --until, and
    # that is what there is to read
    summ = summaries_of(located, SHOWN_AS_PREFIX)
    if len(summ):
        how = {
            (e.impl, e.config_name, e.seed, e.train.schedule): (
                execution(rd),
                e.train.eval_interval,
            )
            # a run left out has no row to describe
            for e, rd, _ in usable(located, SHOWN_AS_PREFIX)
        }
        summ["execution"] = [
            how[r.impl, r.config, r.seed, r.schedule][0] for r in summ.itertuples()
        ]
        summ["eval_every"] = [
            how[r.impl, r.config, r.seed, r.schedule][1] for r in summ.itertuples()
        ]
    hist = histories_of(located, SHOWN_AS_PREFIX)
    # one floor for each set of runs, the one every chapter judges it on (results.floor_of): the
    # whole split's for nanoGPT's random batches, the fixed batches' for ResidualGPT's, at this
    # shape and at the stand-in alike
    floors = {e.impl: floor_of(e) for e, _, _ in located}
    # unique: each implementation's two AttnOnly runs (two schedules) share one stand-in run
    stand_ins = plans.unique([get_preset("cpu", e.impl, e.config_name, e.seed) for e in exps])
    stand_in_hist = histories_of((e, RunDir(run_path(e, runs_dir)), "released") for e in stand_ins)
    # Only runs not started are listed (status None): a partial run is a prefix to show, not a
    # missing one. Each command stops at that run's prefix (Full Residual's is shorter).
    # with --fast-dropout, micro-batches of 8 paid for both implementations' 10M step on
    # this CPU (python -m lib bench)
    missing = [
        plans.command_for(e) + f" --until {plans.prefix_steps(e)} --micro-batch 8 --fast-dropout"
        for e, rd, _ in located
        if rd.status is None
    ]
    # the whole runs not started: a reader of the table must not take a prefix
    # for the only run there will be
    whole_missing = [
        f"all {w.train.max_steps:,} steps, in segments with --until N: "
        + " ".join([plans.command_for(w), *plans.PLANS["10m_whole"].options])
        for w in plans.paper_10m_whole()
        if RunDir(run_path(w, runs_dir)).status is None
    ]
    return Prefix(
        summ,
        hist,
        prefix_table(summ, hist, floors),
        stand_in_hist,
        floors,
        {e.impl: floor_of(e) for e in stand_ins},
        missing,
        whole_missing,
    )
