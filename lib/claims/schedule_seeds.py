"""book/escape_and_bundle.ipynb §2, "with seeds": the learning-rate schedule, gradient
clipping and biases, each switched alone over several seeds (``plans.schedule_seeds``),
read against the same implementation's own recipe over the same seeds; and what the seed
and the machine alone do to the escape."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from ..engine import plans
from ..engine.config import IMPL_NAMES
from ..engine.results import Runs, plan_runs
from ..engine.runs import RUNS_DIR
from .bundle import baseline_seeds, bundle_runs
from .escape_map import escape_label
from .verdicts import Claim, and_list, claim, verdict


def schedule_runs(runs_dir=RUNS_DIR) -> Runs:
    """``plans.schedule_seeds``: each run's factor
    (``plans.schedule_factor``) and implementation."""
    return plan_runs(plans.schedule_seeds(), {"factor": plans.schedule_factor}, runs_dir)


def changes_table(scale: str = "cpu") -> pd.DataFrame:
    """What each schedule factor changes (``plans.schedule_factor_changes``), one row a factor."""
    return pd.DataFrame(plans.schedule_factor_changes(scale)).set_index(
        ["implementation", "factor"]
    )


def chosen_seeds() -> dict[tuple[str, str], set[int]]:
    """(implementation, factor) -> the seeds whose runs chose it as a candidate
    (``plans.ScheduleFactor.chosen_by``), which the rule leaves out of its
    judgement and the figure draws apart."""
    return {k: set(f.chosen_by) for k, f in plans.schedule_factors().items() if f.chosen_by}


def no_outcome(table: pd.DataFrame) -> pd.Series:
    """The runs of a ``schedule_runs`` table with no escape step to judge: diverged (by status, even
    where a best loss was recorded before), or without a best loss at all."""
    bad = table.best_val_loss.isna()
    return bad | table.status.eq("diverged") if "status" in table else bad


def schedule_effects(
    table: pd.DataFrame,
    first_eval: int | None = None,
    planned: dict[tuple[str, str], set[int]] | None = None,
    budget: int | None = None,
    chosen: dict[tuple[str, str], set[int]] | None = None,
) -> pd.DataFrame:
    """The rule for naming a deciding factor over seeds, per (implementation, factor) of
    ``schedule_runs``: the escape step of each seed (NaN: not within the budget), how many of the
    seeds escape, and whether the factor decides: every one of its seeds escapes earlier than the
    earliest of its baseline's ("none", the same implementation, over the same seeds), or every one
    later than the latest, by more than one evaluation interval (``first_eval``, the plan's
    interval: the resolution of an escape step, as the escape map's). "Never" counts as the first
    evaluation past the ``budget`` (the plan's steps), the earliest it could be, so a run that never
    escapes is later by more than an interval only than one that escaped before the last evaluation.
    One direction for all seeds: a factor that moves some seeds earlier and others later is no
    single effect. A factor is judged only once all of its ``planned`` seeds (default:
    ``plans.schedule_seeds``'s) are trained and none of its or its baseline's runs has no outcome
    (``no_outcome``): over fewer, the baseline's range is narrower than the seed noise the plan was
    sized to measure, and with one seed it is a single step, which any other step lies outside. A
    factor ``chosen`` by some seeds' runs (default: ``ScheduleFactor.chosen_by``) is judged on its
    other seeds only: the runs that picked a candidate are no evidence that it does anything.

    ``chance``: how often the rule names a factor that does nothing. If the 2n runs of a factor
    and its baseline over n seeds were independent, all n of the factor's would fall on one side
    of the baseline's with probability 2 / C(2n, n) (ties and the one-interval margin only lower
    it): 0.8% at five seeds, 10% at three. A factor's run and its baseline's share a seed's
    initial weights and batches, which makes them more alike, not less. ``room``: whether the
    baseline's range leaves any outcome outside it at all (one that escapes within two evaluations
    and also never leaves none: no factor could decide). ``edge``: a judged factor not named whose
    seeds all lie on one side of the baseline's range, some by no more than an interval: the order
    holds, the margin does not, and the escape steps' resolution cannot tell which (a knife-edge,
    neither a naming nor its absence)."""
    # the plan's evaluation interval: the earliest escape an evaluation can see
    if first_eval is None:
        first_eval = plans.schedule_seeds()[0].train.eval_interval
    if budget is None:
        budget = plans.schedule_seeds()[0].train.max_steps
    if planned is None:  # the plan's seeds per (implementation, factor)
        planned = {}
        for e in plans.schedule_seeds():
            planned.setdefault((e.impl, plans.schedule_factor(e)), set()).add(e.seed)
    if chosen is None:
        chosen = chosen_seeds()
    # where "never" stands in the range test: the first evaluation past the budget
    never = budget + first_eval

    # a step of the range test in the reader's words, "never" where it stands for one
    def label(step):
        return escape_label(float("nan") if step >= never else step)

    rows = []
    # no run released: every planned factor is still a row, with nothing trained
    if "impl" not in table:
        table = pd.DataFrame(
            columns=["impl", "factor", "seed", "escape_step", "best_val_loss", "status"]
        )
    done = table[~no_outcome(table)]
    # the rows keep the plan's order, each implementation's baseline before its factors; a planned
    # factor with no run trained yet has its row too, so that it is said to be waiting
    keys = list(dict.fromkeys(zip(table.impl, table.factor)))
    keys += [k for k in planned if k not in keys]
    for impl, factor in keys:
        # seeds whose runs chose the factor: shown apart, never judged
        picked = chosen.get((impl, factor), set())
        mine = (table.impl == impl) & (table.factor == factor)
        g, chose = table[mine & ~table.seed.isin(picked)], table[mine & table.seed.isin(picked)]
        ok = done[(done.impl == impl) & (done.factor == factor) & ~done.seed.isin(picked)]
        # the baseline of the same implementation, restricted to this factor's seeds: a
        # seed compared only with itself
        base_all = table[(table.impl == impl) & (table.factor == "none") & table.seed.isin(g.seed)]
        base = done.loc[done.index.intersection(base_all.index)]
        lost = sorted(set(g.seed) - set(ok.seed)) if factor != "none" else []
        lost_base = sorted(set(base_all.seed) - set(base.seed))
        steps = ok.set_index("seed").escape_step.astype(float)
        want = planned.get((impl, factor), set()) - picked  # the seeds it is judged on
        s = steps.fillna(never)
        b = base.set_index("seed").escape_step.astype(float).fillna(never)
        # None (not judged): the baseline itself, no baseline, a run with no outcome on either side,
        # seeds that differ from the baseline's (a seed's own effect could pass for the factor's),
        # or fewer seeds than planned
        judged = (
            factor != "none"
            and not b.empty
            and not lost
            and not lost_base
            and bool(want)
            and set(b.index) == set(s.index) == want
        )
        # seeds clearly earlier than every baseline
        n_early = int((s < b.min() - first_eval).sum()) if len(b) else 0
        n_late = int((s > b.max() + first_eval).sum()) if len(b) else 0  # and clearly later
        earlier = judged and n_early == len(s)
        later = judged and n_late == len(s)
        # every seed on one side of the baseline's range, but some only by an interval or
        # less: the order is in the data, the margin is not, and an escape step is read to
        # within one interval (a finer cadence, another measure of the same step, could put
        # that seed either side of the margin)
        ordered = (
            "later"
            if len(b) and (s > b.max()).all()
            else "earlier"
            if len(b) and (s < b.min()).all()
            else ""
        )
        rows.append(
            {
                "impl": impl,
                "factor": factor,
                "seeds": len(g),
                "planned": len(want),
                "escaped": int(steps.notna().sum()),
                "escape steps": ", ".join(
                    f"{int(seed)}: {escape_label(v)}" for seed, v in steps.items()
                ),
                "chosen by": ", ".join(
                    f"{int(seed)}: {escape_label(float(v) if pd.notna(v) else math.nan)}"
                    for seed, v in zip(chose.seed, chose.escape_step)
                ),
                # the range as the reader sees it: "never" for a baseline
                # seed that stayed on the floor
                "baseline range": (
                    "-"
                    if not len(b)
                    # every seed on the floor reads "never, at any seed", not "never at every seed"
                    # (a hostile read took that for "not at every seed")
                    else (
                        "never, at any seed"
                        if label(b.max()) == "never"
                        else f"{label(b.min())} at every seed"
                    )
                    if label(b.min()) == label(b.max())
                    else f"{label(b.min())} to {label(b.max())}"
                ),
                "baseline seeds": len(base_all),
                "no outcome": lost,
                "baseline no outcome": lost_base,
                "earlier seeds": n_early,
                "later seeds": n_late,
                "decides": (earlier or later) if judged else None,
                # its direction, or ""
                "edge": ("" if earlier or later else ordered) if judged else None,
                "direction": "earlier" if earlier else "later" if later else None,
                "chance": 2 / math.comb(2 * len(want), len(want)) if judged else None,
                # room: a baseline whose earliest escape is past the second evaluation leaves
                # room for an earlier one; one whose latest escape comes before the last
                # evaluation, room for a later one
                "room": None if b.empty else bool(b.min() > 2 * first_eval or b.max() < budget),
            }
        )
    return pd.DataFrame(
        rows,
        columns=[
            "impl",
            "factor",
            "seeds",
            "planned",
            "escaped",
            "escape steps",
            "chosen by",
            "baseline range",
            "baseline seeds",
            "no outcome",
            "baseline no outcome",
            "earlier seeds",
            "later seeds",
            "decides",
            "edge",
            "direction",
            "chance",
            "room",
        ],
    )


def _pending(r) -> str:
    """Why a factor has no verdict of its own, in a few words (a row of ``schedule_effects``)."""

    def seeds(x):
        return f"seed{'s' if len(x) > 1 else ''} {', '.join(map(str, x))}"

    who = f"{r.factor} ({IMPL_NAMES[r.impl]}"
    if not r.planned:
        return f"{who}, not in the plan)"
    if r["no outcome"]:
        return f"{who}, {seeds(r['no outcome'])} diverged: no escape step to judge)"
    if r["baseline no outcome"]:
        return f"{who}, its baseline's {seeds(r['baseline no outcome'])} diverged: no escape step)"
    if r.seeds < r.planned:
        return f"{who}, {r.seeds} of {r.planned} seeds)"
    return f"{who}, its baseline {r['baseline seeds']} of {r.planned} seeds)"


def family_chance(chances) -> float:
    """The rule is run once per factor: the chance that some factor is named when none does
    anything, from each one's own ``chance``."""
    return 1 - float(np.prod([1 - c for c in chances]))


