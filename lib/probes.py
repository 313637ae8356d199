"""What the residual stream still knows, block by block (book/mechanism.ipynb).

Three measures of the hidden states on one fixed set of validation batches, at the input to block 0
(the embedding) and after every block:

* ``position_cosine``: the mean cosine similarity between the states of two different positions of
  the same sequence. 1 means every position carries the same vector: the rank collapse that pure
  attention suffers without skip connections (Dong, Cordonnier & Loukas 2021; Noci et al. 2022).
* ``token_accuracy``: how well the current input token can be read back from the state, by nearest
  centroid: one centroid per token type from the first half of the sequences, each position of the
  second half assigned to the nearest one (Euclidean, after subtracting the first half's mean). Chance
  is the share of the most frequent token among the scored positions (``token_chance``): what always
  guessing that token would score. A model that has forgotten which token it is reading cannot
  predict the next one better than the unigram floor.
* ``effective_rank``: exp of the entropy of the normalised singular values of the (positions x width)
  matrix of states (Roy & Vetterli 2007); 1 for identical rows, the width for orthogonal ones of equal
  norm. Uncentred, so that a collapse onto one shared vector reads as rank 1.
"""
from __future__ import annotations

import pandas as pd
import torch

from .diagnostics import capture_activations


def position_cosine(h: torch.Tensor) -> float:
    """Mean cosine similarity between the states of different positions within each sequence, ``h``
    of shape (batch, positions, width); positions with a zero state count as 0."""
    B, T, _ = h.shape
    if T < 2:
        raise ValueError(f"position_cosine needs at least 2 positions, got {T}")
    u = torch.nn.functional.normalize(h.double(), dim=-1)
    gram = u @ u.transpose(1, 2)                                   # (B, T, T)
    off_diagonal = gram.sum(dim=(1, 2)) - gram.diagonal(dim1=1, dim2=2).sum(dim=1)
    return float((off_diagonal / (T * (T - 1))).mean())


def token_accuracy(h: torch.Tensor, idx: torch.Tensor) -> tuple[float, float]:
    """(accuracy, chance) of reading the input token ``idx`` back from the states ``h`` by nearest centroid;
    centroids from the first half of the sequences, scored on the positions of the second half whose
    token the first half has seen."""
    B = h.shape[0]
    if B < 2:
        raise ValueError(f"token_accuracy needs at least 2 sequences (half fit, half scored), got {B}")
    fit_h, fit_t = h[:B // 2].reshape(-1, h.shape[-1]).double(), idx[:B // 2].reshape(-1)
    test_h, test_t = h[B // 2:].reshape(-1, h.shape[-1]).double(), idx[B // 2:].reshape(-1)
    mean = fit_h.mean(dim=0)
    tokens = torch.unique(fit_t)
    centroids = torch.stack([fit_h[fit_t == t].mean(dim=0) for t in tokens]) - mean
    seen = torch.isin(test_t, tokens)
    test_h, test_t = test_h[seen] - mean, test_t[seen]
    predicted = tokens[torch.cdist(test_h, centroids).argmin(dim=1)]
    chance = torch.bincount(test_t).max().item() / len(test_t)
    return float((predicted == test_t).double().mean()), float(chance)


def effective_rank(h: torch.Tensor) -> float:
    """exp(entropy) of the normalised singular values of the states ``h`` flattened to (positions, width)."""
    s = torch.linalg.svdvals(h.reshape(-1, h.shape[-1]).double())
    if s.sum() == 0:
        return 0.0
    p = s / s.sum()
    p = p[p > 0]
    return float(torch.exp(-(p * p.log()).sum()))


@torch.no_grad()
def probe(model, idx: torch.Tensor) -> pd.DataFrame:
    """The three measures at every depth of ``model`` on the input ``idx`` (batch, positions): one row per
    residual-stream state, ``depth`` 0 the embedding and ``depth`` k the output of block k."""
    was_training = model.training
    model.eval()
    try:
        states = capture_activations(model, idx)
    finally:
        model.train(was_training)
    rows = []
    for depth, h in enumerate(states):
        acc, chance = token_accuracy(h, idx)
        rows.append(dict(depth=depth, position_cosine=position_cosine(h), token_accuracy=acc,
                         token_chance=chance, effective_rank=effective_rank(h)))
    return pd.DataFrame(rows)
