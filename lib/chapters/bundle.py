"""book/escape_and_bundle.ipynb §2:
the nanoGPT recipe's bundle of differences from ResidualGPT, one factor at a time, and
the learning-rate schedule over seeds."""
from __future__ import annotations

import math

import numpy as np
import pandas as pd

from .. import plans
from ..results import (
    Runs,
    as_released,
    plan_runs,
    usable,
)
from ..runs import RUNS_DIR
from ..verdicts import Claim, claim, verdict
from .escape_map import _when, escape_label


def bundle_effects(table: pd.DataFrame, interval: int, control: str | None = None,
                   seeds: dict | None = None, paired: tuple[str, ...] = ()) -> dict | None:
    """What each factor of the nanoGPT -> ResidualGPT bundle, switched alone on nanoGPT, does to AttnOnly's
    escape step, against what changes that are *not* the factor do to it.

    ``table``: one row per factor (factor, escape_step, best_val_loss, status); ``"none"`` is nanoGPT.
    ``control``: a factor that computes the same function and changes only floating-point rounding (the SDPA
    kernel); ``seeds``: nanoGPT's own escape step at other seeds (NaN: never). Together with nanoGPT itself
    they span the escape steps one seed of this setting can give without any factor, from ``lo`` to ``hi``
    (NaN: some never escaped). A factor *decides* if alone it at least halves the earliest of them (or escapes
    where none did), or at least doubles the latest (or never escapes where all did), beyond the ``interval``
    each escape step is known to within. A ``paired`` factor changes only the measurement (the same training,
    evaluated another way), so it is read against nanoGPT's own escape step alone, with no noise to allow
    for. Returns None while nanoGPT's own run is missing; otherwise ``base``,
    ``noise`` ({name: escape step}), ``lo``, ``hi``, the factors ``earlier``, ``later``, ``neither`` and
    ``diverged`` (no outcome), ``planned`` (factors, the control included) and ``trained`` (those of them
    finished, diverged or complete, the control included)."""
    # a factor not trained yet has no outcome; a diverged one is kept, to be named apart
    done = table[table.status.isin(["complete", "diverged"])]
    base = done[done.factor == "none"]
    if base.empty:
        return None
    b = base.escape_step.iloc[0]
    # What one seed of this setting does without any factor: nanoGPT itself, the same recipe at other seeds, and the
    # rounding-only twin. Their spread is the yardstick a factor must move the escape beyond.
    noise = {"nanoGPT": b, **{f"seed {k}": v for k, v in (seeds or {}).items()}}
    # a diverged control has no outcome: it stays with the factors below, where it is named as diverged
    ctl = done[(done.factor == control) & (done.status == "complete")]
    if len(ctl):
        noise[control] = ctl.escape_step.iloc[0]
    steps = list(noise.values())
    escaped = [x for x in steps if pd.notna(x)]
    # lo: the earliest escape without a factor. hi: the latest, or NaN where one never escaped: nothing is later than
    # "never", so then no factor could show a later escape.
    lo = min(escaped) if escaped else np.nan
    hi = np.nan if len(escaped) < len(steps) else max(steps)
    out = {"base": b, "noise": noise, "lo": lo, "hi": hi, "earlier": [], "later": [], "neither": [],
           "diverged": [], "planned": len(table) - 1,
           # halving is measurable only if the earliest escape leaves room for one at the first evaluation
           # (a factor escapes at the first evaluation at the earliest, step ``interval``; with its ``interval`` of
           # slack that is at most lo / 2 only when lo is at least 4 * interval)
           "can_be_earlier": bool(pd.isna(lo) or lo >= 4 * interval),
           "can_be_later": bool(pd.notna(hi))}
    # every factor but nanoGPT itself and the complete control: those two are the yardstick, not factors to judge
    for r in done[(done.factor != "none") & ~((done.factor == control) & (done.status == "complete"))].itertuples():
        e = r.escape_step
        # a paired factor trains the very model nanoGPT trains, so the spread over seeds and rounding does not apply
        f_lo, f_hi = (b, b) if r.factor in paired else (lo, hi)
        if r.status == "diverged":  # no outcome: named apart, never read as "preventing the escape"
            kind = "diverged"
        elif pd.isna(e):            # never escaped: decides only if every run without a factor escaped
            kind = "later" if pd.notna(f_hi) else "neither"
        elif pd.isna(f_lo) or e + interval <= f_lo / 2:  # escapes where none did, or in half the earliest time
            kind = "earlier"
        # the same slack the other way: even placed an evaluation earlier, the step is at least double the latest
        elif pd.notna(f_hi) and e - interval >= 2 * f_hi:
            kind = "later"
        else:
            kind = "neither"
        out[kind].append(r.factor)
    # the complete control counts as trained (it was planned and paid for), though it is the yardstick
    out["trained"] = sum(len(out[k]) for k in ("earlier", "later", "neither", "diverged")) + (control in noise)
    return out


