"""Numbers the chapters derive from run histories and checkpoints (each one tested)."""
from __future__ import annotations

import numpy as np
import pandas as pd

from .config import CONFIGS
from .experiment import ESCAPE_MARGIN
from .model import INIT_STD
from .results import FIG2_SEED, layer0_ffn, on_floor, one_run, pooled
from .verdicts import verdict

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


# -- checkpoints the book loads --------------------------------------------------


def eval_noise(per_batch: np.ndarray, eval_batches: int, n_resamples: int = 2000, seed: int = 0) -> float:
    """Std of an evaluation that averages ``eval_batches`` random batches, by resampling."""
    rng = np.random.default_rng(seed)
    means = rng.choice(per_batch, size=(n_resamples, eval_batches), replace=True).mean(axis=1)
    return float(means.std(ddof=1))


# -- the paper's claims, checked against our runs (the chapters print these verdicts) ------------


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
    from .paper import paper_value
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
    from .experiment import ESCAPE_MARGIN
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


def claim_starvation(grads: pd.DataFrame, summaries: pd.DataFrame) -> str:
    """§4.1 Fig. 2a: layer-0 gradients of every partial configuration are starved (exactly 0.000 from
    step 300 in the paper) while Full Residual's are not (≈0.114). ``grads`` is a ``layer0_grad``
    table; ``summaries`` says whether a configuration that did not starve left the floor."""
    from .paper import paper_values
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
    from .paper import paper_values
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
    from .paper import paper_values
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


def claim_eval_noise(gap: pd.DataFrame, noise: pd.DataFrame, sigmas: float = 10.0) -> str:
    """§5.2: random validation batches add evaluation noise that can hide slow progress. Reads
    ``Chapter.val_noise`` and ``Chapter.gap_vs_noise``: how large that noise is beside the
    AttnOnly-FFNOnly gap; a gap of more than ``sigmas`` noise standard deviations is one that noise
    cannot produce. (The paper does not attribute the 3.35 -> 1.58 shift to the noise, nor do we.)"""
    if gap.empty:
        return "The AttnOnly and FFNOnly checkpoints are missing: the noise cannot be compared with the gap."
    lines = [f"{r.config} seed {r.seed} ({r.source}): a random {r.eval_batches}-batch evaluation scatters with "
             f"std {r.random_eval_std:.4f} around {r.random_mean:.4f} (fixed batches: {r.fixed_val:.4f})."
             for r in noise.itertuples()]
    for _, r in gap.iterrows():
        g, z = r["gap FFNOnly - AttnOnly"], r.gap_over_noise
        head = f"Seed {r.seed} ({r.source}): the FFNOnly - AttnOnly gap is {g:.3f}"
        if g <= 0:
            lines.append(head + ": FFNOnly is not above AttnOnly here, so there is no separation to explain.")
        elif not np.isfinite(z):
            lines.append(head + ": the random-evaluation noise measured zero, so the two cannot be compared.")
        elif z > sigmas:
            lines.append(head + f", {z:,.0f} standard deviations of that noise: evaluation noise cannot move a "
                                f"model across it at this scale.")
        else:
            lines.append(head + f", only {z:.1f} standard deviations of that noise: evaluation noise is large "
                                f"enough to matter here.")
    return "\n".join(lines)


# -- the paper-shape 10M prefix runs (the first steps of the exact recipe) --------------------------
PREFIX_PAPER_REF = {"nanogpt": "Table 2", "residualgpt": "Table 3"}  # where each implementation's 10M values are


def schedule_variant(impl: str, schedule: str) -> str:
    """"recipe" where a run trains on its implementation's own schedule, else the schedule it was given."""
    own = "constant" if impl == "nanogpt" else "cosine"
    return "recipe" if schedule == own else {"cosine": "warm-up + cosine", "constant": "constant lr"}[schedule]


def prefix_table(summaries: pd.DataFrame, hist: pd.DataFrame, floor: float) -> pd.DataFrame:
    """One row per paper-shape run, partial or complete: how far it trained, its validation loss at its
    last evaluation and at best, whether and when it left the floor, its layer-0 gradient norm (attention
    and MLP together) on the step before its last evaluation, and the paper's best value for the same
    implementation and configuration (``PREFIX_PAPER_REF``, seed 1337 where the paper has it, else its mean)."""
    from .experiment import ESCAPE_MARGIN
    from .paper import paper_values
    rows = []
    for s in summaries.itertuples():
        h = hist[(hist.impl == s.impl) & (hist.config == s.config) & (hist.seed == s.seed)
                 & (hist.schedule == s.schedule)].sort_values("step")
        grads = [layer0_ffn(r) for r in h.to_dict("records")
                 if isinstance(r.get("grad_norm_ffn_weights"), list) or isinstance(r.get("grad_norm_mlp"), list)]
        se = h.val_loss_se.dropna() if "val_loss_se" in h else pd.Series(dtype=float)
        paper = paper_values(ref=PREFIX_PAPER_REF[s.impl], impl=s.impl, config=s.config, metric="best_val_loss")
        paper = paper[paper.seed == s.seed] if (paper.seed == s.seed).any() else paper
        rows.append({"impl": s.impl, "config": s.config, "seed": s.seed,
                     "schedule": schedule_variant(s.impl, s.schedule),
                     "trained": f"first {s.steps:,} of {s.max_steps:,} steps" if s.steps < s.max_steps
                     else f"all {s.max_steps:,} steps",
                     "steps": s.steps, "max_steps": s.max_steps, "status": s.status,
                     "last_val": float(h.val_loss.iloc[-1]), "best_val": s.best_val_loss,
                     "floor": floor, "left_floor_at": s.escape_step,
                     "layer0_grad": grads[-1] if grads else None,
                     "starved": None if not grads else grads[-1] < STARVED,
                     "max_val_se": float(se.max()) if len(se) else None,
                     "paper_best": paper.reported.iloc[0] if len(paper) else None,
                     "paper_best_value": float(paper.value.iloc[0]) if len(paper) else None,
                     "margin": ESCAPE_MARGIN})
    cols = ["impl", "config", "seed", "schedule", "trained", "steps", "max_steps", "status", "last_val", "best_val",
            "floor", "left_floor_at", "layer0_grad", "starved", "max_val_se", "paper_best", "paper_best_value",
            "margin"]
    return pd.DataFrame(rows, columns=cols)


def _row(table: pd.DataFrame, impl: str, config: str, schedule: str = "recipe"):
    r = table[(table.impl == impl) & (table.config == config) & (table.schedule == schedule)]
    return None if r.empty else r.iloc[0]