@claim("Switched alone, the schedule, clipping or biases move AttnOnly's escape beyond seed noise")
def claim_schedule_factors(effects: pd.DataFrame) -> Claim:
    """The factors ``schedule_effects`` names as deciding, each with its direction (HOLDS), or none
    over the same seeds (CONTRADICTED: every factor's escape steps overlap its baseline's range, or
    lie on both sides of it, where that range left room for them not to; NOT TESTABLE HERE where it
    left none, or where a factor not named is on the edge, ``schedule_effects``' ``edge``); NOT
    TESTED until a factor and its baseline are trained over the same seeds with an outcome in each.
    With several factors judged, the reason gives the chance that at least one of them is named if
    none does anything (from each one's ``chance``)."""
    # the rows with a verdict of their own: neither a baseline nor a factor
    # whose seeds its baseline lacks
    judged = effects.dropna(subset=["decides"])
    pending = effects[effects.decides.isna() & (effects.factor != "none")]
    if judged.empty:
        trained = ", ".join(
            f"{IMPL_NAMES[r.impl]} {r.factor} {r.seeds} of {r.planned}"
            for r in effects.itertuples()
        )
        return Claim(
            "NOT TESTED",
            (
                "no factor can be judged yet: its runs and its baseline's over all its planned "
                "seeds are not all trained with an outcome"
            )
            + (f" (seeds trained: {trained})" if trained else "")
            + (
                f"; {'; '.join(_pending(r) for _, r in pending.iterrows())}" if len(pending) else ""
            ),
        )
    named = judged[judged.decides.astype(bool)]
    lines = [
        f"{IMPL_NAMES[r.impl]} {r.factor}: {r.escaped} of {r.seeds} seeds escape "
        f"({r['escape steps']})"
        + (
            (
                f", judged without the seed{'s' if ',' in r['chosen by'] else ''} that chose it "
                f"({r['chosen by']})"
            )
            if r["chosen by"]
            else ""
        )
        + f"; baseline {r['baseline range']}"
        + (
            (
                f"; {r.direction} in every seed by more than one evaluation interval "
                f"(with no effect, chance {r.chance:.1%})"
            )
            if r.decides
            else (
                f"; not named: {r['earlier seeds']} of {r.seeds} clearly earlier, "
                f"{r['later seeds']} clearly later"
            )
            + (
                (
                    f", {r.seeds - r['earlier seeds'] - r['later seeds']} inside it or "
                    f"within an interval of it"
                )
                if r.seeds > r['earlier seeds'] + r['later seeds']
                else ""
            )
        )
        + "."
        for _, r in judged.iterrows()
    ]
    why = (
        "deciding, by that rule: "
        + ", ".join(f"{r.factor} ({IMPL_NAMES[r.impl]}, {r.direction})" for r in named.itertuples())
        if len(named)
        else (
            "no factor can be named as deciding: every factor's escape steps overlap its "
            "baseline's range over the same seeds, or lie on both sides of it"
        )
    )
    # one factor with room is enough for "none decides" to be a finding; with
    # no room anywhere it is not one
    room = bool(judged.room.astype(bool).any())
    if not len(named) and not room:
        why = (
            "no factor can be named: every baseline range reaches from the first evaluations to "
            "never, which leaves no outcome outside it"
        )
    # none named, but one on the edge (every seed on one side, some within an interval): "none
    # decides" would be the margin's resolution speaking, not the runs
    edges = judged[judged.edge.fillna("").astype(bool)]
    if not len(named) and len(edges):
        why += "; on the edge: " + ", ".join(
            (
                f"{r.factor} ({IMPL_NAMES[r.impl]}, {r.edge} in every seed, not all by more than "
                f"one evaluation interval)"
            )
            for r in edges.itertuples()
        )
    # the rule is run once per factor: the chance that some factor is named when none does anything
    if len(judged) > 1:
        anyone = family_chance(judged.chance)
        why += (
            f"; with no effect anywhere, the chance that at least one of the {len(judged)} judged "
            f"factors is named is {anyone:.0%}"
        )
    # a factor named over all its seeds stays named whatever the others do; the unjudged ones
    # are said, apart: still training (judged once trained), or for good (a run with no
    # outcome, a factor outside the plan)
    unjudged = [r for _, r in pending.iterrows()]
    for_good = [
        bool(r["no outcome"] or r["baseline no outcome"] or not r.planned) for r in unjudged
    ]
    for words, final in (("not judged yet", False), ("not judged", True)):
        if said := [_pending(r) for r, f in zip(unjudged, for_good) if f == final]:
            why += f"; {words}: " + ", ".join(said)
    return Claim(
        verdict(
            True,
            room or bool(len(named)),
            bool(len(named)),
            knife_edge=not len(named) and bool(len(edges)),
        ),
        why,
        {
            "named": [f"{r.factor} ({r.impl})" for r in named.itertuples()],
            "directions": {f"{r.factor} ({r.impl})": r.direction for r in named.itertuples()},
            "judged": len(judged),
        },
        tuple(lines),
    )


