"""book/mechanism.ipynb's verdict lines and figures, on hand-made tables whose answer is known."""

import matplotlib
import numpy as np
import pandas as pd
import pytest

from lib.book import plots
from lib.claims import bundle, escape_map, mechanism
from lib.engine import plans, results

matplotlib.use("Agg")
FLOORS = {1: 3.35, 2: 2.48, 3: 2.05}
# the author's mixer thresholds (data/paper_results.csv, read by paper.mixer_rule)
RULE = (3.20, 1.75)


def runs(rows):
    return pd.DataFrame(rows, columns=["config", "mixer", "seed", "best_val_loss"])


def mixer(*args, **kwargs) -> tuple[str, str]:
    c = mechanism.claim_mixer(*args, **kwargs)
    return c.verdict, c.text


ATTENTION = [("AttnOnly", "attention", s, 1.95) for s in (1337, 42)] + [
    ("FFNOnly", "attention", 1337, 3.34)
]


def test_the_mixer_test_holds_when_the_mixer_stops_at_the_bigram_floor_and_ffnonly_leaves_the_floor():  # noqa: E501 (the test's name)
    v, text = mixer(
        runs(
            ATTENTION
            + [
                ("AttnOnly", "local", 1337, 2.49),
                ("AttnOnly", "local", 42, 2.50),
                ("FFNOnly", "local", 1337, 2.52),
            ]
        ),
        FLOORS,
        author_rule=RULE,
    )
    assert v == "HOLDS"
    assert (
        "AttnOnly with the local mixer: 2.490-2.500 (2 seeds); with attention: 1.950-1.950 (2 "
        "seeds)"
    ) in text
    assert "leaves the unigram floor and stops at the bigram floor" in text
    assert "attention takes it 0.530 below the bigram floor" in text
    assert (
        "Its lower threshold cannot be reached by any position-blind model on this data, as the "
        "bigram floor, 2.480, is above it: by that rule the test can confirm routing or be "
        "partial, never refute it."
    ) in text
    assert "By that rule this result is partial recovery." in text
    _, text = mixer(runs(ATTENTION + [("AttnOnly", "local", 1337, 2.49)]), FLOORS)
    assert "decision rule" not in text
    _, text = mixer(
        runs(ATTENTION + [("AttnOnly", "local", 1337, 2.49)]),
        FLOORS,
        paper_mixer=2.487,
        author_rule=RULE,
    )
    assert (
        "The paper's Phase-2 mixer value, 2.487 (10M, the same characters), is +0.007 from that "
        "floor."
    ) in text


def test_the_mixer_test_is_contradicted_when_ffnonly_with_the_mixer_stays_on_the_floor():
    v, text = mixer(
        runs(ATTENTION + [("AttnOnly", "local", 1337, 2.49), ("FFNOnly", "local", 1337, 3.34)]),
        FLOORS,
    )
    assert v == "CONTRADICTED" and "the prediction fails" in text


def test_the_mixer_test_waits_for_ffnonly_with_the_mixer_unless_part_one_already_fails():
    v, text = mixer(runs(ATTENTION + [("AttnOnly", "local", 1337, 2.49)]), FLOORS)
    assert v == "NOT TESTED" and "(ii) FFNOnly with the mixer: no run yet." in text
    assert "(i) alone cannot confirm the reading" in text


def test_the_mixer_test_is_contradicted_when_the_mixer_collapses_or_misses_the_bigram_floor():
    v, text = mixer(runs(ATTENTION + [("AttnOnly", "local", 1337, 3.33)]), FLOORS, author_rule=RULE)
    # the rule reads it the other way
    assert v == "CONTRADICTED" and "this result is consistent with routing" in text
    # a floor below the rule's lower threshold: a position-blind model could refute routing
    low = {1: 3.35, 2: 1.6}
    _, text = mixer(runs(ATTENTION + [("AttnOnly", "local", 1337, 1.6)]), low, author_rule=RULE)
    assert "this result is routing not supported." in text and "never refute" not in text
    v, _ = mixer(
        runs(ATTENTION + [("AttnOnly", "local", 1337, 2.8), ("FFNOnly", "local", 1337, 2.5)]),
        FLOORS,
    )
    # between the floors: not what a position-blind model that trains well reaches
    assert v == "CONTRADICTED"
    no_control = [r for r in ATTENTION if r[0] != "FFNOnly"] + [
        ("AttnOnly", "local", 1337, 2.49),
        ("FFNOnly", "local", 1337, 2.52),
    ]
    assert mixer(runs(no_control), FLOORS)[0] == "NOT TESTED"  # (ii) needs FFNOnly's control


