"""book/escape_and_bundle.ipynb §1:
the escape map (depth x gain, when AttnOnly leaves the floor) and its longer budget."""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..engine import plans
from ..engine.model import INIT_STD
from ..engine.results import (
    Runs,
    plan_runs,
    pooled,
)
from ..engine.runs import RUNS_DIR
from .verdicts import and_list


def escape_map_reading(grid: pd.DataFrame, planned: int, interval: int) -> str:
    """What the escape map says. ``grid``: one row per finished run (config, depth, gain,
    escape_step, best_val_loss). Escape steps are known to within ``interval`` steps."""
    # no status column, no diverged run: an empty frame with the grid's columns
    # keeps the code below branch-free
    lost = grid[grid.status == "diverged"] if "status" in grid else grid.iloc[:0]
    # a diverged run did not "never leave the floor": it is named apart
    grid = grid.drop(lost.index)
    unscaled = (
        grid[grid.scaled_init == False]  # noqa: E712
        if "scaled_init" in grid
        else grid.iloc[:0]
    )
    grid = grid.drop(unscaled.index)  # the control without GPT-2's scaling: read apart, below
    # Refused, not averaged: the pivot below keeps the first run of a cell, so a second run there
    # (another seed, the unscaled control without its column) would silently hide one.
    twice = grid[grid.duplicated(["config", "depth", "gain"], keep=False)]
    # e.g. a control run passed without its scaled_init column: never merged into a cell
    if len(twice):
        raise ValueError(
            "the escape map has more than one run per cell (config, depth, gain): "
            + ", ".join(
                sorted({f"{r.config} {int(r.depth)} {float(r.gain):g}" for r in twice.itertuples()})
            )
            + "; mark a run without GPT-2's scaling with scaled_init=False"
        )
    attn = grid[grid.config == "AttnOnly"]
    # every finished run counts towards the plan, the diverged and the
    # control included, though read apart
    trained = len(grid) + len(lost) + len(unscaled)
    if trained < planned:
        head = f"{trained} of {planned} runs of the map trained."
        if attn.empty:
            return head + " Nothing to read yet."
    else:
        head = f"All {planned} runs trained."
    # inf: never left the floor; a cell that is NaN was not trained depth x gain; the
    # fill happens before the pivot, so "never" (inf) and "not trained" (NaN, a missing
    # cell) stay two different things
    esc = attn.assign(escape_step=attn.escape_step.astype(float).fillna(np.inf)).pivot_table(
        index="depth", columns="gain", values="escape_step", aggfunc="first"
    )
    never = attn.escape_step.isna().sum()
    steps = attn.escape_step.dropna()
    # the range of escape steps over the cells that left the floor,
    # each known to within ``interval``
    span = (
        "escape steps -"
        if steps.empty
        else f"escape step {int(steps.min())}"
        if steps.min() == steps.max()
        else f"escape steps {int(steps.min())}-{int(steps.max())}"
    )
    # inf where the budget is not known: then "never" is said without a number of steps
    budget = float(grid.budget.max()) if "budget" in grid and grid.budget.notna().any() else np.inf
    within = "" if np.isinf(budget) else f" within {int(budget)} steps"
    lines = [
        head,
        (
            f"AttnOnly: {span} (to within {interval} steps); {never} of {len(attn)} did not leave "
            f"the floor{within}."
        ),
    ]
    # All escapes at one evaluation and some never: the escape step cannot grade the cells, so the
    # reader is pointed to the best loss, which can.
    if len(steps) and steps.min() == steps.max() and never:
        lines.append(
            f"Every run that left the floor did so by step {int(steps.min())}, so at this "
            f"resolution the map is binary (left by step {int(steps.min())}, or not{within}); the "
            "best loss is the graded outcome."
        )
    lines += _escape_answers(esc, interval, budget)
    # the control is read against the scaled cell of its depth, so it needs the
    # map's grid, not a cell of its own
    lines += _unscaled_answer(unscaled, esc, interval, budget)
    # gain 1 is GPT-2's own initialisation at each depth: its best loss by
    # depth is the map's plain column
    best = attn[attn.gain == 1.0].sort_values("depth")
    if len(best) > 1:
        lines.append(
            "Best loss at gain 1 by depth: "
            + ", ".join(f"{int(r.depth)}: {r.best_val_loss:.3f}" for r in best.itertuples())
            + "."
        )
    # FFNOnly is the control: its FFN keeps its skip, so the FFN output's scale is not expected to
    # decide its escape; if it did, the gain would say nothing about AttnOnly's missing skip
    ffn = grid[grid.config == "FFNOnly"]
    if len(ffn):
        lines.append(
            f"FFNOnly (depth 6): {ffn.escape_step.notna().sum()} of {len(ffn)} gains left the "
            "floor."
        )
    if len(lost):
        lines.append(
            "Diverged: "
            + ", ".join(
                f"{r.config} depth {int(r.depth)} gain {float(r.gain):g}" for r in lost.itertuples()
            )
            + "."
        )
    return "\n".join(lines)


