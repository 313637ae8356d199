"""The scorecard rendered for reading: the front page's summary (``abstract``) and one-line ``tally``, the closing
chapter's prose (``takeaway``), and the card as a styled table (``styled``). Each works on the frame
``lib.scorecard`` computes and decides nothing: the verdicts are the card's."""
from __future__ import annotations

import html
import re

import pandas as pd

from . import verdicts


def takeaway(card: pd.DataFrame) -> str:
    """The closing chapter's prose, computed from the verdicts: what holds, what a valid test contradicts,
    what our setting cannot test and why, what has not been run and what it would cost."""
    def items(v: str, field: str) -> str:
        rows = card[card.verdict == v]
        return "\n".join(f"- **{r.claim}** ({r.where}): {getattr(r, field).rstrip('.')}." for r in rows.itertuples()) \
            or "- none"
    # every word counted, zeros too: "0 CONTRADICTED" is a finding
    counts = ", ".join(f"{(card.verdict == v).sum()} {v}" for v in verdicts.VERDICTS)
    # HOLDS lists what we found (``ours``); every other verdict lists why (``why``)
    return "\n\n".join([
        f"Of the paper's {len(card)} claims checked here: {counts}.",
        "**What holds**, on the evidence named beside each claim:\n" + items("HOLDS", "ours"),
        "**What a valid test contradicts**: the control showed the phenomenon, and the result disagrees with "
        "the paper:\n" + items("CONTRADICTED", "why"),
        "**What cannot be tested here**, and why (these neither confirm nor contradict the paper):\n"
        + items("NOT TESTABLE HERE", "why"),
        # the paper's claims only: the book's own findings are listed apart
        "**Which of the paper's claims have not been run yet**, and what it would take:\n" + items("NOT TESTED", "why"),
    ])


# Only CONTRADICTED is red: the one outcome that speaks against the paper. NOT TESTED is grey and NOT
# TESTABLE HERE italic, so that neither reads as a result.
VERDICT_STYLE = {"CONTRADICTED": "color: #b00020; font-weight: bold", "HOLDS": "font-weight: bold",
                 "NOT TESTABLE HERE": "font-style: italic", "NOT TESTED": "color: #666666"}


def at_stand_in(card: pd.DataFrame) -> pd.Series:
    """Which rows rest on a stand-in (``Row.scale``), whose verdict cell must say it too."""
    return card.scale == "stand-in"


def styled(card: pd.DataFrame, full: pd.DataFrame | None = None):
    """The scorecard for reading: no index column, the verdict styled by its word (only CONTRADICTED in red), and
    a verdict that rests on a stand-in says "at the stand-in" in its own cell. ``full``: the whole card, where
    ``card`` is a selection of its columns without the evidence."""
    source = card if full is None else full
    shown = card.copy()
    # ``full``: a selection without the evidence column (the closing chapter's claim, verdict, why)
    if "verdict" in shown and "scale" in source:
        shown["verdict"] = [f"{v} at the stand-in" if s else v for v, s in zip(card.verdict, at_stand_in(source))]
        # a row decided at the paper's shape names the stand-in's own verdict beside it, which is not counted
        if "stand_in" in source:
            shown["verdict"] = [f"{v} (the stand-in: {_word(n)})" if n else v
                                for v, n in zip(shown.verdict, source.stand_in.fillna(""))]
    # HTML-escaped: a claim such as "Full < every AttnOnly seed" would otherwise open a tag; then `code` (a command,
    # a preset's name, as the chapters' verdict blocks write it in Markdown) becomes <code>, not raw backticks
    return (shown.style.hide(axis="index").format(_cell_html)
            # the style of the word itself, without the suffix
            .map(lambda v: VERDICT_STYLE.get(_word(v), ""), subset=["verdict"])
            .set_properties(**{"text-align": "left", "vertical-align": "top"}))  # sentences, not numbers


def _word(text: str) -> str:
    """The verdict word a cell or a stand-in reading opens with (the longest that fits: NOT TESTED is a prefix of
    NOT TESTABLE HERE)."""
    return max((w for w in verdicts.VERDICTS if text.startswith(w)), key=len, default="")


def _cell_html(value) -> str:
    text = html.escape(str(value))
    return re.sub(r"`([^`]+)`", r"<code>\1</code>", text)


