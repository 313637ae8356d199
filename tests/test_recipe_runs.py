"""Issue 23's stand-in questions on hand-made run tables: the headline results under the author's
values, and the rule that names a deciding factor (every seed's escape on one side of the baseline's
range over the same seeds, by more than one evaluation interval)."""

import math

import pandas as pd
import pytest

from lib.claims import asymmetry
from lib.claims import schedule_seeds as sched
from lib.engine import plans

FLOOR = 3.347
NAN = math.nan


def runs(rows):
    return pd.DataFrame(rows, columns=["values", "impl", "config", "seed", "best_val_loss"])


def test_the_headline_results_are_read_for_each_set_of_values():
    rows = [("stand-in", "residualgpt", "AttnOnly", s, 1.95) for s in (1, 2)]
    rows += [("stand-in", "residualgpt", "FFNOnly", s, 3.34) for s in (1, 2)]
    rows += [
        ("stand-in", "residualgpt", "FullResidual", 1, 1.7),
        ("stand-in", "nanogpt", "AttnOnly", 1, 2.6),
    ]
    rows += [
        ("author's", "residualgpt", "AttnOnly", 1, 3.34),
        ("author's", "residualgpt", "AttnOnly", 2, 2.1),
        ("author's", "residualgpt", "FFNOnly", 1, 3.34),
        ("author's", "residualgpt", "FullResidual", 1, 1.9),
        ("author's", "nanogpt", "AttnOnly", 1, 3.34),
        ("author's", "nanogpt", "AttnOnly", 2, 3.34),
    ]
    asym = asymmetry.claim_author_values_asymmetry(runs(rows), FLOOR, planned=2)
    assert asym.verdict == "CONTRADICTED" and (
        asym.facts["attn_left"],
        asym.facts["attn_seeds"],
    ) == (1, 2)
    # stand-in
    assert (
        "ResidualGPT AttnOnly leaves the floor in 2 of 2 seeds, FFNOnly in 0 of 2" in asym.lines[0]
    )
    collapse = asymmetry.claim_author_values_collapse(runs(rows), FLOOR)
    # every seed on the floor, but no nanoGPT Full Residual with that
    # dropout: the control is missing
    assert collapse.verdict == "NOT TESTABLE HERE" and collapse.facts == {"left": 0, "seeds": 2}
    left = runs(rows[:-1] + [("author's", "nanogpt", "AttnOnly", 2, 2.4)])
    assert asymmetry.claim_author_values_collapse(left, FLOOR).verdict == "CONTRADICTED"
    holds = runs(
        rows[:6]
        + [
            ("author's", "residualgpt", c, s, v)
            for c, s, v in [
                ("AttnOnly", 1, 2.0),
                ("AttnOnly", 2, 2.1),
                ("FFNOnly", 1, 3.34),
                ("FullResidual", 1, 1.9),
            ]
        ]
    )
    assert asymmetry.claim_author_values_asymmetry(holds, FLOOR, planned=1).verdict == "HOLDS"
    # agreement in part of the plan's seeds is not yet a finding; a seed against it is one already
    partial = asymmetry.claim_author_values_asymmetry(holds, FLOOR, planned=3)
    assert (
        partial.verdict == "NOT TESTED" and "FFNOnly 1, Full Residual 1 of 3 seeds" in partial.why
    )
    assert (
        asymmetry.claim_author_values_asymmetry(runs(rows), FLOOR, planned=3).verdict
        == "CONTRADICTED"
    )
    only_ours = runs(rows[:6])
    assert asymmetry.claim_author_values_asymmetry(only_ours, FLOOR).verdict == "NOT TESTED"
    assert asymmetry.claim_author_values_collapse(only_ours, FLOOR).verdict == "NOT TESTED"


def effects_table(rows):
    return pd.DataFrame(rows, columns=["impl", "factor", "seed", "escape_step", "best_val_loss"])


def effects(rows, **kw):
    """schedule_effects on hand-made rows, each factor planned over exactly the seeds it has, none
    chosen by a seed (unless ``chosen`` says so)."""
    planned = {}
    for impl, factor, seed, *_ in rows:
        planned.setdefault((impl, factor), set()).add(seed)
    return sched.schedule_effects(effects_table(rows), planned=planned, **{"chosen": {}, **kw})


