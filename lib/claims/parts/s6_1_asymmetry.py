"""§6.1 and Table 5's text: the asymmetry at 10M."""

from __future__ import annotations

import pandas as pd

from ...engine import results
from ...engine.config import PAPER_SEED
from .. import asymmetry, level_10m, paper_shape
from ..evidence import Entry, Evidence, author_values, prefix_reads
from ..paper import paper_value
from ..rows import (
    Row,
    early_row,
    paper_text,
    prefix_evidence,
    prefix_partial,
    prefix_rows,
    prefix_whole,
    run_evidence,
    scale_of,
    seed_range,
)
from ..runset import RunSet
from ..verdicts import Claim

# §6.1 and Table 5's text: the asymmetry at 10M, and FFNOnly on the No Residual floor


def asymmetry_10m(c: Claim, ev: Evidence) -> Row:
    """§6.1 and Fig. 4, Phase 3 (``claims.asymmetry.claim_asymmetry``)."""
    ch, summ = ev.chapter("10m_asymmetry"), ev.summaries("10m_asymmetry")
    # k=k fixes each configuration at its own step: the usual guard
    # against a late-bound loop variable
    a, f = (results.pooled(summ)[lambda s, k=k: s.config == k] for k in ("AttnOnly", "FFNOnly"))
    return Row(
        claim="10M asymmetry: AttnOnly leaves the floor in every seed, FFNOnly in none",
        where="§6.1, Fig. 4, Phase 3",
        # Fig. 4 (Phase 3, the primary 10M estimate of §8.1), not Table 3's original record
        paper=(
            f"AttnOnly {paper_text('Fig. 4', 'AttnOnly')}, FFNOnly "
            f"{paper_text('Fig. 4', 'FFNOnly')}"
        ),
        ours=f"AttnOnly {seed_range(a)}; FFNOnly {seed_range(f)}",
        scale=scale_of(ch),
        evidence=run_evidence(ch, summ),
        # what the row does not judge: the level, which only the paper's shape
        # can (plans.paper_10m_whole)
        verdict=c.verdict,
        why=c.why
        + (
            (
                "; which configurations leave the floor is judged, not the level: Phase 3's "
                f"AttnOnly {paper_text('Fig. 4', 'AttnOnly', seeds=False)} and every seed at least "
                f"{paper_value(ref='abstract Fig. 4a', metric='min_gap_to_floor'):.2f} below the "
                f"FFNOnly floor are for the paper's shape to judge ({_shape_level(ev)})"
            )
            + _shape_ffn(ev)
            if ch.stand_in
            else ""
        ),
        short="the 10M asymmetry",
        section=ASYMMETRY_SECTION,
        plan="10m_asymmetry",
    )


ASYMMETRY_SECTION = "10m_asymmetry#reading-the-result"


def _shape_level(ev: Evidence) -> str:
    """Where the paper's shape judges the level: the level's own row once
    ResidualGPT AttnOnly is trained whole."""
    attn = prefix_rows(ev.prefix.table, [("residualgpt", "AttnOnly")])
    return (
        "the level's own row, on its whole ResidualGPT AttnOnly run"
        if attn and attn[0].steps >= attn[0].max_steps
        else "its whole ResidualGPT AttnOnly run, `--plan 10m_whole`"
    )


def _shape_ffn(ev: Evidence) -> str:
    """Why the paper's shape does not decide the asymmetry's row: its FFNOnly run is a prefix, which
    may still leave the floor (where the runs stand so far is one of the book's own findings)."""
    ffn = prefix_rows(ev.prefix.table, [("residualgpt", "FFNOnly")])
    return (
        ""
        if not ffn or ffn[0].steps >= ffn[0].max_steps
        else (
            f"; at the paper's shape ResidualGPT FFNOnly has trained its {ffn[0].trained}, too few "
            "to say it never leaves the floor, so the stand-in decides this row and the "
            "paper-shape runs are read among the book's own findings, as far as both trained"
        )
    )


def _ffn_parts(ev: Evidence) -> list[tuple[RunSet, pd.DataFrame]]:
    # every scale with both configurations: the 10M stand-in and the 124M stand-in
    return [
        (ev.chapter("10m_asymmetry"), ev.summaries("10m_asymmetry")),
        (ev.chapter("124m_sweep"), ev.sweep_124m()),
    ]


def ffn_equals_noresidual(c: Claim, ev: Evidence) -> Row:
    """Table 5's text (``claims.asymmetry.claim_ffn_equals_noresidual``)."""
    # the paper's numbers from Table 5's text
    ffn, nores = (
        paper_value(ref="Table 5", config=k, metric="best_val_loss")
        for k in ("FFNOnly", "NoResidual")
    )
    gap = paper_value(ref="Table 5 text", metric="gap_to_noresidual")
    return Row(
        claim="FFNOnly collapses to the No Residual floor",
        where="abstract; Table 5 text",
        paper=f"124M: {ffn:.3f} vs {nores:.3f} ({gap:.3f})",
        ours="; ".join(c.lines) or "no runs",
        scale="stand-in",
        evidence=" and ".join(f"{ch.scale} stand-in" for ch, _ in _ffn_parts(ev)),
        verdict=c.verdict,
        why=c.why,
        short="FFNOnly's collapse to the No Residual floor",
        section=ASYMMETRY_SECTION,
        plan="10m_asymmetry",
    )


