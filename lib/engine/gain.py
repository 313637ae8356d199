"""The runtime-gain confound of §5.1.

Two ways to put a gain ``g`` on a sublayer's output:

* ``runtime``: ``g * sublayer(x)`` at every forward pass. The paper found that
  AdamW absorbs this constant reparameterisation within ~200 steps, so all
  gains give the same curves (its apparent AttnOnly "recovery" at g=2 was
  this artefact);
* ``weight``: the sublayer's output projection is multiplied by ``g`` once,
  before the optimiser is built - a genuine change of initialisation.

The default target is the sublayer whose skip is removed in AttnOnly: the MLP.
"""

from __future__ import annotations

import dataclasses

import pandas as pd
import torch
import torch.nn as nn

from .config import Experiment
from .model import GPT
from .thresholds import ABSORB_STEP

GAINS = (0.25, 0.5, 1.0, 2.0, 4.0)  # the sweep: the paper's four gains and the plain run
# §5.1's g in {0.25, 0.5, 2, 4}: the one gain tuple
GAINS_PAPER = tuple(g for g in GAINS if g != 1.0)


class RuntimeGain(nn.Module):
    """Multiplies the wrapped sublayer's output by a constant at every forward pass."""

    # A wrapper, not a Block flag: Eq. 1's Block stays the one Block, and the gain is exactly
    # the paper's g x sublayer(x). The wrapper owns no parameter, so g is a constant training
    # cannot change directly; every gradient inside is scaled by g, and Adam divides each
    # gradient by its own running size: the per-parameter adaptive rate through which §5.1
    # says AdamW compensates for it.
    def __init__(self, inner: nn.Module, g: float):
        super().__init__()
        self.inner, self.g = inner, g

    def forward(self, x):
        # outside the sublayer's own output dropout: dropout is linear in its input,
        # so the order does not matter
        return self.g * self.inner(x)


def apply_gain(model, mode: str, g: float, target: str = "mlp") -> None:
    """Apply gain ``g`` to ``target`` ('attn' or 'mlp') in every block, in place."""
    # Every block alike: §5.1 puts one g on the sublayer throughout the model, not on one layer.
    for block in model.transformer.h:
        sub = getattr(block, target)
        if mode == "runtime":
            # The parameters' names gain an ``inner.``: a checkpoint of a runtime-gain run loads
            # only into a model built the same way, which lib.engine.experiment.build_model (and
            # so results.load_model) does.
            setattr(block, target, RuntimeGain(sub, g))
        elif mode == "weight":
            # Once, at initialisation: from here on the optimiser trains these weights like any
            # others, so g can shape where training starts but is not imposed at every pass.
            # c_proj is the last layer of both attention and the MLP (and of the local mixer), so
            # one rule serves every target.
            with torch.no_grad():  # output is linear in c_proj, so this scales it by exactly g
                sub.c_proj.weight.mul_(g)
                # nanoGPT's c_proj has a bias; scaled too, or the output is not g x
                if sub.c_proj.bias is not None:
                    sub.c_proj.bias.mul_(g)
        else:
            # refused, not ignored: a mistyped mode must not train a plain
            # run under a gain run's name
            raise ValueError(f"unknown gain mode {mode!r}; valid: runtime, weight")


def construct(exp: Experiment) -> GPT:
    """The experiment's model with its gain applied, drawn from torch's generator as it stands and
    on the current device: lib.engine.experiment.build_model seeds it first, and lib.engine.runs
    builds it on the meta device for its shapes."""
    model = GPT(exp.model)
    # §5.1's correction: "weight-level reinitialization applied before optimizer construction".
    # a gain run: the plain run's initial weights, with the gain applied
    if exp.gain_mode is not None:
        apply_gain(model, exp.gain_mode, exp.gain, exp.gain_target)
    return model


def gain_experiments(
    base: Experiment, gains=GAINS, modes=("runtime", "weight")
) -> list[Experiment]:
    """One experiment per (mode, gain); g = 1 is the plain run, shared by both modes."""
    # g = 1 has no gain mode, so its directory is the plain run's own (lib.engine.runs.run_path
    # names a gain only when there is a mode): the sweep reuses the AttnOnly run the asymmetry
    # chapter trains instead of training it twice.
    exps = [dataclasses.replace(base, gain_mode=None, gain=1.0)]
    # float(g): the field is a float, and config.json and the plans'
    # de-duplication (by JSON) tell 2 from 2.0
    exps += [
        dataclasses.replace(base, gain_mode=m, gain=float(g))
        for m in modes
        for g in gains
        if g != 1
    ]
    return exps


def _one_run_per_gain(df: pd.DataFrame, keys: list[str]) -> None:
    """Spreads and tables compare gains within one seed: two runs of the same (mode, gain) would
    make a seed difference look like a gain effect."""
    dup = df[df.duplicated(keys, keep=False)]
    if len(dup):
        raise ValueError(
            f"{len(dup)} rows share {', '.join(keys)}: pass one seed's runs at a time "
            f"(e.g. split released and retrained runs by their `source` column)"
        )