@claim("One factor of the bundle decides AttnOnly's escape")
def claim_bundle(table: pd.DataFrame, interval: int, control: str | None = None, seeds: dict | None = None,
                 paired: tuple[str, ...] = ()) -> Claim:
    """Which factors of the nanoGPT -> ResidualGPT bundle, switched alone on nanoGPT, move AttnOnly's escape
    beyond what rounding (``control``) and the seed (``seeds``) do without any factor (``bundle_effects``);
    ``paired`` factors against nanoGPT's own run. HOLDS naming the factors that do; CONTRADICTED when the range
    left room for a factor to decide and none did; NOT TESTABLE HERE when that range leaves no room (its earliest
    escape too early to halve at ``interval``-step evaluations, and a run without any factor never escaping)."""
    fx = bundle_effects(table, interval, control, seeds, paired)
    if fx is None:
        # without nanoGPT's own run there is nothing for a factor to move
        return Claim("NOT TESTED", "nanoGPT's own AttnOnly run is not released yet")
    b = fx["base"]
    # the facts tests pin: which factors fell where, and the range they were read against
    facts = {k: fx[k] for k in ("base", "lo", "hi", "earlier", "later", "neither", "diverged", "trained", "planned")}
    if not fx["trained"]:
        return Claim("NOT TESTED", f"no factor trained yet ({fx['planned']} planned); nanoGPT AttnOnly escapes at "
                                   f"{escape_label(b)}", facts)
    lines = [f"nanoGPT AttnOnly escapes at {escape_label(b)} (to within {interval}); {fx['trained']} of "
             f"{fx['planned']} factors trained."]
    # the other runs without a factor (seeds, the rounding twin): they show the reader the range is not one run's
    # the twin first: it is nanoGPT's own run with the rounding changed, and a seed named before it would read as its
    others = dict(sorted(((k, v) for k, v in fx["noise"].items() if k != "nanoGPT"), key=lambda kv: kv[0] != control))
    lo, hi = fx["lo"], fx["hi"]
    # the range without any factor in words; "anywhere from step N to never" leaves no room for a later escape
    span = ("never" if pd.isna(lo) else f"anywhere from step {int(lo)} to never" if pd.isna(hi)
            else f"at step {int(lo)}" if lo == hi else f"from step {int(lo)} to step {int(hi)}")
    if others:
        lines.append("Without any factor: " + "; ".join(
            (f"nanoGPT's own run with only the rounding changed ({k}) " if k == control else f"nanoGPT at {k} ")
            + _when(v)
            for k, v in others.items()) + f". So one seed of this setting escapes {span} with no factor switched.")
    alone = table[(table.status == "complete") & ~table.factor.isin(["none", control, *paired])]
    if len(alone):  # how the factors' own escape steps spread, beside the range without any factor
        counts = alone.escape_step.map(escape_label).value_counts()
        # by escape step, "never" last, so the counts read as a distribution along training
        order = sorted(counts.index, key=lambda k: np.inf if k == "never" else int(k.split()[1]))
        lines.append(f"Alone, the {len(alone)} factors that change the training escape at "
                     + ", ".join(f"{k} ({counts[k]})" for k in order)
                     + (f"; diverged (no outcome): {', '.join(fx['diverged'])}" if fx["diverged"] else "") + ".")
    # The lowest best loss is a side note, not part of the verdict: one seed per factor, and the escape step, not the
    # end point, is what the bundle is read on.
    done = table[table.status == "complete"].dropna(subset=["best_val_loss"])
    if len(done) > 1 and "none" in done.factor.values:
        low = done.loc[done.best_val_loss.idxmin()]
        if low.factor != "none":
            lines.append(f"Lowest best loss: {low.factor} {low.best_val_loss:.3f} (nanoGPT "
                         f"{done[done.factor == 'none'].best_val_loss.iloc[0]:.3f}; one seed, its spread not "
                         f"measured).")
    # room for a factor to decide in at least one direction; without it, no factor named is no evidence of none
    testable = fx["can_be_earlier"] or fx["can_be_later"]
    named = [*fx["earlier"], *fx["later"]]
    if named:
        # the paired factors are named apart, as their yardstick is nanoGPT's own step, not the range
        why = ("alone, " + " and ".join(part for part in (
            f"{', '.join(fx['earlier'])} at least halve the escape step" if fx["earlier"] else "",
            f"{', '.join(fx['later'])} at least double it or prevent the escape" if fx["later"] else "") if part)
            + ", beyond what " + ("rounding and the seed do without any factor" if others else
                                  "nanoGPT's own run shows (one seed, no rounding control)")
            + (f"; {', '.join(p for p in paired if p in named)} read against nanoGPT's own step, as it changes "
               f"only the measurement" if any(p in named for p in paired) else ""))
    elif testable:
        why = "no factor alone moves the escape beyond what rounding and the seed do without any factor"
    else:
        # Said in full, with what it would take: the reader should not take NOT TESTABLE HERE for a finding that the
        # bundle does not matter.
        why = (f"no factor can be named: without any factor one seed escapes {span}, which leaves no room to halve "
               f"the earliest step at {interval}-step evaluations (an escape first seen at an evaluation happened at "
               f"some step since the one before, so the earliest may have happened up to {interval} steps before it "
               f"was seen, and a halving is certain only from step {4 * interval:,} on) or to double the latest; "
               f"naming one needs several seeds per factor set against nanoGPT's own spread over the same seeds")
    # A named factor is HOLDS: it moved the escape past the range (a paired factor past nanoGPT's own step, which
    # can be possible where the range leaves no room). None named is CONTRADICTED only where the range left room.
    return Claim(verdict(True, testable or bool(named), bool(named)), why, facts, tuple(lines))


