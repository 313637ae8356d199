"""The scorecard rendered for reading: the front page's reproducibility summary (``summary``: the
answer, the tally by scale and the ML Reproducibility Challenge's six parts), the closing chapter's
prose (``takeaway``), and the card as a styled table (``styled``); ``abstract`` and ``tally`` are
the earlier one-paragraph summary and one-line count. Each works on the frame
``lib.claims.scorecard`` computes and decides nothing: the verdicts are the card's."""

from __future__ import annotations

import html
import itertools
import re

import pandas as pd

from ..claims import verdicts
from ..claims.rows import retrain_command
from ..claims.verdicts import and_list, at_a_stand_in
from ..engine.config import PAPER_SEED, get_preset


def takeaway(card: pd.DataFrame) -> str:
    """The closing chapter's prose, computed from the verdicts: what holds, what a
    valid test contradicts, what our setting cannot test and why, what has not
    been run and what it would cost."""

    def items(v: str, field: str) -> str:
        rows = card[card.verdict == v]

        def where(r):  # a verdict at a stand-in says where, in its own line
            if getattr(r, "scale", "") != "stand-in" or v == "NOT TESTED":
                return r.where
            return r.where + (
                f", {STAND_IN_CONTRADICTED}" if v == "CONTRADICTED" else ", at a stand-in"
            )

        return (
            "\n".join(
                f"- **{r.claim}** ({where(r)}): {getattr(r, field).rstrip('.')}."
                for r in rows.itertuples()
            )
            or "- none"
        )

    # every word counted, zeros too ("0 CONTRADICTED" is a finding), by the scale of the evidence: a
    # stand-in's contradiction is never counted as the word alone
    def counts_at(rows, stand_in):
        words = [
            STAND_IN_CONTRADICTED if stand_in and v == "CONTRADICTED" else v
            for v in verdicts.VERDICTS
        ]
        return ", ".join(
            f"{(rows.verdict == v).sum()} {w}" for v, w in zip(verdicts.VERDICTS, words)
        )

    scales = card.scale if "scale" in card else pd.Series("", index=card.index)
    counts = "; ".join(
        (
            f"{name} ({(scales == scale).sum()}): "
            f"{counts_at(card[scales == scale], scale == 'stand-in')}"
        )
        for scale, name in SCALE_NAMES
        if (scales == scale).any()
    )
    # HOLDS lists what we found (``ours``); every other verdict lists why (``why``)
    return "\n\n".join(
        [
            f"Of the paper's {len(card)} claims checked here: {counts}.",
            "**What holds**, on the evidence named beside each claim:\n" + items("HOLDS", "ours"),
            (
                "**What a valid test contradicts**: the control showed the phenomenon, and the "
                "result disagrees with the paper:\n"
            )
            + items("CONTRADICTED", "why"),
            (
                "**What cannot be tested here**, and why (these neither confirm nor contradict the "
                "paper):\n"
            )
            + items("NOT TESTABLE HERE", "why"),
            # the paper's claims only: the book's own findings are listed apart
            "**Which of the paper's claims have not been run yet**, and what it would take:\n"
            + items("NOT TESTED", "why"),
        ]
    )


# Only CONTRADICTED is red: the one outcome that speaks against the paper. NOT TESTED is grey and
# NOT TESTABLE HERE italic, so that neither reads as a result.
VERDICT_STYLE = {
    "CONTRADICTED": "color: #b00020; font-weight: bold",
    "HOLDS": "font-weight: bold",
    "NOT TESTABLE HERE": "font-style: italic",
    "NOT TESTED": "color: #666666",
}


def at_stand_in(card: pd.DataFrame) -> pd.Series:
    """Which rows rest on a stand-in (``Row.scale``), whose verdict cell must say it too."""
    return card.scale == "stand-in"


