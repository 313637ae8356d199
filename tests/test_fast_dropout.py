"""``--fast-dropout``: dropout's masks from a NumPy SFC64 stream
(lib.engine.model.MaskStream), an execution option.

It must be torch's dropout with other random numbers: the same keep probability, the same
scaling, nothing else changed (with dropout 0 a run is the plain run), a run that resumes
exactly, and a record in env.json."""

import math

import pytest
import torch
import torch.nn.functional as F

from lib.engine.config import ConfigError, ModelConfig, get_preset, replace
from lib.engine.experiment import build_model, run
from lib.engine.files import RunError
from lib.engine.model import CausalSelfAttention, Dropout, MaskStream, use_mask_stream
from lib.engine.runs import RunDir, run_path
from lib.engine.train import check_fast_dropout

P = 0.2


def test_the_stream_keeps_one_minus_p_and_draws_the_same_masks_from_the_same_seed():
    n = 1_000_000
    kept = MaskStream(1337).keep((n,), P).float().mean().item()
    # binomial: the standard error of the rate is sqrt(p (1 - p) / n) =
    # 0.0004; five of them either side
    assert abs(kept - (1 - P)) < 5 * math.sqrt(P * (1 - P) / n)
    a, b, other_seed = MaskStream(7), MaskStream(7), MaskStream(8)
    first = a.keep((4, 64), P)
    assert torch.equal(first, b.keep((4, 64), P))
    assert not torch.equal(first, other_seed.keep((4, 64), P))
    # the state carries the stream on: a restored copy draws what the original draws next
    saved = a.state_dict()
    nxt = a.keep((3, 5), P)
    b.load_state_dict(saved)
    assert torch.equal(nxt, b.keep((3, 5), P))
    assert MaskStream(1).keep((1000,), 0.0).all()  # p = 0 keeps everything


def test_dropout_with_a_stream_is_torchs_formula_on_the_streams_mask():
    x = torch.randn(6, 10, 16)
    d = Dropout(P)
    torch.manual_seed(3)
    plain = d(x)
    torch.manual_seed(3)
    assert torch.equal(plain, F.dropout(x, P, True))  # without a stream: nn.Dropout exactly
    use_mask_stream(d, MaskStream(5))
    keep = MaskStream(5).keep(x.shape, P)
    torch.testing.assert_close(d(x), x * keep / (1 - P), rtol=1e-6, atol=0)
    d.eval()
    before = d.masks.state_dict()
    # evaluation drops nothing and draws nothing
    assert torch.equal(d(x), x) and d.masks.state_dict() == before


@pytest.mark.parametrize(
    "impl, mixer",
    [("nanogpt", "attention"), ("residualgpt", "attention"), ("residualgpt", "local")],
)
def test_with_a_stream_every_dropout_of_the_model_draws_from_it_and_none_from_torch(impl, mixer):
    exp = replace(
        get_preset("cpu", impl, "AttnOnly"),
        n_layer=2,
        n_embd=32,
        n_head=2,
        block_size=16,
        dropout=P,
        mixer=mixer,
    )
    model = build_model(exp)
    masks = MaskStream(1)
    use_mask_stream(model, masks)
    idx = torch.randint(0, 65, (2, 16))
    torch_state, ours = torch.get_rng_state(), masks.state_dict()
    model.train()
    model(idx)
    # torch's generator untouched: no dropout drew from it
    assert torch.equal(torch.get_rng_state(), torch_state)
    assert masks.state_dict() != ours
    model.eval()
    after = masks.state_dict()
    model(idx)
    assert masks.state_dict() == after  # evaluation draws nothing


