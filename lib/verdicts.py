"""The four verdict words and the one rule that chooses among them. Every claim the book judges ends here: a
chapter decides what its evidence shows (runs, the phenomenon, agreement, a knife-edge, a by-design outcome)
and this rule turns that into the word the reader sees."""
from __future__ import annotations

import dataclasses
import functools
from dataclasses import dataclass, field

VERDICTS = ("HOLDS", "CONTRADICTED", "NOT TESTABLE HERE", "NOT TESTED")


@dataclass(frozen=True)
class Claim:
    """One claim as a chapter decided it: the verdict (one of ``VERDICTS``, chosen by ``verdict``), what it rests on
    (``why``, one clause the scorecard prints too), the numbers behind it (``facts``, what tests pin) and the lines
    the chapter prints above the verdict. The chapter and the front page render the same object, so they cannot
    disagree."""
    verdict: str
    why: str
    facts: dict = field(default_factory=dict)
    lines: tuple[str, ...] = ()
    name: str = ""  # what is claimed, in a few words (set by ``claim``)

    def __post_init__(self):
        if self.verdict not in VERDICTS:
            raise ValueError(f"verdict {self.verdict!r} is not one of {', '.join(VERDICTS)}")

    @property
    def head(self) -> str:
        """The verdict line's opening: the claim's name, if it has one."""
        return f"{self.name} — " if self.name else ""

    @property
    def text(self) -> str:
        """The claim in plain text: its lines, then its name, the verdict and its reason."""
        return "\n".join([*self.lines, f"{self.head}{self.verdict}: {self.why}"])


def claim(name: str):
    """Names the Claim a claim function returns (``Claim.name``), so that a verdict block with several claims says
    which verdict is which."""
    def wrap(f):
        @functools.wraps(f)
        def named(*args, **kwargs):
            c = f(*args, **kwargs)
            return dataclasses.replace(c, name=name) if isinstance(c, Claim) and not c.name else c
        return named
    return wrap


def verdict(has_runs: bool, shows_phenomenon: bool, agrees: bool, *, knife_edge: bool = False,
            by_design: bool = False) -> str:
    """No runs: NOT TESTED. Runs whose control did not show what the claim is about (a Full Residual that never
    left the floor, an AttnOnly that never left it when the claim is about where it lands, a prefix still on
    the floor when the claim is about where the run ends): NOT TESTABLE HERE, whatever else they say; they
    neither confirm nor contradict. Two more cases neither confirm nor contradict, and are NOT TESTABLE HERE:

    * ``by_design``: a test whose outcome our own design fixes is no test (a switch that, by construction,
      cannot change what is trained);
    * ``knife_edge``: a disagreement that the book's own evidence shows flipping under a change that should not
      matter (a rounding-only twin, another seed) is not a contradiction; an agreement on such an edge is a
      coin that fell one way, so it is not a confirmation either.

    Otherwise HOLDS when the evidence agrees with the paper and CONTRADICTED when a valid test disagrees."""
    if not has_runs:
        return "NOT TESTED"
    if not shows_phenomenon or by_design or knife_edge:
        return "NOT TESTABLE HERE"
    return "HOLDS" if agrees else "CONTRADICTED"
