"""§4, Table 2 and §4.1, Fig. 2: the joint collapse and its signature, at the paper's own
10M shape and at the stand-in."""

from __future__ import annotations

import pandas as pd

from ...engine import plans, results
from ...engine.config import CONFIG_NAMES, PAPER_SEED, get_preset
from .. import asymmetry, growth_10m, level_10m, paper_shape, schedule_seeds
from .. import joint_collapse as collapse
from ..evidence import Entry, Evidence, author_values, prefix_reads
from ..paper import paper_values
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
from ..verdicts import Claim, and_list

# The paper's Fig. 2, as the rows print it


def _fig2a_paper() -> str:
    """§4.1's Fig. 2a as the paper says it: the collapsed configurations' gradient (with the paper's
    own words on when), then Full Residual's."""
    g = paper_values(ref="§4.1 Fig. 2a", metric="layer0_grad_norm").set_index("config")
    return f"{g.note['AttnOnly']}; Full Residual ≈{g.value['FullResidual']:.3f}"


# §4, Table 2 and §4.1, Fig. 2: the joint collapse and its signature, at the paper's
# own 10M shape and at the stand-in

# the joint-collapse chapter's two verdict cells: the paper's own shape, and
# Table 2 and Fig. 2 at the stand-in
_PAPER_SHAPE = "joint_collapse#at-the-paper-s-own-shape-the-first-steps-of-the-exact-recipe"


_SIGNATURE = "joint_collapse#what-agrees-with-the-paper-and-what-does-not"


def joint_collapse_paper_shape(c: Claim, ev: Evidence) -> Row:
    """nanoGPT AttnOnly at the paper's exact 10M shape
    (``claims.paper_shape.claim_paper_shape_collapse``)."""
    claim = "Joint collapse at the paper's own 10M shape"
    # the paper's full run: Table 2's value over the 10M preset's whole schedule
    full = get_preset("10M", "nanogpt", "AttnOnly").train.max_steps
    paper = f"nanoGPT AttnOnly best {paper_text('Table 2', 'AttnOnly', 4)} over {full:,} steps"
    # another partial configuration off the floor decides it, whatever AttnOnly's run
    if c.facts.get("off"):
        return Row(
            claim=claim,
            where="§4, Table 2",
            paper=paper,
            ours="; ".join(
                f"{k} best {best:.3f}, off the floor in its {trained}"
                for k, (best, trained) in c.facts["off"].items()
            ),
            scale="paper shape",
            evidence=prefix_evidence(
                found := prefix_rows(ev.prefix.table, [("nanogpt", k) for k in c.facts["off"]])
            ),
            verdict=c.verdict,
            why=c.why,
            short=paper_shape.collapse_short(c.facts),
            partial=prefix_partial(found),
            whole=prefix_whole(found),
            **_PAPER_SHAPE_COLLAPSE,
        )
    # no "trained" fact: no AttnOnly prefix is released, and the claim's reason
    # gives the command and its cost
    if "trained" not in c.facts:
        return Row(
            claim=claim,
            where="§4, Table 2",
            paper=paper,
            ours="no run",
            scale="none",
            evidence="-",
            verdict=c.verdict,
            why=c.why,
            short=paper_shape.collapse_short(c.facts),
            **_PAPER_SHAPE_COLLAPSE,
        )
    f = c.facts
    # a whole run's last value beside its best: Table 2 reports one number, which §4 says is both
    last = "" if f["prefix"] or "last" not in f else f" (last {f['last']:.3f})"
    ours = f"AttnOnly best {f['best']:.3f}{last}, " + (
        f"left the floor at step {f['left_at']}"
        if f["left_at"] is not None
        else f"on the floor for {'the ' * f['prefix']}{f['trained']}"
    )
    # A prefix names how far it trained ("first 300 of 3,000 steps"):
    # never read as where the run ends.
    if f["prefix"] and c.verdict != "NOT TESTED":
        claim += f" ({f['trained']})"
    # decided before all three partial configurations trained whole: the name says on which, as
    # the answer's short name does, so the claim is not read as shown for all three
    elif c.verdict != "NOT TESTED" and (
        paper_shape.collapse_short(f) != paper_shape.COLLAPSE_SHORTS[-1]
    ):
        whole = f.get("whole") or ["AttnOnly"]
        claim += f", on nanoGPT {and_list([CONFIG_NAMES[k] for k in whole])} trained whole"
    # "10M paper shape", not "stand-in": what front_page.abstract counts as
    # judged at the paper's own shape
    return Row(
        claim=claim,
        where="§4, Table 2",
        paper=paper,
        ours=ours,
        scale="paper shape",
        evidence=f"10M paper shape, {f['trained']}, seed {f['seed']}",
        verdict=c.verdict,
        why=c.why,
        partial=prefix_partial(nano := prefix_rows(ev.prefix.table, [("nanogpt", "AttnOnly")])),
        whole=prefix_whole(nano),
        short=paper_shape.collapse_short(c.facts),
        **_PAPER_SHAPE_COLLAPSE,
    )