def test_a_factor_decides_only_outside_its_baselines_range_over_the_same_seeds():
    base = [("nanogpt", "none", s, e, 2.5) for s, e in ((1, 200), (2, 800), (3, NAN))]
    early = [("nanogpt", "warm-up + cosine", s, 50, 1.9) for s in (1, 2, 3)]
    overlap = [("nanogpt", "no biases", s, e, 2.2) for s, e in ((1, 50), (2, 300), (3, 50))]
    fx = effects(base + early + overlap).set_index("factor")
    assert (
        fx.loc["warm-up + cosine", "decides"] is True and fx.loc["warm-up + cosine", "escaped"] == 3
    )
    assert fx.loc["no biases", "decides"] is False  # step 300 lies inside 200..never
    assert fx.loc["none", "baseline range"] == "step 200 to never"
    c = sched.claim_schedule_factors(effects(base + early + overlap))
    assert c.verdict == "HOLDS" and c.facts["named"] == ["warm-up + cosine (nanogpt)"]
    assert "not judged yet" not in c.why  # every factor judged
    # a factor named over all its seeds stays named; one whose seeds are
    # not all in is said to be pending
    plan = {("nanogpt", f): {1, 2, 3} for f in ("none", "warm-up + cosine", "no biases")}
    c = sched.claim_schedule_factors(
        sched.schedule_effects(effects_table(base + early + overlap[:1]), planned=plan)
    )
    assert c.verdict == "HOLDS" and "not judged yet: no biases (nanoGPT, 1 of 3 seeds)" in c.why
    c = sched.claim_schedule_factors(effects(base + overlap))
    # overlapping the baseline over the same seeds
    assert c.verdict == "CONTRADICTED" and c.facts["named"] == []
    # never where the baseline always escapes is outside its range too; a missing
    # baseline seed decides nothing
    stuck = [("nanogpt", "gradient clipping", s, NAN, 3.34) for s in (1, 2)]
    fx = effects(base[:2] + stuck).set_index("factor")
    assert fx.loc["gradient clipping", "decides"] is True
    fx = effects(base[:1] + stuck).set_index("factor")
    assert pd.isna(fx.loc["gradient clipping", "decides"])
    assert sched.claim_schedule_factors(effects(base)).verdict == "NOT TESTED"
    # a baseline that escapes at the first evaluation in one seed and never in
    # another leaves no room at all
    edge = [("nanogpt", "none", 1, 25, 2.5), ("nanogpt", "none", 2, NAN, 3.34)]
    some = [("nanogpt", "no biases", 1, 50, 2.2), ("nanogpt", "no biases", 2, NAN, 3.34)]
    c = sched.claim_schedule_factors(effects(edge + some, first_eval=25))
    assert c.verdict == "NOT TESTABLE HERE" and c.facts["named"] == []


def test_a_factor_decides_only_in_one_direction_and_beyond_one_evaluation_interval():
    base = [("residualgpt", "none", s, 50, 1.95) for s in (1, 2, 3)]
    # one evaluation later than a baseline that escapes at step 50 in
    # every seed: within the resolution
    near = [("residualgpt", "constant lr", s, 75, 2.0) for s in (1, 2, 3)]
    assert (
        effects(base + near, first_eval=25).set_index("factor").loc["constant lr", "decides"]
        is False
    )
    # but later in every seed: on the edge, where the escape steps' resolution,
    # not the runs, decides the naming
    c = sched.claim_schedule_factors(effects(base + near, first_eval=25))
    assert (
        c.verdict == "NOT TESTABLE HERE"
        and "on the edge: constant lr (ResidualGPT, later in every seed" in c.why
    )
    # one seed inside the baseline's range: no order, so no edge, and "none decides" is a finding
    mixed = near[:2] + [("residualgpt", "constant lr", 3, 50, 2.0)]
    assert effects(base + mixed, first_eval=25).set_index("factor").loc["constant lr", "edge"] == ""
    assert (
        sched.claim_schedule_factors(effects(base + mixed, first_eval=25)).verdict == "CONTRADICTED"
    )
    far = [("residualgpt", "constant lr", s, e, 2.0) for s, e in ((1, 100), (2, NAN), (3, 400))]
    fx = effects(base + far, first_eval=25).set_index("factor")
    assert (
        fx.loc["constant lr", "decides"] is True and fx.loc["constant lr", "direction"] == "later"
    )
    # three seeds a side: 10% with no effect
    assert fx.loc["constant lr", "chance"] == pytest.approx(2 / 20)
    # some seeds earlier, others later: outside the range in every seed, but no one effect
    wide = [("nanogpt", "none", s, e, 2.5) for s, e in ((1, 200), (2, 300), (3, 400))]
    split = [("nanogpt", "no biases", s, e, 2.2) for s, e in ((1, 50), (2, NAN), (3, 50))]
    c = sched.claim_schedule_factors(effects(wide + split, first_eval=25))
    assert c.verdict == "CONTRADICTED" and c.facts["named"] == []
    assert c.lines[0].endswith("not named: 2 of 3 clearly earlier, 1 clearly later.")
    inside = [("nanogpt", "no biases", s, e, 2.2) for s, e in ((1, 50), (2, 250), (3, 50))]
    assert (
        sched.claim_schedule_factors(effects(wide + inside, first_eval=25))
        .lines[0]
        .endswith(
            "2 of 3 clearly earlier, 0 clearly later, 1 inside it or within an interval of it."
        )
    )
    early = [("nanogpt", "warm-up + cosine", s, 75, 1.9) for s in (1, 2, 3)]
    c = sched.claim_schedule_factors(effects(wide + early + split, first_eval=25))
    assert c.facts["directions"] == {"warm-up + cosine (nanogpt)": "earlier"}
    assert (
        "earlier in every seed by more than one evaluation interval (with no effect, chance 10.0%)"
        in c.lines[0]
    )
    five = [("nanogpt", "none", s, 200, 2.5) for s in range(5)] + [
        ("nanogpt", "x", s, 50, 2) for s in range(5)
    ]
    assert effects(five, first_eval=25).chance.dropna().tolist() == [pytest.approx(2 / 252)]  # 0.8%


