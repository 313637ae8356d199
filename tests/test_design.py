"""Facts of the design that verdicts rest on, proven on tiny runs: a verdict may cite one of these instead of a run
(``chapters.fixed_val_batches.claim_eval_noise``: our evaluation cannot move training)."""
from lib.config import replace
from lib.experiment import run
from lib.runs import RunDir, run_path


def test_switching_validation_batches_alone_cannot_change_training(tiny, tmp_path):
    # random validation batches (nanoGPT's) against fixed ones (ResidualGPT's), dropout on: the evaluation draws from
    # its own generator, so the training batches, the masks and every update are the same; only the measurement differs
    base = tiny(dropout=0.2)  # the tiny ResidualGPT: the evaluation's generator is the same code in both
    runs = {}
    for mode in ("random", "fixed"):
        exp = replace(base, val_mode=mode)
        run(exp, runs_dir=tmp_path / mode, progress=False, device="cpu")
        runs[mode] = RunDir(run_path(exp, tmp_path / mode)).history()
    trained = [{k: r.get(k) for k in ("step", "train_loss", "lr", "grad_norm_attn")} for r in runs["random"]]
    assert trained == [{k: r.get(k) for k in ("step", "train_loss", "lr", "grad_norm_attn")} for r in runs["fixed"]]
    # and the switch is not a no-op: the validation losses themselves differ
    assert [r["val_loss"] for r in runs["random"]][1:] != [r["val_loss"] for r in runs["fixed"]][1:]
