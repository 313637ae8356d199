"""The model is Eq. 1 exactly, and a plain GPT-2 (§3.1) in both implementations."""

import math

import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.overrides import TorchFunctionMode

from lib.engine.config import CONFIGS, ModelConfig
from lib.engine.model import GPT, CausalSelfAttention

TINY = dict(vocab_size=11, block_size=8, n_layer=2, n_head=2, n_embd=16, dropout=0.0)


def tiny_model(config="FullResidual", impl="residualgpt", seed=0, **kw):
    attn_res, ffn_res = CONFIGS[config]
    torch.manual_seed(seed)
    return GPT(ModelConfig(**{**TINY, **kw}, attn_res=attn_res, ffn_res=ffn_res, impl=impl)).eval()


def perturb(model, scale=0.1):
    """Move every parameter off its init so that LayerNorm affines and biases matter too."""
    torch.manual_seed(123)
    with torch.no_grad():
        for p in model.parameters():
            p.add_(scale * torch.randn_like(p))
    return model


def tokens(B=3, T=8, V=11, seed=1):
    return torch.randint(V, (B, T), generator=torch.Generator().manual_seed(seed))


# --- Eq. 1 ----------------------------------------------------------------------
@pytest.mark.parametrize("config", list(CONFIGS))
def test_block_is_equation_1(config):
    block = perturb(tiny_model(config)).transformer.h[0]
    x = torch.randn(2, 8, 16, generator=torch.Generator().manual_seed(0))
    with torch.no_grad():
        a = block.attn(block.ln_1(x))
        h = x + a if CONFIGS[config][0] else a
        m = block.mlp(block.ln_2(h))
        expected = h + m if CONFIGS[config][1] else m
        # Bit-for-bit: a removed skip is a missing addition, not a scaled or gated one.
        assert torch.equal(block(x), expected)


class OpLog(TorchFunctionMode):
    """Records the name of every torch function called inside the ``with`` block."""

    def __init__(self):
        super().__init__()
        self.names = []

    def __torch_function__(self, func, types, args=(), kwargs=None):
        self.names.append(getattr(func, "__name__", str(func)))
        return func(*args, **(kwargs or {}))


ARITHMETIC = {"add", "radd", "iadd", "mul", "rmul", "imul", "where", "lerp", "addcmul"}


@pytest.mark.parametrize("config", list(CONFIGS))
def test_removed_skip_removes_the_addition_and_multiplies_nothing(config):
    # Bias-free residualgpt sublayers contain no add or mul of their own, so every add in
    # the block is a kept skip, and a "0 * x" or gated skip would show up as a mul.
    block = tiny_model(config).transformer.h[0]
    with OpLog() as log:
        block(torch.randn(1, 8, 16))
    arithmetic = [n.strip("_") for n in log.names if n.strip("_") in ARITHMETIC]
    assert arithmetic == ["add"] * sum(CONFIGS[config])