def baseline_escapes(impl: str = "nanogpt", runs_dir=RUNS_DIR) -> dict[int, float]:
    """``impl`` AttnOnly's escape step on its own recipe at each released seed of
    ``plans.schedule_seeds`` (NaN: never; a run with no outcome, ``no_outcome``, left out): what the
    seed alone does to the escape."""
    t = schedule_runs(runs_dir).table
    if t.empty:
        return {}
    g = t[(t.impl == impl) & (t.factor == "none") & ~no_outcome(t)]
    return {int(s): float(e) for s, e in zip(g.seed, g.escape_step.astype(float))}


def warmup_reading(table: pd.DataFrame, warmup: int | None = None) -> str:
    """Which part of the warm-up + cosine schedule can have moved nanoGPT AttnOnly's escape
    (``schedule_runs``' table): a run that leaves the floor before its ``warmup`` (default: the
    plan's) ends has not yet reached the cosine decay, so for it only the warm-up's low early rate
    differs from nanoGPT's constant one."""
    if warmup is None:
        warmup = plans.warmup_cosine()["warmup_steps"]
    g = (
        table[
            (table.impl == "nanogpt") & (table.factor == plans.WARMUP_COSINE) & ~no_outcome(table)
        ]
        if len(table)
        else table
    )
    if g.empty:
        return "No nanoGPT run on the warm-up + cosine schedule is trained yet."
    early = g[g.escape_step.notna() & (g.escape_step < warmup)]
    if len(early) == len(g):
        return (
            f"All {len(g)} nanoGPT seeds on the warm-up + cosine schedule leave the floor by step "
            f"{int(g.escape_step.max()):,}, before its {warmup}-step warm-up ends: what moved them "
            "is the warm-up's low early rate, not the cosine decay, which had not begun."
        )
    return (
        f"{len(early)} of {len(g)} nanoGPT seeds on the warm-up + cosine schedule leave the floor "
        f"before its {warmup}-step warm-up ends; the others reach the cosine decay first, so the "
        "two parts are not told apart."
    )