def test_the_mixer_test_needs_an_attnonly_that_escapes_and_a_mixer_run():
    assert mixer(runs(ATTENTION), FLOORS)[0] == "NOT TESTED"
    stuck = [("AttnOnly", "attention", 1337, 3.34), ("AttnOnly", "local", 1337, 2.49)]
    v, text = mixer(runs(stuck), FLOORS)
    assert v == "NOT TESTABLE HERE" and "the test is not valid" in text
    # the precondition, as a fact
    assert mechanism.claim_mixer(runs(stuck), FLOORS).facts["escaped"] is False


def probe_rows(model, init1, trained_last, depth=2):
    rows = [
        dict(
            model=model,
            state=s,
            depth=d,
            position_cosine=0.1,
            token_accuracy=1.0,
            token_chance=0.15,
            effective_rank=100.0,
        )
        for s in ("init", "trained")
        for d in range(depth + 1)
    ]
    t = pd.DataFrame(rows)
    t.loc[(t.state == "init") & (t.depth == 1), "token_accuracy"] = init1
    t.loc[(t.state == "trained") & (t.depth == depth), "token_accuracy"] = trained_last
    return t


def test_the_probe_line_names_the_models_that_lost_the_token():
    table = pd.concat([probe_rows("AttnOnly", 0.99, 0.7), probe_rows("FFNOnly", 0.04, 0.01)])
    text = mechanism.probe_reading(table)
    assert text.splitlines()[0] == (
        "Lost the input token (read-back at most 0.05 above chance after the last "
        "block): FFNOnly. Kept it: AttnOnly."
    )
    # the effective rank is set beside the trained model's own embedding, not the initial one
    table.loc[
        (table.model == "AttnOnly") & (table.state == "trained") & (table.depth == 0),
        "effective_rank",
    ] = 42.0
    assert "effective rank 100.0 of 42.0 at its embedding." in mechanism.probe_reading(table)
    assert (
        "**FFNOnly**: after block 1 at initialisation the token is read back at 0.04 (chance 0.15)"
        in text
    )
    assert mechanism.probe_reading(table.iloc[0:0]).startswith("No probed model yet")


def grid(rows):
    return pd.DataFrame(rows, columns=["config", "depth", "gain", "escape_step", "best_val_loss"])


def test_the_escape_map_line_counts_and_reads_gain_1_across_depth():
    g = grid(
        [
            ("AttnOnly", 2, 1.0, 50, 2.0),
            ("AttnOnly", 12, 1.0, 175, 2.1),
            ("AttnOnly", 12, 4.0, None, 3.3),
            ("FFNOnly", 6, 1.0, None, 3.34),
        ]
    )
    text = escape_map.escape_map_reading(g, planned=30, interval=25)
    assert text.startswith("4 of 30 runs of the map trained.")
    assert "escape steps 50-175 (to within 25 steps); 1 of 3 did not leave the floor" in text
    # gain 4 (more than the 2.4 that undoes depth 12's smaller start) never
    # escaped: no support for the scale
    assert (
        "At gain 1 depth 12's projection starts 2.4× smaller than depth 2's; depth 12 leaves the "
        "floor at step 175, depth 2 leaves the floor at step 50: later, and gains up to 4, enough "
        "to undo the 2.4× smaller start, do not bring it earlier: the map does not support the "
        "scale as the cause of the delay."
    ) in text
    assert (
        "Does the escape depend on depth? Yes: at gain 1 the escape steps over depth differ by "
        "more than 25"
    ) in text
    assert "Does the escape depend on gain? Yes: at depth 12" in text  # 175 against never
    assert "FFNOnly (depth 6): 0 of 1 gains left the floor." in text
    assert (
        escape_map.escape_map_reading(grid([]), 30, 25)
        == "0 of 30 runs of the map trained. Nothing to read yet."
    )