def claim_prefix_schedule(table: pd.DataFrame) -> str:
    """Does the learning-rate schedule decide AttnOnly's escape at the paper's shape? Each implementation's
    AttnOnly on its own schedule beside the same run on the other's (nanoGPT with ResidualGPT's warm-up and
    cosine, ResidualGPT at a constant rate), read at the step both reached. The schedule decides here only if
    swapping it flips whether the run has left the floor, in both implementations and in the direction that
    makes each behave like the other."""
    pairs = [(impl, _row(table, impl, "AttnOnly"), _row(table, impl, "AttnOnly", other))
             for impl, other in (("nanogpt", "warm-up + cosine"), ("residualgpt", "constant lr"))]
    runs = [r for _, own, swapped in pairs for r in (own, swapped)]
    lines = [f"{impl} AttnOnly: " + ("its own schedule" if own is None else "the swapped schedule")
             + " is not trained yet." for impl, own, swapped in pairs if own is None or swapped is None]
    if lines:
        return "\n".join([*lines, "The schedule at the paper's shape: NOT TESTED yet (both pairs are needed)."])
    step = int(min(r.steps for r in runs))  # every run read at the step all four reached
    left = {(impl, kind): not pd.isna(r.left_floor_at) and r.left_floor_at <= step
            for impl, own, swapped in pairs for kind, r in (("own", own), ("swapped", swapped))}
    for impl, own, swapped in pairs:
        lines.append(f"{impl} AttnOnly by step {step:,}: own schedule "
                     f"{'left the floor' if left[impl, 'own'] else 'on the floor'} (best {own.best_val:.3f}), "
                     f"{swapped.schedule} {'left the floor' if left[impl, 'swapped'] else 'on the floor'} "
                     f"(best {swapped.best_val:.3f}).")
    if left["nanogpt", "own"] == left["residualgpt", "own"]:
        return "\n".join([*lines, "The schedule at the paper's shape: nothing to explain, as both implementations on "
                                  "their own schedules are alike by this step (one seed, a prefix)."])
    # the schedule decides only if each implementation, given the other's schedule, does what the other does
    follows = [left[impl, "swapped"] == left[other, "own"]
               for impl, other in (("nanogpt", "residualgpt"), ("residualgpt", "nanogpt"))]
    verdict = ("The schedule decides at the paper's shape (one seed, a prefix): with the other's schedule, each "
               "implementation does what the other does." if all(follows) else
               "The schedule alone does not decide at the paper's shape (one seed, a prefix): with the other's "
               f"schedule, {sum(follows)} of 2 implementations do what the other does.")
    return "\n".join([*lines, verdict])


def _where(r) -> str:
    return (f"left the floor at step {int(r.left_floor_at):,}" if not pd.isna(r.left_floor_at)
            else f"on the floor ({r.floor:.3f})")


def claim_prefix_contrast(table: pd.DataFrame) -> str:
    """The paper's central contrast (Table 2 beside Table 3) at the paper's own shape, as far as the
    prefixes go: nanoGPT AttnOnly stays on the floor (best 3.3534 over 3,000 steps) while ResidualGPT
    AttnOnly leaves it. A best value is a minimum over every evaluation, so a prefix that is already
    more than the margin below the paper's best contradicts it; a prefix still on the floor decides
    nothing about where the run ends."""
    nano, resid = _row(table, "nanogpt", "AttnOnly"), _row(table, "residualgpt", "AttnOnly")
    if nano is None or resid is None:
        return "Central contrast: NOT TESTED yet (the two paper-shape AttnOnly runs are not both released)."
    step = min(nano.steps, resid.steps)
    lines = [f"{r.impl} AttnOnly, 10M, {r.trained}: best {r.best_val:.3f}, {_where(r)}; paper "
             f"({PREFIX_PAPER_REF[r.impl]}) {r.paper_best} after 3,000 steps" for r in (nano, resid)]
    nano_left = not pd.isna(nano.left_floor_at) and nano.left_floor_at <= step  # both read at the common step
    resid_left = not pd.isna(resid.left_floor_at) and resid.left_floor_at <= step
    if nano.best_val < nano.paper_best_value - nano.margin:
        below = nano.paper_best_value - nano.best_val
        verdict = (f"CONTRADICTED at the paper's shape: nanoGPT AttnOnly is already {below:.3f} below the paper's "
                   f"best over its whole run (seed {int(nano.seed)}, the paper's seed).")
    elif resid_left and not nano_left:
        verdict = (f"As the paper so far: at step {int(step):,} nanoGPT AttnOnly is on the floor and ResidualGPT "
                   f"AttnOnly has left it. A prefix cannot show where either run ends.")
    elif resid_left and nano_left:
        verdict = f"Both AttnOnly runs have left the floor by step {int(step):,}: not the paper's contrast so far."
    else:
        verdict = (f"NOT TESTED yet: by step {int(step):,} ResidualGPT AttnOnly has not left the floor (the paper "
                   f"gives no step at which it does), so the prefixes neither confirm nor contradict the contrast; "
                   f"a longer prefix (--until) would.")
    return "\n".join([*lines, verdict])


def claim_prefix_starvation(table: pd.DataFrame, from_step: int = 300) -> str:
    """Fig. 2a (§4.1) at the paper's shape: the layer-0 gradient of every partial nanoGPT configuration that
    collapsed is 0.000 from step ``from_step`` on, while Full Residual's is not (about 0.114). Before
    ``from_step`` the values are shown but nothing is decided (NOT TESTED yet: a longer prefix would); a
    configuration that left the floor is not the collapsed model the figure measured."""
    nano = table[(table.impl == "nanogpt")].dropna(subset=["layer0_grad"])
    if nano.empty:
        return "Layer-0 gradient at the paper's shape: NOT TESTED yet (no nanoGPT prefix with diagnostics is released)."
    parts = [f"{r.impl} {r.config}{'' if r.schedule == 'recipe' else ' (' + r.schedule + ')'} at step "
             f"{int(r.steps):,}: {r.layer0_grad:.3g}" + (" (starved)" if r.starved else "")
             for r in table.dropna(subset=["layer0_grad"]).itertuples()]
    text = ("Layer-0 FFN weight gradient (the mean of the two weight matrices' norms, as the author's notebook "
            f"measures it), on the step before the last evaluation (starved: < {STARVED:g}): " + "; ".join(parts) + ".")
    nano = nano[nano.schedule == "recipe"]
    reached = nano[nano.steps >= from_step]
    collapsed = reached[(reached.config != "FullResidual") & reached.left_floor_at.isna()]
    full = nano[nano.config == "FullResidual"]  # the control, at its own (shorter) prefix
    if collapsed.empty or full.empty:
        return text + (f"\nFig. 2a speaks of step {from_step} onward, of collapsed partial configurations beside Full "
                       f"Residual; the nanoGPT prefixes that reach it do not include both: NOT TESTED yet.")
    holds = bool(collapsed.starved.all()) and not bool(full.starved.iloc[0])
    return text + ("\nStarvation HOLDS at the paper's shape: every collapsed partial nanoGPT configuration is "
                   "starved and Full Residual is not." if holds else
                   "\nStarvation CONTRADICTED at the paper's shape: a collapsed partial configuration still has a "
                   f"layer-0 gradient of at least {STARVED:g}, or Full Residual is starved too.")


def claim_stand_in_predicts(table: pd.DataFrame, stand_in_hist: pd.DataFrame, stand_in_floor: float) -> str:
    """Does the `cpu` stand-in (same seed, same implementation and configuration) say the same thing about
    leaving the floor by the step the paper-shape prefix reached? The stand-in's schedule and width differ,
    so agreement is evidence that the stand-in is a fair proxy for this question, not proof."""
    from .experiment import ESCAPE_MARGIN
    if table.empty:
        return "Stand-in against paper shape: NOT TESTED yet (no paper-shape run is released)."
    lines, agree, compared = [], 0, 0
    for r in table[table.schedule == "recipe"].itertuples():  # the stand-in trains each recipe as it is
        h = stand_in_hist[(stand_in_hist.impl == r.impl) & (stand_in_hist.config == r.config)
                          & (stand_in_hist.seed == r.seed) & (stand_in_hist.step <= r.steps)]
        if h.empty:
            lines.append(f"{r.impl} {r.config}: no released stand-in run to compare.")
            continue
        s_left = bool((h.val_loss <= stand_in_floor - ESCAPE_MARGIN).any())
        p_left = not pd.isna(r.left_floor_at)
        agree += s_left == p_left
        compared += 1
        lines.append(f"{r.impl} {r.config} by step {int(r.steps):,}: stand-in "
                     f"{'left the floor' if s_left else 'on the floor'}, paper shape "
                     f"{'left the floor' if p_left else 'on the floor'}"
                     + ("" if s_left == p_left else "  <- the stand-in does not predict this"))
    return "\n".join([*lines, f"The stand-in predicts {agree} of {compared} paper-shape prefixes at the same step."])


