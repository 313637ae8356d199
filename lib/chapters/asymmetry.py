"""The 10M asymmetry (§6, Tables 3 and 6) and its 124M counterpart (Tables 4 and 5): AttnOnly leaves the floor,
FFNOnly stays on it; with the stand-in's answers under the author's values."""
from __future__ import annotations

import pandas as pd

from .. import plans
from ..config import get_preset
from ..experiment import ESCAPE_MARGIN
from ..results import (
    Runs,
    as_released,
    on_floor,
    plan_runs,
    pooled,
    unfinished,
)
from ..runs import RUNS_DIR


def asymmetry(summaries: pd.DataFrame) -> dict:
    """Table 6's quantities from our seeds: means, the AttnOnly-FFNOnly gaps, the ratio."""
    summaries = pooled(summaries)
    m = summaries.groupby("config").best_val_loss
    mean, lo, hi = m.mean(), m.min(), m.max()
    out = {"attn_mean": mean.get("AttnOnly"), "ffn_mean": mean.get("FFNOnly"), "full_mean": mean.get("FullResidual")}
    if out["attn_mean"] is not None and out["ffn_mean"] is not None:
        out["mean_gap"] = out["ffn_mean"] - out["attn_mean"]
        out["min_gap"] = lo["FFNOnly"] - hi["AttnOnly"]  # best FFNOnly minus worst AttnOnly
        out["worst_attn_below_ffn_mean"] = out["ffn_mean"] - hi["AttnOnly"]  # Fig. 4's "within 1.76 of"
        out["asym_ratio"] = out["ffn_mean"] / out["attn_mean"]
    if out["attn_mean"] is not None and out["full_mean"] is not None:
        out["attn_gap_pct"] = 100 * (out["attn_mean"] / out["full_mean"] - 1)
    return {k: None if v is None else float(v) for k, v in out.items()}


def claim_asymmetry(summaries: pd.DataFrame, floor: float, margin: float = ESCAPE_MARGIN) -> str:
    """§6: AttnOnly escapes the floor in every seed while FFNOnly stays on it in every seed."""
    summaries = pooled(summaries)
    a, f = (summaries[summaries.config == c] for c in ("AttnOnly", "FFNOnly"))
    if a.empty or f.empty:
        return "AttnOnly or FFNOnly runs are missing: the claim cannot be checked yet."
    a_escaped, f_on = int((~on_floor(a, floor, margin)).sum()), int(on_floor(f, floor, margin).sum())
    text = (f"AttnOnly: {a_escaped} of {len(a)} seeds below the floor - {margin}; "
            f"FFNOnly: {f_on} of {len(f)} seeds on the floor (floor {floor:.3f}).")
    holds = a_escaped == len(a) and f_on == len(f)
    return text + ("\nHOLDS at this budget." if holds else "\nDOES NOT HOLD at this budget (see the tables).")


def claim_separation(summaries: pd.DataFrame, paper_scale: str) -> str:
    """Every AttnOnly seed ends below every FFNOnly seed (positive minimum gap), beside the paper's
    statement at ``paper_scale`` (124M: §6.2.1's 1.060, in the text after Table 5; 10M: the
    abstract's "at least 1.76")."""
    from ..paper import paper_value
    a = asymmetry(summaries)
    if "min_gap" not in a:
        return "AttnOnly or FFNOnly runs are missing: the claim cannot be checked yet."
    gap_124m = paper_value(ref="Table 5 text", metric="min_gap_to_ffnonly")
    paper = (f"paper at 124M, §6.2.1: {gap_124m:.3f}"
             if paper_scale == "124M" else
             f"paper, 10M: every AttnOnly seed at least {paper_value(metric='min_gap_to_floor'):.2f} below the "
             f"FFNOnly floor; ours: {a['worst_attn_below_ffn_mean']:.3f} below our FFNOnly mean")
    return (f"Worst AttnOnly vs best FFNOnly: minimum gap {a['min_gap']:.3f} ({paper}); "
            + ("HOLDS: the seed ranges do not overlap." if a["min_gap"] > 0 else
               "DOES NOT HOLD: the seed ranges overlap."))