def overlap3():
    return [("nanogpt", "no biases", s, e, 2.2) for s, e in ((1, 50), (2, 300), (3, 50))]


def test_never_is_the_first_evaluation_past_the_budget_and_the_chance_is_said_over_all_factors():
    # a baseline that escaped at the last evaluation: a run that never escapes is
    # not an interval later than it
    last = [("nanogpt", "none", s, e, 2.5) for s, e in ((1, 1500), (2, 1450), (3, 1400))]
    stuck = [("nanogpt", "gradient clipping", s, NAN, 3.34) for s in (1, 2, 3)]
    fx = effects(last + stuck, first_eval=25, budget=1500).set_index("factor")
    assert fx.loc["gradient clipping", "decides"] is False
    assert fx.loc["none", "baseline range"] == "step 1400 to step 1500"  # escape_label's words
    earlier = [("nanogpt", "none", s, e, 2.5) for s, e in ((1, 1450), (2, 1400), (3, 1300))]
    assert (
        effects(earlier + stuck, first_eval=25, budget=1500)
        .set_index("factor")
        .loc["gradient clipping", "direction"]
        == "later"
    )
    # a baseline that never escapes: a factor escaping at the last
    # evaluation is not an interval earlier
    never = [("nanogpt", "none", s, NAN, 3.34) for s in (1, 2, 3)]
    late = [("nanogpt", "no biases", s, 1500, 3.2) for s in (1, 2, 3)]
    fx = effects(never + late, first_eval=25, budget=1500).set_index("factor")
    assert (
        fx.loc["no biases", "decides"] is False
        and fx.loc["none", "baseline range"] == "never, at any seed"
    )
    # two factors judged: the reason gives the chance that one is named with no
    # effect anywhere, 1 - 0.9 ** 2
    base = [("nanogpt", "none", s, e, 2.5) for s, e in ((1, 200), (2, 800), (3, NAN))]
    early = [("nanogpt", "warm-up + cosine", s, 50, 1.9) for s in (1, 2, 3)]
    assert (
        "chance that at least one of the 2 judged factors is named is 19%"
        in sched.claim_schedule_factors(effects(base + early + overlap3())).why
    )
    # seeds outside the plan are said to be so, not counted as "3 of 0"
    c = sched.claim_schedule_factors(
        sched.schedule_effects(effects_table(base + early), planned={})
    )
    assert "warm-up + cosine (nanoGPT, not in the plan)" in c.why


