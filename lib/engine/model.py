"""One Pre-LN GPT for both implementations of §3.1 and all four configurations.

Eq. 1 of the paper, with the two switches on one Block:

    x = x + Attn(LN_1(x))   if attn_res else Attn(LN_1(x))
    x = x + FFN(LN_2(x))    if ffn_res  else FFN(LN_2(x))

A removed skip removes the addition; nothing is multiplied by zero.
Everything else that differs between the implementations is a field of
ModelConfig (``lib.engine.config.MODEL_RECIPES``): ``residualgpt`` ties the embedding
and LM head, uses F.scaled_dot_product_attention, bias-free Linear layers and
GPT-2 initialisation; ``nanogpt`` (the author's notebook) has an untied LM head
with bias, manual masked-softmax attention with dropout on its weights, no bias
on q/k/v but biases on the attention output and FFN layers, plain N(0, 0.02)
initialisation and no dropout after the embeddings.
"""

from __future__ import annotations

import math

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

from .config import ModelConfig

INIT_STD = 0.02  # N(0, 0.02) on every Linear and Embedding, as GPT-2 and nanoGPT


class MaskStream:
    """Dropout's keep-masks drawn from a NumPy SFC64 stream: the
    execution option ``--fast-dropout``.

    On a CPU, torch draws each dropout mask with ``bernoulli_`` from one serial Mersenne Twister,
    about 20 ns an element on this project's 2-core CPU, which at the 10M shape is over a quarter of
    a step (``python -m lib bench``). SFC64 gives 64 random bits in about a nanosecond. Each element
    is kept with probability 1 - p, as with torch (to within 2^-32: its 32-bit word is compared with
    round(p * 2^32)), and kept elements are scaled by 1 / (1 - p), as with torch: the same dropout,
    another random realisation, so a run records the option (env.json), like ``--micro-batch``."""

    def __init__(self, seed: int):
        # Seeded by the run's seed, so a run draws the same masks each time it is trained. One
        # process only (lib.engine.train.check_fast_dropout): a checkpoint holds one stream's state.
        self.bits = np.random.SFC64(np.random.SeedSequence(seed))

    def keep(self, shape, p: float) -> torch.Tensor:
        """A bool tensor of ``shape``: True where an element is kept."""
        n = math.prod(shape)
        # random_raw is the generator's bulk path: each 64-bit draw is two 32-bit words.
        words = self.bits.random_raw((n + 1) // 2).view(np.uint32)[:n]
        return torch.from_numpy(words >= np.uint32(round(p * 2**32))).view(shape)

    # The generator's state, so that a resumed run draws the masks it would have drawn
    # (Trainer.state_dict): plain ints, since a checkpoint is read with
    # weights_only=True, which refuses NumPy arrays.
    def state_dict(self) -> dict:
        st = self.bits.state
        return {
            "words": [int(w) for w in st["state"]["state"]],
            "has_uint32": int(st["has_uint32"]),
            "uinteger": int(st["uinteger"]),
        }

    def load_state_dict(self, state: dict) -> None:
        self.bits.state = {
            "bit_generator": "SFC64",
            "state": {"state": np.array(state["words"], dtype=np.uint64)},
            "has_uint32": state["has_uint32"],
            "uinteger": state["uinteger"],
        }


class Dropout(nn.Dropout):
    """nn.Dropout, unchanged unless a ``MaskStream`` is attached (``use_mask_stream``): then
    its masks come from the stream."""

    masks: MaskStream | None = None

    def forward(self, x):
        if self.masks is None or not self.training or self.p == 0:
            return super().forward(x)
        # torch's own formula (at::native::dropout on a CPU): a 0/1 noise tensor in x's dtype,
        # divided by 1 - p, times x. Only the noise's random numbers are other.
        noise = self.masks.keep(x.shape, self.p).to(x.dtype).div_(1 - self.p)
        return x * noise


def sdpa_math(q, k, v, dropout: Dropout) -> torch.Tensor:
    """Causal F.scaled_dot_product_attention as it runs on a CPU with dropout on (its math path;
    the fused CPU kernel takes no dropout), written out op for op so that its dropout can draw
    from a ``MaskStream``. With torch's masks it equals F.scaled_dot_product_attention bitwise,
    forward and backward (tests/test_fast_dropout.py), so the `sdpa` kernel keeps its own
    rounding under ``--fast-dropout``."""
    # q and k are each scaled by the square root of 1/sqrt(head size) before their
    # product, as the math path does
    root = math.sqrt(1.0 / math.sqrt(q.size(-1)))
    T, S = q.size(-2), k.size(-2)
    causal = torch.ones(T, S, dtype=torch.bool, device=q.device).tril()
    att = (q * root) @ (k.transpose(-2, -1) * root)  # (B, nh, T, T)
    att.add_(
        torch.where(
            causal.logical_not(),
            float("-inf"),
            torch.scalar_tensor(0.0, dtype=q.dtype, device=q.device),
        )
    )
    # The math path calls _safe_softmax, which is softmax except that a row masked everywhere gives
    # zeros; a causal mask leaves no such row, so softmax gives the same bits without
    # _safe_softmax's search for one (about 0.2 s of a 10M step here)
    att = F.softmax(att, dim=-1)
    return dropout(att) @ v


def use_mask_stream(model: nn.Module, masks: MaskStream | None) -> None:
    """Every dropout of ``model`` draws from ``masks`` (None: from torch, as nn.Dropout)."""
    for m in model.modules():
        if isinstance(m, Dropout):
            m.masks = masks


class CausalSelfAttention(nn.Module):
    def __init__(self, cfg: ModelConfig):
        super().__init__()
        self.n_head, self.n_embd, self.dropout, self.flash = (
            cfg.n_head,
            cfg.n_embd,
            cfg.dropout,
            cfg.flash,
        )
        # q, k, v in one matmul
        self.c_attn = nn.Linear(cfg.n_embd, 3 * cfg.n_embd, bias=cfg.qkv_bias)
        self.c_proj = nn.Linear(cfg.n_embd, cfg.n_embd, bias=cfg.bias)
        # Two dropouts, as in nanoGPT: on the attention weights (inside SDPA on the
        # flash path) and on the sublayer's output, before it meets the stream (or, with
        # the skip removed, becomes it).
        self.attn_dropout = Dropout(cfg.dropout)
        self.resid_dropout = Dropout(cfg.dropout)
        if not self.flash:  # the manual path needs the causal mask as a buffer
            # not persistent: the mask follows from block_size, so a checkpoint need not carry it
            mask = torch.tril(torch.ones(cfg.block_size, cfg.block_size, dtype=torch.bool))
            self.register_buffer(
                "mask", mask.view(1, 1, cfg.block_size, cfg.block_size), persistent=False
            )

    def forward(self, x):
        B, T, C = x.size()
        q, k, v = self.c_attn(x).split(self.n_embd, dim=2)
        # (B, nh, T, hs)
        q, k, v = (t.view(B, T, self.n_head, C // self.n_head).transpose(1, 2) for t in (q, k, v))
        if self.flash:
            # ResidualGPT's kernel. The same function as the manual path below up to rounding, and
            # the rounding is not nothing: the escape chapter's SDPA twin of nanoGPT AttnOnly (this
            # kernel and no other change) stays on the floor where the manual kernel leaves it.
            # --fast-dropout
            if self.attn_dropout.masks is not None and self.training and self.dropout > 0:
                y = sdpa_math(q, k, v, self.attn_dropout)
            else:
                y = F.scaled_dot_product_attention(
                    q, k, v, is_causal=True, dropout_p=self.dropout if self.training else 0.0
                )
        else:  # nanoGPT's notebook: masked softmax written out, dropout on the weights
            att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))  # (B, nh, T, T)
            att = att.masked_fill(~self.mask[:, :, :T, :T], float("-inf"))
            att = self.attn_dropout(F.softmax(att, dim=-1))
            y = att @ v  # (B, nh, T, hs)
        y = y.transpose(1, 2).contiguous().view(B, T, C)  # the heads side by side again
        return self.resid_dropout(self.c_proj(y))


class MLP(nn.Module):
    def __init__(self, cfg: ModelConfig):
        super().__init__()
        self.c_fc = nn.Linear(cfg.n_embd, 4 * cfg.n_embd, bias=cfg.bias)  # the usual 4x expansion
        # exact GELU, not the tanh approximation, as both codebases (nn.GELU, F.gelu)
        self.gelu = nn.GELU()
        self.c_proj = nn.Linear(4 * cfg.n_embd, cfg.n_embd, bias=cfg.bias)
        self.dropout = Dropout(cfg.dropout)

    def forward(self, x):
        # token-wise: each position is transformed alone, so without the attention skip (FFNOnly
        # keeps only this one) nothing but attention's average reaches the next block
        return self.dropout(self.c_proj(self.gelu(self.c_fc(x))))


class LocalMixer(nn.Module):
    """A position-blind stand-in for attention (§7.2): a token-wise MLP d -> 2d -> d without
    bias, so 4d² weights like attention's q/k/v and output projection, but no information
    crosses positions. The author's ``LocalMixer``
    (Notebooks/10M/10M_MIXTURE_EXPERIMENT.ipynb), on our Block."""

    def __init__(self, cfg: ModelConfig):
        super().__init__()
        self.c_fc = nn.Linear(cfg.n_embd, 2 * cfg.n_embd, bias=False)
        self.c_proj = nn.Linear(2 * cfg.n_embd, cfg.n_embd, bias=False)
        self.dropout = Dropout(cfg.dropout)

    def forward(self, x):
        return self.dropout(self.c_proj(F.gelu(self.c_fc(x))))


class Block(nn.Module):
    """The one block: Eq. 1 with ``attn_res`` and ``ffn_res`` as switches."""

    def __init__(self, cfg: ModelConfig):
        super().__init__()
        self.attn_res, self.ffn_res = cfg.attn_res, cfg.ffn_res
        self.ln_1 = nn.LayerNorm(cfg.n_embd)  # LayerNorm keeps its bias in both implementations
        # the mixer is a field, not a subclass: §7.2's test swaps what mixes
        # positions and keeps the rest
        self.attn = CausalSelfAttention(cfg) if cfg.mixer == "attention" else LocalMixer(cfg)
        self.ln_2 = nn.LayerNorm(cfg.n_embd)
        self.mlp = MLP(cfg)

    def forward(self, x):
        # Pre-LN: each sublayer reads a normalised copy of the stream, and its output is added back
        # to the un-normalised stream. A removed skip is no addition: the sublayer's output
        # *replaces* the stream, so after AttnOnly's FFN (or FFNOnly's attention) the block passes
        # on only what that sublayer made.
        a = self.attn(self.ln_1(x))
        x = x + a if self.attn_res else a
        m = self.mlp(self.ln_2(x))
        return x + m if self.ffn_res else m


class GPT(nn.Module):
    def __init__(self, cfg: ModelConfig):
        super().__init__()
        self.config = cfg
        # nanoGPT's module names, so that a state dict reads like theirs
        self.transformer = nn.ModuleDict(
            dict(
                wte=nn.Embedding(cfg.vocab_size, cfg.n_embd),
                wpe=nn.Embedding(cfg.block_size, cfg.n_embd),
                # ResidualGPT only (emb_dropout)
                drop=Dropout(cfg.dropout if cfg.emb_dropout else 0.0),
                h=nn.ModuleList([Block(cfg) for _ in range(cfg.n_layer)]),
                # the final LayerNorm sees the stream whatever the blocks removed
                ln_f=nn.LayerNorm(cfg.n_embd),
            )
        )
        # nanoGPT (§3.1): untied head with bias; ResidualGPT: tied, no bias.
        self.lm_head = nn.Linear(cfg.n_embd, cfg.vocab_size, bias=cfg.head_bias)
        if cfg.tie_weights:  # one matrix, so the embedding also learns from the head's gradient
            self.transformer.wte.weight = self.lm_head.weight
        self.apply(self._init_weights)  # after tying: the shared matrix gets N(0, 0.02) either way
        if cfg.scaled_init:
            # GPT-2: residual output projections scaled by 1/sqrt(2 * n_layer), so that the variance
            # the 2L additions bring to the stream does not grow with depth. Where a skip is removed
            # there is no sum at that sublayer, and the scaling only shrinks what replaces the
            # stream: the escape map measures what that does to AttnOnly.
            for name, p in self.named_parameters():
                if name.endswith("c_proj.weight"):
                    nn.init.normal_(p, mean=0.0, std=INIT_STD / math.sqrt(2 * cfg.n_layer))

    @staticmethod
    def _init_weights(module):
        if isinstance(module, (nn.Linear, nn.Embedding)):
            nn.init.normal_(module.weight, mean=0.0, std=INIT_STD)
        if isinstance(module, nn.Linear) and module.bias is not None:
            nn.init.zeros_(module.bias)

    def num_params(self, non_embedding: bool = False) -> int:
        """Unique parameters (a tied matrix counts once); optionally
        without wpe, as nanoGPT prints."""
        n = sum(p.numel() for p in self.parameters())
        return n - self.transformer.wpe.weight.numel() if non_embedding else n

    def forward(self, idx, targets=None):
        B, T = idx.size()
        if T > self.config.block_size:
            raise ValueError(f"sequence length {T} exceeds block_size {self.config.block_size}")
        pos = torch.arange(T, device=idx.device)
        # learned absolute positions: the only way the token-wise local
        # mixer (§7.2) knows where it is
        # (B, T, C)
        x = self.transformer.drop(self.transformer.wte(idx) + self.transformer.wpe(pos))
        for block in self.transformer.h:
            x = block(x)
        logits = self.lm_head(self.transformer.ln_f(x))  # (B, T, vocab)
        loss = None
        if targets is not None:
            # mean over every position of every sequence, in nats: the unit of every
            # loss and floor in the book
            loss = F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1))
        return logits, loss