def styled(card: pd.DataFrame, full: pd.DataFrame | None = None, retrain: bool = False):
    """The scorecard for reading: no index column, the verdict styled by its word (only CONTRADICTED
    in red), and a verdict that rests on a stand-in says "at a stand-in" in its own cell
    (``at_a_stand_in``). ``full``: the whole card, where ``card`` is a selection of its columns
    without the evidence. Each claim links to the section of the book that decides it
    (``Row.section``); ``retrain``: a last column with the command that retrains its evidence."""
    source = card if full is None else full
    # a selection without the scale would print a stand-in's verdict bare, and its claims unlinked
    if "verdict" in card and "scale" not in source:
        raise ValueError("styled: the card has no 'scale' column; pass the whole card as full=")
    shown = card.copy()
    if "claim" in shown and "section" in source:
        # a Markdown link, turned into HTML by _cell_html; the pages of book/
        # link to each other by file name
        shown["claim"] = [
            f"[{c}]({page}.html#{anchor})" if s else c
            for c, s in zip(shown.claim, source.section.fillna(""))
            for page, _, anchor in [s.partition("#")]
        ]
    if retrain:
        shown["retrain its evidence"] = [
            f"`{retrain_command(p)}`" if p else "-" for p in source.plan.fillna("")
        ]
    # ``full``: a selection without the evidence column (the closing chapter's claim, verdict, why)
    if "verdict" in shown and "scale" in source:
        shown["verdict"] = [
            at_a_stand_in(v) if s else v for v, s in zip(card.verdict, at_stand_in(source))
        ]
        # a row decided at the paper's shape names the stand-in's own verdict
        # beside it, which is not counted
        if "stand_in" in source:
            shown["verdict"] = [
                f"{v} ({at_a_stand_in(_word(n))})" if n else v
                for v, n in zip(shown.verdict, source.stand_in.fillna(""))
            ]
    # HTML-escaped: a claim such as "Full < every AttnOnly seed" would otherwise open a tag; then
    # `code` (a command, a preset's name, as the chapters' verdict blocks write it in Markdown)
    # becomes <code>, not raw backticks
    return (
        shown.style.hide(axis="index")
        .format(_cell_html)
        # the style of the word itself, without the suffix
        .map(lambda v: VERDICT_STYLE.get(_word(v), ""), subset=["verdict"])
        # sentences, not numbers
        .set_properties(**{"text-align": "left", "vertical-align": "top"})
    )


def _word(text: str) -> str:
    """The verdict word a cell or a stand-in reading opens with (the longest that fits: NOT TESTED
    is a prefix of NOT TESTABLE HERE)."""
    return max((w for w in verdicts.VERDICTS if text.startswith(w)), key=len, default="")


def _cell_html(value) -> str:
    text = html.escape(str(value))
    # a whole cell written as a Markdown link ([claim](page.html#section)) becomes a link
    text = re.sub(r"^\[(.+)\]\(([\w.#-]+)\)$", r'<a href="\2">\1</a>', text)
    return re.sub(r"`([^`]+)`", r"<code>\1</code>", text)


