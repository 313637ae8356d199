"""``python -m lib bench``: what one training step costs, and training throughput in fp32 and bf16.

``step_cost`` times, side by side in one process, the plain full-batch loop and the Trainer with and
without micro-batches at a preset's shape (the paper's 10M by default; a stand-in's, for its bench
row), and sets each against the step's arithmetic (``step_flops``) and the machine's own fp32 matmul
rate at the step's GEMM shapes (``matmul_rate``): the model FLOP utilisation says how close a loop
is to what this machine's matrix multiplies allow.

For each shape it times (after warm-up steps that are not counted) the Trainer's optimisation steps
and the bare forward/backward/AdamW loop of ``bare_loop_tokens_per_s`` on the same
model and batch, in fp32 and in bf16 autocast, and prints tokens/s and the bf16/fp32 ratio. Nothing
else should run on the machine meanwhile: two cores are easily shared away.
"""

from __future__ import annotations

import statistics
import time

import pandas as pd
import torch

from .config import Experiment, get_preset, replace
from .data import Batches, load_corpus
from .experiment import build_model
from .model import MaskStream
from .train import Trainer, autocast, resolve_device


def bare_loop_tokens_per_s(exp: Experiment, steps: int = 30, device: str = "auto") -> float:
    """Tokens/s of a minimal loop (forward, backward, AdamW step) on the same model, batch size and
    precision, the yardstick for the trainer's overhead."""
    device = resolve_device(device)
    corpus = load_corpus(exp.dataset)
    model = build_model(exp).to(device)
    # No schedule, clipping, evaluation or callbacks: only what any training loop must do, so the
    # difference from the Trainer's rate is the Trainer's own overhead.
    opt = torch.optim.AdamW(model.parameters(), lr=exp.train.lr)
    batches = Batches(
        corpus, exp.model.block_size, exp.train.batch_size, exp.seed, eval_batches=1, device=device
    )
    # three warm-up steps are not timed: the first steps pay for allocation
    # (and, on CUDA, kernel selection)
    for i in range(steps + 3):
        if i == 3:
            if device.startswith("cuda"):
                # the warm-up's queued kernels finish before the clock starts
                torch.cuda.synchronize()
            t0 = time.perf_counter()
        x, y = batches.train_batch()
        with autocast(device, exp.train.precision):
            _, loss = model(x, y)
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
    if device.startswith("cuda"):
        # the kernels are asynchronous: stop the clock when the GPU is done, not Python
        torch.cuda.synchronize()
    return steps * exp.train.batch_size * exp.model.block_size / (time.perf_counter() - t0)


def trainer_tokens_per_s(
    exp,
    steps: int,
    device: str,
    warmup: int = 2,
    micro_batch: int | None = None,
    fast_dropout: bool = False,
) -> float:
    """Tokens/s of ``steps`` Trainer optimisation steps (no evaluation, no diagnostics)."""
    corpus = load_corpus(exp.dataset)
    model = build_model(exp).to(device)
    # One validation batch: the fixed set is drawn when Batches is
    # built, and nothing here evaluates.
    batches = Batches(
        corpus, exp.model.block_size, exp.train.batch_size, exp.seed, eval_batches=1, device=device
    )
    # No callbacks: what is timed is the optimisation step alone, as in a run between evaluations
    # (the diagnostics read gradients only on the step before an evaluation).
    trainer = Trainer(
        model,
        exp.train,
        batches,
        device=device,
        progress=False,
        tokens_per_sample=exp.model.block_size,
        micro_batch=micro_batch,
        masks=MaskStream(exp.seed) if fast_dropout else None,
    )
    for i in range(warmup + steps):
        # The first steps pay for allocation and the first call of each kernel;
        # they are run but not timed.
        if i == warmup:
            if device.startswith("cuda"):
                # the warm-up's queued kernels finish before the clock starts
                torch.cuda.synchronize()
            t0 = time.perf_counter()
        trainer.train_step()
        # train_step does not advance the step (fit does); advanced by hand so the warm-up
        # schedule moves as in a run.
        trainer.step += 1
    if device.startswith("cuda"):
        torch.cuda.synchronize()
    # Kernels are queued, so the clock stops only after the GPU has finished (above).
    return steps * trainer.tokens_per_step / (time.perf_counter() - t0)