def no_outcome(table: pd.DataFrame) -> pd.Series:
    """The runs of a ``schedule_runs`` table with no escape step to judge: diverged (by status, even where a best
    loss was recorded before), or without a best loss at all."""
    bad = table.best_val_loss.isna()
    return bad | table.status.eq("diverged") if "status" in table else bad


def schedule_effects(table: pd.DataFrame, first_eval: int | None = None,
                     planned: dict[tuple[str, str], set[int]] | None = None,
                     budget: int | None = None) -> pd.DataFrame:
    """The rule for naming a deciding factor over seeds, per (implementation, factor) of ``bundle.schedule_runs``:
    the escape step of each seed (NaN: not within the budget), how many of the seeds escape, and whether the factor
    decides: every one of its seeds escapes earlier than the earliest of its baseline's ("none", the same
    implementation, over the same seeds), or every one later than the latest, by more than one evaluation interval
    (``first_eval``, the plan's interval: the resolution of an escape step, as the escape map's). "Never" counts as
    the first evaluation past the ``budget`` (the plan's steps), the earliest it could be, so a run that never
    escapes is later by more than an interval only than one that escaped before the last evaluation. One direction
    for all seeds: a factor that moves some seeds earlier and others later is no single effect. A factor is judged
    only once all of its ``planned`` seeds (default: ``plans.schedule_seeds``'s) are trained and none of its or its
    baseline's runs has no outcome (``no_outcome``): over fewer, the baseline's range is narrower than the seed noise
    the plan was sized to measure, and with one seed it is a single step, which any other step lies outside.

    ``chance``: how often the rule names a factor that does nothing. If the 2n runs of a factor and its baseline
    over n seeds were independent, all n of the factor's would fall on one side of the baseline's with probability
    2 / C(2n, n) (ties and the one-interval margin only lower it): 0.8% at five seeds, 10% at three. A factor's run
    and its baseline's share a seed's initial weights and batches, which makes them more alike, not less.
    ``room``: whether the baseline's range leaves any outcome outside it at all (one that escapes within two
    evaluations and also never leaves none: no factor could decide)."""
    if first_eval is None:  # the plan's evaluation interval: the earliest escape an evaluation can see
        first_eval = plans.schedule_seeds()[0].train.eval_interval
    if budget is None:
        budget = plans.schedule_seeds()[0].train.max_steps
    if planned is None:  # the plan's seeds per (implementation, factor)
        planned = {}
        for e in plans.schedule_seeds():
            planned.setdefault((e.impl, plans.schedule_factor(e)), set()).add(e.seed)
    never = budget + first_eval  # where "never" stands in the range test: the first evaluation past the budget

    def label(step):  # a step of the range test in the reader's words, "never" where it stands for one
        return escape_label(float("nan") if step >= never else step)
    rows = []
    done = table[~no_outcome(table)]
    # sort=False: the rows keep the plan's order, each implementation's baseline before its factors
    for (impl, factor), g in table.groupby(["impl", "factor"], sort=False):
        ok = done[(done.impl == impl) & (done.factor == factor)]
        # the baseline of the same implementation, restricted to this factor's seeds: a seed compared only with itself
        base_all = table[(table.impl == impl) & (table.factor == "none") & table.seed.isin(g.seed)]
        base = done.loc[done.index.intersection(base_all.index)]
        lost = sorted(set(g.seed) - set(ok.seed)) if factor != "none" else []
        lost_base = sorted(set(base_all.seed) - set(base.seed))
        steps = ok.set_index("seed").escape_step.astype(float)
        s, b = steps.fillna(never), base.set_index("seed").escape_step.astype(float).fillna(never)
        want = planned.get((impl, factor), set())
        # None (not judged): the baseline itself, no baseline, a run with no outcome on either side, seeds that differ
        # from the baseline's (a seed's own effect could pass for the factor's), or fewer seeds than planned
        judged = (factor != "none" and not b.empty and not lost and not lost_base and bool(want)
                  and set(b.index) == set(s.index) == want)
        n_early = int((s < b.min() - first_eval).sum()) if len(b) else 0  # seeds clearly earlier than every baseline
        n_late = int((s > b.max() + first_eval).sum()) if len(b) else 0  # and clearly later
        earlier = judged and n_early == len(s)
        later = judged and n_late == len(s)
        rows.append({"impl": impl, "factor": factor, "seeds": len(g), "planned": len(want),
                     "escaped": int(steps.notna().sum()),
                     "escape steps": ", ".join(f"{int(seed)}: {escape_label(v)}" for seed, v in steps.items()),
                     # the range as the reader sees it: "never" for a baseline seed that stayed on the floor
                     "baseline range": f"{label(b.min())} to {label(b.max())}" if len(b) else "-",
                     "baseline seeds": len(base_all), "no outcome": lost, "baseline no outcome": lost_base,
                     "earlier seeds": n_early, "later seeds": n_late,
                     "decides": (earlier or later) if judged else None,
                     "direction": "earlier" if earlier else "later" if later else None,
                     "chance": 2 / math.comb(2 * len(want), len(want)) if judged else None,
                     # room: a baseline whose earliest escape is past the second evaluation leaves room for an
                     # earlier one; one whose latest escape comes before the last evaluation, room for a later one
                     "room": None if b.empty else bool(b.min() > 2 * first_eval or b.max() < budget)})
    return pd.DataFrame(rows, columns=["impl", "factor", "seeds", "planned", "escaped", "escape steps",
                                       "baseline range", "baseline seeds", "no outcome", "baseline no outcome",
                                       "earlier seeds", "later seeds", "decides", "direction", "chance", "room"])