def test_the_escape_map_answers_its_three_questions_only_beyond_the_resolution():
    # depth 2 and 12 one evaluation apart at gain 1: within the resolution, so no dependence is read
    g = grid(
        [
            ("AttnOnly", 2, 1.0, 50, 2.3),
            ("AttnOnly", 12, 1.0, 75, 2.2),
            ("AttnOnly", 2, 4.0, 50, 2.3),
        ]
    )
    text = escape_map.escape_map_reading(g, planned=30, interval=25)
    assert (
        "Does the escape depend on depth? Not measurably: at each gain with two or more depths "
        "trained (1 gain), the escape steps lie within 25 steps of each other."
    ) in text
    assert "Does the escape depend on gain? Not measurably" in text
    assert "AttnOnly: escape steps 50-75 (to within 25 steps); 0 of 3 did not" in text
    assert "Best loss at gain 1 by depth: 2: 2.300, 12: 2.200." in text
    assert "AttnOnly: escape step 50 (to within" in escape_map.escape_map_reading(
        g.iloc[[0, 2]], 30, 25
    )
    assert (
        "depth 12 leaves the floor at step 75, depth 2 leaves the floor at step 50: no, not in "
        "when it leaves the floor (within 25 steps)."
    ) in text
    # depth 12 later, and the larger gain brings it back: consistent with the scale as the cause
    g = grid(
        [
            ("AttnOnly", 2, 1.0, 50, 2.3),
            ("AttnOnly", 12, 1.0, 200, 2.2),
            ("AttnOnly", 12, 4.0, 75, 2.1),
            ("AttnOnly", 12, 2.0, 200, 2.1),
        ]
    )
    text = escape_map.escape_map_reading(g, planned=30, interval=25)
    assert (
        "depth 2 leaves the floor at step 50: later, and consistent with the FFN output's scale "
        "being the cause: a larger FFN output at depth 12 brings the escape to step 75 (gain 4)."
    ) in text
    # later, with only a gain too small to undo the smaller start: open, and said why
    text = escape_map.escape_map_reading(g[g.gain != 4.0], planned=30, interval=25)
    assert (
        "later; whether the scale is the cause is open until depth 12 is trained with a gain of "
        "at least 2.4, which undoes the smaller start (gains up to 2 do not bring it earlier)."
    ) in text
    # later, with no larger gain trained yet at that depth: open, said so
    g = grid([("AttnOnly", 2, 1.0, 50, 2.3), ("AttnOnly", 8, 1.0, None, 3.3)])
    text = escape_map.escape_map_reading(g, planned=30, interval=25)
    assert (
        "depth 8 stays on the floor for its whole budget, depth 2 leaves the floor at step 50: "
        "later; whether the scale is the cause is open until depth 8 is trained with a gain of at "
        "least 2.0, which undoes the smaller start."
    ) in text
    assert "Does the escape depend on depth? Yes: at gain 1" in text
    # the deeper model earlier: a plain no
    g = grid([("AttnOnly", 2, 1.0, 150, 2.3), ("AttnOnly", 8, 1.0, 50, 2.2)])
    assert "no, the deeper model leaves the floor earlier." in escape_map.escape_map_reading(
        g, 30, 25
    )


def test_the_escape_map_reads_nothing_into_runs_that_never_left_the_floor():
    g = grid(
        [
            ("AttnOnly", 2, 1.0, None, 3.3),
            ("AttnOnly", 12, 1.0, None, 3.3),
            ("AttnOnly", 12, 4.0, None, 3.3),
        ]
    )
    text = escape_map.escape_map_reading(g, planned=30, interval=25)
    assert "Does the escape depend" not in text  # no escape step to compare
    assert (
        "depth 12 stays on the floor for its whole budget, depth 2 stays on the floor for its "
        "whole budget: open, neither leaves the floor"
    ) in text
    # a run that escapes at the last evaluation is within one interval of one that never does
    g = grid([("AttnOnly", 2, 1.0, 400, 2.3), ("AttnOnly", 12, 1.0, None, 3.3)]).assign(budget=400)
    text = escape_map.escape_map_reading(g, planned=30, interval=25)
    assert "Does the escape depend on depth? Not measurably" in text
    assert "no, not in when it leaves the floor (within 25 steps)." in text
    text = escape_map.escape_map_reading(g.assign(escape_step=[375, None]), planned=30, interval=25)
    assert "Does the escape depend on depth? Yes" in text


