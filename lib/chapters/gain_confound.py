"""§5.1: does a runtime gain on the kept branch decide whether a run leaves the floor, and do the curves that
leave it coincide."""
from __future__ import annotations

import pandas as pd

from ..config import Experiment
from ..gain import GAINS, GAINS_PAPER, gain_experiments
from ..runs import RUNS_DIR, RunDir, run_path
from ..thresholds import ABSORB_STEP, ESCAPE_MARGIN, left_floor
from ..verdicts import Claim, claim, verdict


def sweep_curves(base: Experiment, runs_dir, gains=GAINS, modes=("runtime", "weight")) -> pd.DataFrame:
    """Validation curves of every (mode, gain) run found under ``runs_dir`` (this reads; it never trains). Here,
    not in lib.gain, which lib.runs imports: a reader of runs/ is a chapter's.

    Columns: mode, gain, step, val_loss, status. The plain run (g = 1) appears
    under both modes. Missing runs are absent.
    """
    # A diverged gain run stays in with its status: the figure draws it dotted and says so, rather than losing a gain.
    rows = []
    for exp in gain_experiments(base, gains, modes):
        rd = RunDir(run_path(exp, runs_dir))
        if rd.status not in ("complete", "diverged") or rd.problems(exp):  # finished, files that match
            continue
        # the plain run is each mode's g = 1, so each mode's set of curves is complete on its own
        for mode in ([exp.gain_mode] if exp.gain_mode else list(modes)):
            rows += [{"mode": mode, "gain": exp.gain, "step": r["step"], "val_loss": r["val_loss"],
                      "status": rd.status} for r in rd.history() if r.get("val_loss") is not None]
    return pd.DataFrame(rows, columns=["mode", "gain", "step", "val_loss", "status"])


def gain_curves(base: Experiment, retrained: Experiment | None = None, runs_dir=None,
                released_dir=None) -> pd.DataFrame:
    """``sweep_curves`` of the released sweep around ``base`` in ``released_dir`` (source "released") and,
    where a seed was retrained, of the same sweep around ``retrained`` in ``runs_dir`` (source "retrained")."""
    # Refused, not defaulted: with RUNS_DIR the retrained seed would be looked for among the released runs, and
    # found missing, or (seed 1337) the released sweep read again under the label "retrained".
    if retrained is not None and runs_dir is None:
        raise ValueError("a retrained sweep needs the runs_dir it was trained into")
    # the source column keeps the two sweeps apart: spreads compare gains within one seed only (gain.spread_after)
    out = sweep_curves(base, released_dir or RUNS_DIR).assign(source="released")
    if retrained is not None:
        out = pd.concat([out, sweep_curves(retrained, runs_dir).assign(source="retrained")])
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


def twin_curves(runs_dir=None) -> pd.DataFrame:
    """The released validation curves of ``plans.gain_twins`` (the runtime-gain runs at g = 2 and 4 with the other
    attention kernel): gain, step, val_loss."""
    from .. import plans
    from ..results import histories_of
    from ..runs import RunDir, run_path
    frames = []
    for e in plans.gain_twins():
        h = histories_of([(e, RunDir(run_path(e, runs_dir or RUNS_DIR)), "released")])
        if len(h):
            frames.append(h[["step", "val_loss"]].assign(gain=e.gain))
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=["gain", "step", "val_loss"])


def rounding_null(curves: pd.DataFrame, twins: pd.DataFrame, step: int = ABSORB_STEP) -> float | None:
    """How far a runtime-gain curve moves under a rounding-only change: the largest |twin - run| of the validation
    loss from ``step`` on, over the twinned gains (``plans.TWIN_GAINS``). None unless every twin is trained."""
    from ..plans import TWIN_GAINS
    run = curves[curves["mode"] == "runtime"]
    diffs = []
    for g in TWIN_GAINS:
        a = run[run.gain == float(g)].set_index("step").val_loss
        b = twins[twins.gain == float(g)].set_index("step").val_loss
        common = a.index.intersection(b.index)
        common = common[common >= step]
        if len(common) == 0:
            return None
        diffs.append(float((a[common] - b[common]).abs().max()))
    return max(diffs)