def claim_prefix_asymmetry(table: pd.DataFrame) -> str:
    """The 10M asymmetry (Table 3, Phase 3) at the paper's shape, as far as the ResidualGPT prefixes go:
    AttnOnly leaves the floor, FFNOnly stays on it. FFNOnly below the paper's FFNOnly best by more than
    the margin contradicts it (a best is a minimum over the whole run); anything still on the floor
    decides nothing."""
    attn, ffn = _row(table, "residualgpt", "AttnOnly"), _row(table, "residualgpt", "FFNOnly")
    if attn is None and ffn is None:
        return "10M asymmetry at the paper's shape: NOT TESTED yet (no ResidualGPT prefix run is released)."
    lines = [f"residualgpt {r.config}, 10M, {r.trained}: best {r.best_val:.3f}, {_where(r)}; paper (Table 3) "
             f"{r.paper_best}" for r in (attn, ffn) if r is not None]
    if ffn is not None and ffn.best_val < ffn.paper_best_value - ffn.margin:
        lines.append("CONTRADICTED at the paper's shape: FFNOnly is already below the paper's FFNOnly best.")
    elif attn is None or ffn is None:
        lines.append("Not decided: " + ("FFNOnly" if ffn is None else "AttnOnly")
                     + " has no paper-shape run yet; the asymmetry needs both.")
    elif not pd.isna(attn.left_floor_at):
        lines.append(f"As the paper so far: by step {int(min(attn.steps, ffn.steps)):,} AttnOnly has left the "
                     "floor and FFNOnly has not. A prefix cannot show where either run ends.")
    else:
        lines.append(f"Not decided by step {int(attn.steps):,}: AttnOnly has not left the floor yet.")
    return "\n".join(lines)


# -- the one rule every claim of the scorecard is judged by --------------------------------------------


# -- book/mechanism.ipynb: what the residual stream keeps, the local-mixer test, the escape map, the bundle ----
LADDER_MARGIN = 0.03  # "at" a floor: within this; the floors of this ladder lie 0.18 nats apart or more


def ladder_position(loss: float, floors: dict[int, float], names: dict[int, str], margin: float = LADDER_MARGIN) -> str:
    """Where ``loss`` sits on the ladder of n-gram ``floors`` ({order: nats}, ``names`` {order: "bigram", ...}):
    at a floor (within ``margin``, the signed distance given), or between the two it falls between. The floors
    must fall as the order rises (more context, a lower floor)."""
    orders = sorted(floors)
    if any(floors[a] <= floors[b] for a, b in zip(orders, orders[1:])):
        raise ValueError(f"n-gram floors must fall as the order rises: {floors}")
    at = [n for n, f in floors.items() if abs(loss - f) <= margin]
    if at:
        return f"at the {names[at[0]]} floor ({loss - floors[at[0]]:+.3f})"
    below = [n for n, f in sorted(floors.items()) if loss < f]
    if not below:
        return f"above the {names[min(floors)]} floor"
    deepest = max(below)
    nxt = [n for n in sorted(floors) if n > deepest]
    return (f"between the {names[deepest]} and {names[nxt[0]]} floors" if nxt
            else f"below the {names[deepest]} floor, the lowest computed")


def author_rule_reading(mixer_best: pd.Series, rule: tuple[float, float]) -> str:
    """The author's reading of the AttnOnly + mixer best losses (``paper.mixer_rule``): every seed above the first
    threshold "consistent with routing", every seed below the second "routing not supported", else "partial
    recovery"."""
    routing, not_routing = rule
    return ("consistent with routing" if mixer_best.min() > routing else "routing not supported"
            if mixer_best.max() < not_routing else "partial recovery")


def claim_routing_by_author_rule(table: pd.DataFrame, rule: tuple[float, float], bigram_floor: float):
    """§7.2's test as the paper poses it, judged by the author's own rule: (verdict, reading, AttnOnly + mixer best
    losses). "consistent with routing" HOLDS, "routing not supported" CONTRADICTS; "partial recovery" is the
    rule's own "neither", so NOT TESTABLE HERE, and so is any result where the rule's lower threshold lies below
    the bigram floor (no position-blind model can reach it on this data, so by design the test cannot refute)."""
    am = table[(table.config == "AttnOnly") & (table.mixer == "local")].best_val_loss.dropna()
    if am.empty:
        return verdict(False, False, False), None, am
    reading = author_rule_reading(am, rule)
    # a test that cannot come out "not supported" on this data cannot confirm by coming out the other way either
    v = verdict(True, reading != "partial recovery", reading == "consistent with routing",
                by_design=bigram_floor > rule[1])
    return v, reading, am


def claim_ladder(ends: pd.DataFrame, floors: dict[int, float], names: dict[int, str],
                 margin: float = LADDER_MARGIN) -> str:
    """Where each model ends on the ladder (``ends``: model, best_val_loss, one row per seed; ``floors`` and
    ``names`` as in ``ladder_position``), from the mean over its seeds."""
    ends = pooled(ends)
    if ends.empty:
        return "No run finished yet."
    lines = []
    for m, t in ends.groupby("model", sort=False):
        b = t.best_val_loss
        lines.append(f"{m}: {_seed_range(b)}, {ladder_position(b.mean(), floors, names, margin)}")
    return (f"Where each model ends (best validation loss; 'at' a floor: within {margin}): " + "; ".join(lines) + ".")


def lost_token(row, margin: float = 0.05) -> bool:
    """A probe row (``lib.probes.probe``) whose state no longer tells which token it is reading: read-back
    accuracy at most ``margin`` above always guessing the most frequent token (or below it)."""
    return row.token_accuracy <= row.token_chance + margin


def claim_probes(table: pd.DataFrame) -> str:
    """What the probes say, per model: the state after block 1 at initialisation and after the last block
    trained. ``table``: ``mechanism.probe_table`` rows (model, state, depth and the three measures)."""
    if table.empty:
        return "No probed model yet: the weights of the `cpu` seed-1337 runs are not released."
    lines, lost, kept = [], [], []
    for model, t in table.groupby("model", sort=False):
        init1 = t[(t.state == "init") & (t.depth == 1)]
        trained = t[t.state == "trained"]
        if trained.empty or init1.empty:
            continue
        last = trained[trained.depth == trained.depth.max()].iloc[0]
        first, emb = init1.iloc[0], trained[trained.depth == 0]
        (lost if lost_token(last) else kept).append(model)
        lines.append(f"- **{model}**: after block 1 at initialisation the token is read back at "
                     f"{first.token_accuracy:.2f} (chance {first.token_chance:.2f}), positions' cosine "
                     f"{first.position_cosine:.2f}; trained, after block {int(last.depth)}: {last.token_accuracy:.2f}, "
                     f"cosine {last.position_cosine:.2f}, effective rank {last.effective_rank:.1f}"
                     + (f" of {emb.effective_rank.iloc[0]:.1f} at its embedding." if len(emb) else "."))
    head = (f"Lost the input token (read-back at most 0.05 above chance after the last block): "
            f"{', '.join(lost) or 'none'}. Kept it: {', '.join(kept) or 'none'}.")
    return "\n".join([head, *lines])