def test_the_escape_map_reads_the_run_without_gpt2_scaling_against_its_scaled_twin():
    g = grid(
        [
            ("AttnOnly", 2, 1.0, 50, 2.3),
            ("AttnOnly", 12, 1.0, None, 3.34),
            ("AttnOnly", 12, 2.0, 50, 2.4),
            ("AttnOnly", 12, 1.0, 50, 2.5),
        ]
    ).assign(budget=400, scaled_init=[True, True, True, False])
    text = escape_map.escape_map_reading(g, planned=31, interval=25)
    # apart
    assert (
        "3 of 4 did not" not in text and "1 of 3 did not leave the floor within 400 steps." in text
    )
    assert (
        "Without the scaling (attention's and the FFN's output projections both at std 0.02, 4.9× "
        "larger), AttnOnly at depth 12, gain 1, leaves the floor at step 50 (best 2.500); with "
        "it, stays on the floor for its whole budget: at depth 12 the scaling is what keeps "
        "AttnOnly on the floor (one seed)."
    ) in text
    # the control counts among the map's runs
    assert text.startswith("4 of 31 runs of the map trained.")
    # the scaled twin leaves too, later: a delay, not a plateau
    delayed = g.assign(escape_step=[50, 200, 50, 50])
    assert "at depth 12 the scaling delays the escape (one seed)." in escape_map.escape_map_reading(
        delayed, 31, 25
    )
    # without the scaled_init column the control would merge into its twin's
    # cell: refused, naming the cell
    with pytest.raises(
        ValueError, match="more than one run per cell .*AttnOnly 12 1; mark a run without"
    ):
        escape_map.escape_map_reading(g.drop(columns="scaled_init"), 31, 25)
    # the map is binary when every escape is at one step and some never escape:
    # said, with the graded outcome
    assert (
        "Every run that left the floor did so by step 50, so at this resolution the map is binary "
        "(left by step 50, or not within 400 steps); the best loss is the graded outcome."
    ) in text
    both_stay = g.assign(escape_step=[50, None, 50, None])
    assert (
        "the scaling is not what keeps depth 12 on the floor, while a larger FFN output alone, "
        "attention's projection still scaled, brings the escape to step 50 (gain 2): at depth 12 "
        "this is consistent with the FFN output's scale relative to attention's, not the scaling "
        "of both, deciding whether AttnOnly leaves the floor (one seed, 400 steps)."
    ) in escape_map.escape_map_reading(both_stay, 31, 25)
    all_stay = g.assign(escape_step=[50, None, None, None])
    assert "the scaling is not what keeps depth 12 on the floor." in escape_map.escape_map_reading(
        all_stay, 31, 25
    )
    same = g.assign(escape_step=[50, 50, 50, 75])
    text = escape_map.escape_map_reading(same, 31, 25)
    assert "the scaling does not move the escape at depth 12 (within 25 steps)." in text
    assert "binary" not in text  # every run left the floor: nothing binary to say
    late = g.assign(escape_step=[50, 50, 50, 200])
    assert "removing the scaling delays the escape" in escape_map.escape_map_reading(late, 31, 25)
    alone = g.iloc[[0, 3]]
    assert "its scaled twin is not trained yet." in escape_map.escape_map_reading(alone, 31, 25)


def bundle_table(rows):
    return pd.DataFrame(rows, columns=["factor", "status", "escape_step", "best_val_loss"])


def test_the_bundle_line_names_the_factors_that_halve_or_double_the_escape():
    t = bundle_table(
        [
            ("none", "complete", 800, 2.6),
            ("AdamW beta2", "complete", 300, 2.0),
            ("gradient clipping", "complete", 700, 2.5),
            ("GPT-2 init", "complete", None, 3.3),
            ("SDPA kernel", "not trained", None, None),
        ]
    )
    c = bundle.claim_bundle(t, interval=100)
    assert c.verdict == "HOLDS" and (c.facts["trained"], c.facts["planned"]) == (3, 4)
    assert (c.facts["earlier"], c.facts["later"], c.facts["neither"]) == (
        ["AdamW beta2"],
        ["GPT-2 init"],
        ["gradient clipping"],
    )
    assert c.why.startswith(
        "alone, AdamW beta2 at least halve the escape step and GPT-2 init at least double it"
    )
    never = bundle_table([("none", "complete", None, 3.3), ("AdamW beta2", "complete", 300, 2.0)])
    assert bundle.claim_bundle(never, 100).facts["earlier"] == ["AdamW beta2"]
    assert bundle.claim_bundle(t[t.factor != "none"], 100).verdict == "NOT TESTED"


@pytest.mark.parametrize("empty", [True, False])
def test_the_mechanism_figures_draw_with_and_without_runs(empty):
    ladder = pd.DataFrame(
        {"order": [1, 2, 3], "floor": ["unigram", "bigram", "trigram"], "nats": [3.35, 2.48, 2.05]}
    )
    probes = pd.concat(
        [probe_rows("AttnOnly", 0.99, 0.7), probe_rows("FFNOnly + local mixer", 0.9, 0.6)]
    )
    hist = pd.DataFrame(
        {
            "step": [0, 100],
            "val_loss": [4.0, 2.5],
            "seed": 1337,
            "model": "AttnOnly + local mixer",
            "mixer": "local",
            "config": "AttnOnly",
        }
    )
    g = grid(
        [
            ("AttnOnly", 2, 1.0, 50, 2.0),
            ("FFNOnly", 6, 4.0, None, 3.34),
            ("AttnOnly", 12, 1.0, None, 3.3),
        ]
    )
    # the last: the control without GPT-2's scaling, a row of its own
    g["scaled_init"] = [True, True, False]
    b = bundle_table([("none", "complete", 800, 2.6), ("AdamW beta2", "not trained", None, None)])
    if empty:
        probes, hist, g = probes.iloc[0:0], hist.iloc[0:0], g.iloc[0:0]
    plots.probe_figure(probes, "t")
    plots.mixer_curves(hist, ladder, "t")
    fig = plots.escape_heatmap(g, plans.ESCAPE_DEPTHS, plans.ESCAPE_GAINS, "t")
    ticks = [t.get_text() for t in fig.axes[0].get_yticklabels()]
    # the control: a row of its own
    assert ticks[-1] == ("FFNOnly L=6" if empty else "AttnOnly L=12, no 1/√(2L)")
    plots.bundle_bars(b, 1500, "t")