def abstract(card: pd.DataFrame, findings: pd.DataFrame) -> str:
    """The front page's abstract, up to six plain sentences computed from the scorecard and the
    audit: what the paper asks; what holds and what a valid test contradicts, at which scale; what
    cannot be tested here (on this hardware, or by the test's design) and why; what waits for runs
    still training; what the audit found. Each claim is named by ``Row.short`` and, where it is not
    decided, with the first clause of its reason."""
    holds, contra = card[card.verdict == "HOLDS"], card[card.verdict == "CONTRADICTED"]
    untestable, untested = (
        card[card.verdict == "NOT TESTABLE HERE"],
        card[card.verdict == "NOT TESTED"],
    )

    def count(rows, one, many):
        return f"{len(rows)} {one if len(rows) == 1 else many}"

    said = set()  # what a stand-in is, said the first time only

    def at_scale(rows) -> str:
        # the claims grouped by where their evidence is, the paper's own shape first
        parts = []
        for scale in ("paper shape", "stand-in"):
            names = list(rows[rows.scale == scale].short)
            if not names:
                continue
            if scale == "paper shape":
                # claims decided by whole runs apart from those read on prefixes, so that neither
                # is taken for the other: "a at the paper's own 10M shape (trained whole); b
                # (first 300 of 3,000 steps)"
                shape = rows[rows.scale == scale]
                # Row.partial lists the runs still short of their budget
                whole = [not p for p in shape.partial]
                if any(whole):
                    parts.append(
                        f"{and_list(list(shape[whole].short))} at the paper's own 10M shape "
                        "(trained whole)"
                    )
                if not all(whole):
                    part = shape[[not w for w in whole]]
                    parts.append(
                        f"{and_list(list(part.short))} at the paper's own 10M shape "
                        f"({_trained(part)})"
                    )
            else:
                parts.append(
                    f"{and_list(names)} at CPU stand-ins"
                    + ("" if said else ", smaller models than the paper's")
                )
                said.add(scale)
        return "; ".join(parts)

    sentences = [
        (
            "The paper, *A Reproducibility Study of Partial Residual Ablations* (Babariya, arXiv "
            "2608.14689), asks what a Pre-LN GPT loses when one of the two skip connections of "
            "every block is removed; this book retrains its models in code you can read and checks "
            f"{len(card)} of its claims."
        ),
        f"{count(holds, 'holds', 'hold')}: {at_scale(holds)}."
        if len(holds)
        else "None of them holds.",
        f"{count(contra, 'is', 'are')} contradicted by a valid test: {at_scale(contra)}."
        if len(contra)
        else "None is contradicted by a valid test.",
        # the two kinds that neither confirm nor contradict, a sentence each:
        # their reasons carry semicolons
        (
            f"{count(untestable, 'cannot', 'cannot')} be tested here, so neither confirm nor "
            f"contradict the paper: {_reasons(untestable)}."
        )
        if len(untestable)
        else "",
        (
            f"{count(untested, 'waits', 'wait')} for runs not yet trained far enough: "
            f"{_reasons(untested)}."
        )
        if len(untested)
        else "",
        (
            f"Read against the author's notebooks, the paper departs from them at {len(findings)} "
            "points, listed below."
        ),
    ]
    return " ".join(s for s in sentences if s)


def _reasons(rows: pd.DataFrame) -> str:
    """Each claim with the first clause of its reason (``DETAIL``), claims whose reasons say the
    same thing together ("a and b (AttnOnly never left the floor in 800 steps)": one reason that
    begins the other's is the same)."""
    groups: dict[str, list[str]] = {}
    for r in rows.itertuples():
        reason = re.split(DETAIL, r.why)[0] + _beside(r)
        same = next((k for k in groups if k.startswith(reason) or reason.startswith(k)), None)
        if same is None:
            groups[reason] = [r.short]
        else:  # the longer reason says more: it names the group
            names = groups.pop(same) + [r.short]
            groups[max(same, reason, key=len)] = names
    return "; ".join(f"{and_list(names)} ({reason})" for reason, names in groups.items())


# Where a reason's first clause ends: what follows is detail the table gives whole
DETAIL = r"; |: |, so |, where |, as "


def _beside(row) -> str:
    """A stand-in's verdict where it differs from the paper shape's that
    decides the row (``Row.stand_in``)."""
    word = _word(getattr(row, "stand_in", "") or "")
    return f"; the stand-in: {word}" if word and word != row.verdict else ""