@pytest.mark.parametrize("attn_kernel", ["sdpa", "manual"])
def test_attention_with_a_stream_drops_its_weights_as_written_out(attn_kernel):
    cfg = ModelConfig(
        n_layer=1,
        n_head=2,
        n_embd=16,
        block_size=8,
        vocab_size=65,
        dropout=P,
        attn_kernel=attn_kernel,
    )
    torch.manual_seed(0)
    attn = CausalSelfAttention(cfg)
    x = torch.randn(3, 8, 16, requires_grad=True)
    use_mask_stream(attn, MaskStream(11))
    y = attn(x)
    # The same draws in the same order: the weights' mask first, then the output's.
    twin = MaskStream(11)
    B, T, C = x.shape
    keep_w, keep_out = twin.keep((B, 2, T, T), P), twin.keep((B, T, C), P)
    q, k, v = (t.view(B, T, 2, C // 2).transpose(1, 2) for t in attn.c_attn(x).split(C, dim=2))
    w = (
        ((q @ k.transpose(-2, -1)) / math.sqrt(C // 2))
        .masked_fill(~torch.tril(torch.ones(T, T, dtype=torch.bool)), float("-inf"))
        .softmax(-1)
    )
    ref = (
        attn.c_proj(((w * keep_w / (1 - P)) @ v).transpose(1, 2).reshape(B, T, C))
        * keep_out
        / (1 - P)
    )
    torch.testing.assert_close(y, ref, rtol=1e-5, atol=1e-6)
    (g,) = torch.autograd.grad(y.square().sum(), x)
    (g_ref,) = torch.autograd.grad(ref.square().sum(), x)
    torch.testing.assert_close(g, g_ref, rtol=1e-4, atol=1e-6)


def tiny(impl="nanogpt", **kw):
    base = dict(
        n_layer=2,
        n_embd=32,
        n_head=2,
        block_size=32,
        batch_size=8,
        max_steps=20,
        eval_interval=5,
        eval_batches=3,
        train_eval_batches=2,
        dropout=P,
    )
    return replace(get_preset("cpu", impl, "AttnOnly"), **{**base, **kw})


def history(rd):
    return [{k: v for k, v in r.items() if k != "train_time_s"} for r in rd.history()]


@pytest.mark.parametrize("impl", ["nanogpt", "residualgpt"])
def test_fast_dropout_is_an_execution_option_that_resumes_exactly(tmp_path, impl):
    exp = tiny(impl)
    kw = dict(progress=False, diagnostics=False, keep_weights=True, device="cpu")
    run(exp, runs_dir=tmp_path / "torch", **kw)
    run(exp, runs_dir=tmp_path / "full", fast_dropout=True, **kw)
    assert (
        run(exp, runs_dir=tmp_path / "prefix", fast_dropout=True, until=10, **kw)["status"]
        == "partial"
    )
    assert run(exp, runs_dir=tmp_path / "prefix", fast_dropout=True, **kw)["status"] == "complete"
    torch_rd, full, prefix = (
        RunDir(run_path(exp, tmp_path / d)) for d in ("torch", "full", "prefix")
    )
    # the same directory: an execution option is not part of what is trained
    assert full.path.relative_to(tmp_path / "full") == torch_rd.path.relative_to(tmp_path / "torch")
    assert full.read_json("env.json")["fast_dropout"] is True
    assert torch_rd.read_json("env.json")["fast_dropout"] is False
    assert prefix.read_json("env.json")["resumed"][0]["fast_dropout"] is True
    # resumed: the stream's state came back with the checkpoint
    assert history(prefix) == history(full)
    wa, wb = (
        torch.load(rd.path / "weights.pt", weights_only=True)["model"] for rd in (full, prefix)
    )
    assert all(torch.equal(wa[k], wb[k]) for k in wa)
    # other masks: the training losses differ from torch's run (they are drawn with dropout
    # on), so the option is not ignored
    assert [r["train_loss"] for r in history(full)][1:] != [
        r["train_loss"] for r in history(torch_rd)
    ][1:]
    # a prefix resumed with the other generator is refused, both ways round, and nothing is written
    for fast in (True, False):
        d = tmp_path / f"switch-{fast}"
        run(exp, runs_dir=d, fast_dropout=fast, until=10, **kw)
        before = RunDir(run_path(exp, d)).history()
        with pytest.raises(RunError, match="resume it the same way"):
            run(exp, runs_dir=d, fast_dropout=not fast, **kw)
        assert RunDir(run_path(exp, d)).history() == before


def test_without_dropout_fast_dropout_changes_nothing(tmp_path):
    exp = tiny(dropout=0.0)
    kw = dict(progress=False, diagnostics=False, device="cpu")
    run(exp, runs_dir=tmp_path / "torch", **kw)
    run(exp, runs_dir=tmp_path / "fast", fast_dropout=True, **kw)
    a, b = (RunDir(run_path(exp, tmp_path / d)) for d in ("torch", "fast"))
    assert history(a) == history(b)


@pytest.mark.parametrize(
    "device, compile, world, expected",
    [
        ("cuda:0", False, 1, "train with --device cpu"),
        ("cpu", True, 1, "cannot be combined"),
        ("cpu", False, 2, "for one process"),
    ],
)
def test_fast_dropout_off_the_cpu_compiled_or_under_torchrun_is_refused(
    device, compile, world, expected
):
    with pytest.raises(ConfigError, match=expected):
        check_fast_dropout(True, device, compile, world)
    check_fast_dropout(False, device, compile, world)  # without the option: nothing to refuse


def test_run_refuses_fast_dropout_with_compile_before_writing(tmp_path):
    with pytest.raises(ConfigError, match="cannot be combined"):
        run(
            tiny(), runs_dir=tmp_path, fast_dropout=True, compile=True, device="cpu", progress=False
        )
    assert not any(tmp_path.iterdir())


def test_sdpa_written_out_is_torchs_sdpa_bitwise_with_torchs_masks():
    """The `sdpa` kernel's rounding is kept under --fast-dropout:
    lib.engine.model.sdpa_math, drawing torch's masks, is F.scaled_dot_product_attention
    with dropout exactly, forward and backward."""
    from lib.engine.model import sdpa_math

    torch.manual_seed(0)
    q, k, v = (torch.randn(2, 3, 32, 16, requires_grad=True) for _ in range(3))
    torch.manual_seed(5)
    ours = sdpa_math(q, k, v, Dropout(P))
    g_ours = torch.autograd.grad(ours.square().sum(), (q, k, v))
    torch.manual_seed(5)
    theirs = F.scaled_dot_product_attention(q, k, v, is_causal=True, dropout_p=P)
    g_theirs = torch.autograd.grad(theirs.square().sum(), (q, k, v))
    assert torch.equal(ours, theirs)
    assert all(torch.equal(a, b) for a, b in zip(g_ours, g_theirs))


def test_fast_dropout_switched_on_at_resume_without_dropout_continues_the_run(tmp_path):
    # Issue 39 item 5: without dropout the stream draws nothing, so switching it on at a resume is
    # still one run (the cpu preset's dropout is 0); it ended in KeyError: 'mask_stream'.
    exp = tiny(dropout=0.0)
    kw = dict(progress=False, diagnostics=False, device="cpu")
    run(exp, runs_dir=tmp_path / "plain", **kw)
    assert run(exp, runs_dir=tmp_path / "switched", until=10, **kw)["status"] == "partial"
    assert run(exp, runs_dir=tmp_path / "switched", fast_dropout=True, **kw)["status"] == "complete"
    a, b = (RunDir(run_path(exp, tmp_path / d)) for d in ("plain", "switched"))
    assert history(a) == history(b)
