"""Diagnostics of §4.1 (Fig. 2a-b) as trainer callbacks that cost nothing when off.

* per-layer gradient norms, attention and MLP separately: Layer 0 is the paper's
  gradient-starvation signature;
* per-layer hidden-state norms on one fixed batch, and the growth ratio ``h_L / h_0`` (output
  of the last block over the input to the first, i.e. the embedding), our reading of the
  paper's "hidden-state norm growth";
* the residual-stream probes of ``lib.engine.probes`` (rank collapse,
  token read-back, effective rank).

Hooks are registered only for the one forward pass that needs them and
removed at once; gradient norms are read only on the step before an
evaluation. With no diagnostics attached the loop does no extra work.
"""

from __future__ import annotations

import torch

from .probes import PROBE_SEQUENCES, capture_activations, probe
from .train import Callback


def _norm(params) -> float:
    # The norm of all the gradients taken as one vector, summed on the device: one host
    # synchronisation per norm. float(): in fp16 the squares of large gradients would overflow.
    sq = [p.grad.detach().float().pow(2).sum() for p in params if p.grad is not None]
    return float(torch.stack(sq).sum().sqrt()) if sq else 0.0


def grad_norms(model) -> dict[str, list[float]]:
    """L2 norm of the current ``.grad`` of each block's attention and MLP parameters, and the
    paper's own FFN quantity (Fig. 2a), as the author's ``collect_gradient_norms`` defines it in
    ``Notebooks/10M/NanoGPT_10M.ipynb`` (cell 6): the mean of the two FFN weight matrices'
    gradient norms, biases left out."""
    # Attention and MLP apart, since the partial configurations remove one skip each (§3.4). The
    # mixer of the local-mixer runs sits where attention does (Block.attn), so it is read as "attn".
    blocks = model.transformer.h
    # the FFN itself, inside a runtime gain's wrapper where §5.1's runs
    # put one (gain.RuntimeGain.inner)
    ffns = [getattr(b.mlp, "inner", b.mlp) for b in blocks]
    return {
        "attn": [_norm(b.attn.parameters()) for b in blocks],
        "mlp": [_norm(b.mlp.parameters()) for b in blocks],
        # The mean of the two matrices' norms, not the norm of both together: the
        # author's number, Fig. 2a's.
        "ffn_weights": [(_norm([f.c_fc.weight]) + _norm([f.c_proj.weight])) / 2 for f in ffns],
    }


def hidden_norms(model, idx) -> list[float]:
    """Mean L2 norm per token of each residual-stream state (see ``capture_activations``)."""
    return [float(h.float().norm(dim=-1).mean()) for h in capture_activations(model, idx)]


# The gradients live only between backward and the optimiser step, so they are read then
# (on_after_backward, on the step before an evaluation) and written into the next evaluation row.
class GradNormCallback(Callback):
    def __init__(self):
        self.last: dict | None = None

    # raw_model: model.transformer.h is there whatever wraps it (DDP, torch.compile).
    def on_after_backward(self, trainer, step):
        self.last = grad_norms(trainer.raw_model)

    def on_eval(self, trainer, step, row):
        if self.last is not None:  # the step-0 evaluation comes before any backward pass
            row["grad_norm_attn"], row["grad_norm_mlp"] = self.last["attn"], self.last["mlp"]
            row["grad_norm_ffn_weights"] = self.last["ffn_weights"]
            # Cleared once written, so no later row can carry an earlier step's gradients.
            self.last = None


class HiddenNormCallback(Callback):
    """Hidden-state norms on the first fixed validation batch at every evaluation."""

    def on_eval(self, trainer, step, row):
        x, _ = trainer.batches.fixed_val[0]
        # The first fixed validation batch: the same tokens at every evaluation and in
        # every configuration (seed 99991), so the curves differ only by the model. The
        # model is in eval mode: no dropout.
        norms = hidden_norms(trainer.raw_model, x)
        row["hidden_norm"] = norms
        # §4.1's growth ratio (Full Residual 1.38x, AttnOnly 14.03x, FFNOnly 5.37x in the
        # paper): the last block's output over the embedding, our reading of a quantity the
        # paper does not define in words.
        row["hidden_growth"] = norms[-1] / norms[0]


class ProbeCallback(Callback):
    """The residual-stream probes (``lib.engine.probes``) at every evaluation, on the first
    ``PROBE_SEQUENCES`` sequences of the first fixed validation batch: one list per
    measure, one value per depth."""

    def on_eval(self, trainer, step, row):
        x, _ = trainer.batches.fixed_val[0]
        # PROBE_SEQUENCES (16), the number of sequences the book's probe table
        # reads from the trained weights.
        x = x[:PROBE_SEQUENCES]
        if len(x) < 2:  # the probe fits on half the sequences and scores the other half
            return
        t = probe(trainer.raw_model, x)
        row["probe_cosine"] = t.position_cosine.tolist()
        row["probe_token"] = t.token_accuracy.tolist()
        # Chance depends only on the tokens, which are the same at every
        # depth: one number is enough.
        row["probe_chance"] = float(t.token_chance.iloc[0])
        row["probe_rank"] = t.effective_rank.tolist()


def default_callbacks() -> list[Callback]:
    return [GradNormCallback(), HiddenNormCallback(), ProbeCallback()]