def _trained(rows: pd.DataFrame) -> str:
    """How far the paper-shape runs behind ``rows`` trained (``Row.partial``), in the prefix table's
    words: "first 1,200 of 3,000 steps", or "first 100 to 1,200 of 3,000 steps" for runs that
    stopped at different steps, after "some runs whole" where some did ("some runs whole, the rest
    their first 300 of 3,000 steps"); empty where every run trained whole."""
    runs = [p for partial in rows.partial for p in partial]
    if not runs:
        return ""
    lo, hi = min(s for s, _ in runs), max(s for s, _ in runs)
    budgets = "/".join(f"{b:,}" for b in sorted({b for _, b in runs}))
    text = (
        f"first {lo:,} of {budgets} steps"
        if lo == hi
        else f"first {lo:,} to {hi:,} of {budgets} steps"
    )
    # beside runs that trained whole (``Row.whole``) the prefixes' steps are not every run's: say so
    whole = "whole" in rows and bool(rows["whole"].fillna(False).astype(bool).any())
    return f"some runs whole, the rest their {text}" if whole else text


def tally(card: pd.DataFrame) -> str:
    """The scorecard in one line: how many claims carry each verdict, in the
    order of ``verdicts.VERDICTS``."""
    counts = card.verdict.value_counts()
    # only the verdicts some claim carries, in VERDICTS order (takeaway counts the zeros)
    return f"**{len(card)} claims**: " + " · ".join(
        f"{int(counts[v])} {v}" for v in verdicts.VERDICTS if v in counts
    )


# --- The reproducibility summary (issue 56): the ML Reproducibility Challenge's six parts, under
# the title ----------

# The claims in the fewest plain words, for the summary's sentences (at most 35 words each): by
# ``Row.short``; a claim not named here is called by its ``short``.
TERSE = {
    "layer-0 gradient starvation": "gradient starvation",
    "the order of hidden-state growth": "the growth order",
    # ResidualGPT's: after "nanoGPT AttnOnly's collapse", "AttnOnly's level" read as nanoGPT's
    "AttnOnly's 10M level": "ResidualGPT AttnOnly's level",
    "AttnOnly's seed sensitivity at 124M": "124M seed sensitivity",
    "cross-position routing": "routing",
    "the 124M ordering": "the 124M ordering",
}

# What a verdict says in a sentence of the summary, by scale: a stand-in's
# CONTRADICTED never reads alone.
SAID = {
    "HOLDS": ("holds", "hold"),
    "CONTRADICTED": ("is contradicted", "are contradicted"),
    # one word fewer than "cannot be tested here": the answer names what holds and what cannot be
    # tested in its 35 words
    "NOT TESTABLE HERE": ("is untestable here", "are untestable here"),
    "NOT TESTED": ("waits for longer runs", "wait for longer runs"),
}
STAND_IN_CONTRADICTED = "contradicted at a stand-in"
# a stand-in's claim whose planned runs are still training
WAITING = ("waits for its runs", "wait for their runs")

# The scales a card's rows rest on, as the tally and the closing chapter name
# them, the paper's own shape first.
SCALE_NAMES = (
    ("paper shape", "at the paper's own 10M shape"),
    ("stand-in", "at CPU stand-ins"),
    ("none", "not run"),
)

PARTS = (
    "Scope of reproducibility",
    "Methodology",
    "Results",
    "What was easy",
    "What was difficult",
    "Communication with the original authors",
)


def _terse(rows: pd.DataFrame) -> str:
    # the joint collapse at the paper's shape, under whichever runs name it: "nanoGPT AttnOnly's
    # collapse"
    return and_list(
        [TERSE.get(s, s.replace("'s joint collapse", "'s collapse")) for s in rows.short]
    )


def _counted(rows: pd.DataFrame, stand_in: bool) -> str:
    """ "of 4 claims 3 hold and 1 waits for longer runs", in ``VERDICTS`` order; at a stand-in, "3
    are contradicted at a stand-in"."""
    parts = []
    for v in verdicts.VERDICTS:
        n = int((rows.verdict == v).sum())
        if n:
            said = (
                f"{'is' if n == 1 else 'are'} {STAND_IN_CONTRADICTED}"
                if stand_in and v == "CONTRADICTED"
                else SAID[v][n != 1]
            )
            parts.append(f"{n} {said}")
    return f"of {len(rows)} claims {and_list(parts)}" if parts else "no claim is judged"