def rate_reading(table: pd.DataFrame) -> str:
    """ResidualGPT AttnOnly at a constant rate twice (``schedule_runs``' table): at its own peak and
    at Phase 2's lower one, both without warm-up or decay. Where the lower rate leaves the floor in
    every seed and the peak in none, the missing warm-up floors AttnOnly at this stand-in only when
    it skips to the stand-in's own peak, a rate the paper's 10M shape never uses (its peak is Phase
    2's); where both or neither leave, the two are not told apart."""
    t = table[(table.impl == "residualgpt") & ~no_outcome(table)] if len(table) else table
    high, low = (
        t[t.factor == f] if len(t) else t for f in (plans.CONSTANT_LR, plans.CONSTANT_PHASE2)
    )
    if high.empty or low.empty:
        return "ResidualGPT AttnOnly at a constant rate is not trained at both peaks yet."

    def said(g, name):
        left = g[g.escape_step.notna()]
        steps = ", ".join(
            f"seed {int(r.seed)} at step {int(r.escape_step):,}" for r in left.itertuples()
        )
        return f"{name}: {len(left)} of {len(g)} seeds leave the floor" + (
            f" ({steps})" if steps else ""
        )

    # the stand-in's own peak, held from step 0 (the plan's "constant lr"), and Phase 2's rate
    own, low_lr = plans.constant_lr()["min_lr"], plans.PHASE2_LR
    text = (
        "ResidualGPT AttnOnly without warm-up or decay, "
        f"{said(high, plans.CONSTANT_LR + ' (its own peak)')}; {said(low, plans.CONSTANT_PHASE2)}. "
    )
    return (
        text
        + {
            "": "The reading waits for the same seeds at both rates.",
            "peak": (
                "The two differ only in the rate. So at this stand-in, starting at the full rate "
                f"floors AttnOnly only at its own peak, {plans.rate_words(own)} ({own / low_lr:.1f}"
                f" times Table 1's {plans.rate_words(low_lr)}); at {plans.rate_words(low_lr)} it "
                "does not."
            ),
            "both": "Both leave it: the rate makes no difference here.",
            "apart": "The rate and the schedule's shape are not told apart by these runs.",
        }[rate_split(table)]
    )


