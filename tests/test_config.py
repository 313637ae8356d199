"""Presets match Table 1 (§3.2) and the parameter counts it rounds; overrides are strict."""

import dataclasses

import pytest
import torch

from lib.engine.config import (
    MODEL_RECIPES,
    SCALE_RECIPES,
    ConfigError,
    Experiment,
    ModelConfig,
    get_preset,
    replace,
)
from lib.engine.model import GPT


def n_params(scale, impl="residualgpt", **kw):
    return GPT(get_preset(scale, impl).model).num_params(**kw)


# --- parameter counts ---------------------------------------------------------
def test_10m_residualgpt_parameter_count():
    assert n_params("10M") == 10_750_080


def test_10m_non_embedding_count_rounds_to_papers_10_7m():
    # nanoGPT prints the count without position embeddings; that is the paper's "≈10.7M".
    n = n_params("10M", non_embedding=True)
    assert n == 10_651_776 and round(n / 1e6, 1) == 10.7


def test_124m_residualgpt_parameter_count():
    # Built on the meta device: shapes only, no 124M-parameter allocation or init.
    with torch.device("meta"):
        model = GPT(get_preset("124M").model)
    n = model.num_params()
    assert n == 124_356_864 and round(n / 1e6, 1) == 124.4


@pytest.mark.parametrize("scale, expected", [("cpu", 1_207_680), ("cpu-bpe", 8_814_976)])
def test_stand_in_parameter_counts(scale, expected):
    assert n_params(scale) == expected


def test_10m_nanogpt_parameter_count():
    # The author's notebook: untied head (+65x384), biases on the attention output, both FFN layers
    # and lm_head, none on q/k/v (6 layers x 3 x 384 fewer than a bias on every Linear).
    assert n_params("10M", "nanogpt") == 10_788_929


def test_tied_matrix_counts_once():
    model = GPT(get_preset("cpu").model)
    every_tensor = sum(p.numel() for p in model.state_dict().values())
    assert every_tensor - model.num_params() == model.lm_head.weight.numel()


# --- Table 1 ------------------------------------------------------------------
SHARED = dict(
    beta1=0.9, beta2=0.95, weight_decay=0.1, grad_clip=1.0, eval_batches=50, val_seed=99991
)


def test_10m_preset_is_table_1():
    exp = get_preset("10M")
    m, t = exp.model, exp.train
    assert (m.n_layer, m.n_embd, m.n_head, m.block_size, m.dropout) == (6, 384, 6, 256, 0.2)
    assert (m.vocab_size, exp.dataset) == (65, "shakespeare_char")
    assert (t.batch_size, t.grad_accum, t.max_steps, t.eval_interval) == (64, 1, 3000, 100)
    assert (t.lr, t.min_lr, t.warmup_steps, t.schedule) == (3e-4, 3e-5, 100, "cosine")
    assert {k: getattr(t, k) for k in SHARED} == SHARED


def test_124m_preset_is_table_1():
    exp = get_preset("124M")
    m, t = exp.model, exp.train
    assert (m.n_layer, m.n_embd, m.n_head, m.block_size, m.dropout) == (12, 768, 12, 1024, 0.1)
    assert (m.vocab_size, exp.dataset) == (50257, "openwebtext")
    assert (t.batch_size, t.grad_accum, t.max_steps, t.eval_interval) == (16, 8, 20000, 500)
    assert (t.lr, t.min_lr, t.warmup_steps, t.schedule) == (6e-4, 6e-5, 2000, "cosine")
    assert {k: getattr(t, k) for k in SHARED} == SHARED


def test_residualgpt_recipe():
    t = get_preset("10M").train
    assert (t.decay_all, t.val_mode) == (False, "fixed")


@pytest.mark.parametrize("scale", ["10M", "124M"])
def test_nanogpt_preset_is_its_own_recipe(scale):
    # The author's NanoGPT_10M.ipynb: constant 3e-4, `AdamW(model.parameters(), lr=3e-4)` (betas
    # (0.9, 0.999), decay 0.01 on everything), no clipping, random validation batches, fp32.
    exp, ref = get_preset(scale, "nanogpt"), get_preset(scale)
    t = exp.train
    assert (
        t.lr,
        t.schedule,
        t.beta1,
        t.beta2,
        t.weight_decay,
        t.decay_all,
        t.grad_clip,
        t.val_mode,
        t.precision,
    ) == (3e-4, "constant", 0.9, 0.999, 0.01, True, 0.0, "random", "fp32")
    m = exp.model
    assert (
        m.tie_weights,
        m.qkv_bias,
        m.bias,
        m.head_bias,
        m.attn_kernel,
        m.scaled_init,
        m.emb_dropout,
    ) == (False, False, True, True, "manual", False, False)
    # The shape is ResidualGPT's: only the bundle fields and the label differ.
    residualgpt = {**MODEL_RECIPES["residualgpt"], **SCALE_RECIPES.get((scale, "residualgpt"), {})}
    assert dataclasses.replace(exp.model, impl="residualgpt", **residualgpt) == ref.model


