"""What the released runs cost on the machines that trained them, read from each run's own ``summary.json``
(``wall_s``, ``tokens_per_s``): one table per chapter and configuration, one for the two chapters that read
the mechanism's plans. Shown in the reproducibility chapter, so that the chapters about a claim stay about it."""
from __future__ import annotations

from collections import Counter

import pandas as pd

from .. import plans
from ..chapters import bundle, escape_map, mechanism, paper_shape, schedule_seeds
from ..results import cost_table
from ..runs import RUNS_DIR
from .chapter import CHAPTERS, Chapter


def chapter_costs() -> pd.DataFrame:
    """``results.cost_table`` per chapter (its released runs at the scale the book shows) and configuration,
    then the paper-shape 10M prefixes, one part per run of their plan."""
    parts = {}
    for name in CHAPTERS:
        # No parameters: the released runs at the stand-in scale the built book shows, and no banner on this page.
        ch = Chapter.open(name, {}, announce=False)
        s, planned = ch.summaries(), Counter(e.config_name for e in ch.experiments())
        for config in planned:  # the plan's order
            parts[f"{name} ({ch.scale}): {config}"] = (s[s.config == config], planned[config])
    # The paper-shape prefixes belong to no chapter's plan, and each is trained to its own step: a part per run.
    prefix = paper_shape.paper_shape_prefix()
    for e in plans.paper_10m_prefix():
        variant = paper_shape.schedule_variant(e.impl, e.train.schedule)
        label = f"paper-shape prefix (10M): {e.impl} {e.config_name}" + (
            "" if variant == "recipe" else f" ({variant})")  # the other's schedule, named
        s = prefix.summaries
        mine = s[(s.impl == e.impl) & (s.config == e.config_name) & (s.schedule == e.train.schedule)]
        parts[label] = (mine, 1)
    return cost_table(parts)


def mechanism_costs(runs_dir=RUNS_DIR) -> pd.DataFrame:
    """``results.cost_table`` of every part of book/mechanism.ipynb and book/escape_and_bundle.ipynb: the runs
    trained of those planned, their cost, and an estimate for the rest."""
    # The chapters' own readers, so this table counts exactly the runs those pages show (each prints its left-out
    # runs too).
    mixer, during = mechanism.mixer_runs(runs_dir), mechanism.probe_during_runs(runs_dir)
    escape, long = escape_map.escape_runs(runs_dir), escape_map.escape_long_runs(runs_dir)
    factors, schedule = bundle.bundle_runs(runs_dir), schedule_seeds.schedule_runs(runs_dir)
    # mixer_runs sets the attention runs beside the mixer ones; those are the 10M chapter's cost, not this part's.
    return cost_table({"mechanism: local-mixer test (§3)": (mixer.table[mixer.table.mixer == "local"],
                                                            mixer.planned),
                       "mechanism: probes during training (§2)": (during.table, during.planned),
                       "escape map (§1)": (escape.table, escape.planned),
                       "escape map, boundary cells at the full budget (§1)": (long.table, long.planned),
                       "bundle, one factor at a time (§2)": (factors.table, factors.planned),
                       "bundle: the schedule, clipping and biases with seeds (§2)": (schedule.table,
                                                                                     schedule.planned)})
