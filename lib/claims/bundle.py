"""book/escape_and_bundle.ipynb §2: the nanoGPT recipe's bundle of differences from ResidualGPT, one
factor at a time (the schedule and two factors over seeds are ``claims.schedule_seeds``)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..engine import plans
from ..engine.results import (
    Runs,
    as_released,
    plan_runs,
    usable,
)
from ..engine.runs import RUNS_DIR
from .escape_map import _when, escape_label
from .verdicts import Claim, claim, verdict


def bundle_effects(
    table: pd.DataFrame,
    interval: int,
    control: str | None = None,
    seeds: dict | None = None,
    paired: tuple[str, ...] = (),
) -> dict | None:
    """What each factor of the nanoGPT -> ResidualGPT bundle, switched alone on nanoGPT, does to
    AttnOnly's escape step, against what changes that are *not* the factor do to it.

    ``table``: one row per factor (factor, escape_step, best_val_loss, status); ``"none"`` is
    nanoGPT. ``control``: a factor that computes the same function and changes only floating-point
    rounding (the SDPA kernel); ``seeds``: nanoGPT's own escape step at other seeds (NaN: never).
    Together with nanoGPT itself they span the escape steps one seed of this setting can give
    without any factor, from ``lo`` to ``hi`` (NaN: some never escaped). A factor *decides* if alone
    it at least halves the earliest of them (or escapes where none did), or at least doubles the
    latest (or never escapes where all did), beyond the ``interval`` each escape step is known to
    within. A ``paired`` factor changes only the measurement (the same training, evaluated another
    way), so it is read against nanoGPT's own escape step alone, with no noise to allow for. Returns
    None while nanoGPT's own run is missing; otherwise ``base``, ``noise`` ({name: escape step}),
    ``lo``, ``hi``, the factors ``earlier``, ``later``, ``neither`` and ``diverged`` (no outcome),
    ``planned`` (factors, the control included) and ``trained`` (those of them finished, diverged or
    complete, the control included)."""
    # a factor not trained yet has no outcome; a diverged one is kept, to be named apart
    done = table[table.status.isin(["complete", "diverged"])]
    base = done[done.factor == "none"]
    if base.empty:
        return None
    b = base.escape_step.iloc[0]
    # What one seed of this setting does without any factor: nanoGPT itself, the same
    # recipe at other seeds, and the rounding-only twin. Their spread is the yardstick a
    # factor must move the escape beyond.
    noise = {"nanoGPT": b, **{f"seed {k}": v for k, v in (seeds or {}).items()}}
    # a diverged control has no outcome: it stays with the factors below,
    # where it is named as diverged
    ctl = done[(done.factor == control) & (done.status == "complete")]
    if len(ctl):
        noise[control] = ctl.escape_step.iloc[0]
    steps = list(noise.values())
    escaped = [x for x in steps if pd.notna(x)]
    # lo: the earliest escape without a factor. hi: the latest, or NaN where one never escaped:
    # nothing is later than "never", so then no factor could show a later escape.
    lo = min(escaped) if escaped else np.nan
    hi = np.nan if len(escaped) < len(steps) else max(steps)
    out = {
        "base": b,
        "noise": noise,
        "lo": lo,
        "hi": hi,
        "earlier": [],
        "later": [],
        "neither": [],
        "diverged": [],
        "planned": len(table) - 1,
        # halving is measurable only if the earliest escape leaves room for one at the
        # first evaluation (a factor escapes at the first evaluation at the earliest,
        # step ``interval``; with its ``interval`` of slack that is at most lo / 2 only
        # when lo is at least 4 * interval)
        "can_be_earlier": bool(pd.isna(lo) or lo >= 4 * interval),
        "can_be_later": bool(pd.notna(hi)),
    }
    # every factor but nanoGPT itself and the complete control: those two are the
    # yardstick, not factors to judge
    for r in done[
        (done.factor != "none") & ~((done.factor == control) & (done.status == "complete"))
    ].itertuples():
        e = r.escape_step
        # a paired factor trains the very model nanoGPT trains, so the spread over seeds
        # and rounding does not apply
        f_lo, f_hi = (b, b) if r.factor in paired else (lo, hi)
        if r.status == "diverged":  # no outcome: named apart, never read as "preventing the escape"
            kind = "diverged"
        elif pd.isna(e):
            # never escaped: decides only if every run without a factor escaped
            kind = "later" if pd.notna(f_hi) else "neither"
        elif pd.isna(f_lo) or e + interval <= f_lo / 2:
            # escapes where none did, or in half the earliest time
            kind = "earlier"
        # the same slack the other way: even placed an evaluation earlier, the step
        # is at least double the latest
        elif pd.notna(f_hi) and e - interval >= 2 * f_hi:
            kind = "later"
        else:
            kind = "neither"
        out[kind].append(r.factor)
    # the complete control counts as trained (it was planned and paid
    # for), though it is the yardstick
    out["trained"] = sum(len(out[k]) for k in ("earlier", "later", "neither", "diverged")) + (
        control in noise
    )
    return out


@claim("One factor of the bundle decides AttnOnly's escape")
def claim_bundle(
    table: pd.DataFrame,
    interval: int,
    control: str | None = None,
    seeds: dict | None = None,
    paired: tuple[str, ...] = (),
) -> Claim:
    """Which factors of the nanoGPT -> ResidualGPT bundle, switched alone on nanoGPT, move
    AttnOnly's escape beyond what rounding (``control``) and the seed (``seeds``) do without any
    factor (``bundle_effects``); ``paired`` factors against nanoGPT's own run. HOLDS naming the
    factors that do; CONTRADICTED when the range left room for a factor to decide and none did; NOT
    TESTABLE HERE when that range leaves no room (its earliest escape too early to halve at
    ``interval``-step evaluations, and a run without any factor never escaping)."""
    fx = bundle_effects(table, interval, control, seeds, paired)
    if fx is None:
        # without nanoGPT's own run there is nothing for a factor to move
        return Claim("NOT TESTED", "nanoGPT's own AttnOnly run is not released yet")
    b = fx["base"]
    # the facts tests pin: which factors fell where, and the range they were read against
    facts = {
        k: fx[k]
        for k in (
            "base",
            "lo",
            "hi",
            "earlier",
            "later",
            "neither",
            "diverged",
            "trained",
            "planned",
        )
    }
    if not fx["trained"]:
        return Claim(
            "NOT TESTED",
            (
                f"no factor trained yet ({fx['planned']} planned); nanoGPT AttnOnly escapes at "
                f"{escape_label(b)}"
            ),
            facts,
        )
    lines = [
        f"nanoGPT AttnOnly escapes at {escape_label(b)} (to within {interval}); {fx['trained']} of "
        f"{fx['planned']} factors trained."
    ]
    # the other runs without a factor (seeds, the rounding twin): they show the reader the range is
    # not one run's the twin first: it is nanoGPT's own run with the rounding changed, and a seed
    # named before it would read as its
    others = dict(
        sorted(
            ((k, v) for k, v in fx["noise"].items() if k != "nanoGPT"),
            key=lambda kv: kv[0] != control,
        )
    )
    lo, hi = fx["lo"], fx["hi"]
    # the range without any factor in words; "anywhere from step N to never"
    # leaves no room for a later escape
    span = (
        "never"
        if pd.isna(lo)
        else f"anywhere from step {int(lo)} to never"
        if pd.isna(hi)
        else f"at step {int(lo)}"
        if lo == hi
        else f"from step {int(lo)} to step {int(hi)}"
    )
    if others:
        lines.append(
            "Without any factor: "
            + "; ".join(
                (
                    f"nanoGPT's own run with only the rounding changed ({k}) "
                    if k == control
                    else f"nanoGPT at {k} "
                )
                + _when(v)
                for k, v in others.items()
            )
            + f". So one seed of this setting escapes {span} with no factor switched."
        )
    alone = table[(table.status == "complete") & ~table.factor.isin(["none", control, *paired])]
    if len(alone):  # how the factors' own escape steps spread, beside the range without any factor
        counts = alone.escape_step.map(escape_label).value_counts()
        # by escape step, "never" last, so the counts read as a distribution along training
        order = sorted(counts.index, key=lambda k: np.inf if k == "never" else int(k.split()[1]))
        lines.append(
            f"Alone, the {len(alone)} factors that change the training escape at "
            + ", ".join(f"{k} ({counts[k]})" for k in order)
            + (f"; diverged (no outcome): {', '.join(fx['diverged'])}" if fx["diverged"] else "")
            + "."
        )
    # The lowest best loss is a side note, not part of the verdict: one seed per factor, and the
    # escape step, not the end point, is what the bundle is read on.
    done = table[table.status == "complete"].dropna(subset=["best_val_loss"])
    if len(done) > 1 and "none" in done.factor.values:
        low = done.loc[done.best_val_loss.idxmin()]
        if low.factor != "none":
            lines.append(
                f"Lowest best loss: {low.factor} {low.best_val_loss:.3f} (nanoGPT "
                f"{done[done.factor == 'none'].best_val_loss.iloc[0]:.3f}; one seed, its spread "
                "not measured)."
            )
    # room for a factor to decide in at least one direction; without it, no
    # factor named is no evidence of none
    testable = fx["can_be_earlier"] or fx["can_be_later"]
    named = [*fx["earlier"], *fx["later"]]
    if named:
        # the paired factors are named apart, as their yardstick is
        # nanoGPT's own step, not the range
        why = (
            "alone, "
            + " and ".join(
                part
                for part in (
                    f"{', '.join(fx['earlier'])} at least halve the escape step"
                    if fx["earlier"]
                    else "",
                    f"{', '.join(fx['later'])} at least double it or prevent the escape"
                    if fx["later"]
                    else "",
                )
                if part
            )
            + ", beyond what "
            + (
                "rounding and the seed do without any factor"
                if others
                else "nanoGPT's own run shows (one seed, no rounding control)"
            )
            + (
                (
                    f"; {', '.join(p for p in paired if p in named)} read against nanoGPT's own "
                    "step, as it changes only the measurement"
                )
                if any(p in named for p in paired)
                else ""
            )
        )
    elif testable:
        why = (
            "no factor alone moves the escape beyond what rounding and the seed do without any "
            "factor"
        )
    else:
        # Said in full, with what it would take: the reader should not take NOT TESTABLE HERE for a
        # finding that the bundle does not matter.
        why = (
            f"no factor can be named: without any factor one seed escapes {span}, which leaves no "
            f"room to halve the earliest step at {interval}-step evaluations (an escape first seen "
            "at an evaluation happened at some step since the one before, so the earliest may have "
            f"happened up to {interval} steps before it was seen, and a halving is certain only "
            f"from step {4 * interval:,} on) or to double the latest; naming one needs several "
            "seeds per factor set against nanoGPT's own spread over the same seeds"
        )
    # A named factor is HOLDS: it moved the escape past the range (a paired factor past nanoGPT's
    # own step, which can be possible where the range leaves no room). None named is CONTRADICTED
    # only where the range left room.
    return Claim(verdict(True, testable or bool(named), bool(named)), why, facts, tuple(lines))


def bundle_runs(runs_dir=RUNS_DIR) -> Runs:
    factors = plans.bundle_factors()
    # plan_runs hands back experiments; their JSON (the key plans.unique uses too)
    # maps each to its factor's name
    name = {e.to_json(): k for k, e in factors.items()}
    runs = plan_runs(list(factors.values()), {"factor": lambda e: name[e.to_json()]}, runs_dir)
    # every planned factor gets a row, in the plan's order; one not trained
    # yet shows as such, not as a gap
    table = pd.DataFrame({"factor": list(factors)}).merge(runs.table, on="factor", how="left")
    table["status"] = table.status.fillna("not trained")
    runs.table = table
    return runs


def baseline_seeds(runs_dir=RUNS_DIR) -> dict[int, float]:
    """nanoGPT AttnOnly's escape step (NaN: never) at the released seeds other than the bundle's
    (``plans.bundle_baseline_seeds``: the joint-collapse chapter's runs), finished and consistent:
    how far the seed alone moves the escape that the bundle's factors are read against."""
    exps = plans.bundle_baseline_seeds()
    # complete runs only: a diverged seed has no escape step to widen the range with
    ok = [(e, rd) for e, rd, _ in usable(as_released(exps, runs_dir), ("complete",))]
    # the recorded step (against the whole split's floor), as in the bundle's own table; a None for
    # "never" reads as NaN downstream (pd.isna)
    return {e.seed: rd.summary.get("escape_step", float("nan")) for e, rd in ok}


def twin_gap(hist: pd.DataFrame, factor: str) -> pd.DataFrame:
    """nanoGPT (factor ``"none"``) beside the run with ``factor`` switched, at every evaluation both
    reached: step, both validation losses, and the absolute difference of their training losses
    (``gap``). A factor that changes the computation only by rounding starts the two runs a rounding
    error apart; the gap shows how that difference grows."""
    cols = ["step", "val_none", "val_factor", "gap"]
    if hist.empty or "train_loss" not in hist:
        return pd.DataFrame(columns=cols)
    # Training loss, not validation loss: the train estimate draws the same batches in both runs
    # (its own generator of the run seed), so its difference is the models' alone, while the
    # fixed-validation twin's validation loss is measured on other tokens by design.
    a, b = (hist[hist.factor == f].set_index("step") for f in ("none", factor))
    # a run still training has fewer evaluations: only the steps both reached are compared
    both = a.index.intersection(b.index)
    return pd.DataFrame(
        {
            "step": both,
            "val_none": a.val_loss[both].to_numpy(),
            "val_factor": b.val_loss[both].to_numpy(),
            "gap": (a.train_loss[both] - b.train_loss[both]).abs().to_numpy(),
        }
    ).reindex(columns=cols)


def train_loss_gap(hist: pd.DataFrame, factor: str) -> tuple[float, int]:
    """The largest difference in training loss between nanoGPT and the run with ``factor`` switched,
    over the evaluations both reached, and their number (NaN, 0 while either is missing): a factor
    that changes only the measurement leaves the training unchanged."""
    t = twin_gap(hist, factor)
    return (float(t.gap.max()), len(t)) if len(t) else (float("nan"), 0)
