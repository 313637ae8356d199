"""What the released runs cost on the machines that trained them, read from each run's own ``summary.json``
(``wall_s``, ``tokens_per_s``): one table per chapter and configuration, one for the two chapters that read
the mechanism's plans. Shown in the reproducibility chapter, so that the chapters about a claim stay about it."""
from __future__ import annotations

import pandas as pd

from ..chapters import bundle, escape_map, mechanism, paper_shape
from ..results import cost_table, pooled
from ..runs import RUNS_DIR
from .chapter import CHAPTERS, Chapter


def chapter_costs() -> pd.DataFrame:
    """Per chapter (its released runs at the scale the book shows) and configuration: the runs, the steps of
    one, the median and the fastest minutes of a run (the fastest is the closest to an idle machine), the
    median tokens/s, and the total; then the paper-shape 10M prefixes, one row per run trained so far."""
    rows = []
    for name in CHAPTERS:
        # No parameters: the released runs at the stand-in scale the built book shows, and no banner on this page.
        ch = Chapter.open(name, {}, announce=False)
        # Complete runs only: a diverged run stopped early, so its minutes are not what a run costs.
        s = pooled(ch.summaries())
        for config, g in s.groupby("config", sort=False):  # the plan's order
            rows.append(_row(name, ch.scale, config, g))
    # The paper-shape prefixes belong to no chapter's plan, and each is trained to its own step: a row per run.
    prefix = paper_shape.paper_shape_prefix().summaries
    for r in prefix.itertuples():  # one seed each: the trained steps of the 3,000
        variant = paper_shape.schedule_variant(r.impl, r.schedule)
        label = r.config + ("" if variant == "recipe" else f" ({variant})")  # the other's schedule, named
        # the run as a one-row frame, the shape _row takes
        rows.append(_row(f"paper-shape prefix, {r.impl}", "10M", label, prefix.loc[[r.Index]]))
    return pd.DataFrame(rows)


def _row(chapter: str, scale: str, config: str, g: pd.DataFrame) -> dict:
    # wall_s is the run's own clock, every segment of a resumed run added up, on a machine that may have been busy
    minutes = g.wall_s.astype(float) / 60
    return {"chapter": chapter, "scale": scale, "config": config, "runs": len(g),
            "steps per run": "/".join(f"{int(b):,}" for b in sorted(set(g.steps))),  # every budget shown, none hidden
            "median minutes": float(minutes.median()), "fastest minutes": float(minutes.min()),
            "median tokens/s": round(float(g.tokens_per_s.astype(float).median())),
            "total hours": float(minutes.sum() / 60)}


def mechanism_costs(runs_dir=RUNS_DIR) -> pd.DataFrame:
    """``results.cost_table`` of every part of book/mechanism.ipynb and book/escape_and_bundle.ipynb: the runs
    trained of those planned, their cost, and an estimate for the rest."""
    # The chapters' own readers, so this table counts exactly the runs those pages show (each prints its left-out
    # runs too).
    mixer, during = mechanism.mixer_runs(runs_dir), mechanism.probe_during_runs(runs_dir)
    escape, long = escape_map.escape_runs(runs_dir), escape_map.escape_long_runs(runs_dir)
    factors, schedule = bundle.bundle_runs(runs_dir), bundle.schedule_runs(runs_dir)
    # mixer_runs sets the attention runs beside the mixer ones; those are the 10M chapter's cost, not this part's.
    return cost_table({"mechanism: local-mixer test (§3)": (mixer.table[mixer.table.mixer == "local"],
                                                            mixer.planned),
                       "mechanism: probes during training (§2)": (during.table, during.planned),
                       "escape map (§1)": (escape.table, escape.planned),
                       "escape map, boundary cells at the full budget (§1)": (long.table, long.planned),
                       "bundle, one factor at a time (§2)": (factors.table, factors.planned),
                       "bundle: the schedule, clipping and biases with seeds (§2)": (schedule.table,
                                                                                     schedule.planned)})
