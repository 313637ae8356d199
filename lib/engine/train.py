"""A model-agnostic training loop (Table 1's optimiser, schedule, clipping, accumulation).

The Trainer needs only ``model(x, y) -> (logits, loss)`` and a batch source
with ``train_batch()``, ``val_batches(mode)`` and ``train_eval_batches()``.
Diagnostics, run directories and checkpoints attach through callbacks.

Slightly longer than the house's ~350 lines: the loop, its schedule, accumulation, DDP and resume
are one object, as nanoGPT's train.py keeps them.
"""

from __future__ import annotations

import contextlib
import math
import os
import sys
import time
from dataclasses import dataclass

import torch
from tqdm.auto import tqdm

from .config import ConfigError, TrainConfig
from .model import MaskStream, use_mask_stream


class Callback:
    """Hooks into the loop; every method is optional."""

    # minGPT's pattern: the loop knows nothing about gradient norms, probes or run directories
    # (STYLE rule 4), and a run without diagnostics attaches none, so it pays for none.

    def on_after_backward(self, trainer: "Trainer", step: int) -> None:
        """Gradients of the last step before an evaluation are in ``.grad`` (before clipping)."""

    def on_eval(self, trainer: "Trainer", step: int, row: dict) -> None:
        """Add keys to the evaluation row; the model is in eval mode."""

    def on_history(self, trainer: "Trainer", step: int) -> None:
        """After each evaluation row has been appended (checkpointing happens here)."""


def resolve_device(device: str = "auto") -> str:
    """``auto`` | ``cpu`` | ``cuda`` | ``cuda:N``; CUDA only where it is there."""
    # ConfigError, like every bad flag: the CLI turns it into one line and exit 2,
    # before a run directory exists
    kind, _, index = device.partition(":")
    if kind not in ("auto", "cpu", "cuda") or (index and (kind != "cuda" or not index.isdigit())):
        raise ConfigError(f"unknown device {device!r}; valid: auto, cpu, cuda, cuda:N")
    if device == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    # An explicit cuda is refused where there is none, never quietly trained on the CPU: env.json
    # would record "cpu", but the reader asked for, and may compare against, a GPU run.
    if kind == "cuda":
        if not torch.cuda.is_available():
            raise ConfigError(
                f"device {device!r}: this machine has no CUDA device (torch.cuda.is_available() is "
                f"False); valid here: auto, cpu"
            )
        if index and int(index) >= torch.cuda.device_count():
            raise ConfigError(
                f"device {device!r}: this machine has {torch.cuda.device_count()} CUDA device(s)"
            )
    return device


def resolve_precision(precision: str, device: str) -> str:
    """``auto``: bf16 on CUDA (where the GPU supports it; else fp32, said on stderr), fp32 on the
    CPU. An explicit ``bf16`` on a CUDA device without bf16 is refused."""
    valid = ("auto", "fp32", "bf16")
    if precision not in valid:
        raise ValueError(f"unknown precision {precision!r}; valid: {', '.join(valid)}")
    cuda = device.startswith("cuda")
    bf16_ok = not cuda or torch.cuda.is_bf16_supported()  # the CPU's autocast always has bf16
    if precision == "auto":
        if cuda and not bf16_ok:
            print(
                f"{torch.cuda.get_device_name(device)} has no bf16: training in fp32",
                file=sys.stderr,
            )
        return "bf16" if cuda and bf16_ok else "fp32"
    if precision == "bf16" and not bf16_ok:
        raise ValueError(
            f"{torch.cuda.get_device_name(device)} does not support bf16; valid here: fp32"
        )
    return precision


def autocast(device: str, precision: str):
    """The forward passes' context: bf16 autocast on the device's kind, or nothing (fp32)."""
    if precision == "fp32":
        return contextlib.nullcontext()
    # bf16 only, never fp16: bf16 has fp32's exponent range, so no GradScaler is needed. The weights
    # and AdamW's state stay fp32; autocast runs only the ops on its list (the matmuls) in bf16.
    return torch.autocast(device.partition(":")[0], dtype=torch.bfloat16)


