"""The learning-rate schedule at the paper's own 10M shape, over five seeds
(``plans.paper_10m_schedule_seeds``): does a constant rate (the Phase-2 notebook's 3e-4, no
warm-up, no decay) delay or prevent ResidualGPT AttnOnly's escape beyond what the seed alone
does, against the Phase-3 preset's warm-up + cosine? Judged by the book's rank rule over
seeds (``schedule_seeds.schedule_effects``), never by one seed: the author's own Phase-2
logs show the outcome turning on the seed under one recipe (1337 and 123 leave the floor
near steps 200 and 300, 42 never)."""

from __future__ import annotations

import pandas as pd

from ..engine import plans
from ..engine.config import IMPL_NAMES
from ..engine.results import SHOWN_AS_PREFIX, histories_of, summaries_of
from ..engine.runs import RUNS_DIR, RunDir, run_path
from .schedule_seeds import no_outcome, schedule_effects
from .verdicts import Claim, and_list, claim, verdict

# the factor: ResidualGPT's own peak 3e-4 held from step 0 (the Phase-2 recipe)
CONSTANT = plans.CONSTANT_LR


def factor(exp) -> str:
    """ "none" for the Phase-3 preset (warm-up + cosine, the baseline),
    ``CONSTANT`` for the Phase-2 recipe."""
    return (
        "none"
        if exp.train.schedule == plans.own_schedule(exp.impl, exp.scale)
        else plans.SCHEDULE_NAMES[exp.train.schedule]
    )


def schedule_10m_runs(runs_dir=None) -> pd.DataFrame:
    """The plan's runs that have trained as far as their question needs
    (``plans.schedule_10m_until``: 100 steps past the escape, a warm-up run at least to step 200, or
    to step 600 if still on the floor), one row each with its factor; a run still short of its stop
    is not among them (it is counted in ``trained``)."""
    return _trained(plans.paper_10m_schedule_seeds(), plans.schedule_10m_until, runs_dir)


def _trained(exps, stop, runs_dir=None) -> pd.DataFrame:
    """The runs of ``exps`` that reached ``stop(exp, summary)`` (or diverged),
    one row each with its factor."""
    runs_dir = runs_dir or RUNS_DIR
    rows = []
    for e in exps:
        rd = RunDir(run_path(e, runs_dir))
        s = summaries_of([(e, rd, "released")], SHOWN_AS_PREFIX)
        # a diverged run is finished wherever it stopped; any other one only
        # once it reaches the plan's stop
        if len(s) and (s.status.iloc[0] == "diverged" or s.steps.iloc[0] >= stop(e, rd.summary)):
            rows.append(s.assign(factor=factor(e)))
    cols = ["impl", "config", "seed", "factor", "status", "steps", "best_val_loss", "escape_step"]
    return pd.concat(rows, ignore_index=True)[cols] if rows else pd.DataFrame(columns=cols)


def schedule_10m_histories(runs_dir=None) -> pd.DataFrame:
    """Every evaluation of the plan's released runs, however far each has trained (the curves the
    10M chapter draws beside the author's Phase-2 ones), with each run's seed and schedule."""
    runs_dir = runs_dir or RUNS_DIR
    return histories_of(
        [(e, RunDir(run_path(e, runs_dir)), "released") for e in plans.paper_10m_schedule_seeds()],
        SHOWN_AS_PREFIX,
    )


def schedule_10m_effects(table: pd.DataFrame) -> pd.DataFrame:
    """``schedule_seeds.schedule_effects`` at this plan's cadence (50 steps), seeds and budget
    (a run of either schedule still on the floor at its stop, step 600, counts as leaving at
    the first evaluation past it)."""
    exps = plans.paper_10m_schedule_seeds()
    planned = {}
    for e in exps:
        planned.setdefault((e.impl, factor(e)), set()).add(e.seed)
    # chosen={}: no seed's runs picked the constant rate at this shape (the
    # stand-in plan's choices are its own)
    return schedule_effects(
        table,
        first_eval=effects_interval(),
        planned=planned,
        budget=plans.SCHEDULE_10M_MAX_STEPS,
        chosen={},
    )