def test_a_diverged_seed_leaves_its_factor_unjudged_and_says_so():
    base = [("nanogpt", "none", s, e, 2.5) for s, e in ((1, 200), (2, 800), (3, NAN))]
    early = [("nanogpt", "warm-up + cosine", s, 50, v) for s, v in ((1, 1.9), (2, NAN), (3, 1.9))]
    fx = effects(base + early).set_index("factor")
    assert pd.isna(fx.loc["warm-up + cosine", "decides"]) and fx.loc[
        "warm-up + cosine", "no outcome"
    ] == [2]
    c = sched.claim_schedule_factors(effects(base + early))
    assert c.verdict == "NOT TESTED" and "seed 2 diverged" in c.why
    # a diverged baseline seed is said as the baseline's, and leaves the factor unjudged for good
    lost_base = [("nanogpt", "none", 2, NAN, NAN)] + base[:1] + base[2:]
    c = sched.claim_schedule_factors(
        effects(
            lost_base
            + [("nanogpt", "warm-up + cosine", s, 50, 1.9) for s in (1, 2, 3)]
            + overlap3()
        )
    )
    assert (
        c.verdict == "NOT TESTED"
        and "warm-up + cosine (nanoGPT, its baseline's seed 2 diverged" in c.why
    )
    # the status says so too, even where a best loss was recorded before the run diverged
    t = effects_table(base + [("nanogpt", "warm-up + cosine", s, 50, 1.9) for s in (1, 2, 3)])
    t["status"] = ["complete"] * 4 + ["diverged", "complete"]
    plan = {("nanogpt", f): {1, 2, 3} for f in ("none", "warm-up + cosine")}
    assert sched.schedule_effects(t, planned=plan).set_index("factor").loc[
        "warm-up + cosine", "no outcome"
    ] == [2]
    assert sched.baseline_escapes.__doc__ and "no_outcome" in sched.baseline_escapes.__doc__
    # a factor with all its seeds whose baseline is not all in yet: the baseline is what is pending
    c = sched.claim_schedule_factors(
        sched.schedule_effects(
            effects_table(
                base[:2] + early[:1] + [("nanogpt", "warm-up + cosine", s, 50, 1.9) for s in (2, 3)]
            ),
            planned=plan,
        )
    )
    assert "warm-up + cosine (nanoGPT, its baseline 2 of 3 seeds)" in c.why


def test_a_factor_is_judged_only_over_all_its_planned_seeds():
    # one seed each: a single-step baseline "range" that any other step lies outside;
    # judged only at the plan's five
    base, early = (
        [("nanogpt", "none", 1337, 675, 2.55)],
        [("nanogpt", "warm-up + cosine", 1337, 75, 1.89)],
    )
    # the plan's seeds: five each
    fx = sched.schedule_effects(effects_table(base + early)).set_index("factor")
    # nanoGPT's warm-up + cosine is one of the bundle's candidates, chosen by seed
    # 1337: judged on the other four
    assert (
        pd.isna(fx.loc["warm-up + cosine", "decides"])
        and fx.loc["warm-up + cosine", "planned"] == 4
    )
    assert fx.loc["warm-up + cosine", "chosen by"] == "1337: step 75"
    c = sched.claim_schedule_factors(sched.schedule_effects(effects_table(base + early)))
    assert c.verdict == "NOT TESTED" and "nanoGPT warm-up + cosine 0 of 4" in c.why
    # planned as trained
    assert effects(base + early).set_index("factor").loc["warm-up + cosine", "decides"] is True


def test_every_schedule_run_is_named_by_its_factor():
    factors = [(e.impl, plans.schedule_factor(e)) for e in plans.schedule_seeds()]
    assert (
        factors.count(("nanogpt", "none")) == 5
        and factors.count(("nanogpt", "warm-up + cosine")) == 5
    )
    assert (
        factors.count(("residualgpt", "none")) == 5
        and factors.count(("residualgpt", "constant lr")) == 5
    )
    assert factors.count(("residualgpt", "constant lr at 3e-4")) == 5
    assert (
        factors.count(("nanogpt", "gradient clipping")) == 5
        and factors.count(("nanogpt", "no biases")) == 5
    )


