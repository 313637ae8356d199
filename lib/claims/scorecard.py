"""The claims scorecard: every claim of the paper (``registry.all_claims()``, card "paper"), the
paper's number beside ours, the evidence it rests on, and a verdict by the one rule of
``verdicts.verdict``. Computed from ``runs/`` and ``data/paper_results.csv`` each time the book is
built; the front page and the closing chapter show it, rendered by ``lib.book.front_page``. It has
no rule of its own: each row renders a ``lib.claims`` Claim, decided and printed as its entry in
``lib.claims.registry`` says. The book's own findings, printed as these rows are, are
``lib.claims.findings``. Also the front page's figure rows (``lead_rows``).
"""

from __future__ import annotations

import dataclasses

import pandas as pd

from ..engine import results
from . import paper_shape
from .paper import paper_value, paper_values
from .registry import Evidence, all_claims, card_row
from .rows import Row
from .verdicts import at_a_stand_in


def scorecard(runs_dir=None) -> pd.DataFrame:
    """Every claim of ``registry.all_claims()`` on the paper's card, computed from the released runs
    (``runs_dir`` None), or from a folder laid out like ``runs/`` (a GPU sweep's ``--runs-dir``).
    None is passed down as it is: each reader looks up runs/ when called."""
    # each chapter opened once: every row reads the same runs the chapter pages show
    ev = Evidence(runs_dir)
    paper = [e for e in all_claims() if e.card == "paper"]
    # a claim judged at the paper's own shape and at the stand-in is one row, decided at the paper's
    # shape where it has runs (paper_shape_first), at the paper-shape claim's place
    beside = {e.beside: e for e in paper if e.beside}
    rows = []
    for e in paper:
        if e.beside:
            continue
        row = card_row(e, ev)
        if e.name in beside:
            stand_in = beside[e.name]
            row = paper_shape_first(
                card_row(stand_in, ev), row, stand_in.more(ev) if stand_in.more else ""
            )
        rows.append(row)
    return pd.DataFrame([vars(r) for r in rows])  # a dataclass per row, a column per field


def paper_shape_first(stand_in: Row, paper_shape: Row, more: str = "") -> Row:
    """One claim judged at the `cpu` stand-in and at the paper's own 10M shape, as one row. Where
    the paper's shape has runs for it, they decide the row (its verdict, numbers and evidence: what
    the tally and the abstract count); the stand-in's verdict is printed beside it as the stand-in's
    (``Row.stand_in``) and counted nowhere. Where the two come out opposite, the row says that the
    stand-in departs from the paper's model on this claim: a finding about the stand-in, not a
    contradiction of the paper. Without paper-shape runs the stand-in decides. ``more``: the
    stand-in's further evidence on the claim, shown whole beside its verdict."""
    if paper_shape.scale != "paper shape":
        return stand_in
    note = f"{stand_in.verdict} ({stand_in.evidence}): {stand_in.ours}" + (
        f"; {more}" if more else ""
    )
    if {stand_in.verdict, paper_shape.verdict} == {"HOLDS", "CONTRADICTED"}:
        note += "; on this claim the stand-in departs from the paper's model"
    return dataclasses.replace(paper_shape, stand_in=note)


# The front page's figure: each claim with a number, by the figure's name for its group and the
# ``Row.short`` of the row that decides it (the joint collapse's paper-shape row is named for the
# one run that decides it there; without paper-shape runs the stand-in's row decides; the group
# draws every configuration either way): the paper's reference and phase, the chapter whose stand-in
# runs judge it, and the implementation whose paper-shape runs do (None: none).
LEAD_GROUPS = (
    (
        "the joint collapse",
        (*paper_shape.COLLAPSE_SHORTS, "the joint collapse"),
        "Table 2",
        None,
        "joint_collapse",
        "nanogpt",
    ),
    (
        "the 10M asymmetry",
        ("the 10M asymmetry",),
        "Fig. 4",
        "phase3",
        "10m_asymmetry",
        "residualgpt",
    ),
    ("the 124M ordering", ("the 124M ordering",), "Table 5", "controlled", "124m_sweep", None),
)


