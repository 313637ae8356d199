"""§5.1: the runtime gain."""

from __future__ import annotations

import pandas as pd

from ...engine import gain
from ...engine.config import PAPER_SEED
from ...engine.thresholds import ABSORB_STEP
from .. import gain_confound
from ..evidence import Entry, Evidence
from ..paper import paper_value
from ..rows import Row, run_evidence, scale_of
from ..verdicts import Claim

# §5.1: the runtime gain, in two parts: (a) does a runtime gain decide whether AttnOnly leaves the
# floor, (b) do the runtime curves that leave it coincide


def _gain_table(ev: Evidence) -> pd.DataFrame:
    # released runs only: a reader's retrain never changes the front page (the
    # chapter reads a retrain on its own)
    def make():
        summ = ev.summaries("gain_confound")
        return (
            gain.gain_table(summ[summ.source == "released"]) if len(summ) else gain.gain_table(summ)
        )

    return ev._get("gain_confound.table", make)


def _gain_curves(ev: Evidence) -> pd.DataFrame:
    def make():
        curves = ev.chapter("gain_confound").gain_curves()
        return curves[curves.source == "released"] if "source" in curves else curves

    return ev._get("gain_confound.curves", make)


def _gain_seeds(ev: Evidence) -> dict:
    # the runtime gains at the other seeds (plans.gain_seeds), released
    # runs only, on the chapter's floor
    return ev._get("gain_confound.seeds", lambda: ev.chapter("gain_confound").gain_seeds())


def _gain_absorbed_reads(ev: Evidence) -> dict:
    curves, floor = _gain_curves(ev), ev.floor("gain_confound")
    # the spreads computed once, so the row prints the very numbers the claim judges
    return dict(
        curves=curves,
        floor=floor,
        bound=paper_value(ref="§5.1", metric="runtime_gain_spread"),
        spreads=gain_confound.gain_spreads(curves, floor),
        twins=gain_confound.twin_curves(ev.chapter("gain_confound").released_dir),
        others=_gain_seeds(ev),
    )


def _other_seeds(c: Claim) -> str:
    """(a)'s outcome at the seeds beyond 1337, as the row prints it."""
    return "".join(
        (
            f"; seed {k}: left at g = {', '.join(f'{g:g}' for g in v['left']) or 'none'}, stayed "
            f"at g = {', '.join(f'{g:g}' for g in v['stayed']) or 'none'}"
        )
        for k, v in c.facts.get("by_seed", {}).items()
        if k != PAPER_SEED
    )


def _gain_evidence(c: Claim, ev: Evidence) -> str:
    # the chapter's runs (seed 1337), and the seeds whose runtime gains the claim read too
    gc = ev.chapter("gain_confound")
    more = [k for k in c.facts.get("by_seed", {}) if k != PAPER_SEED]
    return (
        run_evidence(gc, ev.summaries(gc.name))
        + (
            (
                f"; the runtime gains also at seed{'s' if len(more) > 1 else ''} "
                f"{', '.join(map(str, more))}"
            )
            if more
            else ""
        )
        # where the gain sits is ours to choose (plans.gain_confound, gain.apply_gain's default)
        + "; ResidualGPT AttnOnly, the gain on the FFN output (§5.1 does not say where)"
    )