def _fake(exp, runs_dir, best, escape):
    from conftest import write_fake_run

    return write_fake_run(exp, runs_dir, best, escape)


def test_the_chapter_loads_each_plan_by_its_own_columns_and_lists_the_rest(tmp_path):
    from lib.engine.config import replace

    mixer = plans.mixer_test()
    _fake(mixer[0], tmp_path, 2.49, 100)
    _fake(replace(mixer[0], mixer="attention"), tmp_path, 1.95, 100)
    m = mechanism.mixer_runs(tmp_path)
    assert m.planned == len(mixer) == 9 and len(m.missing) == 8
    assert set(zip(m.table.model, m.table.best_val_loss)) == {
        ("AttnOnly + local mixer", 2.49),
        ("AttnOnly", 1.95),
    }
    assert set(m.histories.mixer) == {"local", "attention"}
    deep = next(e for e in plans.escape_map() if e.model.n_layer == 12 and e.gain == 4.0)
    _fake(deep, tmp_path, 3.3, None)
    e = escape_map.escape_runs(tmp_path)
    assert list(zip(e.table.depth, e.table.gain)) == [(12, 4.0)] and len(e.missing) == e.planned - 1
    factors = plans.bundle_factors()
    _fake(factors["AdamW beta2"], tmp_path, 2.0, 300)
    b = bundle.bundle_runs(tmp_path).table.set_index("factor")
    assert list(b.index) == list(factors) and b.loc["AdamW beta2", "escape_step"] == 300
    assert b.loc["none", "status"] == "not trained"


def test_probes_over_training_read_the_last_block_and_say_since_when_the_token_is_lost():
    hist = pd.DataFrame(
        {
            "config": ["FFNOnly"] * 3 + ["AttnOnly"] * 3,
            "seed": 1337,
            "step": [0, 25, 50] * 2,
            "probe_cosine": [[0.1, 0.8]] * 3 + [[0.1, 0.2]] * 3,
            "probe_token": [[1, 0.3], [1, 0.1], [1, 0.05]] + [[1, 0.9], [1, 0.1], [1, 0.8]],
            "probe_chance": 0.15,
            "probe_rank": [[100, 2.0]] * 6,
        }
    )
    t = mechanism.probes_over_training(hist)
    assert list(t.token_accuracy) == [0.3, 0.1, 0.05, 0.9, 0.1, 0.8] and set(t.position_cosine) == {
        0.8,
        0.2,
    }
    text = mechanism.probes_over_training_reading(t)
    assert (
        "**FFNOnly**, after the last block: token read back 0.30 at step 0, 0.05 at step 50" in text
    )
    assert "at chance from step 25 on." in text and "not at chance for good." in text
    assert mechanism.probes_over_training(hist.drop(columns=["probe_token"])).empty
    plots.probes_over_training_figure(t, "t")
    plots.probes_over_training_figure(t.iloc[0:0], "t")


def test_the_cost_table_reads_wall_times_from_the_runs_and_estimates_the_rest():
    t = pd.DataFrame(
        {
            "wall_s": [60.0, 120.0, 600.0, 30.0],
            "budget": [400, 400, 400, 3000],
            "steps": [400, 400, 400, 100],
            "tokens_per_s": [900.0, 1100.0, 50.0, 2000.0],
            "status": ["complete", "complete", "diverged", "partial"],
        }
    )
    c = results.cost_table(
        {"escape map": (t.iloc[:3], 30), "prefix": (t.iloc[3:], 1), "empty": (t.iloc[0:0], 4)}
    ).set_index("part")
    row = c.loc["escape map"]
    # the diverged run is no cost
    assert (row.trained, row.planned, row["steps per run"]) == (2, 30, "400")
    assert (
        row["fastest minutes"] == 1.0
        and row["median minutes"] == 1.5
        and row["median tokens/s"] == 1000
    )
    assert row["hours trained"] == 3.0 / 60
    assert row["hours left (estimate)"] == 28 * 1.5 / 60
    # a prefix is trained as far as it was meant to: its own steps, not its schedule's
    assert (c.loc["prefix", "trained"], c.loc["prefix", "steps per run"]) == (1, "100")
    assert c.loc["empty", "trained"] == 0 and pd.isna(c.loc["empty", "hours left (estimate)"])