def lead_rows(card: pd.DataFrame, runs_dir=None) -> pd.DataFrame:
    """``plots.lead_figure``'s rows, per claim of ``LEAD_GROUPS``: each best loss as its difference
    from the No Residual loss of its own sweep (``below``: 0 is collapsed onto No Residual),
    AttnOnly and FFNOnly, with Full Residual's as the scale's other end (``full``). The paper's
    means (and Table 5's seed range, ``lo``-``hi``), the paper-shape runs (against the unigram
    floor, the loss No Residual reaches on these characters: no No Residual run at the paper's shape
    is trained), and the stand-in's runs, one row per released seed. ``verdict``: the claim's
    verdict as the card shows it (with the stand-in's beside it), ``why`` its reason; ``title``
    the band's title, naming the runs a verdict rests on where the card's short name does."""
    rows = []
    for name, shorts, ref, phase, chapter, impl in LEAD_GROUPS:
        claim = card[card.short.isin(shorts)].iloc[0]
        # a verdict that rests on a stand-in says so, as on the card (the 10M asymmetry's)
        shown = (at_a_stand_in(claim.verdict) if claim.scale == "stand-in" else claim.verdict) + (
            f" ({at_a_stand_in(claim.stand_in.split(' (')[0])})" if claim.stand_in else ""
        )
        # the band's title names what a verdict rests on where the card's short name narrows it
        # (the joint collapse on nanoGPT AttnOnly alone); a verdict not reached rests on nothing.
        # ``group`` stays the claim's, its key
        label = name if claim.verdict == "NOT TESTED" else claim.short
        label = f"{label[0].upper()}{label[1:]}" if label.startswith("the ") else label
        group = dict(
            group=f"{name[0].upper()}{name[1:]} ({claim['where']})",
            title=f"{label} ({claim['where']})",
            verdict=shown,
            why=claim.why,
            scale=claim.scale,
        )
        where = dict(ref=ref, metric="best_val_loss") | ({"phase": phase} if phase else {})
        p = paper_values(**where).set_index("config")
        nores = p.value["NoResidual"]
        # the seeds each of the paper's means is over, on one line for the
        # claim: "8 seeds; FFNOnly 3"
        n = {k: int(p.n[k]) if pd.notna(p.n[k]) else 1 for k in ("AttnOnly", "FFNOnly")}
        # Table 2's one run
        seed = f", seed {int(p.seed['AttnOnly'])}" if pd.notna(p.seed["AttnOnly"]) else ""
        seeds = (
            f", {n['AttnOnly']} seeds"
            + (f" (FFNOnly {n['FFNOnly']})" if n["FFNOnly"] != n["AttnOnly"] else "")
            if max(n.values()) > 1
            else seed
        )
        for config in ("AttnOnly", "FFNOnly"):
            lo = hi = None
            # only Table 5 gives a range
            if len(paper_values(ref=ref, config=config, metric="best_val_max")):
                lo = paper_value(ref=ref, config=config, metric="best_val_min") - nores
                hi = paper_value(ref=ref, config=config, metric="best_val_max") - nores
            rows.append(
                group
                | dict(
                    label=f"paper: {ref}{seeds}",
                    source="paper",
                    config=config,
                    seed=None,
                    above=p.value[config] - nores,
                    lo=lo,
                    hi=hi,
                    full=p.value["FullResidual"] - nores,
                )
            )
        if impl is not None:
            t = paper_shape.paper_shape_prefix(runs_dir).table
            for config in ("AttnOnly", "FFNOnly"):
                r = paper_shape.run_row(t, impl, config) if len(t) else None
                if r is not None:
                    rows.append(
                        group
                        | dict(
                            label=f"ours: the paper's 10M shape, {r.trained}",
                            source="paper shape",
                            config=config,
                            seed=int(r.seed),
                            above=r.best_val - r.floor,
                            lo=None,
                            hi=None,
                            full=None,
                        )
                    )
        ch = Evidence(runs_dir).chapter(chapter)
        summ = results.pooled(ch.summaries())
        summ = summ[summ.budget == ch.experiments()[0].train.max_steps]  # the preset's budget only
        means = summ.groupby("config").best_val_loss.mean()
        if "NoResidual" not in means:
            continue
        # the seeds of the configurations drawn, as the paper's label counts
        # them ("5 seeds (FFNOnly 3)")
        k = {c: int(summ[summ.config == c].seed.nunique()) for c in ("AttnOnly", "FFNOnly")}
        label = f"ours: {ch.scale} stand-in, {k['AttnOnly']} seeds" + (
            f" (FFNOnly {k['FFNOnly']})" if k["FFNOnly"] != k["AttnOnly"] else ""
        )
        full = means.get("FullResidual", float("nan")) - means.NoResidual
        rows += [
            group
            | dict(
                label=label,
                source="stand-in",
                config=r.config,
                seed=int(r.seed),
                above=r.best_val_loss - means.NoResidual,
                lo=None,
                hi=None,
                full=full,
            )
            for r in summ[summ.config.isin(["AttnOnly", "FFNOnly"])].itertuples()
        ]
    return pd.DataFrame(rows)
