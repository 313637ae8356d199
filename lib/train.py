"""A model-agnostic training loop (Table 1's optimiser, schedule, clipping, accumulation).

The Trainer needs only ``model(x, y) -> (logits, loss)`` and a batch source
with ``train_batch()``, ``val_batches(mode)`` and ``train_eval_batches()``.
Diagnostics, run directories and checkpoints attach through callbacks.
"""
from __future__ import annotations

import contextlib
import math
import os
import sys
import time

import torch
from tqdm.auto import tqdm

from .config import TrainConfig


class Callback:
    """Hooks into the loop; every method is optional."""

    def on_after_backward(self, trainer: "Trainer", step: int) -> None:
        """Gradients of the last step before an evaluation are in ``.grad`` (before clipping)."""

    def on_eval(self, trainer: "Trainer", step: int, row: dict) -> None:
        """Add keys to the evaluation row; the model is in eval mode."""

    def on_history(self, trainer: "Trainer", step: int) -> None:
        """After each evaluation row has been appended (checkpointing happens here)."""


def resolve_device(device: str = "auto") -> str:
    """``auto`` | ``cpu`` | ``cuda`` | ``cuda:N``; CUDA only where it is there."""
    kind, _, index = device.partition(":")
    if kind not in ("auto", "cpu", "cuda") or (index and (kind != "cuda" or not index.isdigit())):
        raise ValueError(f"unknown device {device!r}; valid: auto, cpu, cuda, cuda:N")
    if device == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    if kind == "cuda":
        if not torch.cuda.is_available():
            raise RuntimeError(f"device {device!r} requested but torch.cuda.is_available() is False")
        if index and int(index) >= torch.cuda.device_count():
            raise ValueError(f"device {device!r}: this machine has {torch.cuda.device_count()} CUDA device(s)")
    return device


def resolve_precision(precision: str, device: str) -> str:
    """``auto``: bf16 on CUDA (where the GPU supports it; else fp32, said on stderr), fp32 on the CPU.
    An explicit ``bf16`` on a CUDA device without bf16 is refused."""
    valid = ("auto", "fp32", "bf16")
    if precision not in valid:
        raise ValueError(f"unknown precision {precision!r}; valid: {', '.join(valid)}")
    cuda = device.startswith("cuda")
    bf16_ok = not cuda or torch.cuda.is_bf16_supported()
    if precision == "auto":
        if cuda and not bf16_ok:
            print(f"{torch.cuda.get_device_name(device)} has no bf16: training in fp32", file=sys.stderr)
        return "bf16" if cuda and bf16_ok else "fp32"
    if precision == "bf16" and not bf16_ok:
        raise ValueError(f"{torch.cuda.get_device_name(device)} does not support bf16; valid here: fp32")
    return precision


def autocast(device: str, precision: str):
    """The forward passes' context: bf16 autocast on the device's kind, or nothing (fp32)."""
    if precision == "fp32":
        return contextlib.nullcontext()
    return torch.autocast(device.partition(":")[0], dtype=torch.bfloat16)


def set_deterministic(on: bool) -> None:
    """The paper's forced determinism (§8.3): cuBLAS workspace + deterministic algorithms."""
    if on:
        os.environ["CUBLAS_WORKSPACE_CONFIG"] = ":4096:8"
    torch.use_deterministic_algorithms(on)


def lr_at(cfg: TrainConfig, step: int) -> float:
    """Linear warm-up to ``lr``, then cosine to ``min_lr`` at ``max_steps`` (or constant)."""
    if cfg.schedule == "constant":
        return cfg.lr
    if step < cfg.warmup_steps:
        return cfg.lr * (step + 1) / cfg.warmup_steps
    progress = min(1.0, (step - cfg.warmup_steps) / max(1, cfg.max_steps - cfg.warmup_steps))
    return cfg.min_lr + 0.5 * (1.0 + math.cos(math.pi * progress)) * (cfg.lr - cfg.min_lr)


def make_optimizer(model: torch.nn.Module, cfg: TrainConfig) -> torch.optim.AdamW:
    """AdamW; decay on >=2-D tensors only, unless ``decay_all`` (nanoGPT's default AdamW)."""
    params = [p for p in model.parameters() if p.requires_grad]
    if cfg.decay_all:
        groups = [{"params": params, "weight_decay": cfg.weight_decay}]
    else:
        groups = [{"params": [p for p in params if p.dim() >= 2], "weight_decay": cfg.weight_decay},
                  {"params": [p for p in params if p.dim() < 2], "weight_decay": 0.0}]
    return torch.optim.AdamW(groups, lr=cfg.lr, betas=(cfg.beta1, cfg.beta2))


