"""``python -m lib bench``: training throughput in fp32 and bf16, in one process.

For each shape it times (after warm-up steps that are not counted) the Trainer's optimisation steps
and the bare forward/backward/AdamW loop of ``lib.experiment.bare_loop_tokens_per_s`` on the same
model and batch, in fp32 and in bf16 autocast, and prints tokens/s and the bf16/fp32 ratio. Nothing
else should run on the machine meanwhile: two cores are easily shared away.
"""
from __future__ import annotations

import time

import pandas as pd
import torch

from .config import get_preset, replace
from .data import Batches, load_corpus
from .experiment import bare_loop_tokens_per_s, build_model
from .train import Trainer, resolve_device


def trainer_tokens_per_s(exp, steps: int, device: str, warmup: int = 2) -> float:
    """Tokens/s of ``steps`` Trainer optimisation steps (no evaluation, no diagnostics)."""
    corpus = load_corpus(exp.dataset)
    model = build_model(exp).to(device)
    batches = Batches(corpus, exp.model.block_size, exp.train.batch_size, exp.seed, eval_batches=1,
                      device=device)
    trainer = Trainer(model, exp.train, batches, device=device, progress=False,
                      tokens_per_sample=exp.model.block_size)
    for i in range(warmup + steps):
        if i == warmup:
            t0 = time.perf_counter()
        trainer.train_step()
        trainer.step += 1
    if device.startswith("cuda"):
        torch.cuda.synchronize()
    return steps * trainer.tokens_per_step / (time.perf_counter() - t0)


def bench(scales=("10M", "cpu"), steps: int = 5, device: str = "auto", impl: str = "residualgpt",
          config: str = "FullResidual", batch_size: int | None = None) -> pd.DataFrame:
    """One row per shape and loop: fp32 and bf16 tokens/s and their ratio. ``batch_size`` replaces the
    presets' batch (the model's shape and the sequence length stay), for hardware on which a full 10M
    batch takes minutes; tokens/s is then that of the smaller batch."""
    device = resolve_device(device)
    rows = []
    for scale in scales:
        base = get_preset(scale, impl, config)
        if batch_size is not None:
            base = replace(base, batch_size=batch_size)
        for loop, measure in (("trainer", trainer_tokens_per_s),
                              ("bare loop", lambda e, n, d: bare_loop_tokens_per_s(e, n, d))):
            tps = {p: measure(replace(base, precision=p), steps, device) for p in ("fp32", "bf16")}
            rows.append({"shape": scale, "loop": loop, "impl": impl, "config": config,
                         "tokens/step": base.train.batch_size * base.train.grad_accum * base.model.block_size,
                         "steps timed": steps, "fp32 tok/s": round(tps["fp32"]), "bf16 tok/s": round(tps["bf16"]),
                         "bf16 / fp32": round(tps["bf16"] / tps["fp32"], 2),
                         "fp32 s/step": round(base.train.batch_size * base.model.block_size / tps["fp32"], 3),
                         "bf16 s/step": round(base.train.batch_size * base.model.block_size / tps["bf16"], 3)})
    df = pd.DataFrame(rows)
    trainer = df[df.loop == "trainer"].set_index("shape")
    bare = df[df.loop == "bare loop"].set_index("shape")
    for scale in scales:  # the trainer's overhead against the bare loop, per precision
        for p in ("fp32", "bf16"):
            df.loc[(df["shape"] == scale) & (df.loop == "trainer"), f"trainer / bare ({p})"] = round(
                trainer.loc[scale, f"{p} tok/s"] / bare.loc[scale, f"{p} tok/s"], 2)
    return df