def set_deterministic(on: bool) -> None:
    """The paper's forced determinism (§6.1, Figs. 3-4): cuBLAS
    workspace + deterministic algorithms."""
    if on:
        # Without it, use_deterministic_algorithms makes cuBLAS calls raise on CUDA >= 10.2;
        # ":4096:8" is one of the two values the CUDA docs name. Harmless on the CPU, and
        # recorded in env.json either way.
        os.environ["CUBLAS_WORKSPACE_CONFIG"] = ":4096:8"
    # The flag is process-wide, so each run sets it rather than inheriting the last run's. Turning
    # it off where it is already off is skipped: torch.use_deterministic_algorithms imports
    # torch._inductor to set inductor's flag too (~2 s a process on this CPU, paid by every sweep
    # worker and test subprocess), and a process starts with both flags off; only this function
    # turns them on, and it turns both.
    if on or torch.are_deterministic_algorithms_enabled():
        torch.use_deterministic_algorithms(on)


def lr_at(cfg: TrainConfig, step: int) -> float:
    """Linear warm-up to ``lr``, then cosine to ``min_lr`` at ``max_steps`` (or constant)."""
    # nanoGPT's notebook and the author's Phase 2: no warm-up, no decay
    if cfg.schedule == "constant":
        return cfg.lr
    if step < cfg.warmup_steps:  # step + 1: the first step already moves, at lr / warmup_steps
        return cfg.lr * (step + 1) / cfg.warmup_steps
    # the cosine spans the full run's max_steps even for a prefix (--until), so a prefix is the
    # full run's start; max(1, ...) guards a warm-up as long as the run, min(1.0, ...) holds
    # min_lr for any step past max_steps
    progress = min(1.0, (step - cfg.warmup_steps) / max(1, cfg.max_steps - cfg.warmup_steps))
    return cfg.min_lr + 0.5 * (1.0 + math.cos(math.pi * progress)) * (cfg.lr - cfg.min_lr)


@dataclass(frozen=True)
class Dist:
    """This process's place in a ``torchrun`` job (``RANK``, ``WORLD_SIZE``, ``LOCAL_RANK``); one
    process without torchrun is rank 0 of 1. Rank 0 alone writes the run directory."""

    rank: int = 0
    world: int = 1
    local_rank: int = 0

    @classmethod
    def from_env(cls) -> "Dist":
        # the variables torchrun sets; read, not passed in, so `python -m lib train`
        # runs unchanged under torchrun
        env = os.environ
        return cls(
            int(env.get("RANK", 0)), int(env.get("WORLD_SIZE", 1)), int(env.get("LOCAL_RANK", 0))
        )

    @property
    def is_main(self) -> bool:
        return self.rank == 0

    def barrier(self) -> None:
        if self.world > 1:
            torch.distributed.barrier()

    def broadcast(self, obj):
        """Rank 0's ``obj`` on every rank."""
        if self.world == 1:
            return obj
        # pickled, so any object: here rank 0's decision whether there is anything to train
        box = [obj]
        torch.distributed.broadcast_object_list(box, src=0)
        return box[0]

    def sum(self, t: torch.Tensor) -> torch.Tensor:
        if self.world > 1:
            # SUM is the default op; in place, so ``t`` is the total on every rank
            torch.distributed.all_reduce(t)
        return t


def init_distributed(device: str) -> Dist:
    """Under torchrun: join the process group (NCCL on CUDA, gloo on the
    CPU). Without it: rank 0 of 1."""
    dist = Dist.from_env()
    if dist.world > 1 and not torch.distributed.is_initialized():
        # gloo lets the DDP tests run on a CPU
        backend = "nccl" if device.startswith("cuda") else "gloo"
        if backend == "nccl":
            # before the group forms: otherwise every rank's NCCL
            # communicator would default to GPU 0
            torch.cuda.set_device(dist.local_rank)
        torch.distributed.init_process_group(backend)
    return dist