def test_each_schedule_factor_is_named_by_what_it_changes():
    # peak rate, warm-up and decay, each against the implementation's own preset:
    # ResidualGPT's two constant rates differ only in the peak, which is what tells the rate
    # apart from the schedule's shape
    rows = {(r["implementation"], r["factor"]): r for r in plans.schedule_factor_changes()}
    assert rows["nanogpt", "warm-up + cosine"] == {
        "implementation": "nanogpt",
        "factor": "warm-up + cosine",
        "peak rate": "kept (3e-4)",
        "warm-up": "none → 100 steps",
        "decay": "none → cosine to 3e-5",
    }
    const, low = rows["residualgpt", "constant lr"], rows["residualgpt", "constant lr at 3e-4"]
    assert (const["peak rate"], low["peak rate"]) == ("kept (1e-3)", "1e-3 → 3e-4")
    assert const["warm-up"] == low["warm-up"] == "100 steps → none"
    assert const["decay"] == low["decay"] == "cosine to 1e-4 → none"
    # at the paper's shape the peak is already Phase 2's 3e-4: one constant-rate factor, not two
    assert [r["factor"] for r in plans.schedule_factor_changes("10M")] == [
        "warm-up + cosine",
        "constant lr",
    ]


def test_a_factor_is_judged_without_the_seeds_that_chose_it():
    # seed 1 chose the factor: its runs (factor at step 50, baseline at 25, which would
    # put the factor inside the baseline's range) do not count; over the other four it
    # escapes earlier in every seed
    base = [
        ("nanogpt", "none", s, e, 2.5) for s, e in ((1, 25), (2, 175), (3, 200), (4, 575), (5, NAN))
    ]
    clip = [("nanogpt", "gradient clipping", s, 50, 2.0) for s in (1, 2, 3, 4, 5)]
    chose = {("nanogpt", "gradient clipping"): {1}}
    fx = effects(base + clip, first_eval=25, chosen=chose).set_index("factor")
    r = fx.loc["gradient clipping"]
    assert r.decides is True and r.direction == "earlier" and (r.seeds, r.planned) == (4, 4)
    # 2.9% over four fresh seeds
    assert r.chance == pytest.approx(2 / 70) and r["chosen by"] == "1: step 50"
    assert r["baseline range"] == "step 175 to never"
    c = sched.claim_schedule_factors(effects(base + clip, first_eval=25, chosen=chose))
    assert (
        "judged without the seed that chose it (1: step 50)" in c.lines[0]
        and "chance 2.9%" in c.lines[0]
    )
    # the same runs with every seed counted: seed 1's baseline (step 25) lies below
    # the factor, so nothing is named
    fx = effects(base + clip, first_eval=25, chosen={}).set_index("factor")
    assert fx.loc["gradient clipping", "decides"] is False
    # a run of the choosing seed with no outcome (diverged) blocks
    # nothing: that seed is never judged
    lost1 = [("nanogpt", "gradient clipping", 1, NAN, NAN)] + clip[1:]
    fx = effects(base + lost1, first_eval=25, chosen=chose).set_index("factor")
    assert (
        fx.loc["gradient clipping", "decides"] is True
        and fx.loc["gradient clipping", "no outcome"] == []
    )
    assert fx.loc["gradient clipping", "baseline seeds"] == 4
    # and a factor earlier only in the seed that chose it is not named either
    inside = [
        ("nanogpt", "gradient clipping", s, e, 2.0)
        for s, e in ((1, 50), (2, 300), (3, 300), (4, 300), (5, 300))
    ]
    base2 = [
        ("nanogpt", "none", s, e, 2.5)
        for s, e in ((1, 600), (2, 175), (3, 200), (4, 575), (5, NAN))
    ]
    assert (
        effects(base2 + inside, first_eval=25, chosen=chose)
        .set_index("factor")
        .loc["gradient clipping", "decides"]
        is False
    )


def test_the_strip_plot_draws_the_seed_that_chose_a_factor_hollow_and_leaves_it_out_of_band_and_count():  # noqa: E501 (the test's name)
    from matplotlib.collections import PathCollection, PolyCollection

    from lib.book import plots

    t = effects_table(
        [
            ("nanogpt", "none", 1, 600, 2.5),
            ("nanogpt", "none", 2, 200, 2.5),
            ("nanogpt", "none", 3, 300, 2.5),
            ("nanogpt", "gradient clipping", 1, 50, 2.0),
            ("nanogpt", "gradient clipping", 2, 50, 2.0),
            ("nanogpt", "gradient clipping", 3, 50, 2.0),
        ]
    )
    chose = {("nanogpt", "gradient clipping"): {1}}
    fig = plots.escape_strip(
        t,
        1500,
        "t",
        planned={("nanogpt", "none"): 3, ("nanogpt", "gradient clipping"): 2},
        chosen=chose,
    )
    ax = fig.axes[0]
    dots = [c for c in ax.collections if isinstance(c, PathCollection)]
    hollow = [c for c in dots if not len(c.get_facecolors()) or c.get_facecolors()[0][3] == 0]
    assert len(dots) == 6 and len(hollow) == 1 and hollow[0].get_offsets()[0, 1] == 50
    band = (
        [c for c in ax.collections if isinstance(c, PolyCollection)][0]
        .get_paths()[0]
        .vertices[:, 1]
    )
    # seeds 2 and 3 only: seed 1's 600 is not in the range
    assert (band.min(), band.max()) == (200, 300)
    assert ax.get_xticklabels()[1].get_text() == "nanogpt\ngradient clipping\n2 of 2 seeds"
    assert "seed that chose the factor (not judged)" in [
        h.get_label() for h in ax.get_legend().legend_handles
    ]