def bench(
    scales=("10M", "cpu"),
    steps: int = 5,
    device: str = "auto",
    impl: str = "residualgpt",
    config: str = "FullResidual",
    batch_size: int | None = None,
) -> pd.DataFrame:
    """One row per shape and loop: fp32 and bf16 tokens/s and their ratio. ``batch_size`` replaces
    the presets' batch (the model's shape and the sequence length stay), for hardware on which a
    full 10M batch takes minutes; tokens/s is then that of the smaller batch."""
    device = resolve_device(device)
    rows = []
    for scale in scales:
        # One configuration stands for all four: they differ by one addition per sublayer, nothing
        # beside the matrix multiplies.
        base = get_preset(scale, impl, config)
        if batch_size is not None:
            base = replace(base, batch_size=batch_size)
        # Both loops on the same preset, model and batch, so their ratio is
        # the trainer's own overhead.
        for loop, measure in (
            ("trainer", trainer_tokens_per_s),
            ("bare loop", lambda e, n, d: bare_loop_tokens_per_s(e, n, d)),
        ):
            # fp32 and bf16 side by side: on this project's 2-core AVX2 AMD EPYC bf16
            # autocast is about 18 times slower (book/reproducibility.md), which is why no
            # released run trains in bf16 on a CPU.
            tps = {p: measure(replace(base, precision=p), steps, device) for p in ("fp32", "bf16")}
            # s/step is the time of one optimisation step's tokens (batch_size x
            # grad_accum sequences) at the measured rate: the Trainer's step itself, and
            # for the bare loop, which does not accumulate, as many of its batches as make
            # one step (at 124M, grad_accum 8).
            tokens = base.train.batch_size * base.train.grad_accum * base.model.block_size
            rows.append(
                {
                    "shape": scale,
                    "loop": loop,
                    "impl": impl,
                    "config": config,
                    "tokens/step": tokens,
                    "steps timed": steps,
                    "fp32 tok/s": round(tps["fp32"]),
                    "bf16 tok/s": round(tps["bf16"]),
                    "bf16 / fp32": round(tps["bf16"] / tps["fp32"], 2),
                    "fp32 s/step": round(tokens / tps["fp32"], 3),
                    "bf16 s/step": round(tokens / tps["bf16"], 3),
                }
            )
    df = pd.DataFrame(rows)
    trainer = df[df.loop == "trainer"].set_index("shape")
    bare = df[df.loop == "bare loop"].set_index("shape")
    # Below 1 is what the trainer's bookkeeping costs; the measurement at `cpu` in
    # book/reproducibility.md was 1.11 in fp32 and 0.97 in bf16: within about 10% of the bare
    # loop either way at that shape.
    for scale in scales:  # the trainer's overhead against the bare loop, per precision
        for p in ("fp32", "bf16"):
            df.loc[(df["shape"] == scale) & (df.loop == "trainer"), f"trainer / bare ({p})"] = (
                round(trainer.loc[scale, f"{p} tok/s"] / bare.loc[scale, f"{p} tok/s"], 2)
            )
    return df


def step_flops(exp) -> float:
    """FLOPs of one optimisation step: 6 per parameter per token (forward 2, backward 4) for the
    weights, plus the attention scores and their weighted sum (12 · layers · width · context per
    token, the same accounting as PaLM's appendix B and nanoGPT's ``estimate_mfu``). Position
    embeddings are a lookup, not a matmul, so they are left out of the parameters."""
    m = exp.model
    model = build_model(exp)
    # Counted from a built model, so that a tied or untied head and the
    # biases count as they are trained.
    n_params = model.num_params(non_embedding=True)
    # an untied token embedding is a lookup too; the head's own matrix is the matmul
    if not m.tie_weights:
        n_params -= model.transformer.wte.weight.numel()
    # The attention term counts the full context per token, as estimate_mfu does, though a
    # causal mask leaves about half of those scores unused: the utilisation is on nanoGPT's
    # footing, not a count of useful work.
    per_token = 6 * n_params + 12 * m.n_layer * m.n_embd * m.block_size
    # Per optimisation step: every token of every micro-batch.
    return per_token * m.block_size * exp.train.batch_size * exp.train.grad_accum


def gemm_shapes(exp, rows: int) -> list[tuple[int, int, int]]:
    """The (M, K, N) of the forward matrix multiplies of one block stack and head on ``rows``
    tokens: q/k/v, attention output, the FFN's two layers and the lm_head. The backward pass
    multiplies the same operands transposed, so the rate at these shapes stands for the step's."""
    # The attention scores (q k^T and the weighted sum) are left out: their shapes depend on
    # the head split, so the rate is that of the weight matrices, which hold most of a
    # step's FLOPs at these shapes.
    d, v = exp.model.n_embd, exp.model.vocab_size
    return [(rows, d, 3 * d), (rows, d, d), (rows, d, 4 * d), (rows, 4 * d, d), (rows, d, v)]


def matmul_rate(shapes, device: str = "cpu", repeats: int = 5) -> float:
    """This machine's fp32 FLOP/s over ``shapes`` (one of each per round, ``repeats`` rounds after
    one untimed): the yardstick of the model FLOP utilisation."""
    # fp32, the training precision of every released run; the operands are
    # made once, outside the clock.
    mats = [
        (torch.randn(m, k, device=device), torch.randn(k, n, device=device)) for m, k, n in shapes
    ]
    flops = sum(2 * m * k * n for m, k, n in shapes)
    for i in range(repeats + 1):
        if i == 1:
            if device.startswith("cuda"):
                torch.cuda.synchronize()  # the untimed round is done before the clock starts
            t0 = time.perf_counter()
        # On a CPU each product is done when @ returns; on CUDA the
        # synchronize below waits for the queue.
        for a, b in mats:
            a @ b
    if device.startswith("cuda"):
        torch.cuda.synchronize()
    return repeats * flops / (time.perf_counter() - t0)


