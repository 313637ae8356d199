"""The two gains of §5.1: weight-level (a real change of init) and
runtime (a reparameterisation)."""

import pandas as pd
import pytest
import torch

from lib.engine.config import get_preset, replace
from lib.engine.experiment import build_model
from lib.engine.gain import GAINS, RuntimeGain, apply_gain, gain_experiments, spread_after
from lib.engine.model import GPT


def tiny_exp(impl="residualgpt", **kw):
    return replace(
        get_preset("cpu", impl, "AttnOnly"), n_layer=2, n_embd=16, n_head=2, block_size=8, **kw
    )


def model_and_input(impl="residualgpt"):
    torch.manual_seed(0)
    model = GPT(tiny_exp(impl).model).eval()
    return model, torch.randn(2, 8, 16, generator=torch.Generator().manual_seed(1))


def outputs(model, x):
    with torch.no_grad():
        return [(b.attn(x), b.mlp(x)) for b in model.transformer.h]


# --- weight-level gain ---------------------------------------------------------------
@pytest.mark.parametrize("g", [0.25, 2.0, 3.0])
@pytest.mark.parametrize("impl", ["residualgpt", "nanogpt"])
def test_weight_gain_scales_initial_mlp_output_by_g(impl, g):
    model, x = model_and_input(impl)
    if impl == "nanogpt":  # non-zero biases, so the bias must be scaled too
        with torch.no_grad():
            for b in model.transformer.h:
                b.mlp.c_proj.bias.normal_()
    before = outputs(model, x)
    apply_gain(model, "weight", g, "mlp")
    for (a0, m0), (a1, m1) in zip(before, outputs(model, x)):
        torch.testing.assert_close(m1, g * m0, rtol=1e-6, atol=1e-7)
        assert torch.equal(a1, a0)  # attention untouched


def test_weight_gain_changes_only_mlp_output_projections():
    model, _ = model_and_input()
    before = {k: v.clone() for k, v in model.state_dict().items()}
    apply_gain(model, "weight", 2.0, "mlp")
    after = model.state_dict()
    changed = sorted(k for k in before if not torch.equal(before[k], after[k]))
    assert changed == ["transformer.h.0.mlp.c_proj.weight", "transformer.h.1.mlp.c_proj.weight"]
    assert all(type(b.mlp).__name__ == "MLP" for b in model.transformer.h)  # no wrapper


def test_weight_gain_can_target_attention():
    model, x = model_and_input()
    before = outputs(model, x)
    apply_gain(model, "weight", 2.0, "attn")
    for (a0, m0), (a1, m1) in zip(before, outputs(model, x)):
        assert torch.equal(a1, 2.0 * a0) and torch.equal(m1, m0)


# --- runtime gain -----------------------------------------------------------------------
def test_runtime_gain_multiplies_output_and_keeps_parameters():
    model, x = model_and_input()
    params_before = [p.detach().clone() for p in model.parameters()]
    before = outputs(model, x)
    apply_gain(model, "runtime", 3.0, "mlp")
    assert all(isinstance(b.mlp, RuntimeGain) and b.mlp.g == 3.0 for b in model.transformer.h)
    after_params = list(model.parameters())
    assert len(after_params) == len(params_before)
    assert all(torch.equal(p0, p1) for p0, p1 in zip(params_before, after_params))
    for (a0, m0), (a1, m1) in zip(before, outputs(model, x)):
        assert torch.equal(m1, 3.0 * m0) and torch.equal(a1, a0)


def test_unknown_gain_mode_is_refused():
    model, _ = model_and_input()
    with pytest.raises(ValueError, match="runtime, weight"):
        apply_gain(model, "init", 2.0)


# --- experiments -------------------------------------------------------------------------
def test_gain_experiments_are_plain_run_plus_one_per_mode_and_gain():
    exps = gain_experiments(tiny_exp())
    assert (exps[0].gain_mode, exps[0].gain) == (None, 1.0)
    pairs = [(e.gain_mode, e.gain) for e in exps[1:]]
    assert pairs == [(m, g) for m in ("runtime", "weight") for g in GAINS if g != 1]
    assert len(exps) == 1 + 2 * 4
    assert len({e.to_json() for e in exps}) == len(exps)  # all distinct experiments


def test_build_model_applies_weight_gain_to_the_seeded_init():
    plain = build_model(tiny_exp()).state_dict()
    gained = build_model(tiny_exp(gain_mode="weight", gain=2.0)).state_dict()
    for k in plain:
        scale = 2.0 if k.endswith("mlp.c_proj.weight") else 1.0
        assert torch.equal(gained[k], scale * plain[k]), k


def test_build_model_applies_runtime_gain():
    model = build_model(tiny_exp(gain_mode="runtime", gain=0.5, gain_target="attn"))
    assert all(isinstance(b.attn, RuntimeGain) and b.attn.g == 0.5 for b in model.transformer.h)
    assert not any(isinstance(b.mlp, RuntimeGain) for b in model.transformer.h)


def test_build_model_without_gain_mode_applies_none():
    # gain without a mode is ignored by build_model (the CLI refuses it; see test_cli.py)
    a = build_model(tiny_exp()).state_dict()
    b = build_model(tiny_exp(gain=2.0)).state_dict()
    assert all(torch.equal(a[k], b[k]) for k in a)