def test_bundle_fields_default_to_the_implementations_recipe():
    assert ModelConfig(impl="nanogpt").departures == {}
    one_factor = ModelConfig(impl="nanogpt", scaled_init=True)
    assert one_factor.departures == {"scaled_init": True} and not one_factor.tie_weights
    with pytest.raises(ConfigError, match="valid: sdpa, manual"):
        ModelConfig(attn_kernel="flash")


def test_legacy_nanogpt_config_reads_as_what_it_trained():
    # Runs written before the bundle fields existed had q/k/v biases and embedding dropout.
    d = get_preset("cpu", "nanogpt").to_dict()
    legacy = {
        **d,
        "model": {k: v for k, v in d["model"].items() if k not in MODEL_RECIPES["nanogpt"]},
    }
    m = Experiment.from_dict(legacy).model
    assert m.qkv_bias and m.emb_dropout and not m.tie_weights
    assert Experiment.from_dict(d) == get_preset("cpu", "nanogpt")


def test_precision_is_checked_and_named_by_the_preset():
    # The author's 10M notebooks have no autocast; the 124M ones autocast to bf16.
    assert {s: get_preset(s).train.precision for s in ("cpu", "cpu-bpe", "10M", "124M")} == {
        "cpu": "fp32",
        "cpu-bpe": "fp32",
        "10M": "fp32",
        "124M": "bf16",
    }
    assert get_preset("10M", "nanogpt").train.precision == "fp32"
    with pytest.raises(ConfigError, match="valid: fp32, bf16"):
        replace(get_preset("cpu"), precision="fp16")


@pytest.mark.parametrize(
    "config, switches",
    [
        ("FullResidual", (True, True)),
        ("AttnOnly", (True, False)),
        ("FFNOnly", (False, True)),
        ("NoResidual", (False, False)),
    ],
)
def test_config_sets_the_two_switches_only(config, switches):
    exp = get_preset("10M", config=config)
    assert (exp.model.attn_res, exp.model.ffn_res) == switches and exp.config_name == config
    assert dataclasses.replace(exp.model, attn_res=True, ffn_res=True) == get_preset("10M").model


def test_seed_is_set():
    assert get_preset("cpu", seed=7).seed == 7


# --- strict overrides ---------------------------------------------------------
def test_replace_routes_keys_to_their_part():
    exp = replace(get_preset("cpu"), n_layer=2, max_steps=20, seed=7)
    assert (exp.model.n_layer, exp.train.max_steps, exp.seed) == (2, 20, 7)


def test_replace_refuses_unknown_key_and_names_valid_ones():
    with pytest.raises(ConfigError) as e:
        replace(get_preset("cpu"), n_layers=2)
    msg = str(e.value)
    assert "n_layers" in msg and all(
        k in msg for k in ("n_layer", "max_steps", "seed", "gain_mode")
    )


@pytest.mark.parametrize(
    "key, value",
    [
        ("max_steps", "20"),
        ("n_layer", 2.0),
        ("attn_res", 1),
        ("lr", "1e-3"),
        ("impl", 3),
        ("max_steps", True),
    ],
)
def test_replace_refuses_wrong_type(key, value):
    with pytest.raises(ConfigError, match=key):
        replace(get_preset("cpu"), **{key: value})


def test_replace_widens_int_to_float_and_accepts_none_where_optional():
    exp = replace(get_preset("cpu"), lr=1, gain_mode="weight", gain=2)
    assert exp.train.lr == 1.0 and type(exp.train.lr) is float and exp.gain == 2.0
    assert replace(exp, gain_mode=None).gain_mode is None


def test_replace_runs_validation():
    with pytest.raises(ConfigError, match="divisible"):
        replace(get_preset("cpu"), n_embd=30)  # 4 heads


@pytest.mark.parametrize(
    "kw, valid",
    [
        (dict(scale="1M"), ["cpu", "cpu-bpe", "10M", "124M"]),
        (dict(scale="cpu", impl="minGPT"), ["residualgpt", "nanogpt"]),
        (dict(scale="cpu", config="Full"), ["FullResidual", "AttnOnly", "FFNOnly", "NoResidual"]),
    ],
)
def test_get_preset_refuses_bad_choice_listing_valid_values(kw, valid):
    with pytest.raises(ConfigError) as e:
        get_preset(**kw)
    assert all(v in str(e.value) for v in valid)