@claim(
    "A constant learning rate delays or prevents AttnOnly's escape beyond seed noise, at the "
    "paper's shape"
)
def claim_schedule_10m(effects: pd.DataFrame) -> Claim:
    """HOLDS where the rank rule names the constant rate as moving ResidualGPT AttnOnly's escape
    later in every one of the five seeds (beyond every warm-up + cosine seed by more than one
    evaluation interval; with no effect, chance 2/C(10, 5) = 0.8%); CONTRADICTED where it names
    it earlier, or names nothing while the warm-up runs' range left room for a later escape; NOT
    TESTABLE HERE where it left none, or where every constant-rate seed is on one side of that
    range but some only by an interval or less (``schedule_effects``' edge: the escape steps'
    resolution, not the runs, would decide); NOT TESTED until all ten runs have trained as far
    as the plan's rule stops them."""
    r = effects[(effects.impl == "residualgpt") & (effects.factor == CONSTANT)]
    base = effects[(effects.impl == "residualgpt") & (effects.factor == "none")]
    n = len(plans.SCHEDULE_SEEDS)
    trained = (
        f"{int(r.seeds.iloc[0]) if len(r) else 0} of {n} constant-rate and "
        f"{int(base.seeds.iloc[0]) if len(base) else 0} of {n} warm-up + cosine runs trained to "
        "their stop"
    )
    if r.empty or pd.isna(r.decides.iloc[0]):
        # which seeds have reached their stop, and where each left the floor: the
        # runs still short are the others
        so_far = "; ".join(
            f"{name} {x['escape steps'].iloc[0]}"
            for name, x in (("constant-rate escapes", r), ("warm-up + cosine escapes", base))
            if len(x) and x["escape steps"].iloc[0]
        )
        return Claim(
            "NOT TESTED",
            f"{trained}"
            + (f" ({so_far})" if so_far else "")
            + (
                "; python -m lib sweep --plan 10m_schedule_seeds --micro-batch 8 --fast-dropout "
                f"(each run {plans.SCHEDULE_10M_AFTER} steps past its escape, a warm-up run at "
                f"least {plans.SCHEDULE_10M_WARMUP_STEPS}, or {plans.SCHEDULE_10M_MAX_STEPS} if "
                "still on the floor: about 7 to 11 s a step on 2 cores)"
            ),
            {"trained": trained},
        )
    r = r.iloc[0]
    lines = (
        (
            f"ResidualGPT AttnOnly, 10M: constant 3e-4 escapes at {r['escape steps']}; warm-up + "
            f"cosine escapes at {r['baseline range']}."
        ),
    )
    later = bool(r.decides) and r.direction == "later"
    # every seed on one side, some by no more than the 50 steps an escape step is
    # read to: neither named nor not
    edge = r.edge or ""
    clear = r["later seeds"] if edge == "later" else r["earlier seeds"]
    why = (
        (
            "later in every seed by more than one evaluation interval (with no effect, chance "
            f"{r.chance:.1%})"
        )
        if later
        else f"earlier in every seed (chance {r.chance:.1%} with no effect)"
        if r.decides
        else (
            f"{edge} in every seed (in order alone, chance {r.chance:.1%} with no effect), but "
            f"{r.seeds - clear} of {r.seeds} by no more than one evaluation interval "
            f"({effects_interval()} steps), the resolution of an escape step: a finer cadence "
            f"could put {'it' if r.seeds - clear == 1 else 'them'} either side of the rule's "
            "margin"
        )
        if edge
        else (
            f"not beyond seed noise: {r['earlier seeds']} of {r.seeds} seeds clearly earlier, "
            f"{r['later seeds']} clearly later than every warm-up + cosine seed"
        )
    )
    facts = {
        "named": bool(r.decides),
        "direction": r.direction,
        "edge": edge,
        "escape steps": r["escape steps"],
    }
    return Claim(
        verdict(True, bool(r.room) or bool(r.decides), later, knife_edge=bool(edge)),
        why,
        facts,
        lines,
    )


def effects_interval() -> int:
    """The plan's evaluation interval: the resolution of an escape
    step, and the rank rule's margin."""
    return plans.paper_10m_schedule_seeds()[0].train.eval_interval


# nanoGPT at the paper's shape over the same five seeds
# (``plans.paper_10m_nanogpt_schedule_seeds``): its own constant 3e-4 (the author's
# NanoGPT_10M.ipynb) against the same recipe with only the warm-up + cosine, each to step 300.


def nanogpt_schedule_runs(runs_dir=None) -> pd.DataFrame:
    """The nanoGPT plan's runs that have reached its step ``plans.PREFIX_STEPS`` (or
    diverged), one row each with its factor ("none": nanoGPT's own constant rate); a run
    still short of it is not among them."""
    return _trained(
        plans.paper_10m_nanogpt_schedule_seeds(), lambda e, s: plans.PREFIX_STEPS, runs_dir
    )


def nanogpt_schedule_histories(runs_dir=None) -> pd.DataFrame:
    """Every evaluation of the nanoGPT plan's released runs, however far each has trained, with its
    seed and schedule (the curves the joint-collapse page draws beside the author's nanoGPT log)."""
    runs_dir = runs_dir or RUNS_DIR
    return histories_of(
        [
            (e, RunDir(run_path(e, runs_dir)), "released")
            for e in plans.paper_10m_nanogpt_schedule_seeds()
        ],
        SHOWN_AS_PREFIX,
    )