def test_the_train_loss_gap_compares_the_evaluations_both_runs_reached():
    h = pd.DataFrame(
        {
            "factor": ["none"] * 3 + ["fixed validation"] * 2,
            "step": [0, 100, 200, 0, 100],
            "train_loss": [4.0, 3.5, 3.0, 4.0, 3.25],
            "val_loss": [4.0, 3.5, 3.0, 4.0, 3.25],
        }
    )
    assert bundle.train_loss_gap(h, "fixed validation") == (0.25, 2)
    gap, n = bundle.train_loss_gap(h, "tied embedding")
    assert n == 0 and pd.isna(gap)


def test_the_bundle_reads_each_factor_against_what_rounding_and_the_seed_do_without_it():
    rows = [
        ("none", "complete", 800, 2.6),
        ("warm-up + cosine", "complete", 100, 1.9),
        ("weight decay", "complete", None, 3.34),
        ("AdamW beta2", "complete", 400, 2.3),
    ]
    # without a control: a factor that prevents the escape decides
    assert bundle.claim_bundle(bundle_table(rows), 100).facts["later"] == ["weight decay"]
    # the rounding control never escapes: a never-escaping factor is within what rounding alone does
    t = bundle_table(rows + [("SDPA kernel", "complete", None, 3.34)])
    fx = bundle.bundle_effects(t, 100, control="SDPA kernel")
    assert (
        fx["later"] == [] and "weight decay" in fx["neither"] and "SDPA kernel" not in fx["neither"]
    )
    assert fx["earlier"] == ["warm-up + cosine"] and pd.isna(fx["hi"]) and fx["lo"] == 800
    # the control counts as trained, nanoGPT itself does not
    assert (fx["trained"], fx["planned"]) == (4, 4)
    alone = bundle_table(rows[:1] + [("SDPA kernel", "complete", None, 3.34)])
    assert bundle.bundle_effects(alone, 100)["trained"] == 1
    c = bundle.claim_bundle(t, 100, control="SDPA kernel")
    assert (
        c.verdict == "HOLDS"
        and c.facts["earlier"] == ["warm-up + cosine"]
        and c.facts["later"] == []
    )
    assert (
        "Without any factor: nanoGPT's own run with only the rounding changed (SDPA kernel) stays "
        "on the floor for its whole budget. So one seed of this setting escapes anywhere from "
        "step 800 to never with no factor switched."
    ) in c.lines
    # another seed escaping at step 200 leaves no room for a halving at 100-step evaluations, nor (a
    # run without any factor never escaping) for a doubling: nothing can be named either way
    c = bundle.claim_bundle(t, 100, control="SDPA kernel", seeds={42: 200})
    assert c.verdict == "NOT TESTABLE HERE" and c.facts["lo"] == 200 and pd.isna(c.facts["hi"])
    assert c.why.startswith(
        "no factor can be named: without any factor one seed escapes anywhere from step 200 "
        "to never"
    )
    # the twin is named before the other seeds, so it cannot be read as theirs
    assert any(
        ln.startswith(
            "Without any factor: nanoGPT's own run with only the rounding changed (SDPA kernel) "
            "stays on the floor for its whole budget; nanoGPT at seed 42 "
        )
        for ln in c.lines
    )
    assert (
        "Lowest best loss: warm-up + cosine 1.900 (nanoGPT 2.600; one seed, its spread not "
        "measured)."
    ) in c.lines
    # the factors' own escape steps, counted (the control and nanoGPT itself apart)
    assert (
        "Alone, the 3 factors that change the training escape at step 100 (1), step 400 (1), "
        "never (1)."
    ) in c.lines
    best_is_none = t.assign(best_val_loss=[1.5, 1.9, 3.34, 2.3, 3.34])
    assert (
        "Lowest best loss" not in bundle.claim_bundle(best_is_none, 100, control="SDPA kernel").text
    )
    # another seed escaping at 300 moves the earliest step: halving must now beat 300
    fx = bundle.bundle_effects(t, 100, control="SDPA kernel", seeds={42: 300})
    assert fx["lo"] == 300 and fx["earlier"] == []
    fx = bundle.bundle_effects(bundle_table(rows), 100, seeds={42: 700})
    assert (fx["lo"], fx["hi"]) == (700, 800) and fx["later"] == ["weight decay"]
    c = bundle.claim_bundle(bundle_table(rows), 100, seeds={42: 700})
    assert "nanoGPT at seed 42 leaves the floor at step 700" in c.text and c.verdict == "HOLDS"
    # room to decide, and no factor outside the range: the claim that one
    # factor decides is contradicted
    within = bundle_table([("none", "complete", 800, 2.6), ("AdamW beta2", "complete", 700, 2.3)])
    assert bundle.claim_bundle(within, 100, seeds={42: 600}).verdict == "CONTRADICTED"