@claim("(b) Loss curves across all runtime gains overlap completely")
def claim_gain_absorbed(curves: pd.DataFrame, floor: float, bound: float, step: int = ABSORB_STEP,
                        gains=GAINS_PAPER, margin: float = ESCAPE_MARGIN,
                        spreads: dict | None = None, twins: pd.DataFrame | None = None) -> Claim:
    """§5.1 as written: "loss curves across all gain values overlapped completely (total spread < ``bound`` at any
    step)", read on the paper's four runtime gains from ``step`` on (after AdamW has had the ~200 steps the paper gives
    it). The spread is judged against a measured null, how far one curve moves under a rounding-only change
    (``rounding_null`` on ``twins``, ``twin_curves``): beyond both the bound and the null, CONTRADICTED; within the
    bound, HOLDS; where the null itself reaches the bound and the spread lies within bound + null, a knife-edge
    (NOT TESTABLE HERE). NOT TESTED until the twins are trained. The precondition: some runtime gain left the floor
    (curves that all sit on the floor coincide trivially). ``spreads``: ``gain_spreads``, the spread among the
    curves that left the floor, printed beside it."""
    from ..gain import spread_after
    c = curves[curves.gain.isin([float(g) for g in gains])]
    s = spreads if spreads is not None else gain_spreads(curves, floor, step, gains, margin)
    left = s["runtime_gains"]
    runtime = c[c["mode"] == "runtime"]
    # a spread needs two curves; fewer than two runtime gains trained is no test at all
    if runtime.gain.nunique() < 2:
        return Claim("NOT TESTED", "fewer than two of the paper's runtime gains are finished")
    every = spread_after(runtime, step=step)[f"max_spread_from_step_{step}"].iloc[0]
    # NaN where no evaluation reaches ``step``: a smoke run, or runs that diverged before it
    if pd.isna(every):
        return Claim("NOT TESTED", f"the runtime-gain runs end before step {step}")
    every = float(every)
    text = (f"(b) Across the paper's runtime gains (g = {', '.join(f'{g:g}' for g in sorted(runtime.gain.unique()))}): "
            f"largest spread of their validation curves from step {step} on {every:.4f} (paper: < {bound} at any "
            f"step).")
    if s["runtime"] is not None:  # among those that left the floor, and the weight-level ones: how far apart they stay
        text += (f" Among those that left the floor (g = {', '.join(f'{g:g}' for g in left)}): "
                 f"{s['runtime']:.4f}.")
    if s["weight"] is not None:
        text += (f" Weight-level gains that left it (g = {', '.join(f'{g:g}' for g in s['weight_gains'])}): "
                 f"{s['weight']:.4f}.")
    null = rounding_null(curves, twins, step) if twins is not None and len(twins) else None
    facts = {"spread": every, "spread_left": s["runtime"], "weight_spread": s["weight"], "null": null}
    if null is None:
        return Claim("NOT TESTED", f"the rounding-only null for its spread of {every:.4f} is not measured yet: "
                     f"python -m lib sweep --plan gain_twins (two cpu stand-in runs, about 10 minutes each on 2 "
                     f"cores)", facts, (text,))
    text += f" The same run under a rounding-only change (the other attention kernel) moves by up to {null:.4f}."
    # a knife-edge: the spread lies within what rounding alone moves a curve of the paper's bound, on either side of
    # it, so a rounding-only change could carry it across
    knife = abs(every - bound) <= null
    why = (f"the spread across the four gains, {every:.4f}, is " + (
        f"within the paper's {bound}" if every <= bound else
        (f"{every / null:,.0f} times what rounding alone moves a curve ({null:.4f})" if null > 0 else
         "beyond a rounding-only change, which moved the curve not at all") + f", and beyond the paper's {bound}"
        if every > bound + null else f"within what rounding alone moves a curve ({null:.4f})"))
    return Claim(verdict(True, bool(left), every <= bound, knife_edge=knife), why, facts, (text,))


# ``step`` (``thresholds.ABSORB_STEP``, 200) is §5.1's "within ~200 steps": the spread is read after AdamW has had the
# time the paper gives it to absorb the gain
def gain_spreads(curves: pd.DataFrame, floor: float, step: int = ABSORB_STEP, gains=GAINS_PAPER,
                 margin: float = ESCAPE_MARGIN) -> dict:
    """Per mode, the largest spread from ``step`` on of the validation curves of the gains in ``gains`` whose
    run left the floor (None with fewer than two), and those gains."""
    from ..gain import spread_after
    c = curves[curves.gain.isin([float(g) for g in gains])]
    out = {}
    for mode in ("runtime", "weight"):
        m = c[c["mode"] == mode]
        # curves still on the floor coincide trivially; only those that left it can show a spread that matters
        left = sorted(g for g, r in m.groupby("gain") if left_floor(r.val_loss, floor, margin).any())
        out[f"{mode}_gains"] = left
        # one mode's curves, so spread_after returns one row
        out[mode] = (spread_after(m[m.gain.isin(left)], step=step)[f"max_spread_from_step_{step}"].iloc[0]
                     if len(left) >= 2 else None)
    return out