def runtime_gain_fate(c: Claim, ev: Evidence) -> Row:
    """§5.1 (a): where each runtime gain's run ends (``claims.gain_confound.claim_gain_fate``)."""
    table = _gain_table(ev)

    # the paper's four gains (g = 1 is the plain run, listed under both modes): left, stayed
    def split(mode):
        e = (
            table[f"escape step ({mode})"].dropna()
            if f"escape step ({mode})" in table
            else pd.Series(dtype=str)
        )
        e = e[e.index.isin(gain.GAINS_PAPER)]
        return (
            e,
            [f"{g:g}" for g, v in e.items() if v != "none"],
            [f"{g:g}" for g, v in e.items() if v == "none"],
        )

    esc, left, stayed = split("runtime")
    # the weight-level gains beside them: whether the runtime-versus-weight-level distinction §5.1
    # draws changes which gains leave the floor
    w_esc, w_left, w_stayed = split("weight")
    weight = (
        (
            f"; weight-level: left at g = {', '.join(w_left) or 'none'}, stayed at g = "
            f"{', '.join(w_stayed) or 'none'}"
        )
        + (" (the same split)" if (w_left, w_stayed) == (left, stayed) else "")
        if len(w_esc)
        else ""
    )
    gc = ev.chapter("gain_confound")
    return Row(
        claim=(
            f"{_GAIN_FATE} ∈ {{{_PAPER_GAINS}}} are equivalent: none decides whether AttnOnly "
            "leaves the floor"
        ),
        where="§5.1",
        paper="all gain values functionally equivalent",
        ours=(f"seed {PAPER_SEED}: " if _other_seeds(c) else "")
        + (
            f"left the floor at g = {', '.join(left) or 'none'}; stayed at g = "
            f"{', '.join(stayed) or 'none'}"
        )
        + weight
        + _other_seeds(c)
        if len(esc)
        else "no runs",
        scale=scale_of(gc),
        evidence=_gain_evidence(c, ev),
        verdict=c.verdict,
        why=c.why,
        short="that runtime gains are equivalent",
        section=_GAIN,
        plan="gain_confound",
    )


def runtime_gain_absorbed(c: Claim, ev: Evidence) -> Row:
    """§5.1 (b): whether the curves across the runtime gains coincide
    (``claims.gain_confound.claim_gain_absorbed``, against the rounding-only twins' null)."""
    gc = ev.chapter("gain_confound")
    # §5.1: "total spread < 0.002 at any step"
    bound = paper_value(ref="§5.1", metric="runtime_gain_spread")
    return Row(
        claim="(b) Loss curves across all runtime gains overlap completely",
        where="§5.1",
        paper=f"spread < {bound} at any step",
        # from ABSORB_STEP: §5.1 says AdamW absorbs the gain "within ≈200 steps"
        ours=f"spread from step {ABSORB_STEP} across the four runtime gains {f['spread']:.4f}"
        + (
            f"; among those that left the floor {f['spread_left']:.4f}"
            if f["spread_left"] is not None
            else ""
        )
        + (
            f"; rounding-only twin {f['null']:.4f}"
            if f["null"] is not None
            else "; rounding null not measured"
        )
        + "".join(f"; seed {k} {sp:.4f}" for k, sp in f["by_seed"].items() if k != PAPER_SEED)
        if (f := c.facts)
        else "-",
        scale=scale_of(gc),
        evidence=_gain_evidence(c, ev),
        verdict=c.verdict,
        why=c.why,
        short="that the runtime-gain curves overlap",
        section=_GAIN,
        plan="gain_twins",
    )


_GAIN = "gain_confound#reading-the-result"


_PAPER_GAINS = ", ".join(f"{g:g}" for g in gain.GAINS_PAPER)


_GAIN_FATE = "(a) Runtime gains g"


# This part's claims, in the order the card, What holds and each chapter's verdict cell print them.
CLAIMS = (
    Entry(
        name=_GAIN_FATE,
        ref="§5.1",
        decide=gain_confound.claim_gain_fate,
        reads=lambda ev: dict(table=_gain_table(ev), others=_gain_seeds(ev)),
        row=runtime_gain_fate,
        section=_GAIN,
        card="paper",
    ),
    Entry(
        name="(b) Loss curves across all runtime gains overlap completely",
        ref="§5.1",
        decide=gain_confound.claim_gain_absorbed,
        reads=_gain_absorbed_reads,
        row=runtime_gain_absorbed,
        section=_GAIN,
        card="paper",
    ),
)