def full_level_paper_shape(c: Claim, ev: Evidence) -> Row:
    """Table 2's Full Residual level at the paper's exact 10M shape
    (``claims.level_10m.claim_full_residual_level``): a chapter-only row, whose scale marks a
    decided verdict as the paper shape's, never a stand-in's."""
    found = prefix_rows(ev.prefix.table, [("nanogpt", "FullResidual")])
    f = c.facts
    return Row(
        claim="Full Residual's level at the paper's own 10M shape (Table 2)",
        where="§4, Table 2",
        paper=f"nanoGPT Full Residual best {paper_text('Table 2', 'FullResidual', 4)}",
        ours="no run" if "best" not in f else f"Full Residual best {f['best']:.4f}",
        scale="paper shape" if found else "none",
        evidence=prefix_evidence(found),
        verdict=c.verdict,
        why=c.why,
        short="Full Residual's 10M level",
        section=_PAPER_SHAPE,
        plan="10m_whole",
        partial=prefix_partial(found),
        whole=prefix_whole(found),
    )


# Where the joint collapse at the paper's shape is decided, and the whole runs that will
# decide it (Table 2 speaks of three partial configurations; at this shape only AttnOnly's run
# decides it, and its name says so)
_PAPER_SHAPE_COLLAPSE = dict(section=_PAPER_SHAPE, plan="10m_whole")


def starvation_paper_shape(c: Claim, ev: Evidence) -> Row:
    """Fig. 2a at the paper's exact 10M shape (``claims.paper_shape.claim_prefix_starvation``): the
    paper's claim ("exactly 0.000 from step 300 onward"), read at every evaluation from step 300 to
    the last each nanoGPT run trained (Full Residual, the control, at its own shorter prefix): each
    run's last gradient, and the step from which it stays starved."""
    # every partial configuration, Fig. 2a's "all partial configurations", then the control
    found = prefix_rows(
        ev.prefix.table,
        [("nanogpt", k) for k in ("AttnOnly", "FFNOnly", "NoResidual", "FullResidual")],
    )
    # a prefix with no evaluation after step 0 (or trained without
    # diagnostics) has no gradient to show yet
    ours = (
        "; ".join(
            f"{r.config} "
            + (
                "no gradient recorded"
                if pd.isna(r.layer0_grad)
                else f"{r.layer0_grad:.2g} at step {int(r.steps):,}"
                + (
                    ""
                    if pd.isna(r.starved_from)
                    else f" (starved from step {int(r.starved_from):,})"
                )
            )
            for r in found
        )
        or "no run"
    )
    claim = (
        "Layer-0 gradient starved at the paper's own 10M shape (from step "
        f"{plans.PREFIX_STEPS} on, Fig. 2a's first starved step)"
    )
    # Fig. 2a speaks of every partial configuration over the whole run: until all three are read
    # to their last step, the name says which were read and how far, as the joint collapse's does
    # (a hostile read took a HOLDS read on prefixes as shown for all three, whole)
    read = paper_shape.read_on(c.facts.get("through_step", {}))
    if c.verdict != "NOT TESTED" and read:
        claim += f", read on {read}"
    return Row(
        claim=claim,
        where="§4.1, Fig. 2a",
        paper=_fig2a_paper(),
        ours=ours,
        scale="paper shape" if found else "none",
        evidence=prefix_evidence(found),
        verdict=c.verdict,
        why=c.why,
        short="layer-0 gradient starvation",
        section=_PAPER_SHAPE,
        plan="10m_prefix",
        partial=prefix_partial(found),
        whole=prefix_whole(found),
    )