def answer(card: pd.DataFrame, finding: pd.Series, limit: int = 35) -> str:
    """The summary's first sentence: which claims hold at the paper's own 10M shape, which cannot
    be tested here, and what the book's own finding (``finding``, its row) says of the two
    puzzles, at the scale that decides it. The claims are named where that fits in ``limit``
    words, and counted where it does not."""
    shape = card[card.scale == "paper shape"]
    holds, untestable = shape[shape.verdict == "HOLDS"], card[card.verdict == "NOT TESTABLE HERE"]
    # a stand-in's claim still training (the 124M sweep's seeds): neither held
    # nor untestable, so said apart
    pending = card[(card.verdict == "NOT TESTED") & (card.scale != "paper shape")]

    def said(rows, named: bool, verb: tuple[str, str]) -> str:
        n = len(rows)
        if named:
            return f"{_terse(rows)} {verb[n != 1]}"
        # counted after "At the paper's 10M shape": claims that rest on stand-ins say so, lest
        # they read as the paper's shape's (in the words "here" took)
        if n and rows.scale.eq("stand-in").all():
            return f"{n} stand-in claim{'s' if n != 1 else ''} {verb[n != 1].removesuffix(' here')}"
        return f"{n} claim{'s' if n != 1 else ''} {verb[n != 1]}"

    candidates = []
    # the most named first; the claims still training are the first to be counted rather than
    # named, and the puzzles said shorter before any claim is
    for (own, named_holds, named_cannot, named_waiting), puzzles in itertools.product(
        (
            ("own ", True, True, True),
            ("", True, True, True),
            ("own ", True, True, False),
            ("", True, True, False),
            ("own ", True, False, False),
            ("", True, False, False),
            ("", False, False, False),
            # the last resort: the claims still training left to the tally just below
            ("", False, False, None),
        ),
        _puzzles(finding),
    ):
        first = (
            f"At the paper's {own}10M shape, {said(holds, named_holds, SAID['HOLDS'])}"
            if len(holds)
            else f"At the paper's {own}10M shape no claim holds yet"
        )
        cannot = (
            f"; {said(untestable, named_cannot, SAID['NOT TESTABLE HERE'])}"
            if len(untestable)
            else ""
        )
        waiting = (
            f"; {said(pending, named_waiting, WAITING)}"
            if len(pending) and named_waiting is not None
            else ""
        )
        candidates.append(f"{first}{cannot}{waiting}; {puzzles}.")
    return _fit(candidates, limit)


def _fit(candidates: list[str], limit: int = 35) -> str:
    """The first of ``candidates`` (the most named first) within ``limit`` words, else the last."""
    return next((c for c in candidates if len(c.split()) <= limit), candidates[-1])


def _puzzles(finding: pd.Series) -> list[str]:
    """What the book's own finding says of the two puzzles, in full and short: what its
    paper-shape runs show of each (``Row.puzzles``, ``schedule_10m.puzzle_clauses``). Never the
    stand-in's: it is a candidate only, its rates are not the paper's."""
    said = list(finding.get("puzzles") or ())
    if not said:
        raise ValueError(f"{finding.claim!r} carries no puzzle clauses (Row.puzzles)")
    return said