def escape_long_reading(table: pd.DataFrame, planned: int, short_budget: int) -> str:
    """Whether the map's boundary cells, on the floor for ``short_budget`` steps, leave it within
    the preset's full budget (``table``: depth, gain, escape_step, best_val_loss, status, budget;
    one row per finished run of ``plans.escape_long_budget``): a slow escape, a plateau for the
    whole budget, or, where the long run leaves the floor within ``short_budget`` steps, a sign that
    the short run's faster decaying schedule held it there. A diverged run is named apart, never
    read as staying on the floor."""
    # a diverged long run is no outcome: counted towards the plan, never read as a plateau
    lost = table[table.status == "diverged"] if "status" in table else table.iloc[:0]
    # finished runs with a finite best loss: the only rows an answer is read from
    done = pooled(table)
    plural = "s" if planned > 1 else ""
    if done.empty and lost.empty:
        return f"The boundary cell{plural} at the full budget: not trained yet ({planned} planned)."

    def name(r):
        return f"depth {int(r.depth)} gain {float(r.gain):g}"

    reads = []
    for r in done.itertuples():
        e = r.escape_step
        # Three answers. Still on the floor: a plateau. Leaving the floor after ``short_budget``: a
        # slow escape that the short budget cut off. Leaving it within ``short_budget``: the long
        # run's cosine, stretched over the preset's steps, keeps the rate high for longer, so the
        # short run's faster decay, not the start, held it.
        what = (
            "a plateau for the whole budget, not a slow start"
            if pd.isna(e)
            else (
                f"not a plateau: the long run leaves the floor within {short_budget} steps, so the "
                "short run's schedule, not the start, held it there"
            )
            if e <= short_budget
            else "a slow escape"
        )
        reads.append(
            f"{name(r)} {_when(e)} (best {r.best_val_loss:.3f}): its {short_budget}-step 'never' "
            f"is {what}"
        )
    budget = (
        f"{int(done.budget.max()):,} steps" if len(done) and "budget" in done else "the full budget"
    )
    # the count is said only while some cells are missing: the answer that
    # follows is then a partial one
    out = (
        ""
        if len(done) + len(lost) >= planned
        else f"{len(done) + len(lost)} of {planned} boundary cells trained. "
    )
    if reads:
        out += f"At {budget}, one seed: " + "; ".join(reads) + "."
    if len(lost):
        out += (
            (" " if out else "")
            + "Diverged (no outcome): "
            + ", ".join(name(r) for r in lost.itertuples())
            + "."
        )
    return out


