"""The released runs, checked without training: each is a plan's run whose files agree with each
other, was trained from committed code, and starts from the loss its seed gives."""

import json

import pytest

from lib.engine.runs import RUNS_DIR, RunDir
from lib.engine.sweep import releasable


@pytest.fixture(scope="module")
def released():
    ok, skipped = releasable(RUNS_DIR)
    # In a working copy a run may be training (never committed while it
    # does); a clean clone has none.
    return ok, [s for s in skipped if not s.endswith(": status running") and ".replaced-" not in s]


def test_every_released_run_is_a_plans_run_whose_files_agree(released):
    ok, bad = released
    assert len(ok) >= 50  # the release and the mechanism runs
    assert bad == []  # each line names the run and what is wrong with it


def test_no_released_run_was_trained_from_uncommitted_code(released):
    ok, _ = released
    dirty = []
    for path in ok:
        env = json.loads((path / "env.json").read_text())
        runs = [env, *env.get("resumed", [])]  # a resumed run: every leg of it
        if any(r.get("git_dirty_lib") is not False or not r.get("git_commit") for r in runs):
            dirty.append(str(path))
    assert dirty == [], "trained from uncommitted lib/ (or with no commit recorded); retrain them"


def _one_per_kind(ok):
    """The first released run of each (scale, implementation): the fixed and the random validation
    batches, the character and the BPE data."""
    seen, out = set(), []
    for path in ok:
        exp = RunDir(path).experiment()
        if (exp.scale, exp.impl) not in seen and exp.gain_mode is None:
            seen.add((exp.scale, exp.impl))
            out.append(path)
    return out


def test_the_step_0_loss_reproduces_from_the_seed(released):
    # The untrained model of the run's seed, on the run's own validation batches (fixed, or
    # nanoGPT's random ones from the run's seed), gives the loss the run recorded at step 0: the run
    # is what its config says. That full evaluation is checked once, on nanoGPT's stand-in run (its
    # random batches drawn from the run's seed). Elsewhere it costs from a quarter of a minute to
    # minutes here, so there the fingerprint is the residual stream's norm after every block on the
    # first fixed batch, which the run recorded at step 0 too: the same seeded initialisation and
    # data, at a twentieth of the cost.
    import torch

    from lib.engine.data import Batches, load_corpus
    from lib.engine.diagnostics import hidden_norms
    from lib.engine.experiment import build_model
    from lib.engine.results import per_batch_val_losses

    ok, _ = released
    checked = _one_per_kind(ok)
    assert len(checked) >= 3
    for path in checked:
        rd = RunDir(path)
        exp = rd.experiment()
        first = rd.history()[0]
        if not (exp.scale == "cpu" and exp.impl == "nanogpt") and "hidden_norm" in first:
            b = Batches(
                load_corpus(exp.dataset),
                exp.model.block_size,
                exp.train.batch_size,
                exp.seed,
                eval_batches=1,
                train_eval_batches=0,
                val_seed=exp.train.val_seed,
            )
            with torch.no_grad():
                norms = hidden_norms(build_model(exp).eval(), b.fixed_val[0][0])
            assert norms == pytest.approx(first["hidden_norm"], rel=1e-5), path
            continue
        loss = per_batch_val_losses(
            build_model(exp), exp, exp.train.eval_batches, exp.train.val_mode, seed=exp.seed
        ).mean()
        assert loss == pytest.approx(first["val_loss"], rel=1e-6), path
