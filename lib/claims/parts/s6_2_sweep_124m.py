"""§6.2: the 124M sweep."""

from __future__ import annotations

import pandas as pd

from ...engine import plans, results
from .. import asymmetry
from ..evidence import Entry, Evidence
from ..paper import paper_value, paper_values
from ..rows import Row, paper_text, run_evidence, scale_of, seed_range
from ..search_124m import fell_back
from ..verdicts import Claim


def _historical_124m() -> str:
    """§6.2's three historical AttnOnly seeds at 124M: 1337 is Table 4's
    original run, 42 and 123 §6.2's."""
    first = paper_value(ref="Table 4", config="AttnOnly", metric="best_val_loss")
    # the per-seed rows (the mean's row has no seed), in the paper's order: 42, then 123
    rest = paper_values(ref="§6.2", config="AttnOnly", metric="best_val_loss").dropna(
        subset=["seed"]
    )
    return ", ".join(f"{v:.3f}" for v in [first, *rest.value])


# §6.2: the 124M sweep (Table 5)

# 16 runs: five seeds of three configurations and the NoResidual anchor; 131,072 tokens x
# 20,000 steps each. Named only where AttnOnly never left the floor: then only the
# paper-scale sweep could answer.
_COST_124M = "; the 124M sweep itself is 16 runs of 2.6B tokens, roughly 70-110 A100-hours"


def _cost_124m(ev: Evidence) -> str:
    return "" if ev.claim(_ORDER_124M).facts.get("attn_left") else _COST_124M


def _sweep_124m_reads(ev: Evidence) -> dict:
    # Table 5's sweep, its runs finished of those planned: each claim waits for all of them (the
    # NoResidual anchor among them sets the floor), a diverged run counting as finished
    return dict(
        summaries=ev.sweep_124m(), floor=ev.floor("124m_sweep"), sweep=ev.sweep_124m_trained()
    )


def order_124m(c: Claim, ev: Evidence) -> Row:
    """Table 5's ordering (``claims.asymmetry.claim_separation``)."""
    ch, s = ev.chapter("124m_sweep"), results.pooled(ev.sweep_124m())
    a, f, full = (s[s.config == k] for k in ("AttnOnly", "FFNOnly", "FullResidual"))
    gap = c.facts.get("min_gap")
    return Row(
        claim=f"{_ORDER_124M}: Full < every AttnOnly seed < every FFNOnly seed",
        where="§6.2.1, Table 5",
        paper=" < ".join(
            paper_text("Table 5", k, seeds=False) for k in ("FullResidual", "AttnOnly", "FFNOnly")
        )
        + f"; minimum gap {paper_value(ref='Table 5 text', metric='min_gap_to_ffnonly'):.3f}",
        ours=f"Full {seed_range(full)}; AttnOnly {seed_range(a)}; FFNOnly {seed_range(f)}"
        + (f"; minimum gap {gap:.3f}" if gap is not None else "")
        # a best that the run did not keep: the reader sees where it ended
        + "".join(
            f"; AttnOnly seed {int(r.seed)} ended back on the floor ({r.final_val_loss:.3f}; "
            f"best {r.best_val_loss:.3f})"
            for r in fell_back(a, ev.floor("124m_sweep")).itertuples()
        )
        + _unread_seeds(ch.scale, s, ev.floor("124m_sweep")),
        scale=scale_of(ch),
        evidence=run_evidence(ch, ev.sweep_124m()),
        verdict=c.verdict,
        why=c.why + _cost_124m(ev),
        short="the 124M ordering",
        section=_SWEEP,
        plan="124m_sweep",
    )


def _unread_seeds(scale: str, s: pd.DataFrame, floor: float) -> str:
    """At a stand-in the search chose, the same ordering rule on the seeds the search never read:
    it chose on its probe's runs at ``plans.SEARCH_SEEDS`` (AttnOnly leaving the floor, Full
    Residual learning, FFNOnly staying), which the sweep reads again, so the order there is partly
    how the stand-in was picked. "" at a stand-in no search chose."""
    if scale not in plans.SEARCH_STAND_INS.values():
        return ""
    rest = s[~s.seed.isin(plans.SEARCH_SEEDS)]
    alone = asymmetry.claim_separation(rest, floor, "124M")
    seeds = [str(x) for x in plans.SEEDS_124M if x in set(rest.seed)]
    gap = alone.facts.get("min_gap")
    return f"; on seeds {', '.join(seeds)} alone, which the search never read: {alone.verdict}" + (
        f", minimum gap {gap:.3f}" if gap is not None else ""
    )