def _unscaled_answer(
    unscaled: pd.DataFrame, esc: pd.DataFrame, interval: int, budget: float
) -> list[str]:
    """AttnOnly without GPT-2's 1/√(2L) scaling of both output projections (``unscaled``: its
    runs, at gain 1) against the scaled run at the same depth (``esc`` as in
    ``_escape_answers``): whether removing the scaling as a whole, which the FFN-output gain
    alone does not do, moves the escape."""
    out = []
    for r in unscaled[unscaled.config == "AttnOnly"].itertuples():
        d = int(r.depth)
        # inf for "never", as in the map, so the two runs compare with _later
        e = float(r.escape_step) if pd.notna(r.escape_step) else np.inf
        # without the scaling c_proj starts at INIT_STD, not INIT_STD /
        # sqrt(2L): sqrt(2L) times larger
        q = (
            "Without the scaling (attention's and the FFN's output projections both at std "
            f"{INIT_STD}, {np.sqrt(2 * d):.1f}× larger), AttnOnly at depth {d}, gain 1, {_when(e)} "
            f"(best {r.best_val_loss:.3f})"
        )
        # its scaled twin: the map's cell at the same depth and gain 1, the one run it
        # differs from by the scaling alone
        s = esc.loc[d, 1.0] if d in esc.index and 1.0 in esc.columns else np.nan
        if pd.isna(s):
            out.append(q + "; its scaled twin is not trained yet.")
            continue
        q += f"; with it, {_when(s)}"
        # a run that never left the floor could at the earliest have left it at the first
        # evaluation after the budget
        never_at = budget + interval
        if _later(s, e, interval, never_at):
            q += (
                f": at depth {d} the scaling is what keeps AttnOnly on the floor (one seed)."
                if not np.isfinite(s)
                else f": at depth {d} the scaling delays the escape (one seed)."
            )
        elif _later(e, s, interval, never_at):
            q += ": removing the scaling delays the escape, so the scaling helps here (one seed)."
        # neither is later by more than the resolution, and the unscaled run left the floor
        elif np.isfinite(e):
            q += f": the scaling does not move the escape at depth {d} (within {interval} steps)."
        else:
            q += f": the scaling is not what keeps depth {d} on the floor"
            # The unscaled run never left the floor, and its twin did not either (to the
            # resolution): the scaling as a whole is not what holds it. A gain above 1 enlarges only
            # the FFN output, attention's projection still scaled: if that brings the escape, the
            # FFN's scale relative to attention's is the candidate.
            raised = {
                g: v for g, v in esc.loc[d].items() if g > 1 and pd.notna(v) and np.isfinite(v)
            }
            q += (
                (
                    ", while a larger FFN output alone, attention's projection still scaled, "
                    "brings the escape to "
                )
                + ", ".join(f"step {int(v)} (gain {g:g})" for g, v in raised.items())
                + (
                    f": at depth {d} this is consistent with the FFN output's scale relative to "
                    "attention's, not the scaling of both, deciding whether AttnOnly leaves the "
                    "floor (one seed, "
                    f"{'the map' if np.isinf(budget) else f'{int(budget)} steps'})."
                )
                if raised
                else "."
            )
        out.append(q)
    return out


def _apart(steps, interval: int, never_at: float) -> bool | None:
    """Whether escape steps (inf: never left the floor, compared as ``never_at``, the first
    evaluation after the budget; NaN: not trained, ignored) differ by more than the ``interval``
    each one is known to within; None with fewer than two trained, or when none of them left the
    floor (no escape to compare)."""
    steps = [float(s) for s in steps if pd.notna(s)]
    if len(steps) < 2 or not any(np.isfinite(s) for s in steps):
        return None
    # two runs that never left the floor both become never_at, so they are
    # never "apart" from each other
    steps = [s if np.isfinite(s) else never_at for s in steps]
    return max(steps) - min(steps) > interval


def _later(a: float, b: float, interval: int, never_at: float) -> bool:
    """Escape step ``a`` is later than ``b`` by more than the resolution (inf: never left the floor,
    compared as ``never_at``; two runs that never left it are not ordered)."""
    # neither left the floor: the budget does not say which would have left first
    if not (np.isfinite(a) or np.isfinite(b)):
        return False
    return (a if np.isfinite(a) else never_at) - (b if np.isfinite(b) else never_at) > interval


def _when(s: float) -> str:
    """An escape step in words (NaN or inf: the run did not leave the floor in its budget)."""
    return (
        "stays on the floor for its whole budget"
        if pd.isna(s) or not np.isfinite(s)
        else f"leaves the floor at step {int(s)}"
    )


