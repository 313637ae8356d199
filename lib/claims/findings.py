"""What this book finds that the paper does not say: claims of the book's own
(``registry.all_claims()``, card "own"), judged by the same rule (``verdicts.verdict``, through
each chapter's Claim) and printed as the scorecard's rows are, but kept apart from the paper's
claims. What holds lists them; the front page names the early-training readings in one
sentence, outside the card's count."""

from __future__ import annotations

import pandas as pd

from . import schedule_10m
from .registry import Evidence, all_claims, card_row, entry


def own_findings(runs_dir=None) -> pd.DataFrame:
    """What this book finds that the paper does not say: claims of the book's own, judged by the
    same rule, kept apart from the paper's claims (the scorecard)."""
    ev = Evidence(runs_dir)
    return pd.DataFrame([vars(card_row(e, ev)) for e in all_claims() if e.card == "own"])


FIRST_STEPS = schedule_10m.FINDING


def first_steps(runs_dir=None) -> pd.DataFrame:
    """The book's own finding that the front page sets beside the paper's claims
    (``claims.first_steps``), as a one-row card: decided at the paper's 10M shape, the `cpu`
    stand-in's verdict beside it."""
    return pd.DataFrame([vars(card_row(entry(FIRST_STEPS), Evidence(runs_dir)))])
