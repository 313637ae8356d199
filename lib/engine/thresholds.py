"""The thresholds every verdict reads, each defined once: when a run has left the floor
(``ESCAPE_MARGIN``, ``left_floor``, ``escape_step``), which floor a set of runs is judged on
(``judged_floor``), how many random batches measure one evaluation's noise (``NOISE_BATCHES``) and
the step from which §5.1's spread is read (``ABSORB_STEP``).

A leaf: it imports nothing from lib, so a run's summary (runs, experiment), the tables (results) and
every chapter read the same definitions, and a test that moves one moves them all."""

from __future__ import annotations

# A run has "escaped" once val loss is this far below the unigram floor. The paper's collapsed runs
# sit within 0.023 of No Residual (Tables 2 to 5) and its recovered ones more than a full unit below
# the floor, so 0.1 is far from both; it is also far above the noise of one evaluation (the
# fixed-batch chapter measures it).
ESCAPE_MARGIN = 0.1


def left_floor(loss, floor: float, margin: float = ESCAPE_MARGIN):
    """The floor test: ``loss`` at least ``margin`` below ``floor``. ``loss`` is a number, an
    array or a Series (then the test is per element); a NaN is never below the floor, so
    it never counts as an escape."""
    return loss <= floor - margin


def escape_step(history: list[dict], floor: float, margin: float = ESCAPE_MARGIN):
    """First evaluation step whose val loss has left the floor (``left_floor``), or None."""
    # The first evaluation, not the best: it dates the escape, as the escape map shows it. A
    # diverged row has no finite val_loss and never counts; None means the run never left the floor.
    # RunDir.problems holds a summary's escape_step to this, on the history it summarises.
    return next(
        (
            r["step"]
            for r in history
            if r.get("val_loss") is not None and left_floor(r["val_loss"], floor, margin)
        ),
        None,
    )


def judged_floor(
    val_mode: str, split: float, batches: float, empirical: float | None = None
) -> float:
    """Which floor a set of runs is judged on, like for like: the empirical NoResidual floor where
    there is one (BPE data, where smoothing moves the analytic floor by more than the margin);
    otherwise the unigram floor of the tokens the runs were evaluated on: the fixed validation
    batches for ``val_mode`` "fixed" (ResidualGPT), the whole split for "random" (nanoGPT's
    fresh batches average over it)."""
    if val_mode not in ("fixed", "random"):
        raise ValueError(f"val_mode {val_mode!r} is not one of fixed, random")
    if empirical is not None:
        return empirical
    return batches if val_mode == "fixed" else split


# Random validation batches drawn per checkpoint to measure one evaluation's noise (the
# fixed-batch chapter, the front page's §5.2 row). One number, since the cache of per-batch
# losses they share is keyed by it.
NOISE_BATCHES = 200

# §5.1: AdamW absorbs the gain "within ≈200 steps"; the spread across
# gains is read from this step on.
ABSORB_STEP = 200