def abstract(card: pd.DataFrame, findings: pd.DataFrame, early: pd.DataFrame | None = None) -> str:
    """The front page's summary, computed from the scorecard and the audit: what holds and at which scale, what
    a valid test contradicts, what cannot be tested on this hardware and why, and what the audit found. ``early``
    (``findings.early_training``): the readings of the paper-shape prefixes early in training, which are the
    book's findings rather than the paper's claims, named after the card's count so they are not counted in it."""
    stand = at_stand_in(card)
    # the rows judged at the paper's own shape (``Row.scale``)
    paper_shape = card.scale == "paper shape"

    def short(claim, cuts=(":", " (")):
        # a claim's name up to the first of ``cuts`` (by default its first colon or bracket): short enough for a
        # sentence
        return re.split("|".join(map(re.escape, cuts)), claim)[0]

    def names(rows):
        return "; ".join(short(r.claim) for r in rows.itertuples()) or "none"
    holds, contra = card[card.verdict == "HOLDS"], card[card.verdict == "CONTRADICTED"]
    # rows decided at the paper's shape with a stand-in reading beside them (scorecard.paper_shape_first)
    beside = card[card.stand_in.fillna("") != ""] if "stand_in" in card else card.iloc[0:0]
    untestable, untested = card[card.verdict == "NOT TESTABLE HERE"], card[card.verdict == "NOT TESTED"]
    # how far the paper-shape runs trained, said with them: a prefix is not the paper's run
    trained = sorted({m.group(0) for e in card.evidence[paper_shape]
                      if (m := re.search(r"first [\d,]+ of [\d,]+ steps", e))})
    return " ".join([
        f"Of the paper's {len(card)} claims checked here, {int(stand.sum())} are judged at CPU stand-ins (smaller "
        f"models than the paper's) and {int(paper_shape.sum())} at the paper's own 10M shape"
        + (f", on the {', '.join(trained)} of its runs." if trained else "."),
        f"{len(holds)} hold ({names(holds)})" + (", all at the stand-in." if stand[holds.index].all() else "."),
        f"{len(contra)} {'is' if len(contra) == 1 else 'are'} contradicted by a valid test ({names(contra)}).",
        *([] if beside.empty else [
            "Where a claim was judged both at the paper's shape and at a stand-in, the paper's shape decides it and "
            "the stand-in's verdict is shown beside it, not counted (" + "; ".join(
                f"{short(r.claim, (' at the paper', ':', ' ('))}: {r.verdict} at the paper's shape, "
                f"{_word(r.stand_in)} at the stand-in" for r in beside.itertuples()) + ")."]),
        f"{len(untestable)} cannot be tested here: the stand-in never showed the phenomenon, our design fixes the "
        f"outcome, or the outcome flips under a rounding-only change; "
        # "0 are not run yet" reads as a count of something; none left says it plainly
        + (f"{len(untested)} {'is' if len(untested) == 1 else 'are'} not decided yet (not run, or still training "
           f"towards the step the claim speaks of)." if len(untested) else "every claim has runs to judge it by."),
        *([] if early is None or early.empty else [
            "Where the paper-shape runs stand by the end of their prefixes, which the paper does not report (it "
            "gives where its runs end; What holds lists these among the book's own findings): " + "; ".join(
                # the sentence names the paper's shape once, so each claim's name stops before it
                f"{short(r.claim, (' at the paper',))} {r.verdict}" for r in early.itertuples()) + "."]),
        f"Reading the paper against the author's notebooks found {len(findings)} discrepancies, listed below: among "
        f"them, no notebook holds the primary 10M estimate, and the notebook whose seeds 42 and 123 match Phase 2 "
        f"trains another learning-rate schedule than Table 1's."])


def tally(card: pd.DataFrame) -> str:
    """The scorecard in one line: how many claims carry each verdict, in the order of ``verdicts.VERDICTS``."""
    counts = card.verdict.value_counts()
    # only the verdicts some claim carries, in VERDICTS order (takeaway counts the zeros)
    return (f"**{len(card)} claims**: " + " · ".join(f"{int(counts[v])} {v}" for v in verdicts.VERDICTS
                                                     if v in counts))
