"""Every claim the book judges, on its front page or in one chapter only, gathered from the parts of
the paper (``all_claims``: ``lib.claims.parts``, one module per part, each holding its claims'
entries, what they read and the rows they show). The front page's card (``scorecard.scorecard``),
the book's own findings (``findings.own_findings``), the chapters' verdict cells (``claims_at``) and
the pinned-verdicts test all iterate this list, so a claim is added by adding its entry to its
part's ``CLAIMS`` (and its row, written beside it) and pinning its verdict.
"""

from __future__ import annotations

import dataclasses

from . import evidence
from .evidence import Entry
from .parts import PARTS
from .rows import Row
from .runset import CHAPTERS, RunSet
from .verdicts import DECIDED, Claim


def all_claims() -> tuple[Entry, ...]:
    """Every claim, in the order the card, What holds and each chapter's verdict cell print them:
    the parts in the paper's order (§4, §4.1, §5.1, §5.2, §6.1, §6.2, §7, then the book's own
    §8 findings), each part's claims in its own order. A stand-in claim with ``beside`` is
    printed on the card beside the paper-shape claim it names, which decides the row; a
    "chapter" claim is printed only by its chapter. Gathered when asked, so that an entry a
    part gains is on the card at once."""
    return tuple(e for part in PARTS for e in part.CLAIMS)


class Evidence(evidence.Evidence):
    """``evidence.Evidence`` that finds a claim by name among every part's (``entry``)."""

    def entry(self, name: str) -> Entry:
        return entry(name)


def entry(name: str) -> Entry:
    """The entry of ``all_claims()`` called ``name``, or the one entry whose name starts with it."""
    found = [e for e in all_claims() if e.name == name] or [
        e for e in all_claims() if e.name.startswith(name)
    ]
    if len(found) != 1:
        raise KeyError(
            f"{len(found)} claims named {name!r}; claims: {', '.join(e.name for e in all_claims())}"
        )
    return found[0]


def card_row(e: Entry, ev: Evidence) -> Row:
    """``e``'s row on the card, its claim decided on ``ev``, linked
    to the section that prints it."""
    row = e.row(ev.claim(e.name), ev)
    # the card's claim text opens with the entry's name: the pinned test and the
    # chapters find it by that name
    if not row.claim.startswith(e.name):
        raise ValueError(f"the row of {e.name!r} names its claim {row.claim!r}")
    return row


def claims_at(section: str, *chapters: RunSet, runs_dir=None) -> list[Claim]:
    """The claims a chapter's verdict cell prints: every entry of ``all_claims()`` decided in
    ``section`` (``page#id``), in the list's order, read from the chapter the notebook opened
    (``chapters``) where it is one of theirs."""
    ev = Evidence(runs_dir, chapters)
    found = [_marked(ev.claim(e.name), e, ev) for e in all_claims() if e.section == section]
    if not found:
        raise KeyError(f"no claim is decided in {section!r}")
    return found


def _marked(c: Claim, e: Entry, ev: Evidence) -> Claim:
    """``c`` marked as decided at a stand-in where it holds or contradicts there
    (``Claim.stand_in``): by its card row's scale, or, for a claim only its chapter
    prints, by its chapter's runs."""
    if c.verdict not in DECIDED:
        return c
    page = e.section.partition("#")[0]
    if e.row is not None:
        at = card_row(e, ev).scale == "stand-in"
    else:
        # a chapter-only claim: its chapter's runs, or a stand-in plan (the bundle,
        # the recipes) where it has none
        at = ev.chapter(page).stand_in if page in CHAPTERS else True
    return dataclasses.replace(c, stand_in=at)