def _seed_range(s: pd.Series) -> str:
    return f"{s.min():.3f}" if len(s) == 1 else f"{s.min():.3f}-{s.max():.3f} ({len(s)} seeds)"


def claim_mixer(table: pd.DataFrame, floors: dict[int, float], paper_mixer: float | None = None,
                margin: float = 0.1, author_rule: tuple[float, float] | None = None) -> tuple[str, str]:
    """(verdict, text) of §7.2's local-mixer test on ``table`` (rows: config, mixer, seed, best_val_loss)
    against the n-gram floors ``{1: unigram, 2: bigram, ...}`` of the data.

    The paper states its cross-position routing hypothesis through its §7.1 equation only; what is tested
    here is this book's reading of it (book/mechanism.ipynb): which sublayer *replaces* the stream decides.
    A per-position FFN in that place (AttnOnly) is harmless; attention there (FFNOnly) averages positions and
    the token is lost. It predicts (i) AttnOnly with the position-blind
    mixer leaves the unigram floor and stops at the bigram floor, the best any model without cross-position
    information can do; (ii) FFNOnly with the mixer leaves the unigram floor although FFNOnly with attention
    does not. The test is valid only where AttnOnly with attention escapes (what the paper's Phase 2 lacked).
    ``author_rule``: the author's thresholds (above the first: routing; below the second: no routing; between:
    partial recovery), from ``paper.mixer_rule()``; None: the rule is not read."""
    uni, bi = floors[1], floors[2]
    table = pooled(table)  # a diverged seed is no outcome

    def best(config, mixer):
        return table[(table.config == config) & (table.mixer == mixer)].best_val_loss

    am, aa = best("AttnOnly", "local"), best("AttnOnly", "attention")
    fm, fa = best("FFNOnly", "local"), best("FFNOnly", "attention")
    if am.empty:
        return verdict(False, False, False), "No AttnOnly run with the local mixer yet."
    # The precondition the paper's Phase 2 lacked: AttnOnly with attention left the floor, and below the
    # bigram floor, which only information from other positions can reach.
    escaped = bool(len(aa)) and aa.max() <= uni - margin and aa.mean() < bi - margin
    rng = _seed_range
    at_bigram = bool(((am - bi).abs() <= margin).all())
    lines = [f"AttnOnly with the local mixer: {rng(am)}; with attention: {rng(aa) if len(aa) else 'no run'}. "
             f"Floors: unigram {uni:.3f}, bigram {bi:.3f}."]
    where = (f"leaves the unigram floor and stops at the bigram floor (within {margin})" if at_bigram
             else f"does not end within {margin} of the bigram floor")
    lines.append(
        f"(i) Without any path between positions AttnOnly {where}"
        + (f"; attention takes it {bi - aa.mean():.3f} below the bigram floor, which only information from other "
           f"positions can do." if len(aa) and aa.mean() < bi - margin else "."))
    agrees = at_bigram
    if len(fm) and len(fa):
        ffn_ok = fm.max() <= uni - margin and fa.min() > uni - margin
        agrees = agrees and ffn_ok
        lines.append(f"(ii) FFNOnly with the mixer in attention's place: {rng(fm)}; with attention: "
                     f"{rng(fa) if len(fa) else 'no run'}: "
                     + ("the same skip pattern leaves the floor once the sublayer that replaces the stream cannot "
                        "average positions." if ffn_ok else "the prediction fails."))
    else:
        lines.append(f"(ii) FFNOnly with the mixer{'' if fm.empty else ' (but not FFNOnly with attention)'}: no run "
                     f"yet; the verdict waits for it.")
        fm = fm.iloc[0:0]
    if author_rule is not None:
        routing, not_routing = author_rule
        by_rule = author_rule_reading(am, author_rule)
        lines.append(f"The author's decision rule (Notebooks/10M/10M_MIXTURE_EXPERIMENT.ipynb): above {routing:.2f} "
                     f"\"consistent with cross-position routing\", below {not_routing:.2f} \"routing not supported\", "
                     f"between them \"partial recovery\". By that rule this result is {by_rule}."
                     + (f" Its lower threshold cannot be reached by any position-blind model on this data, as the "
                        f"bigram floor, {bi:.3f}, is above it: by that rule the test can confirm routing or be "
                        f"partial, never refute it." if bi > not_routing else "")
                     + (f" The paper's Phase-2 mixer value, {paper_mixer:.3f} (10M, the same characters), is "
                        f"{paper_mixer - bi:+.3f} from that floor." if paper_mixer is not None else ""))
    if not escaped:
        lines.append("AttnOnly with attention has not left the floor here, so the test is not valid (§7.2's problem).")
    if fm.empty and agrees and escaped:  # (i) alone cannot confirm the reading; only contradict it
        return verdict(False, False, False), "\n".join(lines)
    return verdict(True, escaped, agrees), "\n".join(lines)


def claim_escape_map(grid: pd.DataFrame, planned: int, interval: int) -> str:
    """What the escape map says. ``grid``: one row per finished run (config, depth, gain, escape_step,
    best_val_loss). Escape steps are known to within ``interval`` steps."""
    lost = grid[grid.status == "diverged"] if "status" in grid else grid.iloc[:0]
    grid = grid.drop(lost.index)  # a diverged run did not "never leave the floor": it is named apart
    unscaled = grid[grid.scaled_init == False] if "scaled_init" in grid else grid.iloc[:0]  # noqa: E712
    grid = grid.drop(unscaled.index)  # the control without GPT-2's scaling: read apart, below
    twice = grid[grid.duplicated(["config", "depth", "gain"], keep=False)]
    if len(twice):  # e.g. a control run passed without its scaled_init column: never merged into a cell
        raise ValueError("the escape map has more than one run per cell (config, depth, gain): "
                         + ", ".join(sorted({f"{r.config} {int(r.depth)} {float(r.gain):g}"
                                             for r in twice.itertuples()}))
                         + "; mark a run without GPT-2's scaling with scaled_init=False")
    attn = grid[grid.config == "AttnOnly"]
    trained = len(grid) + len(lost) + len(unscaled)
    if trained < planned:
        head = f"{trained} of {planned} runs of the map trained."
        if attn.empty:
            return head + " Nothing to read yet."
    else:
        head = f"All {planned} runs trained."
    # inf: never left the floor; a cell that is NaN was not trained
    esc = attn.assign(escape_step=attn.escape_step.astype(float).fillna(np.inf)).pivot_table(
        index="depth", columns="gain", values="escape_step", aggfunc="first")
    never = attn.escape_step.isna().sum()
    steps = attn.escape_step.dropna()
    span = ("escape steps -" if steps.empty else f"escape step {int(steps.min())}" if steps.min() == steps.max()
            else f"escape steps {int(steps.min())}-{int(steps.max())}")
    budget = float(grid.budget.max()) if "budget" in grid and grid.budget.notna().any() else np.inf
    within = "" if np.isinf(budget) else f" within {int(budget)} steps"
    lines = [head, f"AttnOnly: {span} (to within {interval} steps); {never} of {len(attn)} did not leave the "
                   f"floor{within}."]
    if len(steps) and steps.min() == steps.max() and never:
        lines.append(f"Every run that left the floor did so by step {int(steps.min())}, so at this resolution the map "
                     f"is binary (left by step {int(steps.min())}, or not{within}); the best loss is the graded "
                     f"outcome.")
    lines += _escape_answers(esc, interval, budget)
    lines += _unscaled_answer(unscaled, esc, interval, budget)
    best = attn[attn.gain == 1.0].sort_values("depth")
    if len(best) > 1:
        lines.append("Best loss at gain 1 by depth: " + ", ".join(
            f"{int(r.depth)}: {r.best_val_loss:.3f}" for r in best.itertuples()) + ".")
    ffn = grid[grid.config == "FFNOnly"]
    if len(ffn):
        lines.append(f"FFNOnly (depth 6): {ffn.escape_step.notna().sum()} of {len(ffn)} gains left the floor.")
    if len(lost):
        lines.append("Diverged: " + ", ".join(f"{r.config} depth {int(r.depth)} gain {float(r.gain):g}"
                                              for r in lost.itertuples()) + ".")
    return " ".join(lines)


