"""What the residual stream still knows, block by block (book/mechanism.ipynb).

Three measures of the hidden states on one fixed set of validation batches, at depth 0 (the
embedding, the input to the first block) and at depth k, after the k-th block (1-based):

* ``position_cosine``: the mean cosine similarity between the states of two different positions of
  the same sequence. 1 means every position carries the same vector: the rank collapse that pure
  attention suffers without skip connections (Dong, Cordonnier & Loukas 2021; Noci et al. 2022).
* ``token_accuracy``: how well the current input token can be read back from the state, by nearest
  centroid: one centroid per token type from the first half of the sequences, each position of the
  second half assigned to the nearest one (Euclidean, after subtracting the first half's mean).
  Chance is the share of the most frequent token among the scored positions (``token_chance``): what
  always guessing that token would score. A model that has forgotten which token it is reading
  cannot predict the next one better than the unigram floor.
* ``effective_rank``: exp of the entropy of the normalised singular values of the (positions x
  width) matrix of states (Roy & Vetterli 2007); 1 for identical rows, the width for orthogonal ones
  of equal norm. Uncentred, so that a collapse onto one shared vector reads as rank 1.
"""

from __future__ import annotations

import pandas as pd
import torch

# One number for the book's probes of a trained model and the callback's during training, so the
# two are read on equally many sequences; small enough that probing at every evaluation costs
# little beside the step itself.
# sequences of one fixed validation batch the probes read (the book and the callback)
PROBE_SEQUENCES = 16


@torch.no_grad()
def capture_activations(model, idx) -> list[torch.Tensor]:
    """Residual-stream states by depth: [the embedding (input to the first block), after
    block 1, ..., after block L]."""
    blocks = model.transformer.h
    captured: list[torch.Tensor] = []
    # Hooks, not a copy of GPT.forward: the states are the model's own, whatever Block does
    # with its switches. Block 0's input (a pre-hook) is the embedding after its dropout, the
    # stream as the first block sees it.
    handles = [
        blocks[0].register_forward_pre_hook(lambda m, args: captured.append(args[0].detach()))
    ]
    handles += [
        b.register_forward_hook(lambda m, args, out: captured.append(out.detach())) for b in blocks
    ]
    try:
        model(idx)
    finally:
        # removed even if the forward fails: a hook left behind would store
        # every later forward's states
        for h in handles:
            h.remove()
    return captured


def position_cosine(h: torch.Tensor) -> float:
    """Mean cosine similarity between the states of different positions within each sequence, ``h``
    of shape (batch, positions, width); positions with a zero state count as 0."""
    B, T, _ = h.shape
    if T < 2:
        raise ValueError(f"position_cosine needs at least 2 positions, got {T}")
    # double, as in the other two probes: one precision for every measure, whatever dtype the
    # states arrive in. normalize leaves a zero vector at zero (its eps), which is why such a
    # position counts as 0, not NaN.
    u = torch.nn.functional.normalize(h.double(), dim=-1)
    gram = u @ u.transpose(1, 2)  # (B, T, T)
    # a position's similarity to itself is 1 whatever the model does; only the
    # T(T-1) pairs of two positions count
    off_diagonal = gram.sum(dim=(1, 2)) - gram.diagonal(dim1=1, dim2=2).sum(dim=1)
    return float((off_diagonal / (T * (T - 1))).mean())


def token_accuracy(h: torch.Tensor, idx: torch.Tensor) -> tuple[float, float]:
    """(accuracy, chance) of reading the input token ``idx`` back from the states ``h`` by nearest
    centroid; centroids from the first half of the sequences, scored on the positions of the second
    half whose token the first half has seen."""
    B = h.shape[0]
    if B < 2:
        raise ValueError(
            f"token_accuracy needs at least 2 sequences (half fit, half scored), got {B}"
        )
    # Split by sequence, not by position: the positions scored never helped build
    # the centroids they are read by.
    fit_h, fit_t = h[: B // 2].reshape(-1, h.shape[-1]).double(), idx[: B // 2].reshape(-1)
    test_h, test_t = h[B // 2 :].reshape(-1, h.shape[-1]).double(), idx[B // 2 :].reshape(-1)
    mean = fit_h.mean(dim=0)
    tokens, fit_i = torch.unique(fit_t, return_inverse=True)
    sums = torch.zeros(len(tokens), h.shape[-1], dtype=fit_h.dtype).index_add_(0, fit_i, fit_h)
    centroids = sums / torch.bincount(fit_i, minlength=len(tokens)).unsqueeze(1) - mean
    # a token the first half never saw has no centroid, so it would count as
    # wrong whatever the state holds
    seen = torch.isin(test_t, tokens)
    test_h, test_t = test_h[seen] - mean, test_t[seen]
    # Nearest centroid: argmin |x - c|^2 = argmin (|c|^2 - 2 x.c), one matrix product. Centring
    # both sides on the first half's mean changes no distance; it keeps a large vector shared by
    # every state out of the expanded form, where it would cancel between the two terms and leave
    # rounding to decide the argmin.
    predicted = tokens[
        ((centroids * centroids).sum(dim=1) - 2 * test_h @ centroids.T).argmin(dim=1)
    ]
    chance = torch.bincount(test_t).max().item() / len(test_t)
    return float((predicted == test_t).double().mean()), float(chance)


def effective_rank(h: torch.Tensor) -> float:
    """exp(entropy) of the normalised singular values of the states ``h``
    flattened to (positions, width)."""
    x = h.reshape(-1, h.shape[-1]).double()
    # Singular values from the (width x width) Gram matrix: the same numbers, far cheaper than an
    # SVD of the (positions x width) matrix.
    # clamp: rounding can leave the smallest eigenvalues of a rank-deficient
    # Gram matrix slightly negative
    s = torch.linalg.eigvalsh(x.T @ x).clamp(min=0).sqrt()
    # every state zero: no direction at all, rather than the 0/0 of the normalisation
    if s.sum() == 0:
        return 0.0
    p = s / s.sum()
    p = p[p > 0]  # 0 log 0 is 0 by definition, but NaN in torch
    return float(torch.exp(-(p * p.log()).sum()))


@torch.no_grad()
def probe(model, idx: torch.Tensor) -> pd.DataFrame:
    """The three measures at every depth of ``model`` on the input ``idx`` (batch,
    positions): one row per residual-stream state, ``depth`` 0 the embedding and
    ``depth`` k the output of block k."""
    # One thread: the tensors are small, and torch's thread pool on a busy 2-core machine costs more
    # than it saves (an eigvalsh of 128 x 128 took 0.6 s beside a training run, 2 ms on one thread).
    # It also runs inside the trainer's evaluation (ProbeCallback), so it leaves the mode
    # and the thread count as it found them; eval mode: dropout off, the states a function
    # of the weights and the input alone.
    was_training, threads = model.training, torch.get_num_threads()
    model.eval()
    torch.set_num_threads(1)
    try:
        states = capture_activations(model, idx)
        rows = []
        for depth, h in enumerate(states):
            acc, chance = token_accuracy(h, idx)
            rows.append(
                dict(
                    depth=depth,
                    position_cosine=position_cosine(h),
                    token_accuracy=acc,
                    token_chance=chance,
                    effective_rank=effective_rank(h),
                )
            )
    finally:
        model.train(was_training)
        torch.set_num_threads(threads)
    return pd.DataFrame(rows)
