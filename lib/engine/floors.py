"""The n-gram floors: the loss of a model that reads n-1 tokens of context and no more, estimated on
a corpus's train split and scored on its validation split (or on an evaluation's own batches). The
unigram floor (no context) is the "collapse floor" every chapter draws."""

from __future__ import annotations

import numpy as np

from .data import Corpus


def unigram_floor(corpus: Corpus, alpha: float = 0.5) -> float:
    """Cross-entropy (nats/token) of the train split's unigram distribution on val.

    This is the loss of a model that ignores context and predicts token
    frequencies: the 'collapse floor' the partial configurations reach. The
    counts get add-``alpha`` smoothing (Krichevsky-Trofimov, 0.5) so a val
    token never seen in training has finite cost. On the character data the
    smoothing changes the floor by less than 1e-4; on GPT-2 BPE TinyShakespeare
    (2% of val tokens unseen in train, 11,234 of 50,257 types seen) it is worth
    about 0.2 nats, so there the NoResidual run is the better floor to compare with.
    """
    return float(-_unigram_logp(corpus, alpha)[np.asarray(corpus.val)].mean())


def _unigram_logp(corpus: Corpus, alpha: float = 0.5) -> np.ndarray:
    # minlength: a token id that never occurs in train still gets its alpha, so the
    # distribution covers the whole vocabulary the model predicts over; float64 before
    # the fractional alpha is added.
    counts = (
        np.bincount(np.asarray(corpus.train), minlength=corpus.vocab_size).astype(np.float64)
        + alpha
    )
    return np.log(counts / counts.sum())


def unigram_floor_on(corpus: Corpus, batches, alpha: float = 0.5) -> float:
    """``unigram_floor`` scored on the targets of ``batches`` (``[(x, y), ...]``) instead of the
    whole val split: the floor on exactly the tokens an evaluation averages over. The fixed
    validation batches are a sample of the split (overlapping windows, drawn once), slightly easier
    or harder than the whole of it; on them a collapsed run's loss is compared like for like."""
    # The targets only: the floor predicts y without looking at x. .cpu(),
    # as the batches may be on a GPU.
    ys = np.concatenate([np.asarray(y.cpu()).reshape(-1) for _, y in batches])
    return float(-_unigram_logp(corpus, alpha)[ys].mean())


def ngram_floor(corpus: Corpus, n: int, alpha: float = 0.5) -> float:
    """Cross-entropy (nats/token) on the val split of the order-``n`` model estimated on the
    train split: P(w | previous n-1 tokens) = (c(context, w) + alpha) / (c(context) + alpha *
    V), add-``alpha`` smoothing over the vocabulary V (so an unseen context falls back to
    uniform). n = 1 is ``unigram_floor``: no context; n = 2 sees only the token before; n = 3
    the two before. Scored on every val token that has n-1 predecessors in the val split (the
    first n-1 are skipped), so it is the floor of a model that reads only that much context,
    not a bound on a model that reads more."""
    # Order 0 would be the uniform distribution, which needs no
    # estimate; refused rather than guessed.
    if n < 1:
        raise ValueError(f"n must be >= 1, got {n}")
    V = corpus.vocab_size

    # Base-V digits, so a window is one int64 and counting is np.unique. It must fit: V^n < 2^63
    # holds for n <= 10 at 65 characters and n <= 4 at GPT-2's 50,257; past that the codes would
    # wrap and silently merge different windows, so it is refused.
    if V**n >= 2**63:
        raise ValueError(
            f"an order-{n} window over {V:,} tokens does not fit one int64 code; the largest order "
            f"here is {max(k for k in range(1, n) if V**k < 2**63)}"
        )

    # each window of ``width`` tokens as one integer
    def codes(ids: np.ndarray, width: int) -> np.ndarray:
        ids = np.asarray(ids, dtype=np.int64)
        out = np.zeros(len(ids) - width + 1, dtype=np.int64)
        for k in range(width):
            out = out * V + ids[k : len(ids) - width + 1 + k]
        return out

    def lookup(keys: np.ndarray, table: tuple[np.ndarray, np.ndarray]) -> np.ndarray:
        uniq, counts = table
        # np.unique sorts, so a binary search finds each key; a key past the last entry is clipped
        # and then fails the equality test, counting 0.
        i = np.clip(np.searchsorted(uniq, keys), 0, max(len(uniq) - 1, 0))
        return (
            np.where(uniq[i] == keys, counts[i], 0)
            if len(uniq)
            else np.zeros(len(keys), dtype=np.int64)
        )

    train, val = np.asarray(corpus.train), np.asarray(corpus.val)
    # c(context, w): every window of n train tokens.
    joint = np.unique(codes(train, n), return_counts=True)
    val_joint = codes(val, n)
    if n == 1:
        # No context: the denominator is the number of train tokens, which
        # makes n = 1 the unigram floor.
        context_counts = np.full(len(val_joint), len(train), dtype=np.int64)
    else:
        # c(context) counts the contexts that are followed by a token in train:
        # windows of n-1 but the last.
        context = np.unique(codes(train[:-1], n - 1), return_counts=True)
        # Dropping the last base-V digit leaves the context's own code.
        context_counts = lookup(val_joint // V, context)
    # An unseen context has count 0 in both: p is alpha / (alpha * V) = 1/V,
    # uniform, as the docstring says.
    p = (lookup(val_joint, joint) + alpha) / (context_counts + alpha * V)
    return float(-np.log(p).mean())


def bigram_floor_on(corpus: Corpus, batches, alpha: float = 0.5) -> float:
    """``ngram_floor(corpus, 2)`` scored on the evaluation's own batches (``[(x, y), ...]``): the
    add-``alpha`` bigram model of the train split, P(y_t | x_t), averaged over every target of the
    batches (each target's current token x_t is in the batch, so every position counts). Small
    vocabularies only (a V x V table)."""
    V = corpus.vocab_size
    # A dense V x V float64 table: 134 MB at 4,096, about 20 GB at GPT-2's 50,257; the BPE data has
    # ngram_floor instead.
    if V > 4096:
        raise ValueError(
            f"bigram_floor_on builds a {V} x {V} table; valid: vocabularies up to 4,096"
        )
    train = np.asarray(corpus.train, dtype=np.int64)
    counts = np.zeros((V, V)) + alpha
    # np.add.at, not counts[a, b] += 1: with fancy indexing a pair that
    # occurs many times would count once.
    np.add.at(counts, (train[:-1], train[1:]), 1)
    logp = np.log(counts / counts.sum(axis=1, keepdims=True))
    # Every position of a window has its current token in x, so every target
    # is scored, the first included.
    x = np.concatenate([np.asarray(b[0].cpu()).reshape(-1) for b in batches])
    y = np.concatenate([np.asarray(b[1].cpu()).reshape(-1) for b in batches])
    return float(-logp[x, y].mean())