def test_experiment_round_trips_through_dict():
    exp = replace(get_preset("cpu", "nanogpt", "FFNOnly", 3), gain_mode="weight", gain=2.0)
    assert Experiment.from_dict(exp.to_dict()) == exp


def test_replacing_the_implementation_takes_its_recipe():
    exp = replace(get_preset("cpu"), impl="nanogpt")
    assert exp.model.departures == {} and not exp.model.tie_weights
    assert replace(get_preset("cpu"), impl="nanogpt", scaled_init=True).model.departures == {
        "scaled_init": True
    }


def test_a_mixer_or_a_switched_factor_gets_its_own_run_directory():
    from lib.engine.runs import run_path

    base = get_preset("cpu", "nanogpt", "AttnOnly")
    assert run_path(base, "r").name == "seed1337"
    assert run_path(replace(base, mixer="local"), "r").name == "seed1337_mixer-local"
    assert run_path(replace(base, scaled_init=True), "r").name == "seed1337_scaled_init-True"


def test_the_10m_residualgpt_preset_is_the_stability_notebooks_recipe_field_by_field():
    """Issue 23 §2: every field that can change training, against
    data/author_recipes.csv's entries for Notebooks/10M/AttnOnly_seed_stability.ipynb
    (the book's recipe table shows the same entries)."""
    from lib.claims.paper import recipe_entry

    nb = "AttnOnly_seed_stability.ipynb"
    exp = get_preset("10M", "residualgpt", "AttnOnly")
    m, t = exp.model, exp.train
    assert recipe_entry(nb, "init") == "N(0, 0.02), no 1/sqrt(2L)" and m.scaled_init is False
    assert recipe_entry(nb, "schedule") == "warm-up 100, cosine to 3e-5 at 3,000"
    assert (t.schedule, t.warmup_steps, t.min_lr, t.max_steps) == ("cosine", 100, 3e-5, 3000)
    assert float(recipe_entry(nb, "lr")) == t.lr == 3e-4
    assert recipe_entry(nb, "dropout").startswith("0.2 (embeddings,")
    assert (m.dropout, m.emb_dropout) == (0.2, True)
    assert (
        recipe_entry(nb, "optimiser")
        == "AdamW (0.9, 0.95), weight decay 0.1 on >=2-D tensors, clip 1.0"
    )
    assert (t.beta1, t.beta2, t.weight_decay, t.decay_all, t.grad_clip) == (
        0.9,
        0.95,
        0.1,
        False,
        1.0,
    )
    assert recipe_entry(nb, "weights") == "tied embedding, no biases, SDPA"
    assert (m.tie_weights, m.qkv_bias, m.bias, m.head_bias, m.attn_kernel) == (
        True,
        False,
        False,
        False,
        "sdpa",
    )
    assert recipe_entry(nb, "determinism").endswith("fp32") and t.precision == "fp32"
    assert recipe_entry(nb, "evaluation").startswith("50 fixed batches (own generator, seed 99991)")
    # the interval is Table 1's 100
    assert (t.eval_batches, t.val_mode, t.val_seed) == (50, "fixed", 99991)
    # the stand-in keeps GPT-2's scaling, as its released runs trained
    assert get_preset("cpu", "residualgpt", "AttnOnly").model.scaled_init is True


def test_a_released_run_resolves_to_the_recipe_it_trained_with():
    """A config.json written before the 10M preset changed (scaled_init true)
    still reads as what it trained."""
    from lib.engine.plans import planned
    from lib.engine.runs import run_path

    d = get_preset("10M", "residualgpt", "AttnOnly").to_dict()
    d["model"]["scaled_init"] = True
    old = Experiment.from_dict(d)
    assert old.model.scaled_init is True
    # ... and is its own experiment: another directory, in no plan,
    # never read as the new recipe's run
    assert run_path(old).name == "seed1337_scaled_init-True" and not planned(old)
    assert run_path(get_preset("10M", "residualgpt", "AttnOnly")).name == "seed1337"


def test_the_anchor_seed_is_written_once_in_lib():
    # One seed constant (config.PAPER_SEED): no other lib module writes the
    # number itself (prose may name it).
    import io
    import tokenize
    from pathlib import Path

    from lib.engine.config import PAPER_SEED

    lib = Path(__file__).resolve().parents[1] / "lib"
    found = [
        f"{p.relative_to(lib)}:{tok.start[0]}"
        for p in sorted(lib.rglob("*.py"))
        for tok in tokenize.generate_tokens(io.StringIO(p.read_text()).readline)
        if tok.type == tokenize.NUMBER and tok.string == str(PAPER_SEED)
    ]
    assert found == ["engine/config.py:" + found[0].split(":")[1]] and len(found) == 1, found
