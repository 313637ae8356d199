"""§5.1: does a runtime gain on the kept branch decide whether a run leaves the floor, and do the
curves that leave it coincide."""

from __future__ import annotations

import pandas as pd

from ..engine.config import Experiment
from ..engine.gain import GAINS, GAINS_PAPER, gain_experiments
from ..engine.runs import RUNS_DIR, RunDir, run_path
from ..engine.thresholds import ABSORB_STEP, ESCAPE_MARGIN, left_floor
from .verdicts import Claim, and_list, claim, verdict


def sweep_curves(
    base: Experiment, runs_dir, gains=GAINS, modes=("runtime", "weight")
) -> pd.DataFrame:
    """Validation curves of every (mode, gain) run found under ``runs_dir`` (this reads;
    it never trains). Here, not in lib.engine.gain, which lib.engine.runs imports: a
    reader of runs/ is a chapter's.

    Columns: mode, gain, step, val_loss, status. The plain run (g = 1) appears
    under both modes. Missing runs are absent.
    """
    # A diverged gain run stays in with its status: the figure draws it dotted and says
    # so, rather than losing a gain.
    rows = []
    for exp in gain_experiments(base, gains, modes):
        rd = RunDir(run_path(exp, runs_dir))
        # finished, files that match
        if rd.status not in ("complete", "diverged") or rd.problems(exp):
            continue
        # the plain run is each mode's g = 1, so each mode's set of curves is complete on its own
        for mode in [exp.gain_mode] if exp.gain_mode else list(modes):
            rows += [
                {
                    "mode": mode,
                    "gain": exp.gain,
                    "step": r["step"],
                    "val_loss": r["val_loss"],
                    "status": rd.status,
                }
                for r in rd.history()
                if r.get("val_loss") is not None
            ]
    return pd.DataFrame(rows, columns=["mode", "gain", "step", "val_loss", "status"])


def gain_curves(
    base: Experiment, retrained: Experiment | None = None, runs_dir=None, released_dir=None
) -> pd.DataFrame:
    """``sweep_curves`` of the released sweep around ``base`` in ``released_dir`` (source
    "released") and, where a seed was retrained, of the same sweep around ``retrained`` in
    ``runs_dir`` (source "retrained")."""
    # Refused, not defaulted: with RUNS_DIR the retrained seed would be looked for
    # among the released runs, and found missing, or (seed 1337) the released sweep
    # read again under the label "retrained".
    if retrained is not None and runs_dir is None:
        raise ValueError("a retrained sweep needs the runs_dir it was trained into")
    # the source column keeps the two sweeps apart: spreads compare gains within one
    # seed only (gain.spread_after)
    out = sweep_curves(base, released_dir or RUNS_DIR).assign(source="released")
    if retrained is not None:
        out = pd.concat([out, sweep_curves(retrained, runs_dir).assign(source="retrained")])
    return out


def _sides(table: pd.DataFrame, gains) -> tuple[list[float], list[float]] | None:
    """The paper's runtime gains of a ``gain.gain_table`` that left the floor and those
    that stayed on it, by the recorded escape step ("none": never left); None with
    fewer than two of them finished."""
    col = "escape step (runtime)"  # the runtime column of the gain table
    if col not in table.columns:
        return None
    esc = table[col].dropna()
    # the paper's four gains; the plain run (g = 1) is not one
    esc = esc[esc.index.isin([float(g) for g in gains])]
    if len(esc) < 2:
        return None
    return [float(g) for g, v in esc.items() if v != "none"], [
        float(g) for g, v in esc.items() if v == "none"
    ]


def _gs(gains) -> str:
    return ", ".join(f"{g:g}" for g in gains) or "none"