def growth_paper_shape(c: Claim, ev: Evidence) -> Row:
    """Fig. 2b at the paper's exact 10M shape (``claims.growth_10m.claim_prefix_growth``): the
    order of the three nanoGPT configurations' hidden-state growth, read at the step the
    prefixes reach (the paper's is at the end)."""
    found = prefix_rows(
        ev.prefix.table, [("nanogpt", k) for k in ("AttnOnly", "FFNOnly", "FullResidual")]
    )
    step, gr, tr = c.facts.get("step"), c.facts.get("growth", {}), c.facts.get("over_training", {})
    configs = ("AttnOnly", "FFNOnly", "FullResidual")
    # both measures the claim reads: over depth (the stand-in row's) and over
    # training (the author's residualscope)
    ours = (
        "; ".join(
            # in the order measured, largest first, so a reader sees where it departs from the
            # paper's (a hostile read took the paper's order, kept here, for a match)
            f"{what}: "
            + ", ".join(
                f"{k} {values[k]:.2f}×"
                for k in sorted((k for k in configs if k in values), key=lambda k: -values[k])
            )
            for what, values in (("over depth", gr), ("over training", tr))
            if values
        )
        or "no run"
    )
    return Row(
        claim=(
            "Hidden-state growth orders AttnOnly > FFNOnly > Full Residual at the paper's own 10M "
            f"shape (read at step {step:,} of {get_preset('10M', 'nanogpt').train.max_steps:,}, as "
            "far as all three runs trained)"
        ),
        where="§4.1, Fig. 2b",
        paper=_fig2b_paper(),
        ours=ours + (f" at step {step:,}" if gr else ""),
        scale="paper shape" if found else "none",
        evidence=prefix_evidence(found),
        verdict=c.verdict,
        why=c.why,
        short="the order of hidden-state growth",
        section=_PAPER_SHAPE,
        plan="10m_prefix",
        partial=prefix_partial(found),
        whole=prefix_whole(found),
    )


def joint_collapse(c: Claim, ev: Evidence) -> Row:
    """Table 2 at the stand-in (``claims.joint_collapse.claim_joint_collapse``, with its knife-edge,
    the rounding twins' ``released_rounding_edge``, and the escapes that survive rounding)."""
    jc, summ = ev.chapter("joint_collapse"), ev.summaries("joint_collapse")
    # Table 2's claim is about the three partial configurations; Full Residual is its
    # control, named in the reason.
    partial = results.pooled(summ)
    partial = partial[partial.config != "FullResidual"]
    ours = (
        "; ".join(f"{k} {seed_range(g)}" for k, g in partial.groupby("config", sort=False))
        or "no runs"
    )
    return Row(
        claim="Joint collapse: every partial nanoGPT configuration ends on the floor",
        where="§4, Table 2",
        # the paper's three partial configurations, at Table 2's four digits
        paper=", ".join(
            f"{k} {paper_text('Table 2', k, 4)}" for k in ("AttnOnly", "FFNOnly", "NoResidual")
        ),
        ours=ours,
        scale=scale_of(jc),
        evidence=run_evidence(jc, summ),
        verdict=c.verdict,
        why=c.why,
        short="the joint collapse",
        section=_SIGNATURE,
        plan="joint_collapse",
    )


def stand_in_collapse_seeds(ev: Evidence) -> str:
    """The `cpu` stand-in's nanoGPT AttnOnly beyond the joint-collapse chapter's two seeds, for the
    row decided at the paper's shape: its own recipe over the schedule plan's five seeds, and with
    the author's dropout 0.2 (``plans.author_values``), each seed's escape step."""
    from ..escape_map import escape_label

    seeds = schedule_seeds.baseline_escapes("nanogpt", ev.runs_dir)
    t = asymmetry.author_value_runs(ev.runs_dir).table
    t = (
        t[(t.impl == "nanogpt") & (t.config == "AttnOnly") & (t["values"] == "author's")]
        if len(t)
        else t
    )
    parts = []
    if seeds:
        parts.append(
            (
                f"nanoGPT AttnOnly over {len(seeds)} seeds "
                f"({plans.schedule_seeds()[0].train.eval_interval}-step evaluations) leaves the "
                "floor: "
            )
            + ", ".join(
                f"seed {s} {'never' if escape_label(v) == 'never' else 'at ' + escape_label(v)}"
                for s, v in seeds.items()
            )
        )
    if len(t):
        parts.append(
            f"with the author's dropout 0.2, {int(t.escape_step.notna().sum())} of {len(t)} seeds "
            "leave it"
        )
    return "; ".join(parts)


