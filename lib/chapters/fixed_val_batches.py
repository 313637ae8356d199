"""§5.2: how much of the gap between configurations the noise of random validation batches could explain."""
from __future__ import annotations

import numpy as np
import pandas as pd


def eval_noise(per_batch: np.ndarray, eval_batches: int, n_resamples: int = 2000, seed: int = 0) -> float:
    """Std of an evaluation that averages ``eval_batches`` random batches, by resampling."""
    rng = np.random.default_rng(seed)
    means = rng.choice(per_batch, size=(n_resamples, eval_batches), replace=True).mean(axis=1)
    return float(means.std(ddof=1))


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