def claim_escape_long(table: pd.DataFrame, planned: int, short_budget: int) -> str:
    """Whether the map's boundary cells, on the floor for ``short_budget`` steps, leave it within the preset's
    full budget (``table``: depth, gain, escape_step, best_val_loss, status, budget; one row per finished run of
    ``plans.escape_long_budget``): a slow escape, a plateau for the whole budget, or, where the long run leaves
    the floor within ``short_budget`` steps, a sign that the short run's faster decaying schedule held it there.
    A diverged run is named apart, never read as staying on the floor."""
    lost = table[table.status == "diverged"] if "status" in table else table.iloc[:0]
    done = pooled(table)
    plural = "s" if planned > 1 else ""
    if done.empty and lost.empty:
        return f"The boundary cell{plural} at the full budget: not trained yet ({planned} planned)."

    def name(r):
        return f"depth {int(r.depth)} gain {float(r.gain):g}"

    reads = []
    for r in done.itertuples():
        e = r.escape_step
        what = ("a plateau for the whole budget, not a slow start" if pd.isna(e) else
                f"not a plateau: the long run leaves the floor within {short_budget} steps, so the short run's "
                f"schedule, not the start, held it there" if e <= short_budget else "a slow escape")
        reads.append(f"{name(r)} {_when(e)} (best {r.best_val_loss:.3f}): its {short_budget}-step 'never' is {what}")
    budget = f"{int(done.budget.max()):,} steps" if len(done) and "budget" in done else "the full budget"
    out = "" if len(done) + len(lost) >= planned else f"{len(done) + len(lost)} of {planned} boundary cells trained. "
    if reads:
        out += f"At {budget}, one seed: " + "; ".join(reads) + "."
    if len(lost):
        out += (" " if out else "") + "Diverged (no outcome): " + ", ".join(name(r) for r in lost.itertuples()) + "."
    return out


def _unscaled_answer(unscaled: pd.DataFrame, esc: pd.DataFrame, interval: int, budget: float) -> list[str]:
    """AttnOnly without GPT-2's 1/√(2L) scaling of both output projections (``unscaled``: its runs, at gain 1)
    against the scaled run at the same depth (``esc`` as in ``_escape_answers``): whether removing the scaling as
    a whole, which the FFN-output gain alone does not do, moves the escape."""
    out = []
    for r in unscaled[unscaled.config == "AttnOnly"].itertuples():
        d = int(r.depth)
        e = float(r.escape_step) if pd.notna(r.escape_step) else np.inf
        q = (f"Without the scaling (attention's and the FFN's output projections both at std {INIT_STD}, "
             f"{np.sqrt(2 * d):.1f}× larger), AttnOnly at depth {d}, gain 1, {_when(e)} (best {r.best_val_loss:.3f})")
        s = esc.loc[d, 1.0] if d in esc.index and 1.0 in esc.columns else np.nan
        if pd.isna(s):
            out.append(q + "; its scaled twin is not trained yet.")
            continue
        q += f"; with it, {_when(s)}"
        never_at = budget + interval
        if _later(s, e, interval, never_at):
            q += (f": at depth {d} the scaling is what keeps AttnOnly on the floor (one seed)." if not np.isfinite(s)
                  else f": at depth {d} the scaling delays the escape (one seed).")
        elif _later(e, s, interval, never_at):
            q += ": removing the scaling delays the escape, so the scaling helps here (one seed)."
        elif np.isfinite(e):
            q += f": the scaling does not move the escape at depth {d} (within {interval} steps)."
        else:
            q += f": the scaling is not what keeps depth {d} on the floor"
            raised = {g: v for g, v in esc.loc[d].items() if g > 1 and pd.notna(v) and np.isfinite(v)}
            q += (", while a larger FFN output alone, attention's projection still scaled, brings the escape to "
                  + ", ".join(f"step {int(v)} (gain {g:g})" for g, v in raised.items())
                  + f": at depth {d} this is consistent with the FFN output's scale relative to attention's, not the "
                    f"scaling of both, deciding whether AttnOnly leaves the floor (one seed, "
                    f"{'the map' if np.isinf(budget) else f'{int(budget)} steps'})." if raised else ".")
        out.append(q)
    return out


def _apart(steps, interval: int, never_at: float) -> bool | None:
    """Whether escape steps (inf: never left the floor, compared as ``never_at``, the first evaluation after
    the budget; NaN: not trained, ignored) differ by more than the ``interval`` each one is known to within;
    None with fewer than two trained, or when none of them left the floor (no escape to compare)."""
    steps = [float(s) for s in steps if pd.notna(s)]
    if len(steps) < 2 or not any(np.isfinite(s) for s in steps):
        return None
    steps = [s if np.isfinite(s) else never_at for s in steps]
    return max(steps) - min(steps) > interval


def _later(a: float, b: float, interval: int, never_at: float) -> bool:
    """Escape step ``a`` is later than ``b`` by more than the resolution (inf: never left the floor, compared
    as ``never_at``; two runs that never left it are not ordered)."""
    if not (np.isfinite(a) or np.isfinite(b)):
        return False
    return (a if np.isfinite(a) else never_at) - (b if np.isfinite(b) else never_at) > interval


def _when(s: float) -> str:
    """An escape step in words (NaN or inf: the run did not leave the floor in its budget)."""
    return ("stays on the floor for its whole budget" if pd.isna(s) or not np.isfinite(s)
            else f"leaves the floor at step {int(s)}")


