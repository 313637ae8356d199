"""The escape map's warm-up axis (issue 60 item 6): the grid puts the map's own preset-warm-up runs
beside the gentler warm-ups, and its reading moves both ways with the runs."""

import numpy as np
import pandas as pd

from lib.claims import escape_map as E
from lib.engine import plans


def _map(escape_at_12=np.nan):
    rows = [
        dict(config="AttnOnly", gain=1.0, depth=d, scaled_init=True, escape_step=50.0)
        for d in (6, 8)
    ]
    rows += [
        dict(config="AttnOnly", gain=1.0, depth=12, scaled_init=True, escape_step=escape_at_12),
        # the control
        dict(config="AttnOnly", gain=1.0, depth=12, scaled_init=False, escape_step=np.nan),
        # another gain
        dict(config="AttnOnly", gain=2.0, depth=12, scaled_init=True, escape_step=75.0),
        dict(config="FFNOnly", gain=1.0, depth=6, scaled_init=True, escape_step=np.nan),
    ]
    return pd.DataFrame(rows)


def _axis(at_12):
    return pd.DataFrame(
        [dict(depth=12, warmup=w, escape_step=e) for w, e in zip(plans.ESCAPE_WARMUPS, at_12)]
    )


def test_the_grid_and_its_reading_move_with_the_runs():
    g = E.escape_warmup_grid(_map(), _axis([np.nan, 300.0]), 100)
    assert g.at[12, 100] == "never" and g.at[12, 1600] == "step 300" and g.at[12, 400] == "never"
    assert g.at[6, 100] == "step 50" and pd.isna(g.at[6, 400])  # not trained: missing, not "never"
    text = E.escape_warmup_reading(g, 6, 2, 100, 25)
    assert "a warm-up of 1,600 steps frees it (step 300)" in text and "At depth 12," in text
    assert "400 steps do not" in text  # the gentler warm-up that does not free it, named
    g = E.escape_warmup_grid(_map(), _axis([np.nan, np.nan]), 100)
    text = E.escape_warmup_reading(g, 6, 2, 100, 25)
    assert "frees" not in text and "it stays there at every warm-up trained" in text
    # an escape the map's warm-up makes: prevented, delayed or hastened beyond one evaluation, or
    # moved by at most one
    g = E.escape_warmup_grid(_map(escape_at_12=100.0), _axis([np.nan, 150.0]), 100)
    text = E.escape_warmup_reading(g, 6, 2, 100, 25)
    assert "frees" not in text
    assert "prevents the escape at depth 12 (never at 400, against step 100 at 100)" in text
    assert "delays the escape by more than one evaluation at depth 12 (step 150 at 1,600" in text
    g = E.escape_warmup_grid(_map(escape_at_12=100.0), _axis([125.0, 200.0]), 100)
    text = E.escape_warmup_reading(g, 6, 2, 100, 25)
    assert "prevents" not in text and "delays the escape by more than one evaluation" in text
    assert (
        "At depth 12 with 400, AttnOnly leaves the floor within one evaluation (25 steps)" in text
    )
    # the same cells at a coarser cadence: both within one evaluation
    text = E.escape_warmup_reading(g, 6, 2, 100, 100)
    assert "delays" not in text and "depth 12 with 400 and depth 12 with 1,600" in text
    g = E.escape_warmup_grid(_map(escape_at_12=200.0), _axis([100.0, 200.0]), 100)
    text = E.escape_warmup_reading(g, 6, 2, 100, 25)
    assert "hastens the escape by more than one evaluation at depth 12 (step 100 at 400" in text
    g = E.escape_warmup_grid(_map(escape_at_12=100.0), _axis([75.0, 100.0]), 100)
    assert "within one evaluation" in E.escape_warmup_reading(g, 6, 2, 100, 25)
    g = E.escape_warmup_grid(_map(escape_at_12=100.0), _axis([100.0, 100.0]), 100)
    assert "No trained cell differs" in E.escape_warmup_reading(g, 6, 2, 100, 25)
    assert "Nothing to read yet" in E.escape_warmup_reading(g, 6, 0, 100, 25)


def test_the_axis_is_the_maps_budget_at_gentler_warmups():
    exps = plans.escape_warmup()
    assert {(e.model.n_layer, e.train.warmup_steps) for e in exps} == {
        (d, w) for d in plans.ESCAPE_WARMUP_DEPTHS for w in plans.ESCAPE_WARMUPS
    }
    assert all(
        e.train.max_steps == plans.ESCAPE_BUDGET["max_steps"] and e.config_name == "AttnOnly"
        for e in exps
    )
    assert min(plans.ESCAPE_WARMUPS) > plans.get_preset("cpu").train.warmup_steps


def test_a_missing_cell_of_the_map_is_never_read_as_an_escape_or_a_floor():
    m = _map()
    m = m[~((m.depth == 12) & (m.gain == 1) & m.scaled_init)]  # the map's depth-12 cell not trained
    g = E.escape_warmup_grid(m, _axis([np.nan, 300.0]), 100)
    text = E.escape_warmup_reading(g, 6, 2, 100, 25)
    assert "frees" not in text and "No trained cell differs" in text
    g = E.escape_warmup_grid(m.iloc[:0], _axis([np.nan, 300.0]), 100)  # none of the map's runs
    assert "The map's own column is not trained" in E.escape_warmup_reading(g, 6, 2, 100, 25)
