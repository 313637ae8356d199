"""The starting observation (§4.1, Table 2, Fig. 2): does nanoGPT's partial-residual collapse to the unigram
floor reproduce, and what the diagnostics (the layer-0 FFN gradient, hidden-state growth) show about it."""
from __future__ import annotations

import numpy as np
import pandas as pd

from ..config import CONFIGS
from ..experiment import ESCAPE_MARGIN
from ..results import (
    FIG2_SEED,
    layer0_ffn,
    on_floor,
    one_run,
    pooled,
)

STARVED = 1e-3  # a layer-0 gradient norm below this counts as starved


def layer0_grad(hist: pd.DataFrame, seed: int = FIG2_SEED, source: str = "released") -> pd.DataFrame:
    """Per configuration, for one seed (the paper's Fig. 2 is seed 1337): block 0's FFN gradient norm, the
    paper's Fig. 2a quantity (``layer0_ffn``), at the end, its largest value over the second half of training,
    and the first step from which it stays below ``STARVED`` (None if it never does); ``final_mlp_only`` keeps
    its old name for the same final value."""
    rows = []
    for config in [c for c in CONFIGS if c in set(hist.config)]:
        if "grad_norm_mlp" not in hist:
            break
        h = one_run(hist, config, seed, source).dropna(subset=["grad_norm_mlp"]).sort_values("step")
        if h.empty:
            continue
        g = np.array([layer0_ffn(r) for r in h.to_dict("records")])
        steps = h.step.to_numpy()
        above = np.nonzero(g >= STARVED)[0]
        starved_from = None if len(above) and above[-1] == len(g) - 1 else (
            int(steps[above[-1] + 1]) if len(above) else int(steps[0]))
        rows.append({"config": config, "seed": int(h.seed.iloc[0]), "final": float(g[-1]),
                     "final_mlp_only": float(h.grad_norm_mlp.iloc[-1][0]),
                     "max_second_half": float(g[steps >= steps[-1] / 2].max()),
                     "starved_from_step": starved_from})
    return pd.DataFrame(rows, columns=["config", "seed", "final", "final_mlp_only", "max_second_half",
                                       "starved_from_step"])


def final_values(hist: pd.DataFrame, column: str, seed: int = FIG2_SEED, source: str = "released") -> pd.DataFrame:
    """The last recorded ``column`` of each configuration, for one seed (as ``layer0_grad``)."""
    rows = []
    for config in [c for c in CONFIGS if c in set(hist.config)]:
        h = one_run(hist, config, seed, source).dropna(subset=[column]).sort_values("step")
        if len(h):
            rows.append({"config": config, "seed": int(h.seed.iloc[0]), column: float(h[column].iloc[-1])})
    return pd.DataFrame(rows, columns=["config", "seed", column])


def collapse_verdicts(summaries: pd.DataFrame, floor: float, margin: float = ESCAPE_MARGIN) -> pd.DataFrame:
    """Per configuration: how many seeds escaped the unigram floor (best val <= floor - margin)
    within their budget, and what that budget can decide."""
    summaries = pooled(summaries)
    rows = []
    for config in [c for c in CONFIGS if c in set(summaries.config)]:
        s = summaries[summaries.config == config]
        escaped = s.escape_step.notna().sum()
        if escaped == len(s):
            verdict = "escaped the floor in every seed"
        elif escaped == 0:
            verdict = ("on the floor at the end of its budget in every seed "
                       "(a longer run could still escape: not shown to collapse for good)")
        else:
            verdict = f"seed-dependent: {escaped} of {len(s)} seeds escaped"
        rows.append({"config": config, "seeds": len(s), "escaped": int(escaped),
                     "best_val_min": s.best_val_loss.min(), "best_val_max": s.best_val_loss.max(),
                     "floor": round(floor, 4), "mean minus NoResidual": _minus_noresidual(summaries, s),
                     "verdict": verdict})
    return pd.DataFrame(rows, columns=["config", "seeds", "escaped", "best_val_min", "best_val_max", "floor",
                                       "mean minus NoResidual", "verdict"])


def _minus_noresidual(summaries: pd.DataFrame, s: pd.DataFrame) -> float | None:
    """The paper's own floor is No Residual's loss ("indistinguishable from No Residual"); the
    unigram floor is ours. This is the distance from the former: mean best val minus No Residual's."""
    nores = summaries[summaries.config == "NoResidual"].best_val_loss
    return round(float(s.best_val_loss.mean() - nores.mean()), 4) if len(nores) else None


def claim_joint_collapse(summaries: pd.DataFrame, floor: float, margin: float = ESCAPE_MARGIN) -> str:
    """§4: every partial configuration ends on the floor (within ``margin``) while Full Residual
    does not. Each line also gives the distance from No Residual, the paper's own reference."""
    summaries = pooled(summaries)
    partial = summaries[summaries.config != "FullResidual"]
    full = summaries[summaries.config == "FullResidual"]
    if partial.empty or full.empty:
        return "Full Residual or the partial-configuration runs are missing: the claim cannot be checked."
    lines = []
    for c, g in partial.groupby("config", sort=False):
        line = (f"{c}: best {g.best_val_loss.min():.3f}-{g.best_val_loss.max():.3f} over {len(g)} seed(s), "
                f"{'ON the floor' if on_floor(g, floor, margin).all() else 'BELOW the floor'} "
                f"({floor:.3f}, margin {margin})")
        if c != "NoResidual" and (d := _minus_noresidual(summaries, g)) is not None:
            line += f"; {d:+.3f} from No Residual"
        lines.append(line)
    if on_floor(full, floor, margin).any():
        return "\n".join([*lines, "Cannot be decided at this budget: Full Residual itself did not leave the floor."])
    holds = on_floor(partial, floor, margin).all()
    verdict = ("HOLDS at this budget: every partial run ended on the floor and Full Residual left it." if holds else
               "DOES NOT HOLD at this budget: at least one partial configuration left the floor.")
    return "\n".join([*lines, verdict])


