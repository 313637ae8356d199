"""Fig. 2b at the paper's exact 10M shape: the order of nanoGPT's hidden-state growth over its three
configurations, read from the paper-shape runs' histories (``paper_shape.paper_shape_prefix``) by
two measures, over depth and over training (the author's ``residualscope`` definition), and a whole
run's growth where the paper reads its values."""

from __future__ import annotations

import pandas as pd

from ..engine import plans
from ..engine.config import CONFIG_NAMES, get_preset
from .joint_collapse import training_growth
from .verdicts import Claim, claim, verdict


def growth_path(hist: pd.DataFrame, upto: int) -> dict[str, dict[int, float]]:
    """nanoGPT's hidden-state growth ‖h_L‖/‖h_0‖ (the history's ``hidden_growth``, the stand-in
    claim's quantity) of each configuration on its own recipe, at each evaluation from step 1 to
    ``upto`` ({config: {step: growth}}; step 0 is the initialisation, before any training)."""
    if hist.empty or "hidden_growth" not in hist:
        return {}
    own = plans.own_schedule("nanogpt", "10M")
    h = hist[
        (hist.impl == "nanogpt") & (hist.schedule == own) & (hist.step > 0) & (hist.step <= upto)
    ]
    path: dict[str, dict[int, float]] = {}
    for r in h.dropna(subset=["hidden_growth"]).itertuples():
        path.setdefault(r.config, {})[int(r.step)] = float(r.hidden_growth)
    return path


def growth_at(hist: pd.DataFrame, step: int) -> dict[str, float]:
    """Each configuration's growth (``growth_path``) at evaluation ``step`` (one not
    evaluated there is left out)."""
    return {c: g[step] for c, g in growth_path(hist, step).items() if step in g}


def out_of_order(
    path: dict[str, dict[int, float]], paper_order: list[str], at_step: int
) -> list[dict]:
    """The pairs whose growth at ``at_step`` is in the other order than the paper's, each
    with the evaluations both share up to it and, of those, the ones where the pair was
    in the other order too: whether the disagreement at ``at_step`` is a crossing caught
    at that step or held all along."""
    pairs = []
    for i, hi in enumerate(paper_order):
        for lo in paper_order[i + 1 :]:
            if path[lo][at_step] <= path[hi][at_step]:
                continue
            shared = sorted(set(path[hi]) & set(path[lo]))
            pairs.append(
                {
                    "above": lo,
                    "below": hi,
                    "shared": shared,
                    "against": [s for s in shared if path[lo][s] > path[hi][s]],
                }
            )
    return pairs


def training_growth_at(hist: pd.DataFrame, step: int) -> dict[str, float]:
    """Growth over training, the author's ``residualscope`` definition
    (``joint_collapse.training_growth``'s quantity: a norm at ``step`` divided by the same at step
    0, not over depth), of each nanoGPT configuration on its own recipe. The author hooks a layer
    inside block 4 of 6 (``blocks.3.mlp.fc1``); ours is the residual stream after the last block,
    the stream the depth ratio ends on. A configuration without both evaluations is left out."""
    if hist.empty or "hidden_norm" not in hist or step == 0:
        return {}
    own = plans.own_schedule("nanogpt", "10M")
    # the two evaluations only, so the chapter's reader (first ÷ last
    # evaluation) reads step 0 and ``step``
    h = hist[(hist.impl == "nanogpt") & (hist.schedule == own) & hist.step.isin([0, step])]
    tg = training_growth(h)
    return {} if tg.empty else {r.config: float(r[tg.columns[-1]]) for _, r in tg.iterrows()}