def _escape_answers(esc: pd.DataFrame, interval: int, budget: float = np.inf) -> list[str]:
    """The escape map's three questions, from ``esc`` (AttnOnly escape steps, depth × gain; inf:
    never left the floor within ``budget`` steps; NaN: not trained). A difference counts only where
    it exceeds the resolution ``interval``: the first evaluation below the threshold places the
    crossing only within the interval before it, and a run that never left the floor could at the
    earliest have left it at the first evaluation after the budget."""
    # "never" is placed at the first evaluation after the budget: the
    # earliest step it could have been
    never_at = budget + interval
    out = []
    # the same test both ways: over depth at each gain (the columns), then over
    # gain at each depth (the rows)
    for name, held, lines in (
        ("depth", "gain", [esc[g] for g in esc.columns]),
        ("gain", "depth", [esc.loc[d] for d in esc.index]),
    ):
        tested = [(ln.name, _apart(ln, interval, never_at)) for ln in lines]
        # lines with fewer than two cells trained, or with no escape at all, say
        # nothing either way and are dropped
        tested = [(k, m) for k, m in tested if m is not None]
        if not tested:
            continue
        moved = [f"{float(k):g}" for k, m in tested if m]
        out.append(
            f"Does the escape depend on {name}? "
            + (
                (
                    f"Yes: at {held} {', '.join(moved)} the escape steps over {name} differ by "
                    f"more than {interval} steps."
                )
                if moved
                else (
                    f"Not measurably: at each {held} with two or more {name}s trained "
                    f"({len(tested)} {held}{'s' if len(tested) > 1 else ''}), the escape steps lie "
                    f"within {interval} steps of each other."
                )
            )
        )
    g1 = esc[1.0].dropna() if 1.0 in esc.columns else pd.Series(dtype=float)
    if len(g1) >= 2:
        shallow, deep = int(g1.index.min()), int(g1.index.max())
        # (the c_proj std is INIT_STD / sqrt(2L), so the deep model's start is
        # sqrt(deep / shallow) times smaller)
        # the gain that gives depth `deep` depth `shallow`'s initial scale
        undo = np.sqrt(deep / shallow)
        d, sh = g1[deep], g1[shallow]
        q = (
            "Does GPT-2's 1/√(2L) scaling of the FFN output make deep AttnOnly harder to train? At "
            f"gain 1 depth {deep}'s projection starts {undo:.1f}× smaller than depth {shallow}'s; "
            f"depth {deep} {_when(d)}, depth {shallow} {_when(sh)}"
        )
        raised = esc.loc[deep, [g for g in esc.columns if g > 1]].dropna()
        # the larger gains at the deepest depth that bring its escape earlier than at gain 1,
        # by more than the resolution
        helps = {g: v for g, v in raised.items() if _later(d, v, interval, never_at)}
        # In order: no escape to compare; the deep model earlier (the scaling does not
        # hinder it); no difference; a delay that a larger FFN output removes; a delay that
        # gains large enough to undo the scaling do not remove; a delay whose cause the map
        # has not trained the gains to tell.
        if not (np.isfinite(d) or np.isfinite(sh)):
            q += ": open, neither leaves the floor within the budget."
        elif _later(sh, d, interval, never_at):
            q += ": no, the deeper model leaves the floor earlier."
        elif not _later(d, sh, interval, never_at):
            q += f": no, not in when it leaves the floor (within {interval} steps)."
        elif helps:
            q += (
                (
                    ": later, and consistent with the FFN output's scale being the cause: a larger "
                    f"FFN output at depth {deep} brings the escape to "
                )
                + ", ".join(f"step {int(v)} (gain {g:g})" for g, v in helps.items())
                + "."
            )
        elif len(raised) and max(raised.index) >= undo:
            q += (
                f": later, and gains up to {max(raised.index):g}, enough to undo the {undo:.1f}× "
                "smaller start, do not bring it earlier: the map does not support the scale as the "
                "cause of the delay."
            )
        else:
            q += (
                f": later; whether the scale is the cause is open until depth {deep} is trained "
                f"with a gain of at least {undo:.1f}, which undoes the smaller start"
            ) + (
                f" (gains up to {max(raised.index):g} do not bring it earlier)."
                if len(raised)
                else "."
            )
        out.append(q)
    out += _scale_answer(esc)
    return out