def nanogpt_schedule_effects(table: pd.DataFrame) -> pd.DataFrame:
    """``schedule_seeds.schedule_effects`` on the nanoGPT plan: its cadence (50 steps),
    seeds and stop (step 300; a run still on the floor there counts as leaving at
    the first evaluation past it)."""
    planned = {}
    for e in plans.paper_10m_nanogpt_schedule_seeds():
        planned.setdefault((e.impl, factor(e)), set()).add(e.seed)
    return schedule_effects(
        table, first_eval=effects_interval(), planned=planned, budget=plans.PREFIX_STEPS, chosen={}
    )


# The book's own finding, one claim over both implementations: which way the rank rule must name
# the schedule in each for the finding to hold. ResidualGPT's own recipe warms up, and its
# factor is the constant rate (later); nanoGPT's own recipe is the constant rate, and its factor
# is the warm-up + cosine (earlier).
FIRST_STEPS = {"residualgpt": (CONSTANT, "later"), "nanogpt": (plans.WARMUP_COSINE, "earlier")}


def first_steps_rung(effects: pd.DataFrame, impl: str) -> tuple[str, str]:
    """One implementation's rung of the finding: the rule's verdict (``verdicts.verdict`` on
    ``schedule_effects``' row of its schedule factor) and a few words on what it rests on."""
    want, direction = FIRST_STEPS[impl]
    r = effects[(effects.impl == impl) & (effects.factor == want)] if len(effects) else effects
    name = IMPL_NAMES[impl]
    if r.empty or pd.isna(r.decides.iloc[0]):
        done = int(r.seeds.iloc[0]) if len(r) else 0
        planned = int(r.planned.iloc[0]) if len(r) else len(plans.SCHEDULE_SEEDS)
        base = (
            effects[(effects.impl == impl) & (effects.factor == "none")]
            if len(effects)
            else effects
        )
        return "NOT TESTED", (
            f"{name}: {done} of {planned} {want} and {int(base.seeds.iloc[0]) if len(base) else 0} "
            f"of {planned} own-recipe runs trained"
        )
    r = r.iloc[0]
    agrees = bool(r.decides) and r.direction == direction
    word = verdict(
        True, bool(r.room) or bool(r.decides), agrees, knife_edge=not agrees and bool(r.edge)
    )
    said = (
        f"{r.direction} in every seed, beyond one evaluation interval"
        if r.decides
        else f"{r.edge} in every seed, not all beyond one evaluation interval"
        if r.edge
        else "not beyond seed noise"
    )
    return word, f"{name}: {want} {said} ({r['escape steps']}; own recipe {r['baseline range']})"


def combine(words: list[str]) -> str:
    """The finding's verdict from its rungs' (one per implementation): untrained first, then a valid
    contradiction in either, then a rung that cannot test it; HOLDS only where every rung holds."""
    for word in ("NOT TESTED", "CONTRADICTED", "NOT TESTABLE HERE"):
        if word in words:
            return word
    return "HOLDS"


def _escapes(table: pd.DataFrame, impl: str, factor: str) -> dict[int, float | None]:
    """Seed -> escape step (None: on the floor at its stop) of the runs of one schedule that have an
    outcome (``schedule_seeds.no_outcome``: a diverged run has none)."""
    t = table[(table.impl == impl) & (table.factor == factor) & ~no_outcome(table)]
    return {int(r.seed): None if pd.isna(r.escape_step) else r.escape_step for r in t.itertuples()}


def _pairs(table: pd.DataFrame, impl: str, factor: str) -> tuple[dict, dict, list[int], str]:
    """One implementation's two schedules seed by seed: the escapes on its own recipe ("none") and
    on ``factor``, the seeds with an outcome on both, and " so far" while a planned seed has
    neither both outcomes nor a diverged run (a diverged seed is done, not pending)."""
    own, other = _escapes(table, impl, "none"), _escapes(table, impl, factor)
    # in the plan's order (1337, 42, 123, 0, 7), as every table of the finding lists them
    order = {s: i for i, s in enumerate(plans.SCHEDULE_SEEDS)}
    both = sorted(set(own) & set(other), key=lambda s: (order.get(s, len(order)), s))
    t = table[table.impl == impl] if len(table) else table
    done = set(both) | {int(s) for s in t[no_outcome(t)].seed} if len(t) else set(both)
    return own, other, both, " so far" if len(done) < len(plans.SCHEDULE_SEEDS) else ""