def starvation(c: Claim, ev: Evidence) -> Row:
    """Fig. 2a at the stand-in (``claims.joint_collapse.claim_starvation``)."""
    # Fig. 2a's quantity at seed PAPER_SEED, the released run (the
    # paper's Fig. 2 is the seed-1337 run)
    g = collapse.layer0_grad(ev.histories("joint_collapse")).set_index("config")
    # the step it stays starved from, only where the claim counts it starved
    ours = (
        "; ".join(
            f"{k} {g.final[k]:.2g}"
            + (f" (from step {int(g.starved_from_step[k])})" if c.facts["starved"][k] else "")
            for k in g.index
        )
        or "no runs"
    )
    return Row(
        claim=(
            "Layer-0 gradient starved in every collapsed partial configuration, not in Full "
            "Residual"
        ),
        where="§4.1, Fig. 2a",
        paper=_fig2a_paper(),
        ours=ours,
        scale="stand-in",
        evidence=f"{ev.chapter('joint_collapse').scale} stand-in, nanogpt, seed {PAPER_SEED}",
        verdict=c.verdict,
        why=c.why,
        short="layer-0 gradient starvation",
        section=_SIGNATURE,
        plan="joint_collapse",
    )


def _fig2b_paper() -> str:
    """Fig. 2b's three growths, as the paper gives them (at the end of its run)."""
    return ", ".join(
        f"{paper_text('§4.1 Fig. 2b', k, 2, metric='hidden_growth')}×"
        for k in ("AttnOnly", "FFNOnly", "FullResidual")
    )


def growth(c: Claim, ev: Evidence) -> Row:
    """Fig. 2b (``claims.joint_collapse.claim_growth_order``)."""
    gr = c.facts["growth"]
    ours = (
        ", ".join(f"{k} {gr[k]:.2f}×" for k in ("AttnOnly", "FFNOnly", "FullResidual") if k in gr)
        or "no runs"
    )
    return Row(
        claim="Hidden-state growth orders AttnOnly > FFNOnly > Full Residual",
        where="§4.1, Fig. 2b",
        paper=_fig2b_paper(),
        ours=ours,
        scale="stand-in",
        evidence=f"{ev.chapter('joint_collapse').scale} stand-in, nanogpt, seed {PAPER_SEED}",
        verdict=c.verdict,
        why=c.why,
        short="the order of hidden-state growth",
        section=_SIGNATURE,
        plan="joint_collapse",
    )


def _joint_collapse_reads(ev: Evidence) -> dict:
    # the joint-collapse chapter's runs and floor; the stand-in's knife-edge from the
    # bundle chapter's rounding twins
    return dict(
        summaries=ev.summaries("joint_collapse"),
        floor=ev.floor("joint_collapse"),
        edge=ev._get("edge", lambda: collapse.released_rounding_edge(ev.runs_dir)),
        robust=ev._get("robust", lambda: collapse.released_robust_escapes(ev.runs_dir)),
    )


def _contrast_paper() -> str:
    return (
        "Table 2: nanoGPT AttnOnly best "
        f"{paper_text('Table 2', 'AttnOnly', 4)} over 3,000 steps; Fig. 4: "
        f"ResidualGPT AttnOnly {paper_text('Fig. 4', 'AttnOnly')}; no step given for either"
    )


def early_contrast(c: Claim, ev: Evidence) -> Row:
    return early_row(
        [("nanogpt", "AttnOnly"), ("residualgpt", "AttnOnly")], "§4, §6.1", _contrast_paper()
    )(c, ev)