def _pending(r) -> str:
    """Why a factor has no verdict of its own, in a few words (a row of ``schedule_effects``)."""
    def seeds(x):
        return f"seed{'s' if len(x) > 1 else ''} {', '.join(map(str, x))}"
    if not r.planned:
        return f"{r.factor} ({r.impl}, not in the plan)"
    if r["no outcome"]:
        return f"{r.factor} ({r.impl}, {seeds(r['no outcome'])} diverged: no escape step to judge)"
    if r["baseline no outcome"]:
        return f"{r.factor} ({r.impl}, its baseline's {seeds(r['baseline no outcome'])} diverged: no escape step)"
    if r.seeds < r.planned:
        return f"{r.factor} ({r.impl}, {r.seeds} of {r.planned} seeds)"
    return f"{r.factor} ({r.impl}, its baseline {r['baseline seeds']} of {r.planned} seeds)"


@claim("Switched alone, the schedule, clipping or biases move AttnOnly's escape beyond seed noise")
def claim_schedule_factors(effects: pd.DataFrame) -> Claim:
    """The factors ``schedule_effects`` names as deciding, each with its direction (HOLDS), or none over the same
    seeds (CONTRADICTED: every factor's escape steps overlap its baseline's range, or lie on both sides of it, where
    that range left room for them not to; NOT TESTABLE HERE where it left none); NOT TESTED until a factor and its
    baseline are trained over the same seeds with an outcome in each. With several factors judged, the reason gives
    the chance that at least one of them is named if none does anything (from each one's ``chance``)."""
    # the rows with a verdict of their own: neither a baseline nor a factor whose seeds its baseline lacks
    judged = effects.dropna(subset=["decides"])
    pending = effects[effects.decides.isna() & (effects.factor != "none")]
    if judged.empty:
        trained = ", ".join(f"{r.impl} {r.factor} {r.seeds} of {r.planned}" for r in effects.itertuples())
        return Claim("NOT TESTED", "no factor can be judged yet: its runs and its baseline's over all its planned "
                     "seeds are not all trained with an outcome" + (f" (seeds trained: {trained})" if trained else "")
                     + (f"; {'; '.join(_pending(r) for _, r in pending.iterrows())}" if len(pending) else ""))
    named = judged[judged.decides.astype(bool)]
    lines = [f"{r.impl} {r.factor}: {r.escaped} of {r.seeds} seeds escape ({r['escape steps']}); baseline "
             f"{r['baseline range']}" + (f"; {r.direction} in every seed by more than one evaluation interval "
                                         f"(with no effect, chance {r.chance:.1%})" if r.decides else
                                         f"; not named: {r['earlier seeds']} of {r.seeds} clearly earlier, "
                                         f"{r['later seeds']} clearly later" + (
                                             f", {r.seeds - r['earlier seeds'] - r['later seeds']} inside it or "
                                             f"within an interval of it"
                                             if r.seeds > r['earlier seeds'] + r['later seeds'] else "")) + "."
             for _, r in judged.iterrows()]
    why = ("deciding, by that rule: " + ", ".join(f"{r.factor} ({r.impl}, {r.direction})" for r in named.itertuples())
           if len(named) else "no factor can be named as deciding: every factor's escape steps overlap its "
                              "baseline's range over the same seeds, or lie on both sides of it")
    # one factor with room is enough for "none decides" to be a finding; with no room anywhere it is not one
    room = bool(judged.room.astype(bool).any())
    if not len(named) and not room:
        why = ("no factor can be named: every baseline range reaches from the first evaluations to never, which "
               "leaves no outcome outside it")
    # the rule is run once per factor: the chance that some factor is named when none does anything
    if len(judged) > 1:
        anyone = 1 - float(np.prod([1 - c for c in judged.chance]))
        why += (f"; with no effect anywhere, the chance that at least one of the {len(judged)} judged factors is "
                f"named is {anyone:.0%}")
    # a factor named over all its seeds stays named whatever the others do; those still training are said
    # still training (judged once trained), or for good (a run with no outcome, a factor outside the plan)
    final = pending.apply(lambda r: bool(r["no outcome"] or r["baseline no outcome"] or not r.planned), axis=1) \
        if len(pending) else pd.Series(dtype=bool)
    for words, rows in (("not judged yet", pending[~final] if len(pending) else pending),
                        ("not judged", pending[final] if len(pending) else pending)):
        if len(rows):
            why += f"; {words}: " + ", ".join(_pending(r) for _, r in rows.iterrows())
    return Claim(verdict(True, room or bool(len(named)), bool(len(named))), why,
                 {"named": [f"{r.factor} ({r.impl})" for r in named.itertuples()],
                  "directions": {f"{r.factor} ({r.impl})": r.direction for r in named.itertuples()},
                  "judged": len(judged)}, tuple(lines))