def _scale_answer(esc: pd.DataFrame) -> list[str]:
    """Whether the FFN output projection's initial standard deviation, INIT_STD · gain / √(2L),
    separates the AttnOnly runs that left the floor from those that did not, whatever their depth
    (``esc`` as in ``_escape_answers``)."""
    cells = [(d, g, s) for d in esc.index for g, s in esc.loc[d].items() if pd.notna(s)]
    # the FFN output projection's std at initialisation: the gain multiplies the scaled GPT-2 value
    std = {(d, g): INIT_STD * g / np.sqrt(2 * d) for d, g, _ in cells}
    left = [std[d, g] for d, g, s in cells if np.isfinite(s)]
    stayed = [std[d, g] for d, g, s in cells if not np.isfinite(s)]
    if not (left and stayed):
        return []
    head = (
        f"Is it the initial scale itself? The FFN output projection starts at std {INIT_STD} · "
        f"gain / √(2L): the runs that left the floor started at {min(left):.4f} or more, those "
        f"that never did at {max(stayed):.4f} or less"
    )
    # Separated: every run that left the floor started larger than every run that stayed. One seed
    # per cell, so this places a threshold between the two values, not a sharp one.
    if max(stayed) < min(left):
        depths = sorted({int(d) for d, _, _ in cells})
        return [
            head
            + (
                f", so across depths {', '.join(map(str, depths))} that scale alone separates "
                "them, at a threshold between the two."
            )
        ]
    return [
        head
        + (
            ": the scale alone does not separate them, as some runs stayed on the floor from a "
            "larger start than others that left it; something beyond the FFN output's initial "
            "scale matters (depth, or attention's output projection, which the same 1/√(2L) "
            "shrinks)."
        )
    ]


def escape_label(step) -> str:
    """An escape step as a label: ``"step N"``, or ``"never"`` (NaN or inf:
    the run never left the floor)."""
    # NaN (a summary's "never") and inf (the map's) read alike, so every table
    # and line uses one word for it
    return "never" if pd.isna(step) or not np.isfinite(step) else f"step {int(step)}"


def escape_runs(runs_dir=RUNS_DIR) -> Runs:
    """The escape map's runs; ``scaled_init`` False marks the run
    without GPT-2's 1/√(2L) scaling."""
    # scaled_init is a column so that the control at depth 12, gain 1 is not
    # merged into that cell of the map
    return plan_runs(
        plans.escape_map(),
        {
            "depth": lambda e: e.model.n_layer,  # gain: the summary's
            "scaled_init": lambda e: e.model.scaled_init,
        },
        runs_dir,
    )


def escape_long_runs(runs_dir=RUNS_DIR) -> Runs:
    """The escape map's boundary cells at the preset's full budget
    (``plans.escape_long_budget``)."""
    return plan_runs(plans.escape_long_budget(), {"depth": lambda e: e.model.n_layer}, runs_dir)


def escape_warmup_runs(runs_dir=RUNS_DIR) -> Runs:
    """The escape map's warm-up axis (``plans.escape_warmup``), AttnOnly at three
    depths and two gentler warm-ups."""
    return plan_runs(
        plans.escape_warmup(),
        {"depth": lambda e: e.model.n_layer, "warmup": lambda e: e.train.warmup_steps},
        runs_dir,
    )


def escape_warmup_grid(
    map_table: pd.DataFrame, warmup_table: pd.DataFrame, preset_warmup: int
) -> pd.DataFrame:
    """AttnOnly's escape step by depth (rows) and warm-up (columns): the map's own gain-1,
    GPT-2-scaled runs at the preset's warm-up beside the warm-up axis's runs; a cell not trained is
    missing, a run that stayed is "never"."""
    own = map_table[
        (map_table.config == "AttnOnly")
        & (map_table.gain == 1)
        & map_table.depth.isin(plans.ESCAPE_WARMUP_DEPTHS)
    ]
    if "scaled_init" in own:
        # the unscaled control is not a cell of the map
        own = own[own.scaled_init != False]  # noqa: E712
    cells = [
        own.assign(warmup=preset_warmup)[["depth", "warmup", "escape_step"]],
        warmup_table[["depth", "warmup", "escape_step"]],
    ]
    grid = pd.concat(cells, ignore_index=True).astype({"depth": int, "warmup": int})
    grid["escape"] = grid.escape_step.map(escape_label)
    return grid.pivot(index="depth", columns="warmup", values="escape")