def test_the_twin_figure_draws_the_gap_between_nanogpt_and_one_factor():
    from lib.book import plots

    h = pd.DataFrame(
        {
            "factor": ["none"] * 3 + ["SDPA kernel"] * 3,
            "step": [0, 100, 200] * 2,
            "train_loss": [4.0, 3.5, 3.0, 4.0, 3.5, 3.3],
            "val_loss": [4.0, 3.4, 3.0, 4.0, 3.4, 3.35],
        }
    )
    t = bundle.twin_gap(h, "SDPA kernel")
    assert list(t.gap.round(6)) == [0.0, 0.0, 0.3] and list(t.val_factor) == [4.0, 3.4, 3.35]
    plots.twin_figure(t, "SDPA kernel", "test")
    plots.twin_figure(bundle.twin_gap(h.iloc[0:0], "SDPA kernel"), "SDPA kernel", "empty")


def test_a_paired_factor_is_read_against_nanogpts_own_step_alone():
    t = bundle_table(
        [
            ("none", "complete", 800, 2.6),
            ("fixed validation", "complete", 300, 2.4),
            ("SDPA kernel", "complete", None, 3.34),
        ]
    )
    fx = bundle.bundle_effects(t, 100, "SDPA kernel", {42: 200}, paired=("fixed validation",))
    # 300 halves 800; the seed-42 step 200 does not enter
    assert fx["earlier"] == ["fixed validation"]
    assert bundle.bundle_effects(t, 100, "SDPA kernel", {42: 200})["earlier"] == []
    c = bundle.claim_bundle(t, 100, "SDPA kernel", {42: 200}, paired=("fixed validation",))
    assert c.verdict == "HOLDS" and c.facts["earlier"] == ["fixed validation"]
    assert (
        "fixed validation read against nanoGPT's own step, as it changes only the measurement"
        in c.why
    )


def test_the_escape_map_asks_whether_the_initial_scale_alone_separates_the_runs():
    # depth 6: gain 0.5 (std 0.02*0.5/sqrt(12) = 0.0029) stays, gain 1 (0.0058) leaves;
    # depth 2 gain 0.5 (0.005) leaves
    g = grid(
        [
            ("AttnOnly", 6, 0.5, None, 3.3),
            ("AttnOnly", 6, 1.0, 50, 2.3),
            ("AttnOnly", 2, 0.5, 50, 2.3),
        ]
    )
    text = escape_map.escape_map_reading(g, planned=30, interval=25)
    assert (
        "the runs that left the floor started at 0.0050 or more, those that never did at 0.0029 "
        "or less, so across depths 2, 6 that scale alone separates them, at a threshold between "
        "the two."
    ) in text
    # a larger scale that stayed
    g = grid([("AttnOnly", 6, 0.5, 50, 2.3), ("AttnOnly", 2, 1.0, None, 3.3)])
    assert (
        "the scale alone does not separate them, as some runs stayed on the floor from a larger "
        "start than others that left it; something beyond the FFN output's initial scale matters"
    ) in escape_map.escape_map_reading(g, planned=30, interval=25)
    assert "Is it the initial scale" not in escape_map.escape_map_reading(
        g.iloc[[0]], planned=30, interval=25
    )


def test_an_escape_step_reads_the_same_whether_never_is_nan_or_inf():
    assert (
        escape_map.escape_label(300.0) == "step 300"
        and escape_map._when(300.0) == "leaves the floor at step 300"
    )
    for never in (np.nan, np.inf, None):
        assert escape_map.escape_label(never) == "never"
        assert escape_map._when(never) == "stays on the floor for its whole budget"


def test_the_ladder_places_each_model_at_a_floor_or_between_two():
    floors, names = (
        {1: 3.34, 2: 2.48, 3: 2.05, 4: 1.87},
        {1: "unigram", 2: "bigram", 3: "trigram", 4: "4-gram"},
    )
    assert mechanism.ladder_position(2.482, floors, names) == "at the bigram floor (+0.002)"
    # 0.09 below
    assert mechanism.ladder_position(1.96, floors, names) == "between the trigram and 4-gram floors"
    assert (
        mechanism.ladder_position(1.72, floors, names)
        == "below the 4-gram floor, the lowest computed"
    )
    assert mechanism.ladder_position(3.6, floors, names) == "above the unigram floor"
    ends = pd.DataFrame(
        {
            "model": ["AttnOnly", "AttnOnly", "FFNOnly", "FFNOnly"],
            "best_val_loss": [1.95, 1.97, 3.34, 9.0],
            "status": ["complete", "complete", "complete", "diverged"],
        }
    )
    text = mechanism.ladder_reading(ends, floors, names)
    assert (
        "AttnOnly: 1.950-1.970 (2 seeds), between the trigram and 4-gram floors; FFNOnly: 3.340, "
        "at the unigram floor (+0.000)."
    ) in text  # the diverged seed is no result
    assert mechanism.ladder_reading(ends.iloc[0:0], floors, names) == "No run finished yet."
    ladder = pd.DataFrame(
        {
            "order": [1, 2],
            "floor": ["unigram", "bigram"],
            "nats": [3.35, 2.48],
            "on_fixed_batches": [3.34, None],
        }
    )
    fig = plots.ladder_figure(ends, ladder, "t")
    # AttnOnly and FFNOnly; the diverged seed 9.0 is not drawn
    assert len(fig.axes[0].collections) == 2
    assert max(fig.axes[0].collections[1].get_offsets()[:, 1]) == 3.34
    labels = fig.axes[0].get_legend_handles_labels()[1]
    # like for like where computed
    assert labels == ["unigram floor 3.340 (fixed batches)", "bigram floor 2.480"]
    plots.ladder_figure(ends.iloc[0:0], ladder, "t")


