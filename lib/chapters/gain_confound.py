"""§5.1: does a runtime gain on the kept branch decide whether a run leaves the floor, and do the curves that
leave it coincide."""
from __future__ import annotations

import pandas as pd

from ..config import Experiment
from ..experiment import ESCAPE_MARGIN
from ..gain import GAINS_PAPER
from ..runs import RUNS_DIR
from ..verdicts import Claim, claim, verdict


def gain_curves(base: Experiment, retrained: Experiment | None = None, runs_dir=None,
                released_dir=None) -> pd.DataFrame:
    """``gain.gain_curves`` of the released sweep around ``base`` in ``released_dir`` (source "released") and,
    where a seed was retrained, of the same sweep around ``retrained`` in ``runs_dir`` (source "retrained")."""
    # renamed on import, as this function has the same name
    from ..gain import gain_curves as curves_of
    # Refused, not defaulted: with RUNS_DIR the retrained seed would be looked for among the released runs, and
    # found missing, or (seed 1337) the released sweep read again under the label "retrained".
    if retrained is not None and runs_dir is None:
        raise ValueError("a retrained sweep needs the runs_dir it was trained into")
    # the source column keeps the two sweeps apart: spreads compare gains within one seed only (gain.spread_after)
    out = curves_of(base, released_dir or RUNS_DIR).assign(source="released")
    if retrained is not None:
        out = pd.concat([out, curves_of(retrained, runs_dir).assign(source="retrained")])
    return out


@claim("(a) Runtime gains equivalent in where AttnOnly ends")
def claim_gain_fate(table: pd.DataFrame, gains=GAINS_PAPER) -> Claim:
    """§5.1's "all gain values functionally equivalent", read on where each run ends:
    runtime gains (``gains``, the paper's set) that end on both sides of the floor are not equivalent.
    ``table``: a ``gain.gain_table``. Valid only where some run of the table left the floor."""
    from ..gain import floor_outcomes
    # the runtime column of the gain table; its values are a step as text, or "none" for a run that never left
    col = "escape step (runtime)"
    if col not in table.columns:
        return Claim("NOT TESTED", "no runtime-gain run is finished: the gain sweep, 9 `cpu` stand-in runs")
    esc = table[col].dropna()
    esc = esc[esc.index.isin([float(g) for g in gains])]  # the paper's four gains; the plain run (g = 1) is not one
    if len(esc) < 2:
        return Claim("NOT TESTED", "fewer than two of the paper's runtime gains are finished: the gain sweep, 9 "
                                   "`cpu` stand-in runs")
    # which side of the floor each of the paper's runtime gains ended on, by its recorded escape step
    left, stayed = [g for g, v in esc.items() if v != "none"], [g for g, v in esc.items() if v == "none"]
    # the precondition: some run of the sweep (either mode) left the floor, so "where a gain ends" can differ
    any_left = any(v != "none" for c in table.columns if c.startswith("escape step") for v in table[c].dropna())
    # both modes' outcomes are printed: the weight-level gains, a real change of the start, beside the runtime ones
    lines = tuple(floor_outcomes(table).splitlines())
    why = ("no run of the sweep left the floor, so where a gain ends shows nothing" if not any_left else
           f"AttnOnly left the floor at g = {', '.join(f'{g:g}' for g in left)} and stayed on it at g = "
           f"{', '.join(f'{g:g}' for g in stayed)}: the gain decides" if left and stayed else
           "every runtime gain ended on the same side of the floor")
    # equivalent means the gain does not decide: all on one side of the floor
    return Claim(verdict(True, any_left, not (left and stayed)), why,
                 {"left": [float(g) for g in left], "stayed": [float(g) for g in stayed]}, lines)


