"""The verdict block at the end of a chapter: each claim's verdict first (the bold word is the
Claim's own, ``lib.claims.verdicts.Claim``), what it rests on folded beneath it."""

from __future__ import annotations

import html

from ..claims.verdicts import VERDICTS, Claim

# "when this page was built": the block is recomputed at every build, so
# a newly released run changes it
HEADING = "Verdict, computed from the runs above when this page was built:"
SHOWN_READING_LINES = 4  # a reading longer than this shows its first lines and folds the rest


class Verdict:
    """The chapters' computed verdicts, shown as a highlighted block in the built book.

    Each claim is a ``lib.claims.verdicts.Claim`` from a ``lib.claims`` claim function. In the book
    (HTML) its verdict line comes first, one sentence: its name, its verdict word
    (``Claim.verdict``, one of the four) in bold, and what it rests on; the lines the claim computed
    fold beneath, under "what it rests on". A plain string is a reading, a measurement that judges
    nothing (the ladder of floors, the probes), and may not carry a verdict word: a verdict is
    decided in a claim function, never inside a sentence; a long reading shows its first
    ``SHOWN_READING_LINES`` lines and folds the rest. ``short``: a chapter's closing summary, each
    claim's verdict line without its lines, each reading's first line. As markdown and in a terminal
    every line is printed in order, the lines above their verdict.
    """

    def __init__(self, *claims: Claim | str, short: bool = False):
        for c in claims:
            # Matched in capitals, as the four words are written: a reading may still say "holds"
            # in prose. Refused rather than stripped: a verdict decided inside a sentence would
            # be untested (STYLE rule 9).
            if not isinstance(c, Claim) and (words := [w for w in VERDICTS if w in c]):
                # the message quotes the string's start, so the offending cell can be found
                raise ValueError(
                    f"a plain string carries the verdict word {words[0]!r}: decide it in a claim "
                    f"function that returns a lib.claims.verdicts.Claim ({c[:80]!r})"
                )
        # short keeps a reading's first line here; a Claim is shortened when
        # it is rendered (``_lines``)
        self.claims = tuple(
            c if isinstance(c, Claim) or not short else c.splitlines()[0] for c in claims
        )
        self.short = short
        # the plain-text form: what a terminal prints, and the text/plain output a
        # notebook stores beside the HTML
        self.lines = [line for claim in self.claims for line in self._lines(claim) if line.strip()]

    def _lines(self, claim, bold: str = "") -> list[str]:
        if not isinstance(claim, Claim):
            return claim.splitlines()
        # Nothing folds in plain text or markdown, so the computed lines come first and
        # the verdict line closes them.
        return (
            [self._verdict_line(claim, bold)]
            if self.short
            else [*claim.lines, self._verdict_line(claim, bold)]
        )

    @staticmethod
    def _verdict_line(claim: Claim, bold: str = "") -> str:
        # ``head`` is the claim's name and a dash, or nothing; ``bold`` is "**" in markdown and
        # HTML, "" in plain text the word in bold, and where a stand-in contradicts, "at a
        # stand-in" beside it in plain text
        where = claim.word[len(claim.verdict) :]
        return f"{claim.head}{bold}{claim.verdict}{bold}{where}: {claim.why}"

    def __repr__(self) -> str:
        return "\n".join(self.lines)

    def _repr_markdown_(self) -> str:
        # Two spaces at a line's end are markdown's hard break: each line stays
        # its own line inside the quote.
        body = "\n".join(
            f"> {line}  "
            for claim in self.claims
            for line in self._lines(claim, bold="**")
            if line.strip()
        )
        return f"> **{HEADING}**\n>\n{body}\n"

    def _repr_html_(self) -> str:
        # imported only when a front-end asks for HTML: plain text and
        # the command line never need it
        from markdown_it import MarkdownIt

        md = MarkdownIt("commonmark")  # the lines use bold and code spans only

        # the lines are markdown (bold names, code); one paragraph each
        def inline(text: str) -> str:
            return md.renderInline(text)

        # "- " lines (a reading's per-model list) as a list, others as text
        def block(lines: list[str]) -> str:
            out, items = [], []
            for line in [*lines, ""]:  # the empty line at the end closes a list that ends the block
                if line.startswith("- "):
                    items.append(f"<li>{inline(line[2:])}</li>")
                    continue
                if items:
                    out.append(f"<ul>{''.join(items)}</ul>")
                    items = []
                if line.strip():
                    out.append(f"<p>{inline(line)}</p>")
            return "".join(out)

        def folded(summary: str, lines: list[str]) -> str:
            # every folded line becomes one bullet: the lines a claim
            # computed read as a list of facts
            body = block(
                [line if line.startswith("- ") else f"- {line}" for line in lines if line.strip()]
            )
            # the summary is our own plain text, escaped; book/static/custom.css styles the fold
            return (
                '<details '
                f'class="verdict-detail"><summary>{html.escape(summary)}</summary>{body}</details>'
            )

        parts = [f"<p>{inline(f'**{HEADING}**')}</p>"]
        for claim in self.claims:
            if isinstance(claim, Claim):
                # the verdict sentence stays outside the fold: the word is
                # read without opening anything
                parts.append(f"<p>{inline(self._verdict_line(claim, bold='**'))}</p>")
                if claim.lines and not self.short:
                    parts.append(folded("What it rests on", list(claim.lines)))
                continue
            # blank lines are dropped first, so SHOWN_READING_LINES counts lines that say something
            lines = [line for line in claim.splitlines() if line.strip()]
            parts.append(block(lines[:SHOWN_READING_LINES]))
            if len(lines) > SHOWN_READING_LINES:
                parts.append(folded("The rest of this reading", lines[SHOWN_READING_LINES:]))
        return f'<blockquote class="verdict">{"".join(parts)}</blockquote>'