def test_the_boundary_cells_at_the_full_budget_tell_a_slow_escape_from_a_plateau():
    rows = pd.DataFrame(
        {
            "config": "AttnOnly",
            "depth": [6, 12],
            "gain": [0.5, 1.0],
            "escape_step": [None, None],
            "best_val_loss": [3.338, 3.337],
            "status": "complete",
            "budget": 1500,
        }
    )
    text = escape_map.escape_long_reading(rows, 2, 400)
    assert text == (
        "At 1,500 steps, one seed: depth 6 gain 0.5 stays on the floor for its whole budget (best "
        "3.338): its 400-step 'never' is a plateau for the whole budget, not a slow start; depth "
        "12 gain 1 stays on the floor for its whole budget (best 3.337): its 400-step 'never' is "
        "a plateau for the whole budget, not a slow start."
    )
    mixed = rows.assign(escape_step=[900, 300], best_val_loss=[2.3, 2.4])
    text = escape_map.escape_long_reading(mixed, 2, 400)
    assert (
        "depth 6 gain 0.5 leaves the floor at step 900 (best 2.300): its 400-step 'never' is a "
        "slow escape;"
    ) in text
    assert (
        "depth 12 gain 1 leaves the floor at step 300 (best 2.400): its 400-step 'never' is not a "
        "plateau: the long run leaves the floor within 400 steps, so the short run's schedule, "
        "not the start, held it there."
    ) in text
    assert escape_map.escape_long_reading(rows.iloc[[0]], 2, 400).startswith(
        "1 of 2 boundary cells trained. "
    )
    assert escape_map.escape_long_reading(rows.iloc[0:0], 2, 400) == (
        "The boundary cells at the full budget: not trained yet (2 planned)."
    )
    lost = rows.assign(status=["diverged", "complete"])
    text = escape_map.escape_long_reading(lost, 2, 400)
    assert (
        text.endswith("Diverged (no outcome): depth 6 gain 0.5.")
        and "depth 6 gain 0.5 stays" not in text
    )
    # the plan: each cell at the preset's budget and the map's cadence, gain
    # 1 the plain run at that depth
    exps = plans.escape_long_budget()
    assert [(e.model.n_layer, e.gain if e.gain_mode else 1.0) for e in exps] == list(
        plans.ESCAPE_LONG_CELLS
    )
    assert all(e.train.max_steps == 1500 and e.train.eval_interval == 25 for e in exps)
    assert not any(plans.keeps_weights(e) for e in exps)  # only the plain depth-6 runs keep weights


def test_a_bundle_bar_is_a_measured_escape_step_and_never_is_said_in_words():
    # "Never" drawn as a bar to the budget read as a measured length; a diverged factor stopped
    # early, so neither a bar nor "never" (it never had the chance).
    b = bundle_table(
        [
            ("none", "complete", None, 3.3),
            ("gradient clipping", "diverged", None, None),
            ("no biases", "complete", 400, 2.5),
            ("AdamW beta2", "not trained", None, None),
        ]
    )
    fig = plots.bundle_bars(b, 1500, "t")
    widths = [bar.get_width() for bar in fig.axes[0].patches]
    assert widths[2] == 400
    # no bar: NaN (or nothing drawn)
    assert all(w != w or w == 0 for w in (widths[0], widths[1], widths[3]))
    said = [(t.get_text(), t.get_position()[1]) for t in fig.axes[0].texts]
    # the complete run's row, and only it
    assert said == [("never left the floor in 1,500 steps", 0)]
    labels = [t.get_text() for t in fig.axes[0].get_yticklabels()]
    assert labels == [
        "none",
        "gradient clipping (diverged)",
        "no biases",
        "AdamW beta2 (not trained)",
    ]