def escape_warmup_reading(
    grid: pd.DataFrame, planned: int, trained: int, preset_warmup: int, interval: int
) -> str:
    """What the warm-up axis says: at which depths a gentler warm-up frees AttnOnly where the
    preset's (``preset_warmup``, the map's own column) does not, and where it prevents, delays or
    hastens an escape the preset's makes. As on the map, two escape steps differ only when they lie
    more than one evaluation (``interval`` steps) apart; a difference of at most one evaluation is
    said as such. A cell not trained (missing) is never read as any of these."""
    head = f"{trained} of {planned} runs of the warm-up axis trained, at one seed."
    if not trained or preset_warmup not in grid.columns:
        return (
            head + " Nothing to read yet."
            if not trained
            else head + " The map's own column is not trained."
        )
    gentler = [w for w in grid.columns if w != preset_warmup]

    def cell(d, w):  # "never", "step N", or None where not trained
        v = grid.at[d, w] if w in grid.columns else None
        return v if isinstance(v, str) else None

    def step(v):
        return None if v in (None, "never") else int(v.split()[1])

    def cells(items):  # [(depth, warm-up)] -> "depth 6 (step 100 at 1,600), ..."
        by = {}
        for d, w in items:
            by.setdefault(d, []).append(f"{cell(d, w)} at {w:,}")
        return "; ".join(
            f"depth {d} ({', '.join(cs)}, against {cell(d, preset_warmup)} at {preset_warmup:,})"
            for d, cs in by.items()
        )

    out, said = head, False
    # depths where the map's own warm-up leaves AttnOnly on the floor: which gentler ones free it
    for d in grid.index:
        if cell(d, preset_warmup) != "never" or not any(cell(d, w) for w in gentler):
            continue
        free = [w for w in gentler if step(cell(d, w)) is not None]
        stay = [w for w in gentler if cell(d, w) == "never"]
        out += (
            f" At depth {d}, where the map's {preset_warmup:,}-step warm-up leaves AttnOnly on "
            "the floor, "
            + (
                "a warm-up of "
                + and_list([f"{w:,} steps frees it ({cell(d, w)})" for w in free])
                + (f"; {and_list([f'{w:,}' for w in stay])} steps do not" if stay else "")
                + "."
                if free
                else "it stays there at every warm-up trained."
            )
        )
        said = True
    # depths where it leaves: prevented, delayed or hastened by more than one evaluation, or moved
    # by at most one
    prevented, later, earlier, within = [], [], [], []
    for d in grid.index:
        if (s0 := step(cell(d, preset_warmup))) is None:
            continue
        for w in gentler:
            c, s = cell(d, w), step(cell(d, w))
            if c == "never":
                prevented.append((d, w))
            elif s is not None and abs(s - s0) > interval:
                (later if s > s0 else earlier).append((d, w))
            elif s is not None and s != s0:
                within.append(f"depth {d} with {w:,}")
    for verb, items in (("prevents", prevented), ("delays", later), ("hastens", earlier)):
        if items:
            out += f" A gentler warm-up {verb} the escape"
            out += (
                " by more than one evaluation" if verb != "prevents" else ""
            ) + f" at {cells(items)}."
            said = True
    if within:
        out += (
            f" At {and_list(within)}, AttnOnly leaves the floor within one evaluation ({interval} "
            "steps) of the map's own run, within the map's resolution."
        )
        said = True
    if not said:
        out += (
            " No trained cell differs from the preset's warm-up in whether or when AttnOnly leaves "
            "the floor."
        )
    return out