# the schedule's own factors: the finding's rate and warm-up; clipping and biases are the others
RATE_FACTORS = ("none", plans.WARMUP_COSINE, plans.CONSTANT_LR, plans.CONSTANT_PHASE2)


def others_reading(effects: pd.DataFrame) -> str:
    """What the factors other than the schedule (``schedule_effects``' rows outside
    ``RATE_FACTORS``: clipping and biases) do to AttnOnly's escape at this stand-in, by the rule
    ``claim_schedule_factors`` applies, so the finding about the rate is read beside them: each
    one named (its direction, over the seeds judged, and its chance with no effect), on the edge,
    without room to tell, or within seed noise; with one named, the chance that any of the factors
    judged would be named with no effect anywhere."""
    others = effects[~effects.factor.isin(RATE_FACTORS)]
    judged = others.dropna(subset=["decides"])
    if judged.empty:
        names = list(dict.fromkeys(others.factor))
        if not names:
            return "No factor but the schedule's is in the plan."
        return f"Beside the rate, {and_list(names)}, switched alone, not judged over its seeds yet."
    parts = []
    for _, r in judged.iterrows():
        who = f"with {r.factor}, {IMPL_NAMES[r.impl]} AttnOnly"
        # the seed whose one-seed bundle chose the factor is left out of its judgement
        seeds = f"{r.seeds} seed{'s' * (r.seeds != 1)}" + (
            " that did not choose it" if r["chosen by"] else " judged"
        )
        if r.decides:
            parts.append(
                f"{who} leaves the floor {r.direction} at all {seeds} (a chance of "
                f"{r.chance:.1%} if {r.factor} did nothing)"
            )
        elif r.edge:
            parts.append(
                f"{who} leaves it {r.edge} at every one of the {seeds}, not all by more than "
                "one evaluation: on the edge"
            )
        elif not r.room:
            parts.append(f"{who} cannot be told from seed noise: its baseline leaves no room")
        else:
            parts.append(
                f"{who}'s escape stays within seed noise ({r.escaped} of {r.seeds} seeds leave the "
                "floor)"
            )
    text = "Other factors, each switched alone at this stand-in: " + "; ".join(parts) + "."
    every = effects.dropna(subset=["decides"])
    if judged.decides.astype(bool).any() and len(every) > 1:
        anyone = family_chance(every.chance)
        text += (
            f" With no effect anywhere, some one of the {len(every)} factors judged (the "
            f"schedule's among them) would be named {anyone:.0%} of the time."
        )
    return text