def baseline_escapes(impl: str = "nanogpt", runs_dir=RUNS_DIR) -> dict[int, float]:
    """``impl`` AttnOnly's escape step on its own recipe at each released seed of ``plans.schedule_seeds`` (NaN:
    never; a run with no outcome, ``no_outcome``, left out): what the seed alone does to the escape, printed beside
    a one-seed reading elsewhere (``paper_shape.claim_prefix_schedule``)."""
    t = schedule_runs(runs_dir).table
    if t.empty:
        return {}
    g = t[(t.impl == impl) & (t.factor == "none") & ~no_outcome(t)]
    return {int(s): float(e) for s, e in zip(g.seed, g.escape_step.astype(float))}


def warmup_reading(table: pd.DataFrame, warmup: int | None = None) -> str:
    """Which part of the warm-up + cosine schedule can have moved nanoGPT AttnOnly's escape (``schedule_runs``'
    table): a run that leaves the floor before its ``warmup`` (default: the plan's) ends has not yet reached the
    cosine decay, so for it only the warm-up's low early rate differs from nanoGPT's constant one."""
    if warmup is None:
        warmup = plans.warmup_cosine()["warmup_steps"]
    g = table[(table.impl == "nanogpt") & (table.factor == "warm-up + cosine") & ~no_outcome(table)] \
        if len(table) else table
    if g.empty:
        return "No nanoGPT run on the warm-up + cosine schedule is trained yet."
    early = g[g.escape_step.notna() & (g.escape_step < warmup)]
    if len(early) == len(g):
        return (f"All {len(g)} nanoGPT seeds on the warm-up + cosine schedule leave the floor by step "
                f"{int(g.escape_step.max()):,}, before its {warmup}-step warm-up ends: what moved them is the "
                f"warm-up's low early rate, not the cosine decay, which had not begun.")
    return (f"{len(early)} of {len(g)} nanoGPT seeds on the warm-up + cosine schedule leave the floor before its "
            f"{warmup}-step warm-up ends; the others reach the cosine decay first, so the two parts are not told "
            f"apart.")