# --- an independent GPT-2 forward ---------------------------------------------
def manual_gpt(sd, idx, cfg):
    """GPT-2 written out from the state_dict, with Eq. 1's switches; no lib code used."""
    B, T = idx.shape
    C, H = cfg.n_embd, cfg.n_head

    def lin(x, name):
        return x @ sd[name + ".weight"].T + (sd[name + ".bias"] if name + ".bias" in sd else 0.0)

    def ln(x, name):
        return F.layer_norm(x, (C,), sd[name + ".weight"], sd[name + ".bias"], eps=1e-5)

    x = sd["transformer.wte.weight"][idx] + sd["transformer.wpe.weight"][:T]
    mask = torch.tril(torch.ones(T, T, dtype=torch.bool))
    for i in range(cfg.n_layer):
        p = f"transformer.h.{i}."
        q, k, v = lin(ln(x, p + "ln_1"), p + "attn.c_attn").split(C, dim=-1)
        q, k, v = (t.reshape(B, T, H, C // H).transpose(1, 2) for t in (q, k, v))
        att = (q @ k.transpose(-1, -2)) / math.sqrt(C // H)
        att = torch.softmax(att.masked_fill(~mask, float("-inf")), dim=-1)
        a = lin((att @ v).transpose(1, 2).reshape(B, T, C), p + "attn.c_proj")
        x = x + a if cfg.attn_res else a
        hid = lin(ln(x, p + "ln_2"), p + "mlp.c_fc")
        m = lin(0.5 * hid * (1 + torch.erf(hid / math.sqrt(2))), p + "mlp.c_proj")  # exact GELU
        x = x + m if cfg.ffn_res else m
    head = sd["lm_head.weight"]
    return ln(x, "transformer.ln_f") @ head.T + sd.get("lm_head.bias", 0.0)


@pytest.mark.parametrize("impl", ["residualgpt", "nanogpt"])
@pytest.mark.parametrize("config", list(CONFIGS))
def test_forward_equals_independent_gpt2(config, impl):
    model = perturb(tiny_model(config, impl))
    idx = tokens()
    with torch.no_grad():
        logits, _ = model(idx)
        ref = manual_gpt(model.state_dict(), idx, model.config)
    torch.testing.assert_close(logits, ref, atol=1e-5, rtol=1e-5)


def test_residualgpt_head_is_the_embedding():
    # In the reference above the head is read from lm_head.weight; tying means it is wte.
    model = tiny_model()
    assert model.transformer.wte.weight is model.lm_head.weight
    assert model.lm_head.bias is None


def test_nanogpt_head_is_untied_with_bias():
    model = tiny_model(impl="nanogpt")
    assert model.transformer.wte.weight is not model.lm_head.weight
    assert not torch.equal(model.transformer.wte.weight, model.lm_head.weight)
    assert model.lm_head.bias is not None


@pytest.mark.parametrize(
    "impl, qkv, other", [("residualgpt", False, False), ("nanogpt", False, True)]
)
def test_linear_biases_by_implementation(impl, qkv, other):
    # The author's nanoGPT: q/k/v without bias, attention output and both FFN layers with.
    linears = {
        n: m
        for n, m in tiny_model(impl=impl).named_modules()
        if isinstance(m, nn.Linear) and n != "lm_head"
    }
    assert len(linears) == 4 * TINY["n_layer"]
    assert all(
        (m.bias is not None) == (qkv if n.endswith("c_attn") else other) for n, m in linears.items()
    )


def test_nanogpt_has_no_dropout_after_the_embeddings():
    assert tiny_model(impl="nanogpt", dropout=0.2).transformer.drop.p == 0.0
    assert tiny_model(dropout=0.2).transformer.drop.p == 0.2


def test_local_mixer_is_position_blind_with_attentions_parameter_count():
    attn, mixer = tiny_model(n_layer=1), tiny_model(n_layer=1, mixer="local")
    count = lambda m: sum(p.numel() for p in m.transformer.h[0].attn.parameters())  # noqa: E731
    assert count(attn) == count(mixer) == 4 * TINY["n_embd"] ** 2
    # Changing a later token never changes an earlier position's output, nor does an earlier
    # token change a later position's (only the position embedding and the token itself count).
    mixer.eval()
    idx = tokens()
    other = idx.clone()
    other[:, 0] = (other[:, 0] + 1) % TINY["vocab_size"]
    with torch.no_grad():
        torch.testing.assert_close(mixer(idx)[0][:, 1:], mixer(other)[0][:, 1:])


# --- attention paths --------------------------------------------------------------
def test_flash_attention_equals_manual_attention_on_same_weights():
    torch.manual_seed(0)
    flash = CausalSelfAttention(ModelConfig(**TINY, impl="residualgpt")).eval()
    manual = CausalSelfAttention(ModelConfig(**TINY, impl="nanogpt")).eval()
    assert flash.flash and not manual.flash
    missing, unexpected = manual.load_state_dict(flash.state_dict(), strict=False)
    assert sorted(missing) == ["c_proj.bias"] and not unexpected
    with torch.no_grad():
        manual.c_proj.bias.zero_()
        x = torch.randn(2, 8, 16)
        torch.testing.assert_close(flash(x), manual(x), atol=1e-6, rtol=1e-5)
        # Causality: the first 5 positions do not depend on what comes after them.
        torch.testing.assert_close(manual(x[:, :5]), manual(x)[:, :5], atol=1e-6, rtol=1e-5)


# --- initialisation ---------------------------------------------------------------
def c_proj_std(model):
    ws = [p.detach().flatten() for n, p in model.named_parameters() if n.endswith("c_proj.weight")]
    return torch.cat(ws).std().item()


def test_residualgpt_scales_c_proj_init_by_depth():
    # GPT-2: residual projections N(0, 0.02/sqrt(2 n_layer)); ~100K samples, std within 3%.
    model = tiny_model(n_layer=4, n_embd=64, n_head=4)
    assert c_proj_std(model) == pytest.approx(0.02 / math.sqrt(8), rel=0.03)
    assert model.transformer.h[0].mlp.c_fc.weight.std().item() == pytest.approx(0.02, rel=0.05)


def test_nanogpt_c_proj_init_is_plain():
    model = tiny_model(impl="nanogpt", n_layer=4, n_embd=64, n_head=4)
    assert c_proj_std(model) == pytest.approx(0.02, rel=0.03)
    assert all(
        torch.count_nonzero(m.bias) == 0
        for m in model.modules()
        if isinstance(m, nn.Linear) and m.bias is not None
    )


# --- forward contract -------------------------------------------------------------
def test_forward_without_targets_returns_no_loss():
    logits, loss = tiny_model()(tokens())
    assert logits.shape == (3, 8, 11) and loss is None


def test_forward_with_targets_returns_cross_entropy():
    model, idx, y = tiny_model(), tokens(seed=1), tokens(seed=2)
    logits, loss = model(idx, y)
    assert loss.item() == pytest.approx(
        F.cross_entropy(logits.reshape(-1, 11), y.reshape(-1)).item()
    )


def test_sequence_longer_than_block_size_is_refused():
    with pytest.raises(ValueError, match="block_size"):
        tiny_model()(torch.zeros(1, 9, dtype=torch.long))