def summary_parts(
    card: pd.DataFrame, finding: pd.Series, findings: pd.DataFrame, compute: dict
) -> dict[str, str]:
    """The six parts (``PARTS``), one to three sentences each, computed from the card (the paper's
    claims), the book's own finding (its row), the audit of the author's notebooks (``findings``)
    and ``compute``: ``runs``, ``hours``, ``at_shape`` (runs at the paper's 10M shape), ``whole``
    (of them, those trained every step of their schedule), ``threads``,
    ``gpu`` (runs on a GPU), ``whole_hours`` (one whole 10M run here:
    ``limitations.whole_run_hours``) and ``constant`` (whether the author's Phase-2 notebook trains
    at a constant rate)."""
    shape, stand = card[card.scale == "paper shape"], card[card.scale == "stand-in"]
    # every run behind the claim trained whole (none still short of its budget, ``Row.partial``)
    whole = (
        shape[shape.partial.map(len).eq(0) & shape.verdict.eq("HOLDS")]
        if "partial" in shape
        else shape[:0]
    )
    machine = (
        f"{compute['gpu']} on a GPU, the rest" if compute.get("gpu") else "all"
    ) + f" on CPUs of {compute['threads']} threads"
    return {
        PARTS[0]: (
            "The paper claims that removing the attention skip collapses a Pre-LN GPT onto the No "
            f"Residual floor, and removing the FFN skip does not. We check {len(card)} of its "
            "claims, and two puzzles it leaves open: nanoGPT's joint collapse and the Phase-2 seed "
            "left on the floor."
        ),
        PARTS[1]: (
            "We reimplemented the author's two implementations, nanoGPT and ResidualGPT, in one "
            "tested codebase and retrained them: at the paper's 10M shape where a CPU allows it, "
            f"at smaller stand-ins elsewhere. Compute: {compute['runs']} runs, "
            f"{compute['hours']:,.0f} hours, {machine}; {compute['at_shape']} runs at the paper's "
            # most runs at the paper's shape are prefixes: how many trained every step (a hostile
            # read took the count as that many paper-scale runs)
            f"10M shape, {compute['whole']} of them whole."
        ),
        PARTS[2]: " ".join(
            [
                f"At the paper's 10M shape, {_counted(shape, False)}.",
                *_finding_results(finding, f"At CPU stand-ins, {_counted(stand, True)}"),
            ]
        ),
        PARTS[3]: (
            "The four configurations are two switches on one block, and Table 1 with the author's "
            "notebooks gives most settings."
        )
        + (
            " "
            + _fit(
                [
                    (
                        # the whole-run plan trains the paper's one seed (plans.paper_10m_whole)
                        f"Trained whole at the paper's shape on seed {PAPER_SEED}, {names} "
                        f"{SAID['HOLDS'][len(whole) != 1]} as the paper reports{optimiser}."
                    )
                    for names in (_terse(whole), f"{len(whole)} claims")
                    # a hostile read took "as the paper reports" for Table 1's optimiser
                    for optimiser in ((_nanogpt_optimiser(),) if "nanoGPT" in _terse(whole) else ())
                    + ("",)
                ]
            )
            if len(whole)
            else ""
        ),
        PARTS[4]: (
            _whole_run(*compute["whole_hours"]) + ", so most "
            "claims rest on stand-ins and 124M is out of reach. At the stand-ins, whether AttnOnly "
            "leaves the floor turns on small things, such as the seed, so one run per setting can "
            "mislead. The paper leaves the initialisation and §5.1's gain target unstated, and no "
            "notebook holds Phase 3, so those are our choices."
        ),
        PARTS[5]: (
            "Nobody was asked; we read the author's released code and notebooks instead. "
            f"They depart from the paper at {len(findings)} points"
        )
        + (
            (
                "; the Phase-2 notebook trains at a constant rate, where Table 1 gives ResidualGPT "
                "a warm-up."
            )
            if compute.get("constant")
            else "."
        ),
    }


def _nanogpt_optimiser() -> str:
    """ " (nanoGPT on its notebook's recipe, not Table 1's)" where the 10M presets give nanoGPT
    another optimiser or schedule than Table 1's, which ResidualGPT's preset follows (the audit:
    the nanoGPT notebook trains with AdamW's defaults, no clipping, at a constant rate); empty where
    they agree. In brackets, so it is not read as what the paper reports."""
    nano, table1 = (get_preset("10M", i).train for i in ("nanogpt", "residualgpt"))
    fields = ("beta2", "weight_decay", "decay_all", "grad_clip", "schedule", "warmup_steps")
    if all(getattr(nano, f) == getattr(table1, f) for f in fields):
        return ""
    return " (nanoGPT on its notebook's recipe, not Table 1's)"