def rate_split(table: pd.DataFrame) -> str:
    """What ``rate_reading`` concludes, as one word: "peak" (the lower constant rate leaves the
    floor in every seed and the peak in none: the peak held from step 0 is what keeps it there),
    "both" (both leave it in every seed), "apart" (neither: not told apart), or "" (not trained at
    both rates over the same seeds yet)."""
    t = table[(table.impl == "residualgpt") & ~no_outcome(table)] if len(table) else table
    high, low = (
        t[t.factor == f] if len(t) else t for f in (plans.CONSTANT_LR, plans.CONSTANT_PHASE2)
    )
    if high.empty or low.empty or set(low.seed) != set(high.seed):
        return ""
    n_high, n_low = int(high.escape_step.notna().sum()), int(low.escape_step.notna().sum())
    if n_low == len(low) and n_high == 0:
        return "peak"
    return "both" if n_low == len(low) and n_high == len(high) else "apart"


def rerun_reading(runs_dir=RUNS_DIR) -> str:
    """nanoGPT AttnOnly trained twice on its own recipe at the same seed: the bundle's runs
    (evaluated every ``coarse`` steps: seed 1337's "none" and ``baseline_seeds``) and the schedule
    plan's (every ``fine``). Our evaluations cannot change what is trained, so the two are the same
    training by design; they differ in the machine and code version that ran them (each run's
    env.json). Where the escape steps disagree beyond the coarser cadence, a change that should not
    matter moved the escape, as the rounding twin does."""
    coarse = plans.bundle_factors()["none"].train.eval_interval
    fine = plans.schedule_seeds()[0].train.eval_interval
    b = bundle_runs(runs_dir).table
    done = b[(b.factor == "none") & b.status.eq("complete")]
    first = {int(s): float(e) for s, e in zip(done.seed, done.escape_step)} | baseline_seeds(
        runs_dir
    )
    again = baseline_escapes("nanogpt", runs_dir)
    both = [s for s in first if s in again]
    if not both:
        return "No seed is trained at both cadences yet."

    # where an escape seen every ``fine`` steps would be seen every ``coarse``: the next one
    def at_coarse(step):
        return step if pd.isna(step) else math.ceil(step / coarse) * coarse

    parts, moved = [], []
    for s in both:
        a, f = first[s], again[s]
        parts.append(
            f"seed {s} at {escape_label(a)} evaluated every {coarse} steps and at "
            f"{escape_label(f)} every {fine} ({escape_label(at_coarse(f))} at the {coarse}-step "
            "cadence)"
        )
        if not (pd.isna(a) and pd.isna(f)) and at_coarse(f) != a:
            moved.append(s)
    verdict_text = (
        (
            f"seed {', '.join(map(str, moved))} escapes at another step, beyond the cadence: the "
            "same training on another machine or code version moved it, one more change that "
            "should not matter and does"
        )
        if moved
        else "each escapes at the same step, once read at the same cadence"
    )
    return (
        f"nanoGPT AttnOnly trained twice on its own recipe: {'; '.join(parts)}. Evaluation cannot "
        f"change what is trained here, so {verdict_text}."
    )