@claim("(a) Runtime gains equivalent in where AttnOnly ends")
def claim_gain_fate(
    table: pd.DataFrame, gains=GAINS_PAPER, others: dict | None = None, seed: int | None = None
) -> Claim:
    """§5.1's "all gain values functionally equivalent", read on where each run ends:
    runtime gains (``gains``, the paper's set) that end on both sides of the floor are not
    equivalent. ``table``: a ``gain.gain_table`` of ``seed`` (None: 1337, the released
    sweep); ``others``: the same at more seeds (``other_seeds``: seed -> ``(table, curves)``,
    or None for a seed not trained yet). A split is a contradiction only where it is the
    gain's and not the seed's: some gain left the floor at every seed and some other gain
    stayed on it at every seed. Seeds that split differently are a knife-edge. Valid only
    where some run of the sweep left the floor."""
    from ..engine.config import PAPER_SEED
    from ..engine.gain import floor_outcomes

    if "escape step (runtime)" not in table.columns:
        return Claim(
            "NOT TESTED", "no runtime-gain run is finished: the gain sweep, 9 `cpu` stand-in runs"
        )
    if _sides(table, gains) is None:
        return Claim(
            "NOT TESTED",
            (
                "fewer than two of the paper's runtime gains are finished: the gain sweep, 9 "
                "`cpu` stand-in runs"
            ),
        )
    seed = PAPER_SEED if seed is None else seed
    # which side of the floor each of the paper's runtime gains ended on, seed by seed; a seed with
    # fewer than two of them finished is no seed's answer, and is named as pending
    sides = {seed: _sides(table, gains)}
    for k, v in (others or {}).items():
        sides[k] = _sides(v[0], gains) if v else None
    pending = [k for k, v in sides.items() if v is None]
    sides = {k: v for k, v in sides.items() if v is not None}
    # the precondition: some run of the sweep (either mode, any seed) left the floor, so
    # "where a gain ends" can differ
    any_left = any(
        v != "none" for c in table.columns if c.startswith("escape step") for v in table[c].dropna()
    ) or any(left for left, _ in sides.values())
    split = [k for k, (left, stayed) in sides.items() if left and stayed]
    # the gain's doing only if the same gains fall on the same sides at every seed
    always_left = sorted(set.intersection(*(set(left) for left, _ in sides.values())))
    always_stayed = sorted(set.intersection(*(set(stayed) for _, stayed in sides.values())))
    robust = bool(always_left and always_stayed)
    lines = tuple(floor_outcomes(table).splitlines()) + tuple(
        (
            f"Seed {k}, runtime gains: left the floor at g = {_gs(left)}; still on it at the end "
            f"of the budget at g = {_gs(stayed)}."
        )
        for k, (left, stayed) in sides.items()
        if k != seed
    )
    at = (
        f"at seed {seed}"
        if len(sides) == 1
        else f"at each of seeds {and_list(list(map(str, sides)))}"
    )
    # after the first clause, which the front page quotes: nothing inside brackets it could cut
    later = (
        (
            f"; seed{'s' if len(pending) > 1 else ''} {and_list(list(map(str, pending)))} not "
            "trained yet (python -m lib sweep --plan gain_seeds)"
        )
        if pending
        else ""
    )
    why = (
        f"no run of the sweep left the floor {at}, so where a gain ends shows nothing"
        if not any_left
        else (
            f"AttnOnly left the floor at g = {_gs(always_left)} and stayed on it at g = "
            f"{_gs(always_stayed)} {at}, so the gain decides"
        )
        if robust
        else (
            "which side of the floor a runtime gain ends on changes with the seed, so the split is "
            "not the gain's alone: "
        )
        + "; ".join(
            f"seed {k} left at g = {_gs(left)} and stayed at g = {_gs(stayed)}"
            for k, (left, stayed) in sides.items()
        )
        if split
        else f"every runtime gain ended on the same side of the floor {at}"
    ) + later
    facts = {
        "left": always_left,
        "stayed": always_stayed,
        "by_seed": {k: {"left": left, "stayed": stayed} for k, (left, stayed) in sides.items()},
    }
    # equivalent means the gain does not decide: no seed splits; a split that changes
    # with the seed is a knife-edge
    return Claim(
        verdict(True, any_left, not split, knife_edge=bool(split) and not robust), why, facts, lines
    )


def twin_curves(runs_dir=None) -> pd.DataFrame:
    """The released validation curves of ``plans.gain_twins`` (the runtime-gain runs at g = 2 and 4
    with the other attention kernel): gain, step, val_loss."""
    from ..engine import plans
    from ..engine.results import histories_of
    from ..engine.runs import RunDir, run_path

    frames = []
    for e in plans.gain_twins():
        h = histories_of([(e, RunDir(run_path(e, runs_dir or RUNS_DIR)), "released")])
        if len(h):
            frames.append(h[["step", "val_loss"]].assign(gain=e.gain))
    return (
        pd.concat(frames, ignore_index=True)
        if frames
        else pd.DataFrame(columns=["gain", "step", "val_loss"])
    )


def other_seeds(
    base: Experiment, floor: float, runs_dir=None, seeds=None
) -> dict[int, tuple | None]:
    """§5.1's runtime gains at the seeds of ``plans.gain_seeds`` around ``base`` (the plain
    seed-1337 run): per seed, its runtime-only ``gain.gain_table`` (escape steps against ``floor``)
    and ``sweep_curves``, or None until all four of its runtime gains are finished (a seed half
    trained is no seed's answer)."""
    from ..engine import plans
    from ..engine.config import get_preset
    from ..engine.gain import gain_table
    from ..engine.results import as_released, pooled, summaries_of

    out = {}
    for seed in seeds or plans.GAIN_SEEDS:
        plain = get_preset(base.scale, base.impl, base.config_name, seed)
        # pooled, as Chapter.summaries reads seed 1337: a diverged run has no
        # best and is no gain's answer
        summ = pooled(
            summaries_of(
                as_released([plain, *plans.gain_seeds(base.scale, (seed,))], runs_dir), floor=floor
            )
        )
        done = set(summ[summ.gain_mode == "runtime"].gain)
        out[seed] = (
            (
                gain_table(summ, modes=("runtime",)),
                sweep_curves(plain, runs_dir or RUNS_DIR, modes=("runtime",)),
            )
            if done >= {float(g) for g in GAINS_PAPER}
            else None
        )
    return out