# The book's own findings at the paper's shape: the prefixes read early in training. The paper gives
# where its runs end, not where they stand then, so these are the book's findings, not the paper's
# claims; the card's rows on the paper's claims at this shape are the joint collapse (where the run
# ends) and Fig. 2a's starvation.


def level_paper_shape(c: Claim, ev: Evidence) -> Row:
    """Fig. 4's level at the paper's exact 10M shape
    (``claims.level_10m.claim_paper_shape_level``): ResidualGPT AttnOnly's best over its whole run
    on the Phase-3 preset, beside the paper's mean and the author's record of seed 1337."""
    found = prefix_rows(ev.prefix.table, [("residualgpt", "AttnOnly")])
    f = c.facts
    ours = (
        "no run"
        if "best" not in f
        else (
            f"AttnOnly best {f['best']:.4f}, {f['diff']:+.4f} from the paper's (allowed "
            f"±{f['band']:.4f})"
        )
        if f["complete"]
        else f"AttnOnly best {f['best']:.3f} over its {f['trained']}"
    )
    return Row(
        claim="AttnOnly's level at the paper's own 10M shape (Fig. 4, Phase 3)",
        where="§6.1, Fig. 4",
        # the author's record of seed 1337 is Table 3's (the original record), not Phase 3's, of
        # which no per-seed record is released
        paper=(
            f"{paper_text('Fig. 4', 'AttnOnly')}, Phase 3; the author's record of seed "
            f"{PAPER_SEED} behind Table 3's mean (the author's 10M ResidualGPT results file): "
            f"{f['author']:.6f} (no per-seed Phase-3 record is released)"
        ),
        ours=ours,
        scale="paper shape" if found else "none",
        evidence=prefix_evidence(found),
        verdict=c.verdict,
        why=c.why,
        short="AttnOnly's 10M level",
        section=ASYMMETRY_SECTION,
        plan="10m_whole",
        partial=prefix_partial(found),
        whole=prefix_whole(found),
    )


def _asymmetry_paper() -> str:
    return (
        f"AttnOnly {paper_text('Fig. 4', 'AttnOnly')}, FFNOnly {paper_text('Fig. 4', 'FFNOnly')} "
        "over 3,000 steps; no step given"
    )


def early_asymmetry(c: Claim, ev: Evidence) -> Row:
    runs = [("residualgpt", "AttnOnly"), ("residualgpt", "FFNOnly")]
    return early_row(runs, "§6.1, Fig. 4", _asymmetry_paper())(c, ev)


# This part's claims, in the order the card, What holds and each chapter's verdict cell print them.
CLAIMS = (
    Entry(
        name="The 10M asymmetry with the author's values",
        ref="§6.1; AttnOnly_seed_stability.ipynb",
        decide=asymmetry.claim_author_values_asymmetry,
        reads=lambda ev: dict(table=author_values(ev).table, floor=ev.floor("10m_asymmetry")),
        row=None,
        section="10m_asymmetry#the-stand-in-with-the-author-s-values",
        card="chapter",
    ),
    Entry(
        name="10M asymmetry: AttnOnly leaves the floor in every seed, FFNOnly in none",
        ref="§6.1, Fig. 4, Phase 3",
        decide=asymmetry.claim_asymmetry,
        reads=lambda ev: dict(
            summaries=ev.summaries("10m_asymmetry"), floor=ev.floor("10m_asymmetry")
        ),
        row=asymmetry_10m,
        section=ASYMMETRY_SECTION,
        card="paper",
    ),
    Entry(
        name="AttnOnly's level at the paper's own 10M shape (Fig. 4, Phase 3)",
        ref="§6.1, Fig. 4",
        decide=level_10m.claim_paper_shape_level,
        reads=prefix_reads,
        row=level_paper_shape,
        section=ASYMMETRY_SECTION,
        card="paper",
    ),
    Entry(
        name="FFNOnly collapses to the No Residual floor",
        ref="abstract; Table 5 text",
        decide=asymmetry.claim_ffn_equals_noresidual,
        reads=lambda ev: dict(parts=[(ch.scale, s) for ch, s in _ffn_parts(ev)]),
        row=ffn_equals_noresidual,
        section=ASYMMETRY_SECTION,
        card="paper",
    ),
    # the ordering at 10M, which the paper does not claim: printed by the 10M
    # chapter only, beside its asymmetry
    Entry(
        name="Ordering and separation at 10M",
        ref="§6.2.1",
        decide=asymmetry.claim_separation,
        reads=lambda ev: dict(
            summaries=ev.summaries("10m_asymmetry"),
            floor=ev.floor("10m_asymmetry"),
            paper_scale=ev.chapter("10m_asymmetry").spec.paper_scale,
        ),
        row=None,
        section=ASYMMETRY_SECTION,
        card="chapter",
    ),
    Entry(
        name="10M asymmetry at the paper's shape, as far as both runs trained",
        ref="§6.1, Fig. 4",
        decide=paper_shape.claim_prefix_asymmetry,
        reads=prefix_reads,
        row=early_asymmetry,
        section=ASYMMETRY_SECTION,
        card="own",
    ),
)