class Trainer:
    def __init__(self, model, cfg: TrainConfig, batches, *, device: str = "cpu",
                 callbacks=(), progress: bool = True, tokens_per_sample: int = 1,
                 compile: bool = False):
        self.raw_model = model  # checkpoints hold the uncompiled module's state
        self.model = torch.compile(model) if compile else model
        self.cfg, self.batches, self.device = cfg, batches, device
        self.callbacks = list(callbacks)
        self.progress = progress
        self.tokens_per_step = cfg.batch_size * cfg.grad_accum * tokens_per_sample
        self.optimizer = make_optimizer(model, cfg)
        self.autocast = autocast(device, cfg.precision)
        self.step = 0
        self.history: list[dict] = []
        self.best_val, self.best_step = math.inf, None
        self.train_time = 0.0  # seconds spent in optimisation steps (not evaluation)
        self.status = "running"

    # -- evaluation -----------------------------------------------------------
    @torch.no_grad()
    def mean_loss(self, batches) -> float:
        losses = []
        for x, y in batches:
            with self.autocast:
                _, loss = self.model(x, y)
            losses.append(loss.float().item())
        return sum(losses) / len(losses)

    def evaluate(self) -> dict:
        self.model.eval()
        row = {"step": self.step,
               "val_loss": self.mean_loss(self.batches.val_batches(self.cfg.val_mode)),
               "train_loss": self.mean_loss(self.batches.train_eval_batches()),
               "lr": lr_at(self.cfg, max(self.step - 1, 0)),
               "tokens": self.step * self.tokens_per_step,
               "train_time_s": round(self.train_time, 3)}
        for cb in self.callbacks:
            cb.on_eval(self, self.step, row)
        self.model.train()
        if row["val_loss"] < self.best_val:
            self.best_val, self.best_step = row["val_loss"], self.step
        return row

    def _eval_due(self, step: int) -> bool:
        return step % self.cfg.eval_interval == 0 or step == self.cfg.max_steps

    # -- one optimisation step ---------------------------------------------------
    def train_step(self) -> float:
        cfg, step = self.cfg, self.step
        for group in self.optimizer.param_groups:
            group["lr"] = lr_at(cfg, step)
        total = 0.0
        for _ in range(cfg.grad_accum):
            x, y = self.batches.train_batch()
            with self.autocast:
                _, loss = self.model(x, y)
            (loss / cfg.grad_accum).backward()
            total += loss.detach().float().item() / cfg.grad_accum
        if self._eval_due(step + 1):
            for cb in self.callbacks:
                cb.on_after_backward(self, step)
        if cfg.grad_clip > 0:
            torch.nn.utils.clip_grad_norm_(self.raw_model.parameters(), cfg.grad_clip)
        self.optimizer.step()
        self.optimizer.zero_grad(set_to_none=True)
        return total

    def fit(self, until: int | None = None) -> str:
        """Train to ``max_steps`` (from wherever ``step`` is), or stop after step ``until`` with status
        ``partial``: the schedule stays the full run's, so a prefix is the full run's first steps.
        Returns the final status."""
        cfg = self.cfg
        stop = cfg.max_steps if until is None else min(until, cfg.max_steps)
        if self.status == "partial":  # a prefix being continued
            self.status = "running"
        self.model.train()
        bar = tqdm(total=stop, initial=self.step, disable=not self.progress,
                   dynamic_ncols=True, leave=False)
        while True:
            if self._eval_due(self.step) and (not self.history or self.history[-1]["step"] != self.step):
                self.history.append(self.evaluate())
                if self.step == cfg.max_steps:
                    self.status = "complete"
                elif self.step >= stop:
                    self.status = "partial"
                for cb in self.callbacks:
                    cb.on_history(self, self.step)
            if self.step >= stop:
                break
            t0 = time.perf_counter()
            loss = self.train_step()
            if self.device.startswith("cuda"):
                torch.cuda.synchronize()
            dt = time.perf_counter() - t0
            self.train_time += dt
            self.step += 1
            if not math.isfinite(loss):
                self.status = "diverged"
                self.history.append({"step": self.step, "train_loss": loss, "val_loss": None,
                                     "diverged": True})
                for cb in self.callbacks:
                    cb.on_history(self, self.step)
                break
            bar.update(1)
            bar.set_postfix(loss=f"{loss:.3f}", lr=f"{lr_at(cfg, self.step - 1):.1e}",
                            tok_s=f"{self.tokens_per_step / dt:,.0f}", refresh=False)
        bar.close()
        if self.status == "running" and stop <= self.step < cfg.max_steps:  # at or past ``until`` already
            self.status = "partial"
        return self.status

    # -- checkpoint state -------------------------------------------------------
    def state_dict(self) -> dict:
        state = {"model": self.raw_model.state_dict(), "optimizer": self.optimizer.state_dict(),
                 "batches": self.batches.state_dict(), "torch_rng": torch.get_rng_state(),
                 "step": self.step, "history": self.history, "best_val": self.best_val,
                 "best_step": self.best_step, "train_time": self.train_time, "status": self.status}
        if self.device.startswith("cuda"):  # the training device's generator only: resumable on another index
            state["cuda_rng"] = torch.cuda.get_rng_state(self.device)
        return state

    def load_state_dict(self, state: dict) -> None:
        self.raw_model.load_state_dict(state["model"])
        self.optimizer.load_state_dict(state["optimizer"])
        self.batches.load_state_dict(state["batches"])
        torch.set_rng_state(state["torch_rng"])
        if "cuda_rng" in state and self.device.startswith("cuda"):
            torch.cuda.set_rng_state(state["cuda_rng"], self.device)
        for k in ("step", "history", "best_val", "best_step", "train_time", "status"):
            setattr(self, k, state[k])
