"""One claim as the front page, the closing chapter and What holds print it (``Row``), and the few helpers that
both the paper's card (``lib.claims.scorecard``) and the book's own findings (``lib.claims.findings``) write their rows
with: the paper's value in words, and the paper-shape prefix rows with how far each trained."""
from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from ..engine.plans import CPU_OPTIONS, PLANS
from . import paper_shape
from .paper import paper_values
from .verdicts import VERDICTS

# What a row's evidence is at: the paper's own model (its 10M or 124M preset), a CPU stand-in, or no runs. The front
# page lays the card out by this field (which rows say "at the stand-in", which count as the paper's shape), never
# by reading the evidence's words.
SCALES = ("paper shape", "stand-in", "none")


# One claim as the front page and the closing chapter print it: each field is a column of the card. Keyword-only,
# so that two swapped strings cannot pass unnoticed.
@dataclass(kw_only=True)
class Row:
    claim: str
    where: str            # the paper's section or table
    paper: str  # the paper's number, with its digits and seeds
    ours: str  # ours, from runs/
    scale: str            # one of SCALES
    evidence: str         # scale and budget of our runs
    verdict: str
    why: str              # what the verdict rests on; for NOT TESTED, what would test it and its cost
    # Where the paper's shape decides the row: the stand-in's own verdict and reading of the same claim, shown beside
    # it and not counted (issue 36: evidence at the paper's shape outranks a stand-in's).
    stand_in: str = ""
    # The claim in a few plain words, for the front page's sentences ("the joint collapse")
    short: str = ""
    # Where the book decides it: a page of book/ and the id of its section ("joint_collapse#reading-the-result")
    section: str = ""
    # The plan of lib.engine.plans whose runs are the evidence: ``retrain_command`` turns it into the line that retrains
    # them
    plan: str = ""
    # How far each paper-shape run behind the row trained, (steps, budget) for each still short of its budget: the
    # front page's abstract says it beside the claims it names
    partial: tuple[tuple[int, int], ...] = ()
    # Whether any of them trained whole, beside those: "first 300 of 3,000 steps" alone would read as every run's
    whole: bool = False

    def __post_init__(self):
        if self.scale not in SCALES:
            raise ValueError(f"scale {self.scale!r} is not one of {', '.join(SCALES)}")
        if self.verdict not in VERDICTS:
            raise ValueError(f"verdict {self.verdict!r} is not one of {', '.join(VERDICTS)}")
        if self.plan and self.plan not in PLANS:
            raise ValueError(f"plan {self.plan!r} is not one of {', '.join(PLANS)}")


def retrain_command(plan: str) -> str:
    """The line that retrains a plan's runs beside the released ones (``runs/`` is never overwritten), with the options
    its released runs were trained with on this CPU (``CPU_OPTIONS``)."""
    return " ".join([f"python -m lib sweep --plan {plan} --runs-dir runs-retrain", *CPU_OPTIONS.get(plan, ())])


def paper_text(ref: str, config: str, digits: int = 3, seeds: bool = True, metric: str = "best_val_loss") -> str:
    """One value of the paper (``data/paper_results.csv``) as the scorecard prints it: ``6.037 ± 0.355 (5
    seeds)``; the standard deviation and the seed count where the paper gives them."""
    # one row per (ref, config, metric) in the paper file
    r = paper_values(ref=ref, config=config, metric=metric).iloc[0]
    # the std at the value's own digits; "(n seeds)" only where the paper's value pools more than one
    text = f"{r.value:.{digits}f}" + (f" ± {r['std']:.{digits}f}" if pd.notna(r["std"]) else "")
    return text + (f" ({int(r.n)} seeds)" if seeds and pd.notna(r.n) and r.n > 1 else "")


# The implementations as the card writes them (the runs' directories spell them in lower case).
IMPL_NAMES = {"nanogpt": "nanoGPT", "residualgpt": "ResidualGPT"}


def prefix_rows(t: pd.DataFrame, runs) -> list:
    """The prefix-table rows of ``runs`` ((implementation, configuration) pairs, each on its own schedule)."""
    return [r for impl, config in runs if len(t) and (r := paper_shape.run_row(t, impl, config)) is not None]


def prefix_partial(found: list) -> tuple[tuple[int, int], ...]:
    """How far each of ``found`` (prefix-table rows) trained, (steps, budget) for each still short of its budget."""
    return tuple((int(r.steps), int(r.max_steps)) for r in found if r.steps < r.max_steps)


def prefix_whole(found: list) -> bool:
    """Whether any of ``found`` (prefix-table rows) trained its whole budget."""
    return any(r.steps >= r.max_steps for r in found)


def prefix_evidence(found: list) -> str:
    """How far each judged prefix trained and at which seed ("first 300 of 3,000 steps": the table's own words)."""
    if not found:
        return "-"
    seeds = ", ".join(map(str, sorted({int(r.seed) for r in found})))
    return "10M paper shape, " + "; ".join(f"{IMPL_NAMES[r.impl]} {r.config} {r.trained}" for r in found) + \
        f", seed {seeds}"