def puzzle_clauses(residualgpt: pd.DataFrame, nanogpt: pd.DataFrame) -> tuple[str, str]:
    """What the finding's paper-shape runs (``schedule_10m_runs``, ``nanogpt_schedule_runs``) say
    of the paper's two puzzles, as a clause for the front page's answer: in full, then short. For
    nanoGPT's joint collapse, among the seeds its constant rate keeps on the floor (to the plan's
    stop), at how many the warm-up frees it. For Phase 2's seed left on the floor, at how many
    ResidualGPT seeds Phase 2's constant rate keeps AttnOnly on the floor where the seed's own
    warm-up frees it. Counts over the seeds with an outcome on both schedules, never a verdict: the
    rank rule's verdict is the finding's own."""
    const, warm, both, so_far = _pairs(nanogpt, "nanogpt", plans.WARMUP_COSINE)
    floored = [s for s in both if const[s] is None]
    freed = [s for s in floored if warm[s] is not None]
    # "floors" in full: on the floor to the plan's stop, which is not the run's end; seeds named
    to_stop = f"keeps on the floor to step {plans.PREFIX_STEPS}"
    if not both:
        nano = (f"no nanoGPT seed has run on both schedules{so_far}",) * 2
    elif not floored:
        nano = (
            f"nanoGPT's constant rate {to_stop} none of its {len(both)} seeds{so_far}",
            f"nanoGPT's constant rate floors none of its {len(both)} seeds{so_far}",
        )
    else:
        k, m = len(freed) or "none", len(floored)
        nano = (
            f"a warm-up frees nanoGPT's AttnOnly at {k} of the {m} seeds its constant rate "
            f"{to_stop}{so_far} ({', '.join(map(str, floored))})",
            # the seeds floored by the constant rate, freed by the warm-up: "frees nanoGPT (4 of 4
            # floored)" read as if the warm-up had floored them (a hostile read)
            f"warm-up frees {k} of {m} floored nanoGPT seeds{so_far}",
        )
    own, flat, both, so_far = _pairs(residualgpt, "residualgpt", CONSTANT)
    kept = [s for s in both if own[s] is not None and flat[s] is None]
    if not both:
        res = (f"no ResidualGPT seed has run on both schedules{so_far}",) * 2
    else:
        n = f"of {len(both)} ResidualGPT seeds"
        # none kept, every seed done: these seeds do not reproduce Phase 2's floored seed. Not
        # "does not explain" it: had the rate floored one seed in three, as in Phase 2, none of
        # five would still come up about one time in eight ((2/3)^5)
        unexplained = (
            ""
            if kept or so_far
            else f", so {len(both)} seeds here do not reproduce Phase 2's floored seed"
        )
        res = (
            f"Phase 2's constant rate keeps {len(kept) or 'none'} {n} on the floor{so_far}"
            f"{unexplained}",
            f"constant rate floors {f'{len(kept)} {n}' if kept else 'no ResidualGPT seed'}{so_far}",
        )
    # each names the puzzles it answers, so that the answer sentence says what the counts are about
    return (f"of the two puzzles, {nano[0]}, and {res[0]}", f"puzzles: {nano[1]}, {res[1]}")


# the finding's name, written once: the claim's, its entry's and the front page's row's
FINDING = "The learning rate's first steps decide whether and when AttnOnly leaves the floor"


@claim(FINDING)
def claim_first_steps(residualgpt: pd.DataFrame, nanogpt: pd.DataFrame) -> Claim:
    """The book's own finding at the paper's 10M shape: a warm-up lets AttnOnly leave the floor, a
    full rate from step 0 delays or prevents it, in both implementations. Each is judged by the rank
    rule on its five seeds a schedule (``schedule_effects``: ``schedule_10m_effects`` for
    ResidualGPT, ``nanogpt_schedule_effects`` for nanoGPT) in the direction ``FIRST_STEPS`` names,
    and the two verdicts combine as ``combine`` says: HOLDS where both name the schedule that way;
    CONTRADICTED where either validly does not; NOT TESTABLE HERE where either is on the edge or
    left no room; NOT TESTED while either's runs are still training."""
    rungs = {
        "residualgpt": first_steps_rung(residualgpt, "residualgpt"),
        "nanogpt": first_steps_rung(nanogpt, "nanogpt"),
    }
    word = combine([w for w, _ in rungs.values()])
    why = "; ".join(f"{text}: {w}" for w, text in rungs.values())
    # a rung decided other than HOLDS while the other trains: the wait can no longer end in HOLDS
    settled = [IMPL_NAMES[k] for k, (w, _) in rungs.items() if w not in ("HOLDS", "NOT TESTED")]
    if word == "NOT TESTED" and settled:
        why += f"; it can no longer hold at this shape, where {and_list(settled)}'s part is settled"
    return Claim(
        word,
        why,
        {"rungs": {k: w for k, (w, _) in rungs.items()}},
        tuple(t for _, t in rungs.values()),
    )
