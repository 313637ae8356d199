"""The four verdict words and the one rule that chooses among them. Every claim the book judges ends
here: a chapter decides what its evidence shows (runs, the phenomenon, agreement, a knife-edge, a
by-design outcome) and this rule turns that into the word the reader sees."""

from __future__ import annotations

import dataclasses
import functools
from dataclasses import dataclass, field

# STYLE rule 9's four words, in the order the scorecard tallies them. A chapter never types
# one into a sentence: lib.book.verdict refuses a plain string that carries one, so every
# verdict the reader sees is a Claim's.
VERDICTS = ("HOLDS", "CONTRADICTED", "NOT TESTABLE HERE", "NOT TESTED")
# the two words that decide a claim, and so say where they were decided
DECIDED = VERDICTS[:2]


@dataclass(frozen=True)
class Claim:
    """One claim as a chapter decided it: the verdict (one of ``VERDICTS``, chosen by ``verdict``),
    what it rests on (``why``, one clause the scorecard prints too), the numbers behind it
    (``facts``, what tests pin) and the lines the chapter prints above the verdict. The chapter and
    the front page render the same object, so they cannot disagree."""

    verdict: str
    # one clause on purpose: the scorecard (the front page's table) prints it in its own column
    why: str
    facts: dict = field(default_factory=dict)
    lines: tuple[str, ...] = ()
    name: str = ""  # what is claimed, in a few words (set by ``claim``)
    # decided at a stand-in: a HOLDS or CONTRADICTED then reads "HOLDS at a stand-in" (``word``),
    # never alone (the other two words say already that nothing was decided)
    stand_in: bool = False

    def __post_init__(self):
        # a misspelt word ("HOLD") would otherwise reach the page and escape the scorecard's tally
        if self.verdict not in VERDICTS:
            raise ValueError(f"verdict {self.verdict!r} is not one of {', '.join(VERDICTS)}")

    @property
    def head(self) -> str:
        """The verdict line's opening: the claim's name, if it has one."""
        return f"{self.name} — " if self.name else ""

    @property
    def word(self) -> str:
        """The verdict as a page writes it: a stand-in's HOLDS or CONTRADICTED
        says where (``at_a_stand_in``)."""
        return (
            at_a_stand_in(self.verdict)
            if self.stand_in and self.verdict in DECIDED
            else self.verdict
        )

    @property
    def text(self) -> str:
        """The claim in plain text: its lines, then its name, the verdict and its reason."""
        return "\n".join([*self.lines, f"{self.head}{self.word}: {self.why}"])


def claim(name: str):
    """Names the Claim a claim function returns (``Claim.name``), so that a verdict block with
    several claims says which verdict is which."""

    def wrap(f):
        @functools.wraps(f)
        def named(*args, **kwargs):
            c = f(*args, **kwargs)
            # A name the function set itself wins, and anything that is not a Claim passes
            # through untouched; the Claim is frozen, so naming it makes a copy rather than
            # changing one another caller holds.
            return dataclasses.replace(c, name=name) if isinstance(c, Claim) and not c.name else c

        return named

    return wrap


def verdict(
    has_runs: bool,
    shows_phenomenon: bool,
    agrees: bool,
    *,
    knife_edge: bool = False,
    by_design: bool = False,
    reached: bool = True,
) -> str:
    """No runs: NOT TESTED; nor, while ``reached`` is False, runs that have not yet trained as far
    as the claim speaks of (a prefix still on the floor of a run whose end the claim is about: it is
    being trained, and its end will decide; or a sweep of seeds not all trained, whose missing seeds
    could still move it). Runs whose control did not show what the claim is about (a Full Residual
    that never left the floor, an AttnOnly that never left it when the claim is about where it
    lands): NOT TESTABLE HERE, whatever else they say; they neither confirm nor contradict. Two more
    cases neither confirm nor contradict, and are NOT TESTABLE HERE:

    * ``by_design``: a test whose outcome our own design fixes is no test (a switch that, by
      construction, cannot change what is trained);
    * ``knife_edge``: a disagreement that the book's own evidence shows flipping under a change that
      should not matter (a rounding-only twin, another seed, another measure of the same quantity,
      another of the paper's environments, which it does not equate) is not a contradiction; an
      agreement on such an edge is a coin that fell one way, so it is not a confirmation either.

    Otherwise HOLDS when the evidence agrees with the paper and
    CONTRADICTED when a valid test disagrees."""
    # The order of the tests is the rule. Missing runs come first: nothing
    # else about them can be known.
    if not has_runs or not reached:
        return "NOT TESTED"
    # Then every reason the test could not have come out either way, before ``agrees`` is read at
    # all, so that a broken control can never yield a HOLDS that happens to agree, nor a
    # CONTRADICTED that happens not to.
    if not shows_phenomenon or by_design or knife_edge:
        return "NOT TESTABLE HERE"
    # Only a valid test gets to contradict the paper; there is no "partly holds",
    # that is written as lines above.
    return "HOLDS" if agrees else "CONTRADICTED"


def and_list(items: list[str]) -> str:
    """``a``, ``a and b``, ``a, b and c``: how a claim's reason lists
    configurations, gains or seeds."""
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def at_a_stand_in(word: str) -> str:
    """A verdict resting on a stand-in, as every page writes it: "CONTRADICTED at a
    stand-in", never the word alone."""
    return f"{word} at a stand-in"