def seed_sensitivity_124m(c: Claim, ev: Evidence) -> Row:
    """Table 5's AttnOnly spread (``claims.asymmetry.claim_seed_sensitivity``)."""
    ch, s = ev.chapter("124m_sweep"), results.pooled(ev.sweep_124m())
    t5 = paper_values(ref='Table 5', config='AttnOnly', metric='best_val_loss')
    # the paper's comparison is with 10M's controlled sweep (Table 6's text: 0.355 against 0.003)
    f4 = paper_values(ref="Fig. 4", config="AttnOnly", metric="best_val_loss")
    return Row(
        claim="AttnOnly is seed-sensitive at 124M",
        where=f"§6.2 (historical seeds {_historical_124m()}); Table 5",
        # Table 5's std and n, read from the paper file; the range from its
        # best_val_min and best_val_max rows
        paper=(
            f"std {t5['std'].iloc[0]:.3f} over {int(t5.n.iloc[0])} seeds "
            f"(range {paper_text('Table 5', 'AttnOnly', seeds=False, metric='best_val_min')}-"
            f"{paper_text('Table 5', 'AttnOnly', seeds=False, metric='best_val_max')}), against "
            f"{f4['std'].iloc[0]:.3f} at 10M (Fig. 4, {int(f4.n.iloc[0])} seeds)"
        ),
        # the rule's own numbers beside the range: a seed std more than 5 times AttnOnly's at the
        # 10M stand-in and FFNOnly's in the sweep
        ours=f"AttnOnly {seed_range(s[s.config == 'AttnOnly'])}"
        + (
            f"; seed std {c.facts['attn_std']:.3f} against {c.facts['ref_std']:.4f} at the 10M "
            f"stand-in and FFNOnly's {c.facts['ffn_std']:.3f}"
            if all(pd.notna(c.facts.get(k)) for k in ("attn_std", "ref_std", "ffn_std"))
            else ""
        ),
        scale=scale_of(ch),
        evidence=run_evidence(ch, ev.sweep_124m()),
        verdict=c.verdict,
        why=c.why + _cost_124m(ev),
        short="AttnOnly's seed sensitivity at 124M",
        section=_SWEEP,
        plan="124m_sweep",
    )


_ORDER_124M = "124M ordering and separation"


_SWEEP = "124m_sweep#reading-the-result"


def _probe_124m(ev: Evidence, scale: str | None = None):
    return ev._get(
        "124m_sweep.probe" + (f"@{scale}" if scale else ""),
        lambda: ev.chapter("124m_sweep", scale).probe(),
    )


def _longer_budget_reads(ev: Evidence) -> dict:
    # the probe extends the first stand-in's runs, so it is read beside them and on their floor
    first = ev.chapter("124m_sweep").spec.earlier[0]
    return dict(
        probe=_probe_124m(ev, first),
        summaries=ev.sweep_124m(first),
        floor=ev.chapter("124m_sweep", first).floor(),
    )


# This part's claims, in the order the card, What holds and each chapter's verdict cell print them.
CLAIMS = (
    Entry(
        name=_ORDER_124M,
        ref="§6.2.1, Table 5",
        decide=asymmetry.claim_separation,
        # no probe: the longer-budget runs extend the first stand-in, not the one the chapter reads
        reads=lambda ev: _sweep_124m_reads(ev) | dict(paper_scale="124M"),
        row=order_124m,
        section=_SWEEP,
        card="paper",
    ),
    Entry(
        name="AttnOnly is seed-sensitive at 124M",
        ref="§6.2; Table 5",
        decide=asymmetry.claim_seed_sensitivity,
        # the paper's comparison is across scales: AttnOnly's spread at the 10M stand-in beside it
        reads=lambda ev: (
            _sweep_124m_reads(ev)
            | dict(
                reference=ev.summaries("10m_asymmetry"), reference_floor=ev.floor("10m_asymmetry")
            )
        ),
        row=seed_sensitivity_124m,
        section=_SWEEP,
        card="paper",
    ),
    Entry(
        name="Asymmetry at the longer budget of the first stand-in",
        ref="§6.2.1, Table 5",
        decide=asymmetry.claim_longer_budget,
        reads=_longer_budget_reads,
        row=None,
        section=_SWEEP,
        card="chapter",
    ),
)
