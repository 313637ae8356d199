"""One claim as the front page, the closing chapter and What holds print it (``Row``), and the few
helpers that both the paper's card (``lib.claims.scorecard``) and the book's own findings
(``lib.claims.findings``) write their rows with: the paper's value in words, and the paper-shape
prefix rows with how far each trained."""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from ..engine.config import IMPL_NAMES
from ..engine.plans import PLANS
from . import paper_shape
from .paper import paper_values
from .runset import RunSet
from .verdicts import VERDICTS, Claim

# What a row's evidence is at: the paper's own model (its 10M or 124M preset), a CPU stand-in, or no
# runs. The front page lays the card out by this field (which rows say "at the stand-in", which
# count as the paper's shape), never by reading the evidence's words.
SCALES = ("paper shape", "stand-in", "none")


# One claim as the front page and the closing chapter print it: each field is a column of the card.
# Keyword-only, so that two swapped strings cannot pass unnoticed.
@dataclass(kw_only=True)
class Row:
    claim: str
    where: str  # the paper's section or table
    paper: str  # the paper's number, with its digits and seeds
    ours: str  # ours, from runs/
    scale: str  # one of SCALES
    evidence: str  # scale and budget of our runs
    verdict: str
    # what the verdict rests on; for NOT TESTED, what would test it and its cost
    why: str
    # Where the paper's shape decides the row: the stand-in's own verdict and reading of
    # the same claim, shown beside it and not counted (issue 36: evidence at the paper's
    # shape outranks a stand-in's).
    stand_in: str = ""
    # The claim in a few plain words, for the front page's sentences ("the joint collapse")
    short: str = ""
    # Where the book decides it: a page of book/ and the id of its section
    # ("joint_collapse#reading-the-result")
    section: str = ""
    # The plan of lib.engine.plans whose runs are the evidence: ``retrain_command`` turns it
    # into the line that retrains them
    plan: str = ""
    # How far each paper-shape run behind the row trained, (steps, budget) for each still short of
    # its budget: the front page's abstract says it beside the claims it names
    partial: tuple[tuple[int, int], ...] = ()
    # Whether any of them trained whole, beside those: "first 300 of 3,000 steps"
    # alone would read as every run's
    whole: bool = False
    # The book's own finding only. What its paper-shape runs say of the paper's two puzzles, as
    # clauses for the summary's answer, the longest first (``schedule_10m.puzzle_clauses``); and
    # where the stand-in's verdict beside it holds only in part, the few words that say where
    # ("at its peak 1e-3 only, not at 3e-4").
    puzzles: tuple[str, ...] = ()
    stand_in_limit: str = ""
    # The book's own finding only: each implementation's verdict, (its name, the word), which the
    # finding's verdict combines (``schedule_10m.combine``), so that the summary can say where they
    # differ (nanoGPT's may hold where ResidualGPT's cannot be tested)
    rungs: tuple[tuple[str, str], ...] = ()

    def __post_init__(self):
        if self.scale not in SCALES:
            raise ValueError(f"scale {self.scale!r} is not one of {', '.join(SCALES)}")
        for v in (self.verdict, *(word for _, word in self.rungs)):
            if v not in VERDICTS:
                raise ValueError(f"verdict {v!r} is not one of {', '.join(VERDICTS)}")
        if self.plan and self.plan not in PLANS:
            raise ValueError(f"plan {self.plan!r} is not one of {', '.join(PLANS)}")


def retrain_command(plan: str) -> str:
    """The line that retrains a plan's runs beside the released ones (``runs/``
    is never overwritten), with the options its released runs were trained
    with on this CPU (``Plan.options``)."""
    return " ".join(
        [f"python -m lib sweep --plan {plan} --runs-dir runs-retrain", *PLANS[plan].options]
    )


def paper_text(
    ref: str, config: str, digits: int = 3, seeds: bool = True, metric: str = "best_val_loss"
) -> str:
    """One value of the paper (``data/paper_results.csv``) as the scorecard
    prints it: ``6.037 ± 0.355 (5 seeds)``; the standard deviation and the
    seed count where the paper gives them."""
    # one row per (ref, config, metric) in the paper file
    r = paper_values(ref=ref, config=config, metric=metric).iloc[0]
    # the std at the value's own digits; "(n seeds)" only where the
    # paper's value pools more than one
    text = f"{r.value:.{digits}f}" + (f" ± {r['std']:.{digits}f}" if pd.notna(r["std"]) else "")
    return text + (f" ({int(r.n)} seeds)" if seeds and pd.notna(r.n) and r.n > 1 else "")