def test_the_strip_plot_draws_one_dot_per_seed_and_never_above_the_budget():
    from lib.book import plots

    t = effects_table(
        [
            ("nanogpt", "none", 1, 200, 2.5),
            ("nanogpt", "none", 2, NAN, 3.3),
            ("residualgpt", "constant lr", 1, 50, 2.0),
        ]
    )
    t = pd.concat([t, effects_table([("residualgpt", "none", 1, 50, 1.9)])], ignore_index=True)
    fig = plots.escape_strip(t, 1500, "t")
    ax = fig.axes[0]
    from matplotlib.collections import PathCollection, PolyCollection

    # a scatter per seed per column
    dots = [c.get_offsets() for c in ax.collections if isinstance(c, PathCollection)]
    # never: above the budget
    assert len(dots) == 4 and max(d[0, 1] for d in dots) == pytest.approx(1650)
    # the band behind ResidualGPT's constant lr: its baseline's range over
    # the same seed (step 50 alone)
    bands = [c for c in ax.collections if isinstance(c, PolyCollection)]
    assert len(bands) == 1 and bands[0].get_paths()[0].vertices[:, 1].min() == pytest.approx(50)
    assert [x.get_text() for x in ax.get_legend().get_texts()] == [
        "seed 1",
        "seed 2",
        "nanoGPT",
        "ResidualGPT",
        "baseline's range, same seeds",
    ]
    ticks = (
        plots.escape_strip(t, 1500, "t", planned={("nanogpt", "none"): 5}).axes[0].get_xticklabels()
    )
    assert "2 of 5 seeds" in ticks[0].get_text() and "of" not in ticks[1].get_text()
    plots.escape_strip(t.iloc[0:0], 1500, "empty")
    # a diverged run is not drawn (the rule leaves it out) but named under its column
    t["status"] = ["complete", "diverged", "complete", "complete"]
    ax = plots.escape_strip(t, 1500, "t").axes[0]
    assert len([c for c in ax.collections if isinstance(c, PathCollection)]) == 3
    assert "(seed 2 diverged)" in ax.get_xticklabels()[0].get_text()


def test_the_values_table_gives_each_runs_best_and_escape_per_seed_stand_in_first():
    from lib.book import values_view

    t = pd.DataFrame(
        [
            ("author's", "residualgpt", "AttnOnly", 42, 2.3367, 100.0),
            ("stand-in", "residualgpt", "FFNOnly", 1337, 3.3391, NAN),
            ("stand-in", "residualgpt", "AttnOnly", 1337, 1.9707, 100.0),
            ("author's", "nanogpt", "AttnOnly", 1337, 2.7038, 1200.0),
        ],
        columns=["values", "impl", "config", "seed", "best_val_loss", "escape_step"],
    )
    v = values_view(t, "residualgpt")
    assert list(v.columns) == ["values", "configuration", "seed 42", "seed 1337"]
    assert v[["values", "configuration"]].values.tolist() == [
        ["stand-in", "AttnOnly"],
        ["stand-in", "FFNOnly"],
        ["author's", "AttnOnly"],
    ]
    assert v["seed 1337"].tolist() == [
        "1.971 (left at step 100)",
        "3.339 (never left the floor)",
        "-",
    ]
    assert values_view(t, "nanogpt")["seed 1337"].tolist() == ["2.704 (left at step 1,200)"]
    with pytest.raises(ValueError, match="is not one of residualgpt, nanogpt"):
        values_view(t, "nanoGPT")
    # a chapter's table of one implementation needs no name; a table of two refuses to guess
    one = values_view(t[t.impl == "nanogpt"])
    assert one["seed 1337"].tolist() == ["2.704 (left at step 1,200)"]
    with pytest.raises(ValueError, match="nanogpt, residualgpt"):
        values_view(t)
    assert values_view(t.iloc[0:0]).empty
    t["status"] = ["complete", "complete", "diverged", "complete"]
    assert values_view(t, "residualgpt")["seed 1337"].tolist()[0] == "diverged"