@claim("(b) Runtime gains absorbed to the paper's precision")
def claim_gain_absorbed(curves: pd.DataFrame, floor: float, bound: float, step: int = 200,
                        gains=GAINS_PAPER, margin: float = ESCAPE_MARGIN,
                        spreads: dict | None = None) -> Claim:
    """§5.1's "curves overlapped completely (spread < ``bound`` at any step)", read only on the paper's runtime
    gains whose run left the floor (curves that sit on the floor coincide trivially); the weight-level gains that
    left it are the yardstick. A spread this small cannot be judged without a null, how far the same run drifts
    under a rounding-only change, which these runs (one seed) do not have: a knife-edge, NOT TESTABLE HERE either
    way. ``curves``: ``gain.gain_curves`` rows; ``spreads``: ``gain_spreads`` of the same arguments, if the caller
    has it already."""
    # the paper's four gains only; the plain run (g = 1) is in the curves under both modes and is not one of them
    c = curves[curves.gain.isin([float(g) for g in gains])]
    s = spreads if spreads is not None else gain_spreads(curves, floor, step, gains, margin)
    left = s["runtime_gains"]
    # a spread needs two curves; fewer than two runtime gains trained is no test at all
    if c[c["mode"] == "runtime"].gain.nunique() < 2:
        return Claim("NOT TESTED", "fewer than two of the paper's runtime gains are finished")
    if len(left) < 2:
        # fewer than two runs off the floor: no curves that could differ, so the phenomenon is absent (NOT
        # TESTABLE HERE), however close the curves on the floor lie
        return Claim(verdict(True, False, False),
                     f"only {len(left)} of the paper's runtime gains left the floor: the runtime curves that did "
                     f"cannot be compared, and curves on the floor coincide trivially", {"spread": None})
    r = s["runtime"]
    # NaN where no evaluation reaches ``step``: a smoke run, or runs that diverged before it
    if pd.isna(r):
        return Claim("NOT TESTED", f"the runtime-gain runs end before step {step}")
    text = (f"(b) Runtime gains that left the floor (g = {', '.join(f'{g:g}' for g in left)}): largest spread of "
            f"their validation curves from step {step} on {r:.4f} (paper: < {bound} at any step).")
    # the weight-level spread beside it: how far curves from genuinely different starts stay apart after the same step
    if s["weight"] is not None:
        text += (f" Weight-level gains that left it (g = {', '.join(f'{g:g}' for g in s['weight_gains'])}): "
                 f"{s['weight']:.4f}.")
    why = (f"no null to judge a spread below {bound} against (how far one run drifts under a rounding-only change is "
           f"not measured for these runs; one seed); as measured, the spread {r:.4f} is "
           + ("below" if r < bound else "above") + " the paper's bound")
    # knife_edge whatever the spread: without a rounding null no spread of one seed's curves can be told from
    # the drift a rounding-only change brings
    return Claim(verdict(True, True, r < bound, knife_edge=True), why,
                 {"spread": float(r), "weight_spread": s["weight"]}, (text,))


# ``step`` 200 is §5.1's "within ~200 steps": the spread is read after AdamW has had the time the paper gives it to
# absorb the gain
def gain_spreads(curves: pd.DataFrame, floor: float, step: int = 200, gains=GAINS_PAPER,
                 margin: float = ESCAPE_MARGIN) -> dict:
    """Per mode, the largest spread from ``step`` on of the validation curves of the gains in ``gains`` whose
    run left the floor (None with fewer than two), and those gains."""
    from ..gain import spread_after
    c = curves[curves.gain.isin([float(g) for g in gains])]
    out = {}
    for mode in ("runtime", "weight"):
        m = c[c["mode"] == mode]
        # curves still on the floor coincide trivially; only those that left it can show a spread that matters
        left = sorted(g for g, r in m.groupby("gain") if (r.val_loss <= floor - margin).any())
        out[f"{mode}_gains"] = left
        # one mode's curves, so spread_after returns one row
        out[mode] = (spread_after(m[m.gain.isin(left)], step=step)[f"max_spread_from_step_{step}"].iloc[0]
                     if len(left) >= 2 else None)
    return out