def rerun_reading(runs_dir=RUNS_DIR) -> str:
    """nanoGPT AttnOnly trained twice on its own recipe at the same seed: the bundle's runs (evaluated every
    ``coarse`` steps: seed 1337's "none" and ``baseline_seeds``) and the schedule plan's baselines (every 25). Our
    evaluations cannot change what is trained, so the two are the same training by design; they differ in the
    machine and code version that ran them (each run's env.json). Where the escape steps disagree beyond the coarser
    cadence, a change that should not matter moved the escape, as the rounding twin does."""
    coarse = plans.bundle_factors()["none"].train.eval_interval
    b = bundle_runs(runs_dir).table
    done = b[(b.factor == "none") & b.status.eq("complete")]
    first = {int(s): float(e) for s, e in zip(done.seed, done.escape_step)} | baseline_seeds(runs_dir)
    again = baseline_escapes("nanogpt", runs_dir)
    both = [s for s in first if s in again]
    if not both:
        return "No seed is trained at both cadences yet."

    def at_coarse(step):  # where an escape seen every 25 steps would be seen every ``coarse``: the next evaluation
        return step if pd.isna(step) else math.ceil(step / coarse) * coarse
    parts, moved = [], []
    for s in both:
        a, f = first[s], again[s]
        parts.append(f"seed {s} at {escape_label(a)} evaluated every {coarse} steps and at {escape_label(f)} every 25 "
                     f"({escape_label(at_coarse(f))} at the {coarse}-step cadence)")
        if not (pd.isna(a) and pd.isna(f)) and at_coarse(f) != a:
            moved.append(s)
    verdict_text = (f"seed {', '.join(map(str, moved))} escapes at another step, beyond the cadence: the same training "
                    f"on another machine or code version moved it, one more change that should not matter and does"
                    if moved else "each escapes at the same step, once read at the same cadence")
    return (f"nanoGPT AttnOnly trained twice on its own recipe: {'; '.join(parts)}. Evaluation cannot change what is "
            f"trained here, so {verdict_text}.")


