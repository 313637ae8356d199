"""Diagnostics of §4.1: per-layer gradient norms, hidden-state norms, and that they are optional."""

import math

import pytest
import torch

from lib.engine.config import CONFIGS, ModelConfig
from lib.engine.diagnostics import capture_activations, grad_norms, hidden_norms
from lib.engine.experiment import run
from lib.engine.runs import RunDir, run_path

TINY = dict(vocab_size=11, block_size=8, n_layer=3, n_head=2, n_embd=16, dropout=0.0)


def tiny_model(config="FullResidual", impl="residualgpt"):
    from lib.engine.model import GPT

    torch.manual_seed(0)
    attn_res, ffn_res = CONFIGS[config]
    return GPT(ModelConfig(**TINY, attn_res=attn_res, ffn_res=ffn_res, impl=impl)).eval()


def idx(B=2, T=8):
    return torch.randint(11, (B, T), generator=torch.Generator().manual_seed(0))


@pytest.fixture
def one_thread():
    # A training job shares this 2-core machine; two torch threads fighting it make the
    # short runs below several times slower. Restored afterwards.
    n = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(n)


# --- gradient norms -------------------------------------------------------------------
def test_grad_norm_of_constant_grads_is_c_sqrt_n():
    model = tiny_model("NoResidual", impl="nanogpt")
    attn = model.transformer.h[0].attn
    # weights and the output bias (no q/k/v bias): 16*48+16*16+16
    n = sum(p.numel() for p in attn.parameters())
    for p in attn.parameters():
        p.grad = torch.full_like(p, 0.5)
    norms = grad_norms(model)
    assert norms["attn"][0] == pytest.approx(0.5 * math.sqrt(n), rel=1e-6) and n == 1040
    assert norms["attn"][1:] == [0.0, 0.0] and norms["mlp"] == [0.0, 0.0, 0.0]  # no grads: 0


@pytest.mark.parametrize("config", list(CONFIGS))
def test_grad_norms_equal_vector_norm_of_concatenated_grads(config):
    model = tiny_model(config).train()
    _, loss = model(idx(), idx(B=2).roll(1, dims=1))
    loss.backward()
    norms = grad_norms(model)
    for i, block in enumerate(model.transformer.h):
        for part in ("attn", "mlp"):
            flat = torch.cat([p.grad.flatten() for p in getattr(block, part).parameters()])
            assert norms[part][i] == pytest.approx(torch.linalg.vector_norm(flat).item(), rel=1e-5)
    assert len(norms["attn"]) == len(norms["mlp"]) == TINY["n_layer"]


def test_grad_norms_separate_attention_from_mlp():
    model = tiny_model()
    for p in model.transformer.h[1].mlp.parameters():
        p.grad = torch.ones_like(p)
    norms = grad_norms(model)
    assert norms["attn"] == [0.0, 0.0, 0.0] and norms["mlp"][1] == pytest.approx(
        math.sqrt(2 * 16 * 64)
    )


def test_ffn_weight_gradient_is_the_authors_mean_of_the_two_weight_norms_without_biases():
    """Notebooks/10M/NanoGPT_10M.ipynb, cell 6: (|grad fc1.weight| +
    |grad fc2.weight|) / 2 per layer."""
    model = tiny_model()  # the nanogpt-like tiny model has FFN biases: they must not count
    mlp = model.transformer.h[2].mlp
    mlp.c_fc.weight.grad = torch.full_like(mlp.c_fc.weight, 2.0)  # norm 2 * sqrt(16 * 64) = 64
    mlp.c_proj.weight.grad = torch.zeros_like(mlp.c_proj.weight)  # norm 0
    for p in (mlp.c_fc.bias, mlp.c_proj.bias):
        if p is not None:
            p.grad = torch.full_like(p, 100.0)
    norms = grad_norms(model)
    assert norms["ffn_weights"] == [0.0, 0.0, pytest.approx(32.0)]


def test_ffn_weight_gradient_reads_the_ffn_inside_a_runtime_gain():
    # §5.1's runtime gain wraps the FFN (gain.RuntimeGain): the diagnostics read
    # the FFN inside it, as without it
    from lib.engine.gain import apply_gain

    plain, gained = tiny_model(), tiny_model()
    apply_gain(gained, "runtime", 2.0)
    for model in (plain, gained):
        mlp = getattr(model.transformer.h[1].mlp, "inner", model.transformer.h[1].mlp)
        mlp.c_fc.weight.grad = torch.full_like(mlp.c_fc.weight, 2.0)
        mlp.c_proj.weight.grad = torch.zeros_like(mlp.c_proj.weight)
    assert (
        grad_norms(gained)["ffn_weights"]
        == grad_norms(plain)["ffn_weights"]
        == [0.0, pytest.approx(32.0), 0.0]
    )