@claim("Hidden-state growth order at the paper's shape")
def claim_prefix_growth(
    table: pd.DataFrame, hist: pd.DataFrame, at_step: int | None = None
) -> Claim:
    """Fig. 2b (§4.1) at the paper's shape, read at step ``at_step`` of 3,000 (None: the furthest
    step all three runs reached, never before the prefixes' ``plans.PREFIX_STEPS``; the paper's
    values are where its run ends, so this is the order at that step, labelled as such, and at step
    3,000 it is where the runs end): nanoGPT's hidden-state growth orders AttnOnly > FFNOnly > Full
    Residual. Growth is measured two ways, from the ``hist`` of the runs: over depth, ‖h_L‖/‖h_0‖ at
    the step (``growth_at``, the stand-in claim's quantity), and over training, the author's
    ``residualscope`` definition (``training_growth_at``). The order is decided only where both
    measures give the same answer; where they differ, the verdict would be set by our choice of
    measure, so a prefix waits for the whole runs (NOT TESTED) and a complete run cannot decide it
    (NOT TESTABLE HERE). It needs all three configurations evaluated at ``at_step``; where AttnOnly
    or FFNOnly has left the floor by then, the model is not the one the figure ordered (two
    collapsed configurations beside the control)."""
    from .paper import paper_values

    paper = paper_values(ref="§4.1 Fig. 2b").set_index("config")
    # largest first: AttnOnly, FFNOnly, Full
    paper_order = list(paper.value.sort_values(ascending=False).index)
    # where the paper's values are read: its runs' end
    budget = get_preset("10M", "nanogpt").train.max_steps
    if at_step is None:
        t = table[(table.impl == "nanogpt") & (table.schedule == "recipe")].set_index("config")
        steps = [int(t.steps[c]) for c in paper_order if c in t.index]
        at_step = (
            max(plans.PREFIX_STEPS, min(steps))
            if len(steps) == len(paper_order)
            else plans.PREFIX_STEPS
        )
    growth, over = growth_at(hist, at_step), training_growth_at(hist, at_step)
    missing = [c for c in paper_order if c not in growth or c not in over]
    facts = {"step": at_step, "growth": growth, "over_training": over, "missing": missing}
    if missing:
        # how far each missing configuration's run has trained, so the
        # reader sees what is left to train
        t = table[(table.impl == "nanogpt") & (table.schedule == "recipe")].set_index("config")

        def lacks(c):  # not trained, short of the step, or past it with no growth recorded there
            if c not in t.index:
                return "not trained"
            if t.steps[c] < at_step:
                return f"trained to step {int(t.steps[c]):,}"
            return f"with no growth recorded at step {at_step:,} or no hidden norms at step 0"

        where = ", ".join(f"{c} {lacks(c)}" for c in missing)
        return Claim(
            "NOT TESTED",
            (
                f"Fig. 2b orders three nanoGPT configurations; at step {at_step:,} of {budget:,} "
                f"the paper-shape runs lack {where}"
            ),
            facts,
        )
    t = table[(table.impl == "nanogpt") & (table.schedule == "recipe")].set_index("config")
    # on the floor at the step the order is read at: an escape after it does
    # not change what the step shows
    off = [
        c
        for c in ("AttnOnly", "FFNOnly")
        if c in t.index and not pd.isna(t.left_floor_at[c]) and t.left_floor_at[c] <= at_step
    ]

    def order(values):
        return [c for c in sorted(values, key=values.get, reverse=True) if c in paper_order]

    ours, ours_over = order(growth), order(over)
    facts["order"], facts["order_over_training"] = ours, ours_over
    lines = tuple(
        f"Hidden-state growth {name} at step {at_step:,} of {budget:,}: "
        + " > ".join(f"{c} {values[c]:.2f}" for c in o)
        + (" — the paper's order" if o == paper_order else " — not the paper's order")
        + "."
        for name, values, o in (
            ("over depth (‖h_L‖/‖h_0‖)", growth, ours),
            (
                (
                    "over training (the author's final ÷ initial, on the stream after the "
                    "last block)"
                ),
                over,
                ours_over,
            ),
        )
    ) + (
        "Paper (at the end of its run): "
        + " > ".join(f"{c} {paper.reported[c]}" for c in paper_order)
        + ".",
    )
    # where a whole run has reached the step the paper reads its values at, its growth there
    # beside the paper's: a size on another layer (the author's hook is inside block 4), so a fact
    # beside the order, not a verdict
    end_depth, end_over = growth_at(hist, budget), training_growth_at(hist, budget)
    ended = [c for c in paper_order if c in end_depth and c in end_over]
    facts["at_end"] = {c: {"over_depth": end_depth[c], "over_training": end_over[c]} for c in ended}
    lines += tuple(
        (
            f"{c}'s whole run at step {budget:,}: growth over training {end_over[c]:.2f} (the "
            f"stream after the last block), over depth {end_depth[c]:.1f}; beside the paper's "
            f"{paper.reported[c]}, which the author's `residualscope` measures over training at "
            "`blocks.3.mlp.fc1` (its code, not the paper's text)."
        )
        for c in ended
    )
    # each pair out of the paper's order over depth: at how many of their shared evaluations it was,
    # and whether the gap between them narrows or widens from the first of those to the reading step
    path = growth_path(hist, at_step)
    pairs = out_of_order(path, paper_order, at_step)
    facts["out_of_order"] = pairs

    def held(p):
        a, b, first = p["above"], p["below"], p["shared"][0]
        gap0, gap = path[a][first] - path[b][first], path[a][at_step] - path[b][at_step]
        # a pair that was in the paper's order at the first shared evaluation
        # crossed: no gap narrowed or widened
        moved = (
            f"crossing from {gap0:.1f} to {gap:.1f}"
            if gap0 <= 0
            else f"the gap {'narrowing' if gap < gap0 else 'widening'} from {gap0:.1f} to {gap:.1f}"
            if gap != gap0
            else f"the gap steady at {gap:.1f}"
        )
        return (
            f"over depth {a}'s growth is above {b}'s at {len(p['against'])} of their "
            f"{len(p['shared'])} evaluations from step {first:,} to {at_step:,}, {moved}"
        )

    agree = (ours == paper_order) == (ours_over == paper_order)
    said = "; ".join(held(p) for p in pairs)
    if off:
        why = (
            f"by step {at_step:,} {' and '.join(off)} left the floor, where the paper orders two "
            "collapsed models"
        )
        return Claim(verdict(True, False, False), why, facts, lines)
    if not agree:
        # the answer would be our choice of measure: a prefix waits for the whole
        # runs, a complete run cannot say
        which = "over training" if ours_over == paper_order else "over depth"
        disagree = (
            f"at step {at_step:,} of {budget:,} the two measures of growth disagree: only the one "
            f"{which} gives the paper's order"
        ) + (f"; {said}" if said else "")
        # a prefix: what it waits for first (the runs short of the step the paper
        # reads), then what it shows now
        short = [CONFIG_NAMES[c] for c in paper_order if t.steps[c] < budget]
        why = (
            disagree + f"; the paper reads its order where its runs end, at step {budget:,}"
            if not short
            else (
                f"the paper reads its order where its runs end, at step {budget:,}, and "
                f"{' and '.join(short)} {'has' if len(short) == 1 else 'have'} not trained that "
                "far; "
            )
            + disagree
        )
    else:
        why = (
            ("the paper's order" if ours == paper_order else "another order")
            + f" at step {at_step:,} of {budget:,} by both measures"
            + (f"; {said}" if said else "")
            + (
                f"; the paper reads its order where its runs end, at step {budget:,}, and the "
                "author's `residualscope` hooks a layer inside a block, so the order is compared, "
                "never the size"
            )
        )
    # another measure of the same quantity flipping it is a knife-edge, and a
    # prefix's is still being trained
    return Claim(
        verdict(
            True,
            True,
            ours == paper_order,
            knife_edge=not agree,
            reached=agree or at_step >= budget,
        ),
        why,
        facts,
        lines,
    )
