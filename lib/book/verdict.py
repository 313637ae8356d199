"""The verdict block at the end of a chapter: each claim's verdict first (the bold word is the Claim's own,
``lib.verdicts.Claim``), what it rests on folded beneath it."""
from __future__ import annotations

import html

from ..verdicts import VERDICTS, Claim

HEADING = "Verdict, computed from the runs above when this page was built:"
SHOWN_READING_LINES = 4  # a reading longer than this shows its first lines and folds the rest


class Verdict:
    """The chapters' computed verdicts, shown as a highlighted block in the built book.

    Each claim is a ``lib.verdicts.Claim`` from a ``lib.chapters`` claim function. In the book (HTML) its verdict
    line comes first, one sentence: its name, its verdict word (``Claim.verdict``, one of the four) in bold, and
    what it rests on; the lines the claim computed fold beneath, under "what it rests on". A plain string is a
    reading, a measurement that judges nothing (the ladder of floors, the probes), and may not carry a verdict
    word: a verdict is decided in a claim function, never inside a sentence; a long reading shows its first
    ``SHOWN_READING_LINES`` lines and folds the rest. ``short``: a chapter's closing summary, each claim's
    verdict line without its lines, each reading's first line. As markdown and in a terminal every line is
    printed in order, the lines above their verdict.
    """

    def __init__(self, *claims: Claim | str, short: bool = False):
        for c in claims:
            if not isinstance(c, Claim) and (words := [w for w in VERDICTS if w in c]):
                raise ValueError(f"a plain string carries the verdict word {words[0]!r}: decide it in a claim "
                                 f"function that returns a lib.verdicts.Claim ({c[:80]!r})")
        self.claims = tuple(c if isinstance(c, Claim) or not short else c.splitlines()[0] for c in claims)
        self.short = short
        self.lines = [line for claim in self.claims for line in self._lines(claim) if line.strip()]

    def _lines(self, claim, bold: str = "") -> list[str]:
        if not isinstance(claim, Claim):
            return claim.splitlines()
        return [self._verdict_line(claim, bold)] if self.short else [*claim.lines, self._verdict_line(claim, bold)]

    @staticmethod
    def _verdict_line(claim: Claim, bold: str = "") -> str:
        return f"{claim.head}{bold}{claim.verdict}{bold}: {claim.why}"

    def __repr__(self) -> str:
        return "\n".join(self.lines)

    def _repr_markdown_(self) -> str:
        body = "\n".join(f"> {line}  " for claim in self.claims for line in self._lines(claim, bold="**")
                         if line.strip())
        return f"> **{HEADING}**\n>\n{body}\n"

    def _repr_html_(self) -> str:
        from markdown_it import MarkdownIt
        md = MarkdownIt("commonmark")

        def inline(text: str) -> str:  # the lines are markdown (bold names, code); one paragraph each
            return md.renderInline(text)

        def block(lines: list[str]) -> str:  # "- " lines (a reading's per-model list) as a list, others as text
            out, items = [], []
            for line in [*lines, ""]:
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
            body = block([line if line.startswith("- ") else f"- {line}" for line in lines if line.strip()])
            return f'<details class="verdict-detail"><summary>{html.escape(summary)}</summary>{body}</details>'

        parts = [f"<p>{inline(f'**{HEADING}**')}</p>"]
        for claim in self.claims:
            if isinstance(claim, Claim):
                parts.append(f"<p>{inline(self._verdict_line(claim, bold='**'))}</p>")
                if claim.lines and not self.short:
                    parts.append(folded("What it rests on", list(claim.lines)))
                continue
            lines = [line for line in claim.splitlines() if line.strip()]
            parts.append(block(lines[:SHOWN_READING_LINES]))
            if len(lines) > SHOWN_READING_LINES:
                parts.append(folded("The rest of this reading", lines[SHOWN_READING_LINES:]))
        return f'<blockquote class="verdict">{"".join(parts)}</blockquote>'