def _escape_answers(esc: pd.DataFrame, interval: int, budget: float = np.inf) -> list[str]:
    """The escape map's three questions, from ``esc`` (AttnOnly escape steps, depth × gain; inf: never left
    the floor within ``budget`` steps; NaN: not trained). A difference counts only where it exceeds the
    resolution ``interval``: the first evaluation below the threshold places the crossing only within the
    interval before it, and a run that never left the floor could at the earliest have left it at the first
    evaluation after the budget."""
    never_at = budget + interval
    out = []
    for name, held, lines in (("depth", "gain", [esc[g] for g in esc.columns]),
                              ("gain", "depth", [esc.loc[d] for d in esc.index])):
        tested = [(ln.name, _apart(ln, interval, never_at)) for ln in lines]
        tested = [(k, m) for k, m in tested if m is not None]
        if not tested:
            continue
        moved = [f"{float(k):g}" for k, m in tested if m]
        out.append(f"Does the escape depend on {name}? " + (
            f"Yes: at {held} {', '.join(moved)} the escape steps over {name} differ by more than {interval} steps."
            if moved else f"Not measurably: at each {held} with two or more {name}s trained ({len(tested)} "
                          f"{held}{'s' if len(tested) > 1 else ''}), the escape steps lie within {interval} steps "
                          f"of each other."))
    g1 = esc[1.0].dropna() if 1.0 in esc.columns else pd.Series(dtype=float)
    if len(g1) >= 2:
        shallow, deep = int(g1.index.min()), int(g1.index.max())
        undo = np.sqrt(deep / shallow)  # the gain that gives depth `deep` depth `shallow`'s initial scale
        d, sh = g1[deep], g1[shallow]
        q = (f"Does GPT-2's 1/√(2L) scaling of the FFN output make deep AttnOnly harder to train? At gain 1 depth "
             f"{deep}'s projection starts {undo:.1f}× smaller than depth {shallow}'s; depth {deep} {_when(d)}, "
             f"depth {shallow} {_when(sh)}")
        raised = esc.loc[deep, [g for g in esc.columns if g > 1]].dropna()
        helps = {g: v for g, v in raised.items() if _later(d, v, interval, never_at)}
        if not (np.isfinite(d) or np.isfinite(sh)):
            q += ": open, neither leaves the floor within the budget."
        elif _later(sh, d, interval, never_at):
            q += ": no, the deeper model leaves the floor earlier."
        elif not _later(d, sh, interval, never_at):
            q += f": no, not in when it leaves the floor (within {interval} steps)."
        elif helps:
            q += (f": later, and consistent with the FFN output's scale being the cause: a larger FFN output at depth "
                  f"{deep} brings the escape to " + ", ".join(f"step {int(v)} (gain {g:g})" for g, v in helps.items())
                  + ".")
        elif len(raised) and max(raised.index) >= undo:
            q += (f": later, and gains up to {max(raised.index):g}, enough to undo the {undo:.1f}× smaller start, "
                  f"do not bring it earlier: the map does not support the scale as the cause of the delay.")
        else:
            q += (f": later; whether the scale is the cause is open until depth {deep} is trained with a gain of "
                  f"at least {undo:.1f}, which undoes the smaller start"
                  + (f" (gains up to {max(raised.index):g} do not bring it earlier)." if len(raised) else "."))
        out.append(q)
    out += _scale_answer(esc)
    return out


def _scale_answer(esc: pd.DataFrame) -> list[str]:
    """Whether the FFN output projection's initial standard deviation, INIT_STD · gain / √(2L), separates the
    AttnOnly runs that left the floor from those that did not, whatever their depth (``esc`` as in
    ``_escape_answers``)."""
    cells = [(d, g, s) for d in esc.index for g, s in esc.loc[d].items() if pd.notna(s)]
    std = {(d, g): INIT_STD * g / np.sqrt(2 * d) for d, g, _ in cells}
    left = [std[d, g] for d, g, s in cells if np.isfinite(s)]
    stayed = [std[d, g] for d, g, s in cells if not np.isfinite(s)]
    if not (left and stayed):
        return []
    head = (f"Is it the initial scale itself? The FFN output projection starts at std {INIT_STD} · gain / √(2L): "
            f"the runs that left the floor started at {min(left):.4f} or more, those that never did at "
            f"{max(stayed):.4f} or less")
    if max(stayed) < min(left):
        depths = sorted({int(d) for d, _, _ in cells})
        return [head + f", so across depths {', '.join(map(str, depths))} that scale alone separates them, at a "
                       f"threshold between the two."]
    return [head + ": the scale alone does not separate them, as some runs stayed on the floor from a larger start "
                   "than others that left it; something beyond the FFN output's initial scale matters (depth, or "
                   "attention's output projection, which the same 1/√(2L) shrinks)."]


def escape_label(step) -> str:
    """An escape step as a label: ``"step N"``, or ``"never"`` (NaN or inf: the run never left the floor)."""
    return "never" if pd.isna(step) or not np.isfinite(step) else f"step {int(step)}"


def bundle_effects(table: pd.DataFrame, interval: int, control: str | None = None,
                   seeds: dict | None = None, paired: tuple[str, ...] = ()) -> dict | None:
    """What each factor of the nanoGPT -> ResidualGPT bundle, switched alone on nanoGPT, does to AttnOnly's
    escape step, against what changes that are *not* the factor do to it.

    ``table``: one row per factor (factor, escape_step, best_val_loss, status); ``"none"`` is nanoGPT.
    ``control``: a factor that computes the same function and changes only floating-point rounding (the SDPA
    kernel); ``seeds``: nanoGPT's own escape step at other seeds (NaN: never). Together with nanoGPT itself
    they span the escape steps one seed of this setting can give without any factor, from ``lo`` to ``hi``
    (NaN: some never escaped). A factor *decides* if alone it at least halves the earliest of them (or escapes
    where none did), or at least doubles the latest (or never escapes where all did), beyond the ``interval``
    each escape step is known to within. A ``paired`` factor changes only the measurement (the same training,
    evaluated another way), so it is read against nanoGPT's own escape step alone, with no noise to allow
    for. Returns None while nanoGPT's own run is missing; otherwise ``base``,
    ``noise`` ({name: escape step}), ``lo``, ``hi``, the factors ``earlier``, ``later``, ``neither`` and
    ``diverged`` (no outcome), ``planned`` (factors, the control included) and ``trained`` (those of them
    finished, diverged or complete, the control included)."""
    done = table[table.status.isin(["complete", "diverged"])]
    base = done[done.factor == "none"]
    if base.empty:
        return None
    b = base.escape_step.iloc[0]
    noise = {"nanoGPT": b, **{f"seed {k}": v for k, v in (seeds or {}).items()}}
    ctl = done[(done.factor == control) & (done.status == "complete")]
    if len(ctl):
        noise[control] = ctl.escape_step.iloc[0]
    steps = list(noise.values())
    escaped = [x for x in steps if pd.notna(x)]
    lo = min(escaped) if escaped else np.nan
    hi = np.nan if len(escaped) < len(steps) else max(steps)
    out = {"base": b, "noise": noise, "lo": lo, "hi": hi, "earlier": [], "later": [], "neither": [],
           "diverged": [], "planned": len(table) - 1,
           # halving is measurable only if the earliest escape leaves room for one at the first evaluation
           "can_be_earlier": bool(pd.isna(lo) or lo >= 4 * interval),
           "can_be_later": bool(pd.notna(hi))}
    for r in done[(done.factor != "none") & ~((done.factor == control) & (done.status == "complete"))].itertuples():
        e = r.escape_step
        f_lo, f_hi = (b, b) if r.factor in paired else (lo, hi)
        if r.status == "diverged":  # no outcome: named apart, never read as "preventing the escape"
            kind = "diverged"
        elif pd.isna(e):            # never escaped: decides only if every run without a factor escaped
            kind = "later" if pd.notna(f_hi) else "neither"
        elif pd.isna(f_lo) or e + interval <= f_lo / 2:  # escapes where none did, or in half the earliest time
            kind = "earlier"
        elif pd.notna(f_hi) and e - interval >= 2 * f_hi:
            kind = "later"
        else:
            kind = "neither"
        out[kind].append(r.factor)
    out["trained"] = sum(len(out[k]) for k in ("earlier", "later", "neither", "diverged")) + (control in noise)
    return out