# The implementations as the card writes them (the runs' directories spell them in lower case).
def prefix_rows(t: pd.DataFrame, runs) -> list:
    """The prefix-table rows of ``runs`` ((implementation, configuration)
    pairs, each on its own schedule)."""
    return [
        r
        for impl, config in runs
        if len(t) and (r := paper_shape.run_row(t, impl, config)) is not None
    ]


def prefix_partial(found: list) -> tuple[tuple[int, int], ...]:
    """How far each of ``found`` (prefix-table rows) trained, (steps, budget) for
    each still short of its budget."""
    return tuple((int(r.steps), int(r.max_steps)) for r in found if r.steps < r.max_steps)


def prefix_whole(found: list) -> bool:
    """Whether any of ``found`` (prefix-table rows) trained its whole budget."""
    return any(r.steps >= r.max_steps for r in found)


def prefix_evidence(found: list) -> str:
    """How far each judged prefix trained and at which seed ("first 300 of 3,000
    steps": the table's own words)."""
    if not found:
        return "-"
    seeds = ", ".join(map(str, sorted({int(r.seed) for r in found})))
    return (
        "10M paper shape, "
        + "; ".join(f"{IMPL_NAMES[r.impl]} {r.config} {r.trained}" for r in found)
        + f", seed {seeds}"
    )


def seed_range(s: pd.DataFrame) -> str:
    # A range, not a mean: the claims are about every seed, and a mean
    # hides the one left on the floor.
    if s.empty:  # "nan-nan (n=0)" would read as a result
        return "no runs"
    lo, hi = s.best_val_loss.min(), s.best_val_loss.max()
    # "3.339-3.339" says the seeds agree to the digits shown
    if f"{lo:.3f}" == f"{hi:.3f}" and len(s) > 1:
        return f"{lo:.3f} (n={len(s)}, all seeds)"
    return f"{lo:.3f}" if len(s) == 1 else f"{lo:.3f}-{hi:.3f} (n={len(s)})"


def scale_of(ch: RunSet) -> str:
    """``rows.SCALES``' word for a chapter's runs: a stand-in's, or the paper's
    own preset (a retrain on a GPU)."""
    return "stand-in" if ch.stand_in else "paper shape"


def run_evidence(ch: RunSet, s: pd.DataFrame) -> str:
    steps = sorted({int(b) for b in s.budget}) if len(s) else []
    # Seeds as counts, not lists: the most any configuration has, then the configurations with
    # fewer ("8 seeds; FullResidual and NoResidual 3"). One seed in all is named: it is the paper's
    # run, or the one a row rests on.
    if s.empty:
        seeds = "no runs"
    elif s.seed.nunique() == 1:
        seeds = f"seed {s.seed.iloc[0]}"
    else:
        # in the order the runs were read (the plan's)
        counts = s.groupby("config", sort=False).seed.nunique()
        fewer: dict[int, list[str]] = {}
        for config, k in counts[counts < counts.max()].items():
            fewer.setdefault(int(k), []).append(config)
        seeds = "; ".join(
            [
                f"{counts.max()} seeds",
                *(f"{' and '.join(c)} {k}" for k, c in sorted(fewer.items(), reverse=True)),
            ]
        )
    return (
        f"{ch.scale} {'stand-in' if ch.stand_in else 'paper scale'}, "
        f"{'/'.join(f'{b:,}' for b in steps) or '-'} steps, {seeds}"
    )


def early_row(runs, where: str, paper: str):
    def row(c: Claim, ev) -> Row:  # ev: the claims' Evidence
        found = prefix_rows(ev.prefix.table, runs)
        # each run in a few words: where it stands against the floor, and its best
        ours = (
            "; ".join(
                (
                    f"{IMPL_NAMES[r.impl]} {r.config} {paper_shape.where_it_is(r)}, best "
                    f"{r.best_val:.3f}"
                )
                for r in found
            )
            or "no run"
        )
        return Row(
            claim=c.name,
            where=where,
            paper=paper,
            ours=ours,
            scale="paper shape" if found else "none",
            evidence=prefix_evidence(found),
            verdict=c.verdict,
            why=c.why,
            partial=prefix_partial(found),
            whole=prefix_whole(found),
        )

    return row
