"""§7: cross-position routing."""

from __future__ import annotations

from ...engine import plans
from .. import mechanism as routing
from ..evidence import Entry, Evidence
from ..paper import mixer_rule, paper_value
from ..rows import Row
from ..verdicts import Claim

# §7: cross-position routing, as the paper poses it and as this book reads it


def _mixer(ev: Evidence):
    return ev._get("mixer", lambda: routing.mixer_runs(ev.runs_dir))


def routing_paper(c: Claim, ev: Evidence) -> Row:
    """§7.2's local-mixer test as the paper poses it, judged by the author's rule
    (``claims.mechanism. claim_routing_by_author_rule``), at the `cpu`
    stand-in (book/mechanism.ipynb)."""
    claim = f"{_ROUTING_PAPER} by a position-blind mixer, AttnOnly collapses"
    paper_mixer = paper_value(ref="§7.2", metric="mixer_best_val_loss")
    paper = f"not tested cleanly (AttnOnly + mixer {paper_mixer:.3f} in the anomalous Phase 2)"
    runs = _mixer(ev)
    if c.facts["reading"] is None:  # no AttnOnly run with the mixer yet
        return Row(
            claim=claim,
            where="§7.1-7.2",
            paper=paper,
            ours="no runs",
            scale="none",
            evidence="-",
            verdict=c.verdict,
            why=c.why,
            **_ROUTING,
        )
    am = c.facts["attn_mixer"]
    steps = plans.mixer_test()[0].train.max_steps  # the plan's own budget (1,500 steps at `cpu`)
    seeds = sorted(
        set(runs.table[(runs.table.mixer == "local") & (runs.table.config == "AttnOnly")].seed)
    )
    return Row(
        claim=claim,
        where="§7.1-7.2",
        paper=paper,
        ours=(
            f"AttnOnly + mixer {min(am):.3f}-{max(am):.3f} (n={len(am)}): "
            f"\"{c.facts['reading']}\" by the author's rule"
        ),
        scale="stand-in",
        evidence=f"`cpu` stand-in, {steps:,} steps, seeds {', '.join(map(str, seeds))}",
        verdict=c.verdict,
        why=c.why,
        **_ROUTING,
    )


_MECHANISM = "mechanism#the-paper-s-local-mixer-test-under-clean-conditions"


_ROUTING = dict(short="cross-position routing", section=_MECHANISM, plan="mixer_test")


_ROUTING_PAPER = "Cross-position routing (§7.1): with attention replaced"


def _routing_paper_reads(ev: Evidence) -> dict:
    # the bigram floor on the fixed batches: no position-blind model can go below it on
    # this data; §7.2's mixer value is 10M on the same characters, so it is placed
    # against the same bigram floor
    return dict(
        table=_mixer(ev).table,
        rule=mixer_rule(),
        bigram_floor=routing.like_for_like(routing.floors(orders=(1, 2)))[2],
        paper_mixer=paper_value(ref="§7.2", metric="mixer_best_val_loss"),
    )


def mechanism(c: Claim, ev: Evidence) -> Row:
    """The book's own reading of routing (not the paper's claim), at the `cpu` stand-in
    (book/mechanism.ipynb): listed under what this book finds that the paper does not say."""
    claim = _ROUTING_OWN
    paper_mixer = paper_value(ref="§7.2", metric="mixer_best_val_loss")
    paper = f"not tested cleanly (AttnOnly + mixer {paper_mixer:.3f} in the anomalous Phase 2)"
    runs = _mixer(ev)
    # NOT TESTED although some mixer runs exist: the AttnOnly one is missing, and
    # the claim's first line says so
    if c.verdict == "NOT TESTED" and not runs.table[runs.table.mixer == "local"].empty:
        return Row(
            claim=claim,
            where="§7.1-7.2",
            paper=paper,
            ours=c.lines[0] if c.lines else "no AttnOnly run with the mixer",
            scale="stand-in",
            evidence="`cpu` stand-in",
            verdict=c.verdict,
            why=c.why + " (`python -m lib sweep --plan mixer_test`)",
        )
    if c.verdict == "NOT TESTED":
        return Row(
            claim=claim,
            where="§7.1-7.2",
            paper=paper,
            ours="no runs",
            scale="none",
            evidence="-",
            verdict=c.verdict,
            why=(
                f"`python -m lib sweep --plan mixer_test`: {runs.planned} `cpu` stand-in runs "
                "(AttnOnly, Full Residual and FFNOnly with the mixer, 3 seeds), about 15 minutes "
                "each on 2 cores"
            ),
        )
    # mean per configuration and mixer, with its seed count
    summ = routing.mixer_summary(runs.table)
    mixed = summ[summ.mixer == "local"]
    ours = "; ".join(
        f"{r.config} + mixer {r.mean:.3f}" + (f" ({r.seeds} seeds)" if r.seeds > 1 else "")
        for r in mixed.itertuples()
    )
    seeds = sorted(set(runs.table[runs.table.mixer == "local"].seed))
    steps = plans.mixer_test()[0].train.max_steps
    return Row(
        claim=claim,
        where="§7.1-7.2",
        paper=paper,
        ours=ours,
        scale="stand-in",
        evidence=f"`cpu` stand-in, {steps:,} steps, seeds {', '.join(map(str, seeds))}",
        verdict=c.verdict,
        why=c.why,
    )


_ROUTING_OWN = (
    "Cross-position routing (§7.1), as this book reads it: the sublayer that replaces the stream "
    "decides; tested with the position-blind local mixer (§7.2)"
)


def _mixer_reads(ev: Evidence) -> dict:
    # the book's reading, with the author's rule given beside it for context
    return dict(
        table=_mixer(ev).table,
        floors=routing.like_for_like(routing.floors()),
        paper_mixer=paper_value(ref="§7.2", metric="mixer_best_val_loss"),
        author_rule=mixer_rule(),
    )


# This part's claims, in the order the card, What holds and each chapter's verdict cell print them.
CLAIMS = (
    Entry(
        name=_ROUTING_OWN,
        ref="§7.1-7.2",
        decide=routing.claim_mixer,
        reads=_mixer_reads,
        row=mechanism,
        section=_MECHANISM,
        card="own",
    ),
    Entry(
        name=_ROUTING_PAPER,
        ref="§7.1-7.2",
        decide=routing.claim_routing_by_author_rule,
        reads=_routing_paper_reads,
        row=routing_paper,
        section=_MECHANISM,
        card="paper",
    ),
)