def claim_bundle(table: pd.DataFrame, interval: int, control: str | None = None, seeds: dict | None = None,
                 paired: tuple[str, ...] = ()) -> str:
    """Which factors of the nanoGPT -> ResidualGPT bundle, switched alone on nanoGPT, move AttnOnly's escape
    beyond what rounding and the seed do (``bundle_effects``); ``paired`` factors against nanoGPT's own run."""
    fx = bundle_effects(table, interval, control, seeds, paired)
    if fx is None:
        return "nanoGPT's own AttnOnly run is not released yet."
    b, trained = fx["base"], fx["trained"]
    if not trained:
        return (f"nanoGPT AttnOnly escapes at {escape_label(b)}; no factor trained yet ({fx['planned']} planned).")
    lines = [f"nanoGPT AttnOnly escapes at {escape_label(b)} (to within {interval}). {trained} of {fx['planned']} "
             f"factors trained."]
    others = {k: v for k, v in fx["noise"].items() if k != "nanoGPT"}
    if others:
        said = []
        if control in others:
            said.append(f"the {control}, which computes the same attention and changes only floating-point "
                        f"rounding, {_when(others[control])}")
        said += [f"nanoGPT at {k} {_when(v)}" for k, v in others.items() if k != control]
        lo, hi = fx["lo"], fx["hi"]
        span = ("never escapes" if pd.isna(lo) else f"escapes anywhere from step {int(lo)} to never" if pd.isna(hi)
                else f"escapes at step {int(lo)}" if lo == hi else f"escapes from step {int(lo)} to step {int(hi)}")
        lines.append("Without any factor of the bundle, " + "; ".join(said) + f". So one seed of this setting, with "
                     f"no factor switched, {span}, and a factor counts only beyond that range.")
    labels = (("Alone escaping in at most half the earliest of those steps", "never escaping, or in at least "
               "twice the latest", "within that range") if others else
              ("Alone at least halving the escape step", "at least doubling it or preventing the escape", "neither"))
    early = ", ".join(fx["earlier"]) or ("none" if fx["can_be_earlier"] else
                                         f"none can be, as the earliest, step {int(fx['lo'])}, leaves no room to "
                                         f"halve at {interval}-step evaluations")
    late = ", ".join(fx["later"]) or ("none" if fx["can_be_later"] else "none can be, as a run with no factor "
                                      "never escaped either")
    lines.append(f"{labels[0]}: {early}; {labels[1]}: {late}; {labels[2]}: {', '.join(fx['neither']) or 'none'}."
                 + (f" Read against nanoGPT's own step alone, as they change only the measurement of the same "
                    f"training: {', '.join(p for p in paired if p in table.factor.values)}." if others and
                    any(p in table[table.status == 'complete'].factor.values for p in paired) else "")
                 + (f" Diverged (no outcome): {', '.join(fx['diverged'])}." if fx["diverged"] else ""))
    alone = table[(table.status == "complete") & ~table.factor.isin(["none", control, *paired])]
    if len(alone) > 1:  # how the factors' own escape steps spread, beside the range without any factor
        counts = alone.escape_step.map(escape_label).value_counts()
        order = sorted(counts.index, key=lambda k: np.inf if k == "never" else int(k.split()[1]))
        lines.append(f"The {len(alone)} factors that change the training escape at: "
                     + ", ".join(f"{k} ({counts[k]})" for k in order) + ".")
    if others and not (fx["earlier"] or fx["later"]) and not (fx["can_be_earlier"] and fx["can_be_later"]):
        lines.append("Naming a factor needs several seeds per factor, set against nanoGPT's own spread over the same "
                     "seeds" + (f", and evaluations every {int(fx['lo'] // 4)} steps or finer, so that a halving of "
                                f"the earliest escape is measurable" if not fx["can_be_earlier"] else "") + ".")
    done = table[table.status == "complete"].dropna(subset=["best_val_loss"])
    if len(done) > 1 and "none" in done.factor.values:
        low = done.loc[done.best_val_loss.idxmin()]
        if low.factor != "none":
            lines.append(f"Lowest best loss: {low.factor} {low.best_val_loss:.3f} (nanoGPT "
                         f"{done[done.factor == 'none'].best_val_loss.iloc[0]:.3f}; one seed, its spread not "
                         f"measured).")
    return " ".join(lines)


def claim_probes_over_training(table: pd.DataFrame) -> str:
    """Per configuration, the state after the last block at the first and the last evaluation
    (``mechanism.probes_over_training`` rows)."""
    if table.empty:
        return "No run probed during training yet."
    lines = []
    for config, t in table.groupby("config", sort=False):
        t = t.sort_values("step")
        a, b = t.iloc[0], t.iloc[-1]
        lost = t.apply(lost_token, axis=1).to_numpy()
        # the first evaluation from which every later one has lost the token, if any
        since = next((int(t.step.iloc[i]) for i in range(len(t)) if lost[i:].all()), None)
        lines.append(f"- **{config}**, after the last block: token read back {a.token_accuracy:.2f} at step "
                     f"{int(a.step)}, {b.token_accuracy:.2f} at step {int(b.step)} (chance {b.token_chance:.2f}); "
                     f"cosine between positions {a.position_cosine:.2f} → {b.position_cosine:.2f}; "
                     + (f"at chance from step {since} on." if since is not None else "not at chance for good."))
    return "\n".join(lines)


# -- §5.1 in two parts: does a runtime gain decide the outcome, and do the curves that leave the floor coincide --
def claim_gain_fate(table: pd.DataFrame, gains=(0.25, 0.5, 2.0, 4.0)) -> tuple[str, str]:
    """(verdict, text) of §5.1's "all gain values functionally equivalent", read on where each run ends:
    runtime gains (``gains``, the paper's set) that end on both sides of the floor are not equivalent.
    ``table``: a ``gain.gain_table``. Valid only where some run of the table left the floor."""
    from .gain import floor_outcomes
    col = "escape step (runtime)"
    if col not in table.columns:
        return verdict(False, False, False), "No runtime-gain run is finished."
    esc = table[col].dropna()
    esc = esc[esc.index.isin([float(g) for g in gains])]
    if len(esc) < 2:
        return verdict(False, False, False), "Fewer than two of the paper's runtime gains are finished."
    left, stayed = [g for g, v in esc.items() if v != "none"], [g for g, v in esc.items() if v == "none"]
    any_left = any(v != "none" for c in table.columns if c.startswith("escape step") for v in table[c].dropna())
    v = verdict(True, any_left, not (left and stayed))
    return v, floor_outcomes(table) + f"\n(a) Runtime gains equivalent in where AttnOnly ends: {v}."