# This part's claims, in the order the card, What holds and each chapter's verdict cell print them.
CLAIMS = (
    Entry(
        name="Joint collapse at the paper's own 10M shape",
        ref="§4, Table 2",
        decide=paper_shape.claim_paper_shape_collapse,
        reads=prefix_reads,
        row=joint_collapse_paper_shape,
        section=_PAPER_SHAPE,
        card="paper",
    ),
    # Table 2's control at its shape: whether our nanoGPT is the paper's model there, printed by
    # the chapter beside the collapse it controls (a level, not one of the paper's claims)
    Entry(
        name="Full Residual's level at the paper's own 10M shape (Table 2)",
        ref="§4, Table 2",
        decide=level_10m.claim_full_residual_level,
        # the seed spread the band reads: nanoGPT Full Residual over the `cpu` stand-in's seeds
        reads=lambda ev: prefix_reads(ev) | dict(seeds=ev.summaries("joint_collapse")),
        row=full_level_paper_shape,
        section=_PAPER_SHAPE,
        card="chapter",
    ),
    Entry(
        name="Central contrast at the paper's shape, as far as both runs trained",
        ref="§4, §6.1",
        decide=paper_shape.claim_prefix_contrast,
        reads=prefix_reads,
        row=early_contrast,
        section=_PAPER_SHAPE,
        card="own",
    ),
    Entry(
        name="Layer-0 gradient starved at the paper's own 10M shape",
        ref="§4.1, Fig. 2a",
        decide=paper_shape.claim_prefix_starvation,
        reads=prefix_reads,
        row=starvation_paper_shape,
        section=_PAPER_SHAPE,
        card="paper",
    ),
    Entry(
        name=(
            "Hidden-state growth orders AttnOnly > FFNOnly > Full Residual at the paper's own 10M "
            "shape"
        ),
        ref="§4.1, Fig. 2b",
        decide=growth_10m.claim_prefix_growth,
        reads=lambda ev: dict(table=ev.prefix.table, hist=ev.prefix.histories),
        row=growth_paper_shape,
        section=_PAPER_SHAPE,
        card="paper",
    ),
    Entry(
        name="The joint collapse with the author's dropout",
        ref="§4, Table 2; NanoGPT_10M.ipynb",
        decide=asymmetry.claim_author_values_collapse,
        reads=lambda ev: dict(table=author_values(ev).table, floor=ev.floor("joint_collapse")),
        row=None,
        section="joint_collapse#nanogpt-at-the-stand-in-with-the-author-s-dropout",
        card="chapter",
    ),
    Entry(
        name="Joint collapse: every partial nanoGPT configuration ends on the floor",
        ref="§4, Table 2",
        decide=collapse.claim_joint_collapse,
        reads=_joint_collapse_reads,
        row=joint_collapse,
        section=_SIGNATURE,
        card="paper",
        beside="Joint collapse at the paper's own 10M shape",
        more=stand_in_collapse_seeds,
    ),
    Entry(
        name=(
            "Layer-0 gradient starved in every collapsed partial configuration, not in Full "
            "Residual"
        ),
        ref="§4.1, Fig. 2a",
        decide=collapse.claim_starvation,
        reads=lambda ev: dict(
            grads=collapse.layer0_grad(ev.histories("joint_collapse")),
            summaries=ev.summaries("joint_collapse"),
            floor=ev.floor("joint_collapse"),
        ),
        row=starvation,
        section=_SIGNATURE,
        card="paper",
        beside="Layer-0 gradient starved at the paper's own 10M shape",
    ),
    Entry(
        name="Hidden-state growth orders AttnOnly > FFNOnly > Full Residual",
        ref="§4.1, Fig. 2b",
        decide=collapse.claim_growth_order,
        # the last recorded growth h_L / h_0 of each configuration, at the same seed
        reads=lambda ev: dict(
            growth=collapse.final_values(ev.histories("joint_collapse"), "hidden_growth"),
            summaries=ev.summaries("joint_collapse"),
            floor=ev.floor("joint_collapse"),
        ),
        row=growth,
        section=_SIGNATURE,
        card="paper",
        beside=(
            "Hidden-state growth orders AttnOnly > FFNOnly > Full Residual at the paper's own 10M "
            "shape"
        ),
    ),
)
