"""The learning-rate schedule at the paper's own 10M shape, over five seeds (``plans.paper_10m_schedule_seeds``):
does a constant rate (the Phase-2 notebook's 3e-4, no warm-up, no decay) delay or prevent ResidualGPT AttnOnly's
escape beyond what the seed alone does, against the Phase-3 preset's warm-up + cosine? Judged by the book's rank
rule over seeds (``schedule_seeds.schedule_effects``), never by one seed: the author's own Phase-2 logs show the
outcome turning on the seed under one recipe (1337 and 123 leave the floor near steps 200 and 300, 42 never)."""
from __future__ import annotations

import pandas as pd

from .. import plans
from ..results import SHOWN_AS_PREFIX, histories_of, summaries_of
from ..runs import RUNS_DIR, RunDir, run_path
from ..verdicts import Claim, claim, verdict
from .schedule_seeds import schedule_effects

CONSTANT = plans.CONSTANT_LR  # the factor: ResidualGPT's own peak 3e-4 held from step 0 (the Phase-2 recipe)


def factor(exp) -> str:
    """"none" for the Phase-3 preset (warm-up + cosine, the baseline), ``CONSTANT`` for the Phase-2 recipe."""
    return "none" if exp.train.schedule == plans.own_schedule(exp.impl, exp.scale) else plans.SCHEDULE_NAMES[
        exp.train.schedule]


def schedule_10m_runs(runs_dir=None) -> pd.DataFrame:
    """The plan's runs that have trained as far as their question needs (``plans.schedule_10m_until``: 100 steps
    past the escape, a warm-up run at least to step 200, or to step 600 if still on the floor), one row each with
    its factor; a run still short of its stop is not among them (it is counted in ``trained``)."""
    runs_dir = runs_dir or RUNS_DIR
    rows = []
    for e in plans.paper_10m_schedule_seeds():
        rd = RunDir(run_path(e, runs_dir))
        s = summaries_of([(e, rd, "released")], SHOWN_AS_PREFIX)
        # a diverged run is finished wherever it stopped; any other one only once it reaches the plan's stop
        if len(s) and (s.status.iloc[0] == "diverged" or s.steps.iloc[0] >= plans.schedule_10m_until(e, rd.summary)):
            rows.append(s.assign(factor=factor(e)))
    cols = ["impl", "config", "seed", "factor", "status", "steps", "best_val_loss", "escape_step"]
    return pd.concat(rows, ignore_index=True)[cols] if rows else pd.DataFrame(columns=cols)


def schedule_10m_histories(runs_dir=None) -> pd.DataFrame:
    """Every evaluation of the plan's released runs, however far each has trained (the curves the 10M chapter draws
    beside the author's Phase-2 ones), with each run's seed and schedule."""
    runs_dir = runs_dir or RUNS_DIR
    return histories_of([(e, RunDir(run_path(e, runs_dir)), "released") for e in plans.paper_10m_schedule_seeds()],
                        SHOWN_AS_PREFIX)


def schedule_10m_effects(table: pd.DataFrame) -> pd.DataFrame:
    """``schedule_seeds.schedule_effects`` at this plan's cadence (50 steps), seeds and budget (a run of either
    schedule still on the floor at its stop, step 600, counts as leaving at the first evaluation past it)."""
    exps = plans.paper_10m_schedule_seeds()
    planned = {}
    for e in exps:
        planned.setdefault((e.impl, factor(e)), set()).add(e.seed)
    # chosen={}: no seed's runs picked the constant rate at this shape (the stand-in plan's choices are its own)
    return schedule_effects(table, first_eval=effects_interval(), planned=planned,
                            budget=plans.SCHEDULE_10M_MAX_STEPS, chosen={})


@claim("A constant learning rate delays or prevents AttnOnly's escape beyond seed noise, at the paper's shape")
def claim_schedule_10m(effects: pd.DataFrame) -> Claim:
    """HOLDS where the rank rule names the constant rate as moving ResidualGPT AttnOnly's escape later in every one
    of the five seeds (beyond every warm-up + cosine seed by more than one evaluation interval; with no effect,
    chance 2/C(10, 5) = 0.8%); CONTRADICTED where it names it earlier, or names nothing while the warm-up runs'
    range left room for a later escape; NOT TESTABLE HERE where it left none, or where every constant-rate seed is
    on one side of that range but some only by an interval or less (``schedule_effects``' edge: the escape steps'
    resolution, not the runs, would decide); NOT TESTED until all ten runs have trained as far as the plan's rule
    stops them."""
    r = effects[(effects.impl == "residualgpt") & (effects.factor == CONSTANT)]
    base = effects[(effects.impl == "residualgpt") & (effects.factor == "none")]
    n = len(plans.SCHEDULE_SEEDS)
    trained = f"{int(r.seeds.iloc[0]) if len(r) else 0} of {n} constant-rate and " \
              f"{int(base.seeds.iloc[0]) if len(base) else 0} of {n} warm-up + cosine runs trained to their stop"
    if r.empty or pd.isna(r.decides.iloc[0]):
        # which seeds have reached their stop, and where each left the floor: the runs still short are the others
        so_far = "; ".join(f"{name} {x['escape steps'].iloc[0]}" for name, x in
                           (("constant-rate escapes", r), ("warm-up + cosine escapes", base)) if len(x) and
                           x["escape steps"].iloc[0])
        return Claim("NOT TESTED", f"{trained}" + (f" ({so_far})" if so_far else "")
                     + f"; python -m lib sweep --plan 10m_schedule_seeds --micro-batch 8 --fast-dropout (each run "
                       f"{plans.SCHEDULE_10M_AFTER} steps past its escape, a warm-up run at least "
                       f"{plans.SCHEDULE_10M_WARMUP_STEPS}, or {plans.SCHEDULE_10M_MAX_STEPS} if still on the floor: "
                       f"about 7 to 11 s a step on 2 cores)", {"trained": trained})
    r = r.iloc[0]
    lines = (f"ResidualGPT AttnOnly, 10M: constant 3e-4 escapes at {r['escape steps']}; warm-up + cosine over the "
             f"same seeds {r['baseline range']}.",)
    later = bool(r.decides) and r.direction == "later"
    # every seed on one side, some by no more than the 50 steps an escape step is read to: neither named nor not
    edge = r.edge or ""
    clear = r["later seeds"] if edge == "later" else r["earlier seeds"]
    why = (f"later in every seed by more than one evaluation interval (with no effect, chance {r.chance:.1%})" if later
           else f"earlier in every seed (chance {r.chance:.1%} with no effect)" if r.decides
           else f"{edge} in every seed (in order alone, chance {r.chance:.1%} with no effect), but {r.seeds - clear} "
                f"of {r.seeds} by no more than one evaluation interval ({effects_interval()} steps), the resolution "
                f"of an escape step: a finer cadence could put {'it' if r.seeds - clear == 1 else 'them'} either "
                f"side of the rule's margin" if edge
           else f"not beyond seed noise: {r['earlier seeds']} of {r.seeds} seeds clearly earlier, "
                f"{r['later seeds']} clearly later than every warm-up + cosine seed")
    facts = {"named": bool(r.decides), "direction": r.direction, "edge": edge, "escape steps": r["escape steps"]}
    return Claim(verdict(True, bool(r.room) or bool(r.decides), later, knife_edge=bool(edge)), why, facts, lines)


def effects_interval() -> int:
    """The plan's evaluation interval: the resolution of an escape step, and the rank rule's margin."""
    return plans.paper_10m_schedule_seeds()[0].train.eval_interval
