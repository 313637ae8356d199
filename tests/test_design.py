"""Facts of the design that verdicts rest on, proven on tiny runs: a verdict may cite one
of these instead of a run (``claims.fixed_val_batches.claim_eval_noise``: our
evaluation cannot move training)."""

from lib.engine.config import replace
from lib.engine.experiment import run
from lib.engine.runs import RunDir, run_path


def test_switching_validation_batches_alone_cannot_change_training(tiny, tmp_path):
    # random validation batches (nanoGPT's) against fixed ones (ResidualGPT's), dropout on: the
    # evaluation draws from its own generator, so the training batches, the masks and every update
    # are the same; only the measurement differs
    # the tiny ResidualGPT: the evaluation's generator is the same code in both
    base = tiny(dropout=0.2)
    runs = {}
    for mode in ("random", "fixed"):
        exp = replace(base, val_mode=mode)
        run(exp, runs_dir=tmp_path / mode, progress=False, device="cpu")
        runs[mode] = RunDir(run_path(exp, tmp_path / mode)).history()
    trained = [
        {k: r.get(k) for k in ("step", "train_loss", "lr", "grad_norm_attn")}
        for r in runs["random"]
    ]
    assert trained == [
        {k: r.get(k) for k in ("step", "train_loss", "lr", "grad_norm_attn")} for r in runs["fixed"]
    ]
    # and the switch is not a no-op: the validation losses themselves differ
    assert [r["val_loss"] for r in runs["random"]][1:] != [r["val_loss"] for r in runs["fixed"]][1:]


def test_the_gain_twins_attention_kernel_is_rounding_only_at_dropout_0():
    # plans.gain_twins: at the stand-in's dropout 0 the masked softmax computes SDPA's attention,
    # reordered, so the twin's curve differs from its run's by rounding alone
    import torch

    from lib.engine import plans
    from lib.engine.model import GPT

    twins = plans.gain_twins()
    assert [e.gain for e in twins] == list(plans.TWIN_GAINS) and {
        e.model.dropout for e in twins
    } == {0.0}
    small = replace(twins[0], n_layer=2, n_embd=32, n_head=2, block_size=32)
    torch.manual_seed(0)
    a = GPT(replace(small, attn_kernel="sdpa").model)
    b = GPT(small.model)
    b.load_state_dict(a.state_dict())
    x = torch.randint(0, small.model.vocab_size, (4, 32))
    la, lb = a(x)[0], b(x)[0]
    assert torch.allclose(la, lb, atol=1e-5, rtol=0)  # the same values, to rounding