def bundle_runs(runs_dir=RUNS_DIR) -> Runs:
    factors = plans.bundle_factors()
    # plan_runs hands back experiments; their JSON (the key plans.unique uses too) maps each to its factor's name
    name = {e.to_json(): k for k, e in factors.items()}
    runs = plan_runs(list(factors.values()), {"factor": lambda e: name[e.to_json()]}, runs_dir)
    # every planned factor gets a row, in the plan's order; one not trained yet shows as such, not as a gap
    table = pd.DataFrame({"factor": list(factors)}).merge(runs.table, on="factor", how="left")
    table["status"] = table.status.fillna("not trained")
    runs.table = table
    return runs


def baseline_seeds(runs_dir=RUNS_DIR) -> dict[int, float]:
    """nanoGPT AttnOnly's escape step (NaN: never) at the released seeds other than the bundle's
    (``plans.bundle_baseline_seeds``: the joint-collapse chapter's runs), finished and consistent: how far the
    seed alone moves the escape that the bundle's factors are read against."""
    exps = plans.bundle_baseline_seeds()
    # complete runs only: a diverged seed has no escape step to widen the range with
    ok = [(e, rd) for e, rd, _ in usable(as_released(exps, runs_dir), ("complete",))]
    # the recorded step (against the whole split's floor), as in the bundle's own table; a None for "never" reads
    # as NaN downstream (pd.isna)
    return {e.seed: rd.summary.get("escape_step", float("nan")) for e, rd in ok}


def twin_gap(hist: pd.DataFrame, factor: str) -> pd.DataFrame:
    """nanoGPT (factor ``"none"``) beside the run with ``factor`` switched, at every evaluation both reached:
    step, both validation losses, and the absolute difference of their training losses (``gap``). A factor that
    changes the computation only by rounding starts the two runs a rounding error apart; the gap shows how
    that difference grows."""
    cols = ["step", "val_none", "val_factor", "gap"]
    if hist.empty or "train_loss" not in hist:
        return pd.DataFrame(columns=cols)
    # Training loss, not validation loss: the train estimate draws the same batches in both runs (its own generator of
    # the run seed), so its difference is the models' alone, while the fixed-validation twin's validation loss is
    # measured on other tokens by design.
    a, b = (hist[hist.factor == f].set_index("step") for f in ("none", factor))
    # a run still training has fewer evaluations: only the steps both reached are compared
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


def schedule_runs(runs_dir=RUNS_DIR) -> Runs:
    """``plans.schedule_seeds``: each run's factor (``plans.schedule_factor``) and implementation."""
    return plan_runs(plans.schedule_seeds(), {"factor": plans.schedule_factor}, runs_dir)