def claim_gain_absorbed(curves: pd.DataFrame, floor: float, bound: float, step: int = 200,
                        gains=(0.25, 0.5, 2.0, 4.0), margin: float = ESCAPE_MARGIN,
                        spreads: dict | None = None) -> tuple[str, str]:
    """(verdict, text) of §5.1's "curves overlapped completely (spread < ``bound`` at any step)", read only on
    the paper's runtime gains whose run left the floor (curves that sit on the floor coincide trivially); the
    weight-level gains that left it are the yardstick. ``curves``: ``gain.gain_curves`` rows; ``spreads``:
    ``gain_spreads`` of the same arguments, if the caller has it already."""
    c = curves[curves.gain.isin([float(g) for g in gains])]
    s = spreads if spreads is not None else gain_spreads(curves, floor, step, gains, margin)
    left = s["runtime_gains"]
    if c[c["mode"] == "runtime"].gain.nunique() < 2:
        return verdict(False, False, False), "Fewer than two of the paper's runtime gains are finished."
    if len(left) < 2:
        return (verdict(True, False, False),
                f"(b) Only {len(left)} of the paper's runtime gains left the floor: the runtime curves that did cannot "
                f"be compared, and curves on the floor coincide trivially. NOT TESTABLE HERE.")
    r = s["runtime"]
    if pd.isna(r):
        return verdict(False, False, False), f"The runtime-gain runs end before step {step}."
    text = (f"(b) Runtime gains that left the floor (g = {', '.join(f'{g:g}' for g in left)}): largest spread of "
            f"their validation curves from step {step} on {r:.4f} (paper: < {bound} at any step).")
    if s["weight"] is not None:
        text += (f" Weight-level gains that left it (g = {', '.join(f'{g:g}' for g in s['weight_gains'])}): "
                 f"{s['weight']:.4f}.")
    v = verdict(True, True, r < bound)
    return v, text + f"\n(b) Absorbed to the paper's precision: {v}."


def gain_spreads(curves: pd.DataFrame, floor: float, step: int = 200, gains=(0.25, 0.5, 2.0, 4.0),
                 margin: float = ESCAPE_MARGIN) -> dict:
    """Per mode, the largest spread from ``step`` on of the validation curves of the gains in ``gains`` whose
    run left the floor (None with fewer than two), and those gains."""
    from .gain import spread_after
    c = curves[curves.gain.isin([float(g) for g in gains])]
    out = {}
    for mode in ("runtime", "weight"):
        m = c[c["mode"] == mode]
        left = sorted(g for g, r in m.groupby("gain") if (r.val_loss <= floor - margin).any())
        out[f"{mode}_gains"] = left
        out[mode] = (spread_after(m[m.gain.isin(left)], step=step)[f"max_spread_from_step_{step}"].iloc[0]
                     if len(left) >= 2 else None)
    return out


def claim_phase2_curves(curves: pd.DataFrame, floor: float, margin: float | None = None) -> str:
    """What the author's Phase-2 curves show, and nothing more: for each AttnOnly seed of the constant-rate
    notebook, the first printed step at least ``margin`` below the unigram floor (or that it never gets
    there) and its best loss, beside the paper's Phase-3 mean. The printed steps are every 100, so an escape is
    placed to within 100 steps; the notebook's floor is computed on our split of the same text."""
    from .experiment import ESCAPE_MARGIN
    from .paper import paper_values
    margin = ESCAPE_MARGIN if margin is None else margin
    attn = curves[curves.config == "AttnOnly"]
    if attn.empty:
        return "The author's Phase-2 curves: none in data/author_phase2_curves.csv."
    parts = []
    for seed, g in attn.groupby("seed", sort=False):
        g = g.sort_values("step")
        below = g[g.val_loss <= floor - margin]
        when = f"leaves the floor by step {int(below.step.iloc[0]):,}" if len(below) else "never leaves the floor"
        parts.append(f"seed {seed} {when} (best {g.val_loss.min():.4f})")
    p3 = paper_values(ref="Fig. 4", phase="phase3", config="AttnOnly").reported.iloc[0]
    ffn = curves[curves.config == "FFNOnly"]
    ffn_text = (f"; FFNOnly stays on the floor in {int((ffn.groupby('seed').val_loss.min() > floor - margin).sum())} "
                f"of {ffn.seed.nunique()} seeds" if len(ffn) else "")
    return ("The author's Phase-2 notebook (constant learning rate, printed every 100 steps), AttnOnly: "
            + "; ".join(parts) + ffn_text + f". Phase 3 (warm-up and cosine; §8.1): AttnOnly {p3} over 8 seeds.")


def claim_author_values(table: pd.DataFrame, floor: float) -> str:
    """Do the stand-in's two headline results survive the author's values (``mechanism.author_value_runs``)? The
    asymmetry: ResidualGPT AttnOnly leaves the floor in every seed and FFNOnly in none, beside Full Residual, the
    control. The joint collapse: nanoGPT AttnOnly leaves the floor in no seed. Each is read for the stand-in's own
    values and for the author's, from the runs' best losses (``ESCAPE_MARGIN`` below the unigram floor)."""
    from .experiment import ESCAPE_MARGIN
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


def schedule_effects(table: pd.DataFrame) -> pd.DataFrame:
    """Issue 23's rule for naming a deciding factor, per (implementation, factor) of ``mechanism.schedule_runs``:
    the escape step of each seed (NaN: not within the budget), how many of the seeds escape, and whether the factor
    decides: every one of its seeds' escape steps lies outside the range of its baseline's ("none", the same
    implementation) over the same seeds, "never" counting as later than any step."""
    rows = []
    done = table.dropna(subset=["best_val_loss"]) if len(table) else table
    for (impl, factor), g in done.groupby(["impl", "factor"], sort=False):
        base = done[(done.impl == impl) & (done.factor == "none") & done.seed.isin(g.seed)]
        steps = g.set_index("seed").escape_step.astype(float)
        b = base.set_index("seed").escape_step.astype(float).fillna(np.inf)
        s = steps.fillna(np.inf)
        decides = (None if factor == "none" or b.empty or set(b.index) != set(s.index) else
                   bool(((s < b.min()) | (s > b.max())).all()))
        rows.append({"impl": impl, "factor": factor, "seeds": len(g), "escaped": int(steps.notna().sum()),
                     "escape steps": ", ".join(f"{int(seed)}: {escape_label(v)}" for seed, v in steps.items()),
                     "baseline range": (f"{escape_label(b.min())} to {escape_label(b.max())}" if len(b) else "-"),
                     "decides": decides})
    return pd.DataFrame(rows, columns=["impl", "factor", "seeds", "escaped", "escape steps", "baseline range",
                                       "decides"])


def claim_schedule_factors(effects: pd.DataFrame) -> str:
    """The factors ``schedule_effects`` names as deciding, or a plain statement that none can be named."""
    judged = effects.dropna(subset=["decides"])
    if judged.empty:
        return "No factor can be judged yet: its runs and its baseline's over the same seeds are not all trained."
    named = judged[judged.decides.astype(bool)]
    lines = [f"{r.impl} {r.factor}: {r.escaped} of {r.seeds} seeds escape ({r['escape steps']}); baseline "
             f"{r['baseline range']}." for _, r in judged.iterrows()]
    verdict = ("Deciding, by that rule: " + ", ".join(f"{r.factor} ({r.impl})" for r in named.itertuples()) + "."
               if len(named) else "No factor can be named as deciding: every factor's escape steps overlap its "
                                  "baseline's range over the same seeds.")
    return "\n".join([*lines, verdict])
