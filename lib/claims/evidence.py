"""What a claim is to the book (``Entry``: its name, the paper's reference, the function that
decides it, what that function reads and the card's row) and what every claim reads from the runs,
each thing read once (``Evidence``). The claims themselves are in ``lib.claims.parts``, one module
per part of the paper; ``lib.claims.registry`` gathers them."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import pandas as pd

from . import asymmetry, paper_shape
from .rows import Row
from .runset import RunSet
from .verdicts import Claim

# Which list a claim is printed in: the paper's claims (the front page's card), the book's own
# findings (What holds), or only its chapter's verdict cell.
CARDS = ("paper", "own", "chapter")


@dataclass(frozen=True, kw_only=True)
class Entry:
    """One claim: ``name`` (what its card row's claim opens with), ``ref`` (the paper's section or
    table), ``decide`` (the ``lib.claims`` function), ``reads`` (its arguments, read from an
    ``Evidence``), ``row`` (the card's row, from the decided Claim and the same Evidence; None for a
    claim only its chapter prints), ``section`` (the page and section whose verdict cell prints it,
    which the card links), ``card`` (one of ``CARDS``) and ``beside`` (a stand-in claim shown beside
    the paper-shape claim of that name, which decides the row, ``scorecard.paper_shape_first``, with
    ``more``: the stand-in's further evidence on it)."""

    name: str
    ref: str
    decide: Callable[..., Claim]
    reads: Callable[["Evidence"], dict]
    row: Callable[[Claim, "Evidence"], Row | None] | None
    section: str
    card: str
    beside: str = ""
    # a ``beside`` claim's further stand-in evidence, shown whole
    more: Callable[["Evidence"], str] | None = None

    def __post_init__(self):
        if self.card not in CARDS:
            raise ValueError(f"card {self.card!r} is not one of {', '.join(CARDS)}")


class Evidence:
    """What the claims read, each read once: the chapters' run sets (a notebook's own ``Chapter``,
    which is one, where it passes it, so that its verdict cell reads what its page shows; otherwise
    ``RunSet.of`` the released runs on ``runs_dir``), their summaries, histories and floors, the
    paper-shape prefixes, and each claim as decided (``claim``). ``given``: values that replace what
    would be read (``"joint_collapse.summaries"``, ``"prefix"``), for tests on constructed runs."""

    def __init__(self, runs_dir=None, chapters: tuple[RunSet, ...] = (), given: dict | None = None):
        self.runs_dir = runs_dir
        self._memo = dict(given or {})
        self._chapters = {ch.name: ch for ch in chapters}

    def _get(self, key: str, make: Callable):
        if key not in self._memo:
            self._memo[key] = make()
        return self._memo[key]

    def chapter(self, name: str, scale: str | None = None) -> RunSet:
        """The run set of chapter ``name`` as the book shows it (the released runs), or at another
        of its scales (the 124M chapter's first stand-in)."""
        key = name if scale is None else f"{name}@{scale}"
        if key not in self._chapters:
            self._chapters[key] = RunSet.of(name, self.runs_dir, scale)
        return self._chapters[key]

    def summaries(self, name: str) -> pd.DataFrame:
        return self._get(f"{name}.summaries", lambda: self.chapter(name).summaries())

    def histories(self, name: str) -> pd.DataFrame:
        return self._get(f"{name}.histories", lambda: self.chapter(name).histories())

    def floor(self, name: str) -> float:
        return self._get(f"{name}.floor", lambda: self.chapter(name).floor())

    @property
    def prefix(self):
        """The paper-shape prefixes (``claims.paper_shape.paper_shape_prefix``),
        read once for all their rows."""
        return self._get("prefix", lambda: paper_shape.paper_shape_prefix(self.runs_dir))

    def sweep_124m(self, scale: str | None = None) -> pd.DataFrame:
        """The 124M chapter's summaries at its preset's own budget, at
        its stand-in or at ``scale``."""

        def make():
            ch = self.chapter("124m_sweep", scale)
            s = self.summaries("124m_sweep") if scale is None else ch.summaries()
            return s[s.budget == ch.experiments()[0].train.max_steps]

        return self._get("124m_sweep.at_budget" + (f"@{scale}" if scale else ""), make)

    def sweep_124m_trained(self) -> tuple[int, int]:
        """(runs finished, runs planned) of the 124M chapter's released sweep at its stand-in."""

        def make():
            ch = self.chapter("124m_sweep")
            planned = len(ch.experiments())
            return planned - len(ch.missing()), planned

        return self._get("124m_sweep.trained", make)

    def claim(self, name: str) -> Claim:
        """The claim ``name`` as its function decides it on this evidence."""
        e = self.entry(name)
        return self._get(f"claim:{name}", lambda: e.decide(**e.reads(self)))

    def entry(self, name: str) -> Entry:
        """The entry called ``name``: the registry's ``Evidence`` looks it
        up among every part's claims."""
        raise NotImplementedError("a claim is found by name through lib.claims.registry.Evidence")


def prefix_reads(ev: Evidence) -> dict:
    """The paper-shape prefixes' table, what the claims decided on them read."""
    return dict(table=ev.prefix.table)


def author_values(ev: Evidence):
    """The stand-ins with the author's values (``asymmetry.author_value_runs``),
    read once for both parts' claims."""
    return ev._get("author_values", lambda: asymmetry.author_value_runs(ev.runs_dir))