def step_cost(
    scale: str = "10M",
    impl: str = "residualgpt",
    config: str = "AttnOnly",
    micro_batches=(8,),
    steps: int = 3,
    device: str = "auto",
    rounds: int = 1,
) -> pd.DataFrame:
    """Seconds per optimisation step, side by side in one process, of the plain full-batch loop
    (``bare_loop_tokens_per_s``), the Trainer on the whole batch and the Trainer with each
    micro-batch size (on a CPU, with and without ``--fast-dropout``), with the step's FLOPs, the
    achieved FLOP/s, the matmul rate at the loop's GEMM shapes (the best of its rounds) and the
    utilisation (the median step's achieved FLOP/s / that best rate). With ``rounds`` above 1 the
    loops take turns, round after round, and each row is the median of its rounds, with their
    range, and its speed-up the median of its per-round ratios to the plain loop (the first row;
    above 1, the plain loop's step is the longer): two cores drift by 10-15% over minutes, and
    taking turns spreads the drift over every loop instead of landing on whichever ran last.
    Nothing else should run meanwhile."""
    if rounds < 1:
        raise ValueError(f"rounds must be at least 1, not {rounds}")
    device = resolve_device(device)
    # The full preset batch, no --batch-size: the point is what one step
    # of the preset's own run costs.
    exp = get_preset(scale, impl, config)
    flops, tokens = (
        step_flops(exp),
        exp.train.batch_size * exp.train.grad_accum * exp.model.block_size,
    )
    # A micro-batch as large as the batch is the whole batch again (a
    # stand-in's batch of 8): timed once.
    micro_batches = [b for b in micro_batches if b != exp.train.batch_size]
    # Lambdas, so each loop builds its model only in its turn.
    loops = [
        ("plain full-batch loop", None, lambda: bare_loop_tokens_per_s(exp, steps, device)),
        ("trainer, whole batch", None, lambda: trainer_tokens_per_s(exp, steps, device, warmup=1)),
    ]
    loops += [
        (
            f"trainer, micro-batches of {b}",
            b,
            lambda b=b: trainer_tokens_per_s(exp, steps, device, warmup=1, micro_batch=b),
        )
        for b in micro_batches
    ]
    # --fast-dropout is a CPU option, and without dropout it does nothing
    if device == "cpu" and exp.model.dropout > 0:
        loops += [
            (
                f"trainer, {f'micro-batches of {b}' if b else 'whole batch'}, fast dropout",
                b,
                lambda b=b: trainer_tokens_per_s(
                    exp, steps, device, warmup=1, micro_batch=b, fast_dropout=True
                ),
            )
            for b in (None, *micro_batches)
        ]
    # Round after round, every loop in its turn, each followed by the matmul rate at its own GEMM
    # shapes (the yardstick of its utilisation, taken at the same moment): s_steps[i] and rates[i]
    # hold loop i's, one per round.
    s_steps, rates = [[] for _ in loops], [[] for _ in loops]
    for _ in range(rounds):
        for times, rate, (_, micro, measure) in zip(s_steps, rates, loops):
            times.append(tokens / measure())
            # With micro-batches of 8 the GEMMs have 8 x 256 rows, not 64 x 256, and a smaller GEMM
            # may run at another rate on the same machine.
            rate.append(
                matmul_rate(
                    gemm_shapes(exp, (micro or exp.train.batch_size) * exp.model.block_size), device
                )
            )
    rows = []
    for times, rate, (name, _, _) in zip(s_steps, rates, loops):
        s_step = statistics.median(times)
        # the speed-up is the median of the paired ratios, round by round: drift slower
        # than a round reaches both loops of that round and cancels in their ratio, where a
        # ratio of medians would keep it
        speedup = statistics.median(p / t for p, t in zip(s_steps[0], times))
        # The yardstick is the best matmul rate measured at the loop's shapes over every round: a
        # round's own rate, in a round that another process slowed, is too low, and set against a
        # step from a quieter moment gave a "utilisation" above 1 (1.17, issue 38). What the machine
        # can do is best seen at its fastest.
        utilisation = flops / s_step / max(rate)
        # What the preset's whole run costs at this step, its training steps only (evaluations add
        # to it: each run's summary.json has the wall time it really took).
        rows.append(
            {
                "shape": scale,
                "loop": name,
                "rounds": rounds,
                "s/step": round(s_step, 2),
                "run minutes (steps only)": round(s_step * exp.train.max_steps / 60, 1),
                "s/step range": f"{min(times):.2f}-{max(times):.2f}",
                "GFLOP/step": round(flops / 1e9),
                "achieved GFLOP/s": round(flops / s_step / 1e9, 1),
                "matmul GFLOP/s (best of rounds)": round(max(rate) / 1e9, 1),
                "utilisation": round(utilisation, 2),
                "speed-up vs plain": round(speedup, 2),
            }
        )
    return pd.DataFrame(rows)