def test_the_other_factors_are_read_beside_the_rate_by_the_same_rule():
    base = [("nanogpt", "none", s, e, 2.5) for s, e in ((1, 200), (2, 800), (3, NAN))]
    early = [("nanogpt", "gradient clipping", s, 50, 1.9) for s in (1, 2, 3)]
    inside = [("nanogpt", "gradient clipping", s, e, 2.2) for s, e in ((1, 50), (2, 300), (3, 50))]
    edge = [("nanogpt", "gradient clipping", s, e, 2.2) for s, e in ((1, 50), (2, 175), (3, 50))]
    warm = [("nanogpt", "warm-up + cosine", s, 50, 1.9) for s in (1, 2, 3)]
    # clipping earlier at every seed: named beside the rate, with its seeds and chance, and the
    # chance that one of the two factors judged is named with no effect anywhere
    text = sched.others_reading(effects(base + early + warm))
    assert (
        "with gradient clipping, nanoGPT AttnOnly leaves the floor earlier at all 3 seeds" in text
    )
    assert "one of the 2 factors judged" in text
    # step 300 lies inside the baseline's 200..never: not named, and no family chance
    inside_text = sched.others_reading(effects(base + inside + warm))
    assert "within seed noise" in inside_text and "earlier at all" not in inside_text
    assert "factors judged" not in inside_text
    # step 175 is earlier than the baseline's 200, by less than an interval: on the edge
    edge_text = sched.others_reading(effects(base + edge + warm, first_eval=50))
    assert "on the edge" in edge_text and "earlier at all" not in edge_text
    assert "No factor" in sched.others_reading(effects(base + warm))
    # planned over seeds its baseline lacks: named as not judged yet
    lone = [("nanogpt", "no biases", 9, 50, 2.0)]
    assert "no biases, switched alone, not judged" in sched.others_reading(effects(base + lone))


def test_the_warm_up_reading_says_whether_the_escape_came_before_the_cosine_began():
    t = effects_table([("nanogpt", "warm-up + cosine", s, 75, 1.9) for s in (1, 2)])
    assert sched.warmup_reading(t, warmup=100).startswith(
        "All 2 nanoGPT seeds on the warm-up + cosine schedule "
        "leave the floor by step 75, before its 100-step warm-up"
    )
    late = effects_table(
        [("nanogpt", "warm-up + cosine", 1, 75, 1.9), ("nanogpt", "warm-up + cosine", 2, 150, 2)]
    )
    assert sched.warmup_reading(late, warmup=100).startswith("1 of 2")
    assert sched.warmup_reading(t.iloc[0:0], warmup=100).startswith("No nanoGPT run")


def test_the_rate_is_told_apart_from_the_schedules_shape_only_when_the_two_constant_rates_split():
    high = [("residualgpt", "constant lr", s, NAN, 3.34) for s in (1, 2, 3)]
    low = [("residualgpt", "constant lr at 3e-4", s, 50, 2.2) for s in (1, 2, 3)]
    text = sched.rate_reading(effects_table(high + low))
    assert "constant lr (its own peak): 0 of 3 seeds leave the floor" in text
    assert "constant lr at 3e-4: 3 of 3 seeds leave the floor (seed 1 at step 50" in text
    # the stand-in's own peak (1e-3) and Phase 2's rate (3e-4), each named with their ratio
    assert text.endswith(
        "only at its own peak, 1e-3 (3.3 times Table 1's 3e-4); at 3e-4 it does not."
    )
    both = [("residualgpt", "constant lr", s, 75, 2.0) for s in (1, 2, 3)]
    assert sched.rate_reading(effects_table(both + low)).endswith(
        "the rate makes no difference here."
    )
    split = low[:2] + [("residualgpt", "constant lr at 3e-4", 3, NAN, 3.34)]
    assert sched.rate_reading(effects_table(high + split)).endswith("not told apart by these runs.")
    assert sched.rate_reading(effects_table(high)).endswith("not trained at both peaks yet.")
    assert sched.rate_reading(effects_table(high + low[:1])).endswith(
        "waits for the same seeds at both rates."
    )