def make_optimizer(
    model: torch.nn.Module, cfg: TrainConfig, fused: bool = False
) -> torch.optim.AdamW:
    """AdamW; decay on >=2-D tensors only, unless ``decay_all`` (nanoGPT's default AdamW).
    ``fused``: the single-kernel CUDA implementation (the same update)."""
    params = [p for p in model.parameters() if p.requires_grad]  # a tied matrix appears once
    if cfg.decay_all:  # torch.optim.AdamW(model.parameters(), ...) as nanoGPT's notebook calls it
        groups = [{"params": params, "weight_decay": cfg.weight_decay}]
    else:
        # matrices and embeddings decay; biases and LayerNorm gains do not
        # (nanoGPT's configure_optimizers)
        groups = [
            {"params": [p for p in params if p.dim() >= 2], "weight_decay": cfg.weight_decay},
            {"params": [p for p in params if p.dim() < 2], "weight_decay": 0.0},
        ]
    # lr here is only the initial value: Trainer.train_step sets every group's
    # rate from lr_at before each step
    return torch.optim.AdamW(
        groups, lr=cfg.lr, betas=(cfg.beta1, cfg.beta2), **({"fused": True} if fused else {})
    )


def check_micro_batch(micro_batch: int | None, batch_size: int) -> None:
    """A micro-batch is a whole number of sequences that divides the
    batch (None: the whole batch)."""
    # Checked twice, here for the Trainer and in lib.engine.experiment.run before the run directory
    # exists, so that a bad --micro-batch is refused before anything is written.
    if micro_batch is not None and (micro_batch < 1 or batch_size % micro_batch):
        valid = [d for d in range(1, batch_size + 1) if batch_size % d == 0]
        raise ConfigError(
            f"--micro-batch {micro_batch}: must divide the batch size {batch_size}; "
            f"valid: {', '.join(map(str, valid))}"
        )


def check_fast_dropout(on: bool, device: str, compile: bool, world: int = 1) -> None:
    """``--fast-dropout`` is an option for one CPU process and the eager model; anything
    else is refused, never ignored."""
    if on and not device.startswith("cpu"):
        raise ConfigError(
            f"--fast-dropout draws its masks on the CPU; train with --device cpu, or without the "
            f"option on {device}, where torch's own dropout is the fast one"
        )
    if on and compile:  # the compiler would have to trace NumPy's generator
        raise ConfigError("--fast-dropout and --compile cannot be combined: choose one")
    # A checkpoint holds rank 0's state alone; a stream per rank could not be resumed exactly.
    if on and world > 1:
        raise ConfigError(
            f"--fast-dropout is for one process; under torchrun ({world} ranks) train without it"
        )