def seed_table(table: pd.DataFrame, others: dict) -> pd.DataFrame:
    """The runtime gains seed by seed: best validation loss and escape step ("none": never left
    the floor) of seed 1337's ``gain.gain_table`` beside each seed of ``others``
    (``other_seeds``) that is trained."""
    from ..engine.config import PAPER_SEED

    cols = {PAPER_SEED: table, **{k: v[0] for k, v in others.items() if v}}
    out = pd.concat(
        {
            k: t[[c for c in ("best val (runtime)", "escape step (runtime)") if c in t.columns]]
            for k, t in cols.items()
        },
        axis=1,
    )
    out.columns = [f"{c.replace(' (runtime)', '')} (seed {k})" for k, c in out.columns]
    return out


def rounding_null(
    curves: pd.DataFrame, twins: pd.DataFrame, step: int = ABSORB_STEP
) -> float | None:
    """How far a runtime-gain curve moves under a rounding-only change: the largest |twin - run| of
    the validation loss from ``step`` on, over the twinned gains (``plans.TWIN_GAINS``). None
    unless every twin is trained."""
    from ..engine.plans import TWIN_GAINS

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
def claim_gain_absorbed(
    curves: pd.DataFrame,
    floor: float,
    bound: float,
    step: int = ABSORB_STEP,
    gains=GAINS_PAPER,
    margin: float = ESCAPE_MARGIN,
    spreads: dict | None = None,
    twins: pd.DataFrame | None = None,
    others: dict | None = None,
    seed: int | None = None,
) -> Claim:
    """§5.1 as written: "loss curves across all gain values overlapped completely (total spread <
    ``bound`` at any step)", read on the paper's four runtime gains from ``step`` on (after AdamW
    has had the ~200 steps the paper gives it). The spread is judged against a measured null, how
    far one curve moves under a rounding-only change (``rounding_null`` on ``twins``,
    ``twin_curves``): beyond both the bound and the null, CONTRADICTED; within the bound by more
    than the null, HOLDS; within the null of the bound on either side, a knife-edge (NOT TESTABLE
    HERE). ``others``: the same sweep at more seeds (``other_seeds``), each seed's spread judged
    alike; the verdict is HOLDS or CONTRADICTED only where every seed says so, and seeds that
    disagree are a knife-edge (``curves`` are ``seed``'s, None: 1337's). NOT TESTED until the twins
    are trained. The precondition: some runtime gain left the floor (curves that all sit on the
    floor coincide trivially). ``spreads``: ``gain_spreads``, the spread among the curves that left
    the floor, printed beside it."""
    from ..engine.config import PAPER_SEED
    from ..engine.gain import spread_after

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
    text = (
        "(b) Across the paper's runtime gains (g = "
        f"{', '.join(f'{g:g}' for g in sorted(runtime.gain.unique()))}): largest spread of their "
        f"validation curves from step {step} on {every:.4f} (paper: < {bound} at any step)."
    )
    # among those that left the floor, and the weight-level ones: how far apart they stay
    if s["runtime"] is not None:
        text += (
            f" Among those that left the floor (g = {', '.join(f'{g:g}' for g in left)}): "
            f"{s['runtime']:.4f}."
        )
    if s["weight"] is not None:
        text += (
            " Weight-level gains that left it (g = "
            f"{', '.join(f'{g:g}' for g in s['weight_gains'])}): {s['weight']:.4f}."
        )
    # the other seeds' spreads, each within its own seed (spread_after refuses two runs of one
    # gain); a seed without all of the gains, or with no evaluation from ``step`` on, is pending,
    # never a spread of fewer curves
    by_seed, lines, pending = {PAPER_SEED if seed is None else seed: every}, [], []
    for k, v in (others or {}).items():
        sc = (
            v[1][v[1].gain.isin([float(g) for g in gains]) & (v[1]["mode"] == "runtime")]
            if v
            else None
        )
        sp = (
            spread_after(sc, step=step)[f"max_spread_from_step_{step}"].iloc[0]
            if sc is not None and sc.gain.nunique() == len(gains)
            else float("nan")
        )
        if pd.isna(sp):
            pending.append(k)
            continue
        by_seed[k] = float(sp)
        ks = gain_spreads(v[1], floor, step, gains, margin)
        left = left or ks["runtime_gains"]
        lines.append(
            f"Seed {k}: largest spread across the four runtime gains from step {step} on {sp:.4f}"
            + (
                (
                    f"; among those that left the floor (g = {_gs(ks['runtime_gains'])}) "
                    f"{ks['runtime']:.4f}."
                )
                if ks["runtime"] is not None
                else "."
            )
        )
    null = rounding_null(curves, twins, step) if twins is not None and len(twins) else None
    facts = {
        "spread": every,
        "spread_left": s["runtime"],
        "weight_spread": s["weight"],
        "null": null,
        "by_seed": by_seed,
    }
    later = (
        (
            f"; seed{'s' if len(pending) > 1 else ''} {and_list(list(map(str, pending)))} not "
            "trained yet (python -m lib sweep --plan gain_seeds)"
        )
        if pending
        else ""
    )
    if null is None:
        return Claim(
            "NOT TESTED",
            (
                f"the rounding-only null for its spread of {every:.4f} is not measured yet: python "
                "-m lib sweep --plan gain_twins (two cpu stand-in runs, about 10 minutes each on 2 "
                "cores)"
            ),
            facts,
            (text, *lines),
        )
    text += (
        " The same run under a rounding-only change (the other attention kernel) moves by up to "
        f"{null:.4f}."
    )
    # each seed's spread on one side of the paper's bound by more than rounding alone
    # moves a curve, or on its edge
    holds = [sp < bound - null for sp in by_seed.values()]
    beyond = [sp > bound + null for sp in by_seed.values()]
    low = min(by_seed.values())
    listed = ", ".join(f"seed {k} {sp:.4f}" for k, sp in by_seed.items())
    seeds = "" if len(by_seed) == 1 else f" at every seed ({listed})"
    why = (
        f"no runtime gain left the floor {'at any seed' if len(by_seed) > 1 else ''}".strip()
        + ", so the curves on it coincide trivially"
        if not left
        else f"the spread across the four gains, {every:.4f}, is "
        + (
            f"within the paper's {bound}"
            if every <= bound
            else (
                f"{every / null:,.0f} times what rounding alone moves a curve ({null:.4f})"
                if null > 0
                else "beyond a rounding-only change, which moved the curve not at all"
            )
            + f", and beyond the paper's {bound}"
            if every > bound + null
            else f"within what rounding alone moves a curve ({null:.4f})"
        )
        if len(by_seed) == 1
        else f"the spread across the four gains is within the paper's {bound}{seeds}"
        if all(holds)
        else (
            f"the spread across the four gains is beyond the paper's {bound} and at least "
            f"{low / null:,.0f} times what rounding alone moves a curve ({null:.4f}){seeds}"
        )
        if all(beyond) and null > 0
        else (
            f"the spread across the four gains is beyond the paper's {bound} and a rounding-only "
            f"change{seeds}"
        )
        if all(beyond)
        else (
            "the seeds' spreads across the four gains do not all fall on one side of the paper's "
            f"{bound} by more than what rounding alone moves a curve ({null:.4f}); {listed}"
        )
    ) + later
    # a knife-edge: some seed's spread lies within what rounding alone moves a curve of the paper's
    # bound, on either side of it, or the seeds fall on different sides
    return Claim(
        verdict(True, bool(left), all(holds), knife_edge=not (all(holds) or all(beyond))),
        why,
        facts,
        (text, *lines),
    )


# ``step`` (``thresholds.ABSORB_STEP``, 200) is §5.1's "within ~200 steps": the spread is read after
# AdamW has had the time the paper gives it to absorb the gain
def gain_spreads(
    curves: pd.DataFrame,
    floor: float,
    step: int = ABSORB_STEP,
    gains=GAINS_PAPER,
    margin: float = ESCAPE_MARGIN,
) -> dict:
    """Per mode, the largest spread from ``step`` on of the validation curves of the gains in
    ``gains`` whose run left the floor (None with fewer than two), and those gains."""
    from ..engine.gain import spread_after

    c = curves[curves.gain.isin([float(g) for g in gains])]
    out = {}
    for mode in ("runtime", "weight"):
        m = c[c["mode"] == mode]
        # curves still on the floor coincide trivially; only those that left it
        # can show a spread that matters
        left = sorted(
            g for g, r in m.groupby("gain") if left_floor(r.val_loss, floor, margin).any()
        )
        out[f"{mode}_gains"] = left
        # one mode's curves, so spread_after returns one row
        out[mode] = (
            spread_after(m[m.gain.isin(left)], step=step)[f"max_spread_from_step_{step}"].iloc[0]
            if len(left) >= 2
            else None
        )
    return out