def _verb(word: str) -> str:
    """A verdict as the verb of a sentence: "HOLDS", "is NOT TESTED"."""
    return word if word == "HOLDS" else f"is {word}"


def _finding_results(finding: pd.Series, stand_ins: str) -> tuple[str, str]:
    """The Results' two sentences on the book's own finding, the paper's shape first, which
    outranks a stand-in: its verdict there, with each implementation's where they differ (the
    combined verdict alone would hide a part that holds); then ``stand_ins`` (the stand-ins' count
    of the paper's claims) with the stand-in's verdict of the finding and where it holds, as much
    as fits in 35 words."""
    rungs = finding.get("rungs") or ()
    split = (
        ": " + ", ".join(f"{word} for {impl}" for impl, word in rungs)
        if len({word for _, word in rungs}) > 1
        else ""
    )
    shape = (
        "Our finding that the first steps' learning rate decides whether and when AttnOnly leaves "
        "the floor "
        f"{_verb(finding.verdict)} at the paper's shape{split}."
    )
    beside = _word(finding.stand_in or "")
    limit = (
        f", {finding.stand_in_limit}" if beside == "HOLDS" and finding.get("stand_in_limit") else ""
    )
    there = f"; our finding {_verb(beside)} there" if beside else ""
    return shape, _fit([f"{stand_ins}{there}{limit}.", f"{stand_ins}{there}.", f"{stand_ins}."])


def _whole_run(lo: float, hi: float, measured: bool) -> str:
    """What one whole 10M run takes here: the released ones' range, or the estimate before any."""
    if not measured:
        return f"One whole 10M run would take about {lo:,.0f} hours here"
    took = f"{lo:.1f}" if round(lo, 1) == round(hi, 1) else f"{lo:.1f} to {hi:.1f}"
    return f"A whole 10M run took {took} hours here"


def summary(card: pd.DataFrame, finding: pd.Series, findings: pd.DataFrame, compute: dict) -> str:
    """The front page's opening, in Markdown: the answer (``answer``) and the tally by scale
    (``tally_by_scale``), which a reader sees on the first screen, then the six parts
    (``summary_parts``), each a paragraph opening with its name in bold."""
    parts = summary_parts(card, finding, findings, compute)
    return "\n\n".join(
        [
            f"**{answer(card, finding)}**",
            tally_by_scale(card),
            *(f"**{name}.** {text}" for name, text in parts.items()),
        ]
    )


def tally_by_scale(card: pd.DataFrame) -> str:
    """The tally split by the scale of its evidence: the paper's own 10M shape first,
    then the CPU stand-ins (a stand-in's CONTRADICTED reads "contradicted at a
    stand-in"), then any claim with no run."""
    out = []
    for scale, name in ((s, n[0].upper() + n[1:]) for s, n in SCALE_NAMES):
        rows = card[card.scale == scale]
        if len(rows):
            counts = rows.verdict.value_counts()
            words = [
                f"{int(counts[v])} "
                + (STAND_IN_CONTRADICTED if scale == "stand-in" and v == "CONTRADICTED" else v)
                for v in verdicts.VERDICTS
                if v in counts
            ]
            out.append(
                f"**{name}** ({len(rows)} claim{'s' if len(rows) != 1 else ''}): "
                + " · ".join(words)
            )
    return ". ".join(out) + "."


def sentences(text: str) -> list[str]:
    """``text``'s sentences (Markdown emphasis dropped), split after a full stop followed by a
    space: what the summary's 35-word limit counts."""
    plain = re.sub(r"\*\*|`", "", text)
    return [s for s in re.split(r"(?<=[.!?])\s+", plain) if s.strip()]
