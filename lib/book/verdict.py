"""The verdict block at the end of a chapter: renders each claim's lines and its verdict, the bold word being
the Claim's own (``lib.verdicts.Claim``)."""
from __future__ import annotations

from ..verdicts import VERDICTS, Claim


class Verdict:
    """The chapters' computed verdicts, shown as a highlighted block in the built book.

    Each claim is a ``lib.verdicts.Claim`` from a ``lib.chapters`` claim function: its lines, then its verdict word
    (``Claim.verdict``, one of the four) in bold with what it rests on. A plain string is a claim still decided
    inside its own sentence: the first of the four words it contains is set in bold. Rendered as markdown by the
    book, as plain text in a terminal.
    """

    def __init__(self, *claims: Claim | str):
        self.claims = claims
        self.lines = [line for claim in claims
                      for line in (claim.text if isinstance(claim, Claim) else claim).splitlines() if line.strip()]

    def __repr__(self) -> str:
        return "\n".join(self.lines)

    def _repr_markdown_(self) -> str:
        def lines(claim):
            if isinstance(claim, Claim):
                return [*claim.lines, f"{claim.head}**{claim.verdict}**: {claim.why}"]
            return [bold(line) for line in claim.splitlines()]

        def bold(line: str) -> str:  # a claim still decided inside its sentence: its first verdict word
            for word in sorted(VERDICTS, key=len, reverse=True):
                if word in line:
                    return line.replace(word, f"**{word}**", 1)
            return line
        body = "\n".join(f"> {line}  " for claim in self.claims for line in lines(claim) if line.strip())
        return f"> **Verdict, computed from `runs/` when this page was built:**\n>\n{body}\n"