class Trainer:
    """The loop. On CUDA: TF32 matmuls, fused AdamW, and no host synchronisation between evaluations
    except every ``SYNC_EVERY_CUDA`` steps (progress bar, divergence check, timing). Under torchrun
    (``dist.world > 1``) the model is wrapped in DistributedDataParallel and the ``grad_accum``
    micro-batches of a step are shared out among the ranks: every rank draws the whole step's
    stream, so the data, the global batch and the update are the single-process run's."""

    SYNC_EVERY_CUDA = 10

    def __init__(
        self,
        model,
        cfg: TrainConfig,
        batches,
        *,
        device: str = "cpu",
        callbacks=(),
        progress: bool = True,
        tokens_per_sample: int = 1,
        compile: bool = False,
        dist: Dist | None = None,
        micro_batch: int | None = None,
        masks: MaskStream | None = None,
    ):
        self.dist = dist or Dist()
        check_micro_batch(micro_batch, cfg.batch_size)
        check_fast_dropout(masks is not None, device, compile, self.dist.world)
        # An execution option too (lib.engine.model.MaskStream): dropout's masks from a faster
        # stream, recorded in env.json.
        self.masks = masks
        use_mask_stream(model, masks)
        # An execution option, not part of the experiment: each batch is fed through forward and
        # backward in slices of ``micro_batch`` sequences, whose gradients add up to the whole
        # batch's (the loss is a mean over equally many tokens per slice). On a 2-core CPU the 10M
        # step's activations then stay in cache (python -m lib bench). The data, the batch and the
        # update are the same; with dropout the masks are drawn slice by slice, so the random
        # realisation differs (the run records the option in env.json).
        self.micro_batch = None if micro_batch in (None, cfg.batch_size) else micro_batch
        # Equal shares only: DDP averages the ranks' gradients with equal weight, so a
        # rank with fewer micro-batches would weight each of its own more heavily than
        # the single-process mean does.
        if cfg.grad_accum % self.dist.world:
            raise ValueError(
                f"grad_accum={cfg.grad_accum} cannot be shared out among {self.dist.world} ranks; "
                f"use a number of processes that divides it"
            )
        cuda = device.startswith("cuda")
        if cuda:  # TF32 for fp32 matmuls: what nanoGPT and the author's 124M notebooks run with
            torch.backends.cuda.matmul.allow_tf32 = True
            torch.backends.cudnn.allow_tf32 = True
        self.raw_model = model  # checkpoints hold the unwrapped, uncompiled module's state
        wrapped = model
        if self.dist.world > 1:
            from torch.nn.parallel import DistributedDataParallel

            wrapped = DistributedDataParallel(
                model, device_ids=[self.dist.local_rank] if cuda else None
            )
        self.model = torch.compile(wrapped) if compile else wrapped
        self.ddp = wrapped if self.dist.world > 1 else None
        # evaluation needs no gradient sync
        self.eval_model = model if self.dist.world > 1 else self.model
        self.cfg, self.batches, self.device = cfg, batches, device
        self.callbacks = list(callbacks)
        self.progress = progress
        # On the CPU there is no queue of kernels to keep full, so reading each step's loss at once
        # costs nothing and a non-finite loss is caught at the very step.
        self.sync_every = self.SYNC_EVERY_CUDA if cuda else 1
        self.tokens_per_step = cfg.batch_size * cfg.grad_accum * tokens_per_sample
        # Built on the raw model, after any gain (lib.engine.experiment.build_model): §5.1's
        # weight-level gain must be in the weights before the optimiser sees them.
        self.optimizer = make_optimizer(model, cfg, fused=cuda)
        self.autocast = autocast(device, cfg.precision)
        self.step = 0
        self.history: list[dict] = []
        # inf: the first finite evaluation is the best so far
        self.best_val, self.best_step = math.inf, None
        self.train_time = 0.0  # seconds spent in optimisation steps (not evaluation)
        self.status = "running"

    # -- evaluation -----------------------------------------------------------
    @torch.no_grad()
    def batch_losses(self, batches) -> torch.Tensor:
        # kept on the device and stacked: a .item() per batch would
        # synchronise the GPU once per batch
        losses = []
        for x, y in batches:
            with self.autocast:
                _, loss = self.eval_model(x, y)
            losses.append(loss.float())
        return torch.stack(losses)

    def mean_loss(self, batches) -> float:
        return self.batch_losses(batches).mean().item()  # one synchronisation per evaluation set

    def evaluate(self) -> dict:
        # dropout off: an evaluation is a function of the weights and the batches alone
        self.model.eval()
        # fixed: the same batches every time (ResidualGPT); random: fresh ones from their own
        # generator (nanoGPT style), which never touches the training stream, so evaluating
        # cannot change what is trained
        val = self.batch_losses(self.batches.val_batches(self.cfg.val_mode))
        # the standard error of the mean over the batches: how far another
        # draw of batches could move it
        se = (val.std() / len(val) ** 0.5).item() if len(val) > 1 else math.nan
        # a diverged model's loss stays NaN here: fit reads it and stops the run,
        # it is not hidden as None yet
        row = {
            "step": self.step,
            "val_loss": val.mean().item(),
            "val_loss_se": se if math.isfinite(se) else None,
            "train_loss": self.mean_loss(self.batches.train_eval_batches()),
            # the step just taken's rate (at step 0: the first's)
            "lr": lr_at(self.cfg, max(self.step - 1, 0)),
            "tokens": self.step * self.tokens_per_step,
            "train_time_s": round(self.train_time, 3),
        }
        # still in eval mode: the diagnostics see the model as the evaluation did
        for cb in self.callbacks:
            cb.on_eval(self, self.step, row)
        self.model.train()
        if row["val_loss"] < self.best_val:
            self.best_val, self.best_step = row["val_loss"], self.step
        return row

    def _eval_due(self, step: int) -> bool:
        # the last step always, even off the interval, so every run's final loss is measured
        return step % self.cfg.eval_interval == 0 or step == self.cfg.max_steps

    # -- one optimisation step ---------------------------------------------------
    def train_step(self) -> torch.Tensor:
        """One optimisation step; returns this rank's share of the step's mean training loss, as a
        tensor on the device (no synchronisation)."""
        cfg, step = self.cfg, self.step
        # the schedule is a function of the step, set every step
        for group in self.optimizer.param_groups:
            group["lr"] = lr_at(cfg, step)
        total = torch.zeros((), device=self.device)
        own = range(self.dist.rank, cfg.grad_accum, self.dist.world)  # this rank's micro-batches
        for i in range(cfg.grad_accum):
            if i not in own:  # another rank's: advance the stream exactly as it does
                self.batches.skip_train_batch()
                continue
            x, y = self.batches.train_batch()
            # DDP averages the ranks' gradients, so each rank's mean over its own micro-batches
            # gives the mean over all of them; only the last backward of a step synchronises.
            slices = (
                list(zip(x.split(self.micro_batch), y.split(self.micro_batch)))
                if self.micro_batch
                else [(x, y)]
            )
            # The batch is drawn whole and then sliced, so the training stream is the
            # same with or without slices.
            for j, (xs, ys) in enumerate(slices):
                sync = self.ddp is None or (i == own[-1] and j == len(slices) - 1)
                with contextlib.nullcontext() if sync else self.ddp.no_sync():
                    with self.autocast:
                        _, loss = self.model(xs, ys)
                    share = len(xs) / len(x)  # this slice's part of the batch's mean loss
                    (loss * (share / len(own))).backward()
                total += loss.detach().float() * (share / cfg.grad_accum)
        # Fig. 2a's gradient norms: the raw gradients of the step before an eval
        if self._eval_due(step + 1):
            for cb in self.callbacks:
                cb.on_after_backward(self, step)
        # After the callbacks, so Fig. 2a's norms are the raw gradients. On the raw model: after
        # DDP's all-reduce each rank holds the same gradients, so each clips them alike and the
        # ranks' weights stay identical.
        # ResidualGPT clips at 1.0; nanoGPT's notebook does not clip (grad_clip 0)
        if cfg.grad_clip > 0:
            torch.nn.utils.clip_grad_norm_(self.raw_model.parameters(), cfg.grad_clip)
        self.optimizer.step()
        # None, not zeros: the next backward writes, not adds
        self.optimizer.zero_grad(set_to_none=True)
        return total

    def fit(self, until: int | None = None) -> str:
        """Train to ``max_steps`` (from wherever ``step`` is), or stop after step ``until`` with
        status ``partial``: the schedule stays the full run's, so a prefix is the full run's first
        steps. Returns the final status."""
        cfg = self.cfg
        # an until past the budget is the budget
        stop = cfg.max_steps if until is None else min(until, cfg.max_steps)
        if self.status == "partial":  # a prefix being continued
            self.status = "running"
        self.model.train()
        # leave=False: a finished bar is cleared, so a sweep's log keeps its own
        # lines, not a dead bar per run
        bar = tqdm(
            total=stop,
            initial=self.step,
            disable=not self.progress,
            dynamic_ncols=True,
            leave=False,
        )
        window: list[torch.Tensor] = []  # the losses of the steps since the last synchronisation
        while True:
            # evaluate before training (step 0), after every eval_interval-th step and after
            # the last; a resumed run whose checkpoint was taken right after an evaluation does
            # not evaluate that step twice
            if self._eval_due(self.step) and (
                not self.history or self.history[-1]["step"] != self.step
            ):
                self.history.append(self.evaluate())
                # a diverged model, caught at evaluation
                if not math.isfinite(self.history[-1]["val_loss"]):
                    self.status = "diverged"
                    self.history[-1].update(
                        diverged=True,
                        reason=f"non-finite validation loss ({self.history[-1]['val_loss']})",
                    )
                    for cb in self.callbacks:
                        cb.on_history(self, self.step)
                    break
                # the status is set before on_history, so the checkpoint and
                # summary written there carry it
                if self.step == cfg.max_steps:
                    self.status = "complete"
                elif self.step >= stop:
                    self.status = "partial"
                for cb in self.callbacks:
                    cb.on_history(self, self.step)
            if self.step >= stop:
                break
            # the clock runs over optimisation steps only: evaluations are not training time
            if not window:
                t0 = time.perf_counter()
            window.append(self.train_step())
            self.step += 1
            # Not yet: the losses stay on the device, and the GPU runs ahead of Python. An
            # evaluation, or the end, forces the synchronisation, so a divergence is never reported
            # after the evaluation that follows it.
            if len(window) < self.sync_every and not self._eval_due(self.step) and self.step < stop:
                continue
            # A synchronisation point: every step on the CPU; on CUDA every SYNC_EVERY_CUDA steps
            # and before each evaluation. The ranks' losses are summed to the step's mean.
            losses = self.dist.sum(torch.stack(window)).tolist()
            dt = time.perf_counter() - t0
            self.train_time += dt
            first = self.step - len(window) + 1
            window = []
            # a non-finite training loss stops the run at the first such step,
            # named; it is never resumed
            bad = next((i for i, v in enumerate(losses) if not math.isfinite(v)), None)
            if bad is not None:
                # On CUDA up to SYNC_EVERY_CUDA - 1 later steps already ran; the history names the
                # first bad one, and the weights, which are past it, are never resumed or kept (a
                # diverged run writes no checkpoint).
                self.step = first + bad
                self.status = "diverged"
                self.history.append(
                    {
                        "step": self.step,
                        "train_loss": losses[bad],
                        "val_loss": None,
                        "diverged": True,
                        "reason": f"non-finite training loss ({losses[bad]})",
                    }
                )
                for cb in self.callbacks:
                    cb.on_history(self, self.step)
                break
            bar.update(len(losses))
            bar.set_postfix(
                loss=f"{losses[-1]:.3f}",
                lr=f"{lr_at(cfg, self.step - 1):.1e}",
                tok_s=f"{self.tokens_per_step * len(losses) / dt:,.0f}",
                refresh=False,
            )
        bar.close()
        # at or past ``until`` already
        if self.status == "running" and stop <= self.step < cfg.max_steps:
            self.status = "partial"
        return self.status

    # -- checkpoint state -------------------------------------------------------
    def state_dict(self) -> dict:
        # Everything a resumed run needs to continue exactly as if never stopped: weights, AdamW's
        # moments, the data generators and the RNG that draws dropout masks. The raw model's state:
        # no DDP ``module.`` or compile ``_orig_mod.`` prefixes, so a checkpoint loads into a plain
        # model however it was trained.
        state = {
            "model": self.raw_model.state_dict(),
            "optimizer": self.optimizer.state_dict(),
            "batches": self.batches.state_dict(),
            "torch_rng": torch.get_rng_state(),
            "step": self.step,
            "history": self.history,
            "best_val": self.best_val,
            "best_step": self.best_step,
            "train_time": self.train_time,
            "status": self.status,
        }
        # --fast-dropout's stream, so a resumed run draws the masks it would have drawn
        if self.masks is not None:
            state["mask_stream"] = self.masks.state_dict()
        # the training device's generator only: resumable on another index
        if self.device.startswith("cuda"):
            state["cuda_rng"] = torch.cuda.get_rng_state(self.device)
        return state

    def load_state_dict(self, state: dict) -> None:
        self.raw_model.load_state_dict(state["model"])
        self.optimizer.load_state_dict(state["optimizer"])
        # torch checks the moments against the parameters only at the next step, deep in AdamW:
        # checked here, so a checkpoint that does not fit is refused before any training
        # (ValueError; lib.engine.experiment names the file).
        for group in self.optimizer.param_groups:
            for i, p in enumerate(group["params"]):
                for k, v in self.optimizer.state.get(p, {}).items():
                    if k != "step" and torch.is_tensor(v) and v.shape != p.shape:
                        raise ValueError(
                            f"its AdamW state {k} of parameter {i} has shape {list(v.shape)}, "
                            f"not the parameter's {list(p.shape)}"
                        )
        self.batches.load_state_dict(state["batches"])
        torch.set_rng_state(state["torch_rng"])
        # With dropout, _run refuses a resume that switches the option, so the state is there.
        # Without dropout the stream draws nothing, so a run resumed with the option switched on
        # has no state for it, and needs none: the fresh stream of the run's seed stands in for
        # one that was never drawn from.
        if self.masks is not None and "mask_stream" in state:
            self.masks.load_state_dict(state["mask_stream"])
        if "cuda_rng" in state and self.device.startswith("cuda"):
            torch.cuda.set_rng_state(state["cuda_rng"], self.device)
        # status too: a prefix comes back "partial", which fit turns into
        # "running" when it continues
        for k in ("step", "history", "best_val", "best_step", "train_time", "status"):
            setattr(self, k, state[k])