def claim_starvation(grads: pd.DataFrame, summaries: pd.DataFrame) -> str:
    """§4.1 Fig. 2a: layer-0 gradients of every partial configuration are starved (exactly 0.000 from
    step 300 in the paper) while Full Residual's are not (≈0.114). ``grads`` is a ``layer0_grad``
    table; ``summaries`` says whether a configuration that did not starve left the floor."""
    from ..paper import paper_values
    if set(CONFIGS) - set(grads.config):
        return (f"Layer-0 gradient diagnostics are missing for {', '.join(sorted(set(CONFIGS) - set(grads.config)))}: "
                f"the starvation claim cannot be checked yet.")
    paper = paper_values(ref="§4.1 Fig. 2a").set_index("config").reported
    starved = {r.config: r.starved_from_step is not None and not pd.isna(r.starved_from_step)
               for r in grads.itertuples()}
    parts = [f"{r.config} final {r.final:.3g} ("
             + (f"starved from step {int(r.starved_from_step)}" if starved[r.config] else "not starved")
             + f"; paper {paper.get(r.config, '-')})" for r in grads.itertuples()]
    text = "Layer-0 gradient norm: " + "; ".join(parts) + "."
    awake = [c for c, s in starved.items() if c != "FullResidual" and not s]
    full = " Full Residual starved too." if starved["FullResidual"] else ""
    if not awake:
        return text + ("\nStarvation HOLDS: every partial configuration starved, Full Residual did not."
                       if not full else "\nStarvation DOES NOT HOLD as the paper states it:" + full)
    seed = grads.set_index("config").seed
    escaped = [c for c in awake
               if summaries[(summaries.config == c) & (summaries.seed == seed[c])].escape_step.notna().any()]
    return text + (f"\nStarvation DOES NOT HOLD for {', '.join(awake)}"
                   + (f"; {', '.join(escaped)} also left the floor here, so it is not the collapsed model "
                      f"the paper measured." if escaped else ".") + full)


def training_growth(hist: pd.DataFrame, seed: int = FIG2_SEED, source: str = "released") -> pd.DataFrame:
    """The author's ``residualscope`` definition of growth, from our histories: a hidden norm at the last
    evaluation divided by the same at the first (over training, not over depth), for the residual stream
    after each block; one row per configuration, one column per block. (``residualscope`` hooks a Linear
    layer's output, e.g. ``blocks.3.mlp.fc1``; its docstring's 14.03 for AttnOnly is at that layer.)"""
    rows = []
    for config in [c for c in CONFIGS if c in set(hist.config)]:
        h = one_run(hist, config, seed, source)
        if "hidden_norm" not in h:
            continue
        h = h.dropna(subset=["hidden_norm"]).sort_values("step")
        if len(h) < 2:
            continue
        first, last = h.hidden_norm.iloc[0], h.hidden_norm.iloc[-1]
        rows.append({"config": config, **{f"after block {k}": last[k] / first[k] for k in range(1, len(first))}})
    return pd.DataFrame(rows)


def claim_growth_over_training(tg: pd.DataFrame, block: int = 4) -> str:
    """The order of the configurations by ``training_growth`` after the last block and after ``block`` (the
    residual stream that block 3, 0-based, of the author's example layer ``blocks.3`` writes), beside the
    paper's order."""
    from ..paper import paper_values
    paper = paper_values(ref="§4.1 Fig. 2b").set_index("config")
    paper_order = list(paper.value.sort_values(ascending=False).index)
    if tg.empty or not set(paper_order) <= set(tg.config):
        return "Growth over training is missing for some configuration."
    t = tg.set_index("config").loc[paper_order]
    lines = []
    for col in (f"after block {block}", t.columns[-1]):
        order = list(t[col].sort_values(ascending=False).index)
        lines.append(f"Growth over training (residualscope's final ÷ initial), {col}: "
                     + " > ".join(f"{c} {t.loc[c, col]:.2f}" for c in order)
                     + (" — the paper's order." if order == paper_order else " — not the paper's order."))
    return "\n".join(dict.fromkeys(lines))


def claim_growth_order(growth: pd.DataFrame) -> str:
    """§4.1 Fig. 2b: hidden-state growth orders the configurations AttnOnly > FFNOnly > Full Residual
    (14.03×, 5.37×, 1.38× in the paper). ``growth`` is ``final_values(hist, 'hidden_growth')``."""
    from ..paper import paper_values
    paper = paper_values(ref="§4.1 Fig. 2b").set_index("config")
    paper_order = list(paper.value.sort_values(ascending=False).index)
    ours = growth.set_index("config").hidden_growth.reindex(paper_order).dropna()
    if len(ours) < len(paper_order):
        return "Hidden-state growth is missing for some configuration: the ordering cannot be checked yet."
    our_order = list(ours.sort_values(ascending=False).index)
    text = ("Hidden-state growth: paper " + " > ".join(f"{c} {paper.reported[c]}" for c in paper_order)
            + "; ours " + " > ".join(f"{c} {ours[c]:.2f}" for c in our_order) + ".")
    return text + ("\nThe ordering HOLDS." if our_order == paper_order else
                   "\nThe ordering DOES NOT HOLD: the configurations grow in a different order here.")
