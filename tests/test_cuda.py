"""The GPU loop, on a GPU: skipped where CUDA is absent (this project's CI).
`bash scripts/gpu_check.sh` runs it on a GPU machine, with a few dozen steps at the 10M and 124M
shapes and the measured tokens/s."""

import pytest
import torch

from lib.engine.config import get_preset, replace
from lib.engine.experiment import run
from lib.engine.runs import RunDir, run_path

pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")


@pytest.mark.parametrize(
    "scale, dataset, precision",
    [("10M", None, "fp32"), ("10M", None, "bf16"), ("124M", "shakespeare_gpt2", "bf16")],
)
def test_a_few_steps_at_the_paper_shapes_train_on_cuda(tmp_path, scale, dataset, precision):
    exp = replace(
        get_preset(scale, "residualgpt", "AttnOnly"),
        max_steps=30,
        eval_interval=10,
        eval_batches=4,
        train_eval_batches=2,
        precision=precision,
        warmup_steps=10,
    )
    if dataset:  # the 124M model on data that needs no preparation
        exp = replace(exp, dataset=dataset)
    s = run(exp, runs_dir=tmp_path, device="cuda", progress=False)
    hist = RunDir(run_path(exp, tmp_path)).history()
    assert s["status"] == "complete" and s["device"].startswith("cuda")
    assert hist[-1]["val_loss"] < hist[0]["val_loss"]
    print(f"{scale} {precision}: {s['tokens_per_s']:,.0f} tokens/s")


def test_the_cuda_loop_uses_fused_adamw_and_tf32():
    from lib.engine.data import Batches, load_corpus
    from lib.engine.experiment import build_model
    from lib.engine.train import Trainer

    exp = get_preset("cpu", "residualgpt", "AttnOnly")
    model = build_model(exp).cuda()
    batches = Batches(load_corpus(exp.dataset), 128, 4, 0, eval_batches=1, device="cuda")
    trainer = Trainer(model, exp.train, batches, device="cuda", progress=False)
    assert trainer.optimizer.defaults.get("fused") is True
    assert torch.backends.cuda.matmul.allow_tf32 and trainer.sync_every == Trainer.SYNC_EVERY_CUDA