# --- spread ---------------------------------------------------------------------------------
def test_spread_after_by_hand():
    rows = [  # mode, gain, step, val_loss
        ("runtime", 0.5, 0, 4.0),
        ("runtime", 2.0, 0, 3.0),  # spread 1.0 (before step 200)
        ("runtime", 0.5, 200, 2.0),
        ("runtime", 2.0, 200, 2.1),  # 0.1
        ("runtime", 0.5, 400, 1.5),
        ("runtime", 2.0, 400, 1.55),  # 0.05 (last)
        ("weight", 0.5, 0, 4.0),
        ("weight", 2.0, 0, 4.0),
        ("weight", 4.0, 0, 4.5),  # 0.5
        ("weight", 0.5, 200, 2.0),
        ("weight", 2.0, 200, 3.0),
        ("weight", 4.0, 200, 2.5),  # 1.0
        ("weight", 0.5, 400, 1.8),
        ("weight", 2.0, 400, 2.0),
        ("weight", 4.0, 400, 2.6),  # 0.8
    ]
    curves = pd.DataFrame(rows, columns=["mode", "gain", "step", "val_loss"])
    out = spread_after(curves, step=200).set_index("mode")
    assert out.loc["runtime", "max_spread_from_step_200"] == pytest.approx(0.1)
    assert out.loc["runtime", "spread_at_last_step"] == pytest.approx(0.05)
    assert out.loc["weight", "max_spread_from_step_200"] == pytest.approx(1.0)
    assert out.loc["weight", "spread_at_last_step"] == pytest.approx(0.8)
    assert out["n_gains"].to_dict() == {"runtime": 2, "weight": 3}
    assert out.loc["runtime", "max_spread_any_step"] == pytest.approx(1.0)
    only = spread_after(curves, step=200, gains=(0.5, 4)).set_index("mode")  # weight: 0.5 vs 4 only
    assert only.loc["weight", "max_spread_from_step_200"] == pytest.approx(0.8)
    assert only.loc["weight", "n_gains"] == 2 and only.loc["runtime", "n_gains"] == 1
    with pytest.raises(ValueError, match="pass one seed's runs at a time"):
        # two seeds would pass for a gain effect
        spread_after(pd.concat([curves, curves]), step=200)


def test_gain_table_lists_the_plain_run_under_both_modes_and_marks_no_escape():
    import pandas as pd

    from lib.engine.gain import gain_table

    summ = pd.DataFrame(
        [
            {"gain_mode": None, "gain": 1.0, "best_val_loss": 2.0, "escape_step": 100},
            {"gain_mode": "runtime", "gain": 2.0, "best_val_loss": 1.9, "escape_step": 200},
            {
                "gain_mode": "weight",
                "gain": 0.25,
                "best_val_loss": 3.3,
                "escape_step": float("nan"),
            },
        ]
    )
    t = gain_table(summ)
    assert list(t.columns) == [
        "best val (runtime)",
        "escape step (runtime)",
        "best val (weight)",
        "escape step (weight)",
    ]
    assert t.loc[1.0, "best val (runtime)"] == t.loc[1.0, "best val (weight)"] == 2.0
    assert t.loc[2.0, "escape step (runtime)"] == "200"
    assert t.loc[0.25, "escape step (weight)"] == "none"
    assert pd.isna(t.loc[2.0, "best val (weight)"])  # not run: a gap, not a made-up value
    assert gain_table(summ.iloc[:0]).empty


def test_floor_outcomes_names_the_gains_on_each_side():
    import pandas as pd

    from lib.engine.gain import floor_outcomes, gain_table

    summ = pd.DataFrame(
        [
            {"gain_mode": None, "gain": 1.0, "best_val_loss": 2.0, "escape_step": 100},
            {"gain_mode": "runtime", "gain": 0.25, "best_val_loss": 3.3, "escape_step": None},
            {"gain_mode": "weight", "gain": 4.0, "best_val_loss": 1.9, "escape_step": 300},
        ]
    )
    assert floor_outcomes(gain_table(summ)).splitlines() == [
        "runtime gains: left the floor at g = 1; still on it at the end of the budget at g = 0.25.",
        (
            "weight gains: left the floor at g = 1, 4; still on it at the end of the budget at g = "
            "none."
        ),
        (
            "So in this seed the runtime gain changes whether AttnOnly leaves the floor: here it "
            "is not absorbed by AdamW, the opposite of §5.1's reading."
        ),
    ]
    both = pd.concat(
        [
            summ,
            pd.DataFrame(
                [{"gain_mode": "weight", "gain": 0.25, "best_val_loss": 3.3, "escape_step": None}]
            ),
        ],
        ignore_index=True,
    )
    assert (
        floor_outcomes(gain_table(both))
        .splitlines()[-1]
        .startswith(
            "So in this seed the runtime gain changes whether AttnOnly leaves the floor as the "
            "weight-level gain does:"
        )
    )
    absorbed = summ.assign(escape_step=100)
    assert floor_outcomes(gain_table(absorbed)).splitlines()[-1] == (
        "Every runtime gain ends on the same side of the floor, consistent with §5.1's absorption "
        "reading."
    )
    with pytest.raises(ValueError, match="pass one seed's runs at a time"):
        gain_table(pd.concat([summ, summ]))  # a released and a retrained seed together