def spread_after(curves: pd.DataFrame, step: int = ABSORB_STEP, gains=None) -> pd.DataFrame:
    """Per mode: the largest max-minus-min of val loss across gains at any eval step >= ``step``,
    the same over every evaluation, and at the last evaluation. ``gains`` restricts the set
    (the paper's is g in {0.25, 0.5, 2, 4}, without the plain run)."""
    if gains is not None:
        curves = curves[curves.gain.isin([float(g) for g in gains])]
    _one_run_per_gain(curves, ["mode", "gain", "step"])
    # the spread at one step is across the gains evaluated at that step: the
    # curves share the eval schedule
    by = curves.groupby(["mode", "step"])["val_loss"].agg(lambda s: s.max() - s.min()).reset_index()
    out = []
    for mode, g in by.groupby("mode"):
        # From step 200 by default: §5.1 says the gains become equivalent "within ~200 steps",
        # so the early steps, before any absorption, are not held against the claim; "any
        # step" is its stricter reading.
        late = g[g.step >= step]
        out.append(
            {
                "mode": mode,
                f"max_spread_from_step_{step}": late.val_loss.max(),
                "max_spread_any_step": g.val_loss.max(),
                "spread_at_last_step": g.sort_values("step").val_loss.iloc[-1],
                # a spread over one curve is 0 by construction; the count says
                # how many curves it is over
                "n_gains": curves[curves["mode"] == mode].gain.nunique(),
            }
        )
    return pd.DataFrame(
        out,
        columns=[
            "mode",
            f"max_spread_from_step_{step}",
            "max_spread_any_step",
            "spread_at_last_step",
            "n_gains",
        ],
    )


def gain_table(summaries: pd.DataFrame, modes=("runtime", "weight")) -> pd.DataFrame:
    """Best validation loss and escape step per gain (rows) and mode (columns), from run summaries.

    The plain run (no gain mode, g = 1) is listed under every mode, as in ``gain_curves``.
    A run that never left the floor has escape step "none".
    """
    rows = []
    for _, s in summaries.iterrows():
        for mode in list(modes) if pd.isna(s.gain_mode) else [s.gain_mode]:
            # text, so that "none" and a step share one column and a step prints as 300, not 300.0
            rows.append(
                {
                    "mode": mode,
                    "gain": float(s.gain),
                    "best val": float(s.best_val_loss),
                    "escape step": "none" if pd.isna(s.escape_step) else str(int(s.escape_step)),
                }
            )
    # no run yet: an empty table with the columns a chapter expects, not a KeyError in its cell
    if not rows:
        return pd.DataFrame(
            columns=[f"{c} ({m})" for m in modes for c in ("best val", "escape step")]
        )
    t = pd.DataFrame(rows)
    _one_run_per_gain(t, ["mode", "gain"])
    t = t.pivot(index="gain", columns="mode", values=["best val", "escape step"])
    # mode by mode, each mode's two columns side by side; a mode with no finished run has none
    cols = [(c, m) for m in modes for c in ("best val", "escape step") if (c, m) in t.columns]
    t = t[cols]
    t.columns = [f"{c} ({m})" for c, m in cols]
    return t


def floor_outcomes(table: pd.DataFrame, modes=("runtime", "weight")) -> str:
    """One line per mode of a ``gain_table``: which gains left the floor within the budget; then
    what that says about §5.1's reading (a runtime gain absorbed by AdamW cannot decide where a
    run ends, so runtime gains that end on both sides of the floor are not absorbed)."""
    lines, split = [], {}
    for mode in (m for m in modes if f"escape step ({m})" in table.columns):
        # a gain trained in the other mode only is NaN here
        esc = table[f"escape step ({mode})"].dropna()
        left = [f"{g:g}" for g, v in esc.items() if v != "none"]
        stayed = [f"{g:g}" for g, v in esc.items() if v == "none"]
        split[mode] = (left, stayed)
        lines.append(
            f"{mode} gains: left the floor at g = {', '.join(left) or 'none'}; "
            f"still on it at the end of the budget at g = {', '.join(stayed) or 'none'}."
        )
    # Runtime gains on both sides of the floor: something differs between gains,
    # so they were not all absorbed.
    if "runtime" in split and all(split["runtime"]):
        same = " as the weight-level gain does" if all(split.get("weight", ((), ()))) else ""
        lines.append(
            f"So in this seed the runtime gain changes whether AttnOnly leaves the floor{same}: "
            "here it is not absorbed by AdamW, the opposite of §5.1's reading."
        )
    # All on one side is only consistent with absorption (it cannot prove it),
    # and one gain alone says nothing.
    elif "runtime" in split and sum(map(len, split["runtime"])) > 1:
        lines.append(
            "Every runtime gain ends on the same side of the floor, consistent with §5.1's "
            "absorption reading."
        )
    return "\n".join(lines)
