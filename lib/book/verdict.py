"""The verdict block at the end of a chapter: renders each claim's lines and its verdict, the bold word being
the Claim's own (``lib.verdicts.Claim``)."""
from __future__ import annotations

from ..verdicts import VERDICTS, Claim


class Verdict:
    """The chapters' computed verdicts, shown as a highlighted block in the built book.

    Each claim is a ``lib.verdicts.Claim`` from a ``lib.chapters`` claim function: its lines, then its verdict word
    (``Claim.verdict``, one of the four) in bold with what it rests on. A plain string is a reading, a measurement
    that judges nothing (the ladder of floors, the probes), and may not carry a verdict word: a verdict is decided
    in a claim function, never inside a sentence. ``short``: a chapter's closing summary, each claim's verdict
    line without the lines above it, each reading's first line. Rendered as markdown by the book, as plain text
    in a terminal.
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
        verdict_line = f"{claim.head}{bold}{claim.verdict}{bold}: {claim.why}"
        return [verdict_line] if self.short else [*claim.lines, verdict_line]

    def __repr__(self) -> str:
        return "\n".join(self.lines)

    def _repr_markdown_(self) -> str:
        body = "\n".join(f"> {line}  " for claim in self.claims for line in self._lines(claim, bold="**")
                         if line.strip())
        return f"> **Verdict, computed from `runs/` when this page was built:**\n>\n{body}\n"