# --- hidden states -----------------------------------------------------------------
def test_states_are_embedding_then_each_block_output():
    model, x = tiny_model("AttnOnly"), idx()
    states = capture_activations(model, x)
    assert len(states) == TINY["n_layer"] + 1
    tr = model.transformer
    with torch.no_grad():
        h = tr.wte(x) + tr.wpe(torch.arange(8))
        assert torch.equal(states[0], h)  # eval mode: embedding dropout is the identity
        for block, state in zip(tr.h, states[1:]):
            h = block(h)
            assert torch.equal(state, h)


def test_capture_leaves_no_hooks_behind():
    model = tiny_model()
    capture_activations(model, idx())
    assert all(not m._forward_hooks and not m._forward_pre_hooks for m in model.modules())


def test_hidden_norms_are_mean_token_l2_norms():
    model, x = tiny_model("FFNOnly"), idx()
    expected = [h.pow(2).sum(-1).sqrt().mean().item() for h in capture_activations(model, x)]
    assert hidden_norms(model, x) == pytest.approx(expected, rel=1e-6)


def zero_output_projections(model):
    with torch.no_grad():
        for name, p in model.named_parameters():
            if name.endswith("c_proj.weight"):
                p.zero_()
    return model


def test_hidden_norms_by_hand_with_silent_sublayers():
    # Sublayers whose output projection is zero output exactly 0 (no biases in residualgpt):
    # with both skips the stream stays the embedding; with none it is 0 after the first block.
    x = idx()
    full = zero_output_projections(tiny_model("FullResidual"))
    emb = full.transformer.wte(x) + full.transformer.wpe(torch.arange(8))
    e = emb.norm(dim=-1).mean().item()
    assert hidden_norms(full, x) == pytest.approx([e] * 4, rel=1e-6)
    none = zero_output_projections(tiny_model("NoResidual"))
    assert hidden_norms(none, x)[1:] == [0.0, 0.0, 0.0]


# --- as callbacks in a run ------------------------------------------------------------
def history(tiny, tmp_path, diagnostics):
    exp = tiny(max_steps=6, eval_interval=3)
    run(exp, runs_dir=tmp_path, progress=False, diagnostics=diagnostics)
    return exp, RunDir(run_path(exp, tmp_path)).history()


DIAG_KEYS = {
    "grad_norm_attn",
    "grad_norm_mlp",
    "grad_norm_ffn_weights",
    "hidden_norm",
    "hidden_growth",
    "probe_cosine",
    "probe_token",
    "probe_chance",
    "probe_rank",
}


def test_run_without_diagnostics_records_none(tiny, tmp_path, one_thread):
    _, hist = history(tiny, tmp_path, diagnostics=False)
    assert [r["step"] for r in hist] == [0, 3, 6]
    assert not any(DIAG_KEYS & set(r) for r in hist)


def test_run_with_diagnostics_records_per_layer_values(tiny, tmp_path, one_thread):
    exp, hist = history(tiny, tmp_path, diagnostics=True)
    L = exp.model.n_layer
    assert "grad_norm_attn" not in hist[0]  # step 0: no backward pass yet
    for r in hist:
        assert len(r["hidden_norm"]) == L + 1
        assert r["hidden_growth"] == pytest.approx(
            r["hidden_norm"][-1] / r["hidden_norm"][0], rel=1e-12
        )
        assert len(r["probe_cosine"]) == len(r["probe_token"]) == len(r["probe_rank"]) == L + 1
        assert r["probe_token"][0] > r["probe_chance"]  # the embedding still holds the token
    for r in hist[1:]:
        assert (
            len(r["grad_norm_attn"])
            == len(r["grad_norm_mlp"])
            == len(r["grad_norm_ffn_weights"])
            == L
        )
        assert all(v > 0 for v in r["grad_norm_attn"] + r["grad_norm_mlp"])


def test_diagnostics_do_not_change_training(tiny, tmp_path, one_thread):
    # Hooks and norm reads must not touch RNG or parameters: same losses with and without.
    _, off = history(tiny, tmp_path / "off", diagnostics=False)
    _, on = history(tiny, tmp_path / "on", diagnostics=True)
    keys = ("step", "val_loss", "train_loss")
    assert [[r[k] for k in keys] for r in off] == [[r[k] for k in keys] for r in on]