def claim_longer_budget(probe, summaries: pd.DataFrame, floor: float) -> str:
    """Does a configuration that stayed on the floor for the stand-in's budget leave it when trained
    longer, and does the asymmetry (AttnOnly leaves, FFNOnly does not) appear then? ``probe`` is
    ``Chapter.probe()``; ``summaries`` the chapter's runs, of which each probe run is set beside the
    released run of its configuration and seed at the preset's budget. One seed: it can show that a
    floor was a budget effect, never that a collapse is permanent."""
    from ..experiment import ESCAPE_MARGIN
    if not probe.applies:
        return "No longer-budget probe at this scale: the budget is the paper's own."
    plain_runs = summaries[summaries.source == "released"] if "source" in summaries else summaries
    lines = []
    for r in probe.summaries.itertuples():
        plain = plain_runs[(plain_runs.config == r.config) & (plain_runs.seed == r.seed)
                           & (plain_runs.budget != r.budget)]
        left = not pd.isna(r.escape_step)
        text = (f"{r.config} seed {r.seed}, {int(r.budget):,} steps: best {r.best_val_loss:.3f} at step "
                f"{int(r.best_step):,} (floor {floor:.3f}, escape margin {ESCAPE_MARGIN})")
        if plain.empty:
            text += "; no released run at the preset's budget to set beside it. "
            text += f"It left the floor at step {int(r.escape_step):,}." if left else "It stayed on the floor."
        else:
            p = plain.iloc[0]
            plain_left = not pd.isna(p.escape_step)
            text += (f"; at {int(p.budget):,} steps it reached {p.best_val_loss:.3f} and "
                     + (f"left the floor at step {int(p.escape_step):,}. " if plain_left else "stayed on the floor. "))
            text += (f"Still on the floor after {int(r.budget):,} steps (one seed; this does not show that the "
                     f"collapse is permanent)." if not left else
                     f"It left the floor at step {int(r.escape_step):,}, as the shorter run had." if plain_left else
                     f"It left the floor at step {int(r.escape_step):,}: at {int(p.budget):,} steps its floor "
                     f"was a budget effect, not a collapse.")
        lines.append(text)
    a, f = (probe.summaries[probe.summaries.config == c] for c in ("AttnOnly", "FFNOnly"))
    if len(a) and len(f):
        a_left, f_left = a.escape_step.notna().all(), f.escape_step.notna().any()
        lines.append(f"Asymmetry at {int(a.budget.iloc[0]):,} steps (seed {int(a.seed.iloc[0])} only): "
                     + ("HOLDS: AttnOnly left the floor and FFNOnly did not." if a_left and not f_left else
                        "DOES NOT HOLD: " + ("both left the floor." if a_left else
                                             "neither left the floor." if not f_left else
                                             "FFNOnly left the floor and AttnOnly did not.")))
    lines += [f"Not run yet: {cmd}" for cmd in probe.missing]
    if probe.summaries.empty:
        lines.append("Whether staying on the floor is a budget effect is not checked yet.")
    return "\n".join(lines)


def claim_author_values(table: pd.DataFrame, floor: float) -> str:
    """Do the stand-in's two headline results survive the author's values (``asymmetry.author_value_runs``)? The
    asymmetry: ResidualGPT AttnOnly leaves the floor in every seed and FFNOnly in none, beside Full Residual, the
    control. The joint collapse: nanoGPT AttnOnly leaves the floor in no seed. Each is read for the stand-in's own
    values and for the author's, from the runs' best losses (``ESCAPE_MARGIN`` below the unigram floor)."""
    from ..experiment import ESCAPE_MARGIN
    lines = []
    for values in ("stand-in", "author's"):
        t = table[table["values"] == values]

        def left(impl, config):
            g = t[(t.impl == impl) & (t.config == config)].dropna(subset=["best_val_loss"])
            return int((g.best_val_loss <= floor - ESCAPE_MARGIN).sum()), len(g)
        (a, na), (f, nf), (full, nfull), (n, nn) = (left("residualgpt", "AttnOnly"), left("residualgpt", "FFNOnly"),
                                                    left("residualgpt", "FullResidual"), left("nanogpt", "AttnOnly"))
        if na == 0 and nf == 0 and nn == 0:
            lines.append(f"With the {values} values: no run finished yet.")
            continue
        asym = ("is not decided (runs missing)" if not (na and nf and nfull) else
                "is not testable (Full Residual did not leave the floor)" if full < nfull else
                "holds" if a == na and f == 0 else "does not hold")
        joint = ("is not decided (no run)" if not nn else "appears" if n == 0 else "does not appear")
        lines.append(f"With the {values} values: ResidualGPT AttnOnly leaves the floor in {a} of {na} seeds, FFNOnly "
                     f"in {f} of {nf}, Full Residual in {full} of {nfull}: the asymmetry {asym}. nanoGPT AttnOnly "
                     f"leaves it in {n} of {nn} seeds: the joint collapse {joint}.")
    return "\n".join(lines)


def author_value_runs(runs_dir=RUNS_DIR) -> Runs:
    """The stand-in with the author's values (``plans.author_values``) beside the released stand-in runs of the
    same implementations, configurations and seeds; ``values`` says which."""
    ours = plans.author_values()
    released = plans.unique([get_preset("cpu", e.impl, e.config_name, e.seed) for e in ours])
    runs = plan_runs(released + ours, {"values": lambda e: "stand-in" if e in released else "author's"}, runs_dir)
    runs.planned, runs.missing = len(ours), unfinished(as_released(ours, runs_dir))
    return runs
