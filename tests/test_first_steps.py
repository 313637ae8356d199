"""The book's own finding, that the learning rate's first steps decide whether and when AttnOnly
leaves the floor (``claims.schedule_10m.claim_first_steps``), moved both ways on constructed runs
of the two paper-shape plans: ResidualGPT's (``10m_schedule_seeds``) and nanoGPT's
(``10m_nanogpt_schedule_seeds``), judged by the rank rule."""

import math

import pandas as pd

from lib.claims import schedule_10m as S
from lib.engine import plans

SEEDS = plans.SCHEDULE_SEEDS
NEVER = math.nan


def _table(impl: str, own: dict, other: dict, factor: str) -> pd.DataFrame:
    """One plan's runs: ``own`` and ``other`` map a seed to its escape step (NaN:
    still on the floor at its stop)."""
    rows = [
        dict(
            impl=impl,
            config="AttnOnly",
            seed=s,
            factor=f,
            status="partial",
            steps=300,
            best_val_loss=3.0,
            escape_step=e,
        )
        for f, steps in (("none", own), (factor, other))
        for s, e in steps.items()
    ]
    return pd.DataFrame(rows)


def _residual(constant: dict, warmup: dict | None = None) -> pd.DataFrame:
    warmup = warmup or {s: 50.0 for s in SEEDS}
    return S.schedule_10m_effects(_table("residualgpt", warmup, constant, S.CONSTANT))


def _nanogpt(warmup: dict, constant: dict | None = None) -> pd.DataFrame:
    constant = constant or {s: NEVER for s in SEEDS}
    return S.nanogpt_schedule_effects(_table("nanogpt", constant, warmup, plans.WARMUP_COSINE))


LATE = {s: 400.0 for s in SEEDS}  # the constant rate, far later than every warm-up seed
# nanoGPT's warm-up, far earlier than its constant rate (never by step 300)
EARLY = {s: 100.0 for s in SEEDS}


def test_both_implementations_named_the_predicted_way_hold():
    c = S.claim_first_steps(_residual(LATE), _nanogpt(EARLY))
    assert c.verdict == "HOLDS", c.why
    assert c.facts["rungs"] == {"residualgpt": "HOLDS", "nanogpt": "HOLDS"}


def test_a_warm_up_that_changes_nothing_in_nanogpt_contradicts_it():
    # nanoGPT's warm-up runs stay on the floor like its constant-rate ones: the
    # rule names nothing, with room
    c = S.claim_first_steps(_residual(LATE), _nanogpt({s: NEVER for s in SEEDS}))
    assert c.verdict == "CONTRADICTED", c.why
    # and so does a constant rate that escapes as early as the warm-up in ResidualGPT
    c = S.claim_first_steps(
        _residual({s: 50.0 for s in SEEDS}, {s: 150.0 for s in SEEDS}), _nanogpt(EARLY)
    )
    assert c.verdict == "CONTRADICTED" and c.facts["rungs"]["residualgpt"] == "CONTRADICTED", c.why


def test_one_seed_within_an_interval_is_the_edge_and_neither_way():
    # later than every warm-up seed (50), but only by the 50-step interval
    edge = LATE | {SEEDS[0]: 100.0}
    c = S.claim_first_steps(_residual(edge), _nanogpt(EARLY))
    assert c.verdict == "NOT TESTABLE HERE", c.why


def test_it_waits_for_every_seed_of_both_plans_and_says_what_is_pending():
    one = {SEEDS[0]: NEVER}
    c = S.claim_first_steps(_residual(LATE), _nanogpt({SEEDS[0]: 100.0}, one))
    assert c.verdict == "NOT TESTED"
    assert f"1 of {len(SEEDS)}" in c.why  # the runs trained so far, by plan
    assert "can no longer hold" not in c.why  # ResidualGPT's rung holds: the wait may end in HOLDS
    # ResidualGPT's rung on the edge while nanoGPT trains: the finding can no longer hold
    c = S.claim_first_steps(_residual(LATE | {SEEDS[0]: 100.0}), _nanogpt({SEEDS[0]: 100.0}, one))
    assert c.verdict == "NOT TESTED"
    assert c.why.endswith("can no longer hold at this shape, where ResidualGPT's part is settled")
    # with nothing trained at all it is still a verdict, not a crash
    empty = pd.DataFrame(
        columns=[
            "impl",
            "config",
            "seed",
            "factor",
            "status",
            "steps",
            "best_val_loss",
            "escape_step",
        ]
    )
    assert (
        S.claim_first_steps(
            S.schedule_10m_effects(empty), S.nanogpt_schedule_effects(empty)
        ).verdict
        == "NOT TESTED"
    )


def test_a_contradiction_in_one_implementation_outranks_the_other_on_the_edge():
    edge = LATE | {SEEDS[0]: 100.0}
    c = S.claim_first_steps(_residual(edge), _nanogpt({s: NEVER for s in SEEDS}))
    assert c.verdict == "CONTRADICTED"


def test_the_figure_draws_each_seed_on_each_schedule_beside_the_authors_last_losses():
    from lib.book import plots

    hist = pd.DataFrame(
        [
            dict(impl="nanogpt", config="AttnOnly", seed=s, schedule=sch, step=step, val_loss=v)
            for s in (1337, 42)
            for sch, v in (("constant", 3.35), ("cosine", 2.5))
            for step in (0, 50, 100)
        ]
    )
    author = pd.DataFrame(
        {"config": ["AttnOnly", "NoResidual"], "step": [2999, 2999], "val_loss": [3.3534, 3.3523]}
    )
    fig = plots.nanogpt_schedule_figure(hist, author, 3.3473, "t", plans.PREFIX_STEPS)
    ax = fig.axes[0]
    # one legend entry per schedule, one per author's configuration, the floor, then a line style
    # per seed in the plan's order
    assert [t.get_text() for t in ax.get_legend().get_texts()] == [
        "this book, constant lr (the author's recipe)",
        "this book, warm-up + cosine",
        "author's NanoGPT_10M.ipynb, AttnOnly at step 2,999: 3.3534",
        "author's NanoGPT_10M.ipynb, NoResidual at step 2,999: 3.3523",
        "unigram floor, whole validation split 3.3473",
        "seed 1337",
        "seed 42",
    ]
    # a line per run, a marker per author's configuration, the floor
    assert len(ax.lines) == 4 + 2 + 1
    # a seed's two runs share a line style, two seeds do not; the schedules differ in colour, and
    # the warm-up's is not No Residual's grey
    runs = {(ln.get_color(), ln.get_linestyle()) for ln in ax.lines[:4]}
    assert len(runs) == 4 and len({c for c, _ in runs}) == 2 and len({d for _, d in runs}) == 2
    assert plots.COLORS["NoResidual"] not in {c for c, _ in runs}


def test_the_nanogpt_plan_is_read_as_its_runs_arrive_and_decides_without_a_change_of_code(tmp_path):
    # The plan's runs written as the sweep leaves them (prefixes to step 300 of 3,000): read only
    # once at step 300, and the nanoGPT rung decided once all ten are there.
    import json

    from conftest import write_fake_run

    def fake_run(e, runs_dir, **kw):  # with the fields a released summary has and the fake's lacks
        d = write_fake_run(e, runs_dir, **kw)
        summary = json.loads((d / "summary.json").read_text())
        (d / "summary.json").write_text(json.dumps(summary | {"impl": e.impl, "scale": e.scale}))
        return d

    exps = plans.paper_10m_nanogpt_schedule_seeds()
    warm = [e for e in exps if S.factor(e) != "none"]
    const = [e for e in exps if S.factor(e) == "none"]
    for e in const[:-1]:  # nanoGPT's own constant rate: on the floor to step 300
        fake_run(
            e,
            tmp_path,
            best=3.36,
            status="partial",
            steps=plans.PREFIX_STEPS,
            n_evals=7,
            floor=3.3473,
        )
    for e in warm:  # the warm-up: off the floor at step 100
        fake_run(
            e,
            tmp_path,
            best=2.5,
            escape=100,
            status="partial",
            steps=plans.PREFIX_STEPS,
            n_evals=7,
            floor=3.3473,
        )
    # the last constant-rate run is still short of step 300: pending, named, not read
    fake_run(const[-1], tmp_path, best=3.36, status="partial", steps=200, n_evals=5, floor=3.3473)
    table = S.nanogpt_schedule_runs(tmp_path)
    assert len(table) == len(exps) - 1 and const[-1].seed not in set(
        table[table.factor == "none"].seed
    )
    word, text = S.first_steps_rung(S.nanogpt_schedule_effects(table), "nanogpt")
    assert word == "NOT TESTED" and f"{len(SEEDS)} of {len(SEEDS)} warm-up + cosine" in text
    # the last run reaches step 300 on the floor: all ten read, the warm-up earlier
    # in every seed by the rank rule
    import shutil

    from lib.engine.runs import run_path

    shutil.rmtree(run_path(const[-1], tmp_path))
    fake_run(
        const[-1],
        tmp_path,
        best=3.36,
        status="partial",
        steps=plans.PREFIX_STEPS,
        n_evals=7,
        floor=3.3473,
    )
    word, text = S.first_steps_rung(
        S.nanogpt_schedule_effects(S.nanogpt_schedule_runs(tmp_path)), "nanogpt"
    )
    assert word == "HOLDS", text


def test_the_puzzles_are_said_from_the_paper_shape_runs_both_ways():
    delayed = _table("residualgpt", {s: 50.0 for s in SEEDS}, LATE, S.CONSTANT)
    # nanoGPT: among the seeds its constant rate floors, how many the warm-up frees; two seeds of
    # five trained, the constant rate floors both, the warm-up frees one
    nano = _table(
        "nanogpt", {1337: NEVER, 42: NEVER}, {1337: 100.0, 42: NEVER}, plans.WARMUP_COSINE
    )
    long, short = S.puzzle_clauses(delayed, nano)
    assert long.startswith("of the two puzzles, ") and short.startswith("puzzles: ")
    assert (
        "frees nanoGPT's AttnOnly at 1 of the 2 seeds its constant rate keeps on the floor to step "
        f"{plans.PREFIX_STEPS} so far (1337, 42)" in long
    )
    assert "warm-up frees 1 of 2 floored nanoGPT seeds so far" in short
    # a constant rate that only delays ResidualGPT's escape keeps no seed on the floor
    assert long.endswith(
        "keeps none of 5 ResidualGPT seeds on the floor, so 5 seeds here do not reproduce "
        "Phase 2's floored seed"
    )
    assert short.endswith("constant rate floors no ResidualGPT seed")
    # all five trained: the warm-up frees every floored seed, and Phase 2's rate floors two
    nano = _table("nanogpt", {s: NEVER for s in SEEDS}, EARLY, plans.WARMUP_COSINE)
    floored = _table(
        "residualgpt", {s: 50.0 for s in SEEDS}, {**LATE, 0: NEVER, 7: NEVER}, S.CONSTANT
    )
    long, short = S.puzzle_clauses(floored, nano)
    assert "at 5 of the 5 seeds its constant rate keeps on the floor to step" in long
    assert "so far" not in long
    assert long.endswith("keeps 2 of 5 ResidualGPT seeds on the floor")
    assert short.endswith("constant rate floors 2 of 5 ResidualGPT seeds")
    # a seed whose own warm-up run stays on the floor too is not one the constant rate kept there
    both_stay = _table(
        "residualgpt", {**{s: 50.0 for s in SEEDS}, 0: NEVER}, {**LATE, 0: NEVER}, S.CONSTANT
    )
    assert "keeps none of 5" in S.puzzle_clauses(both_stay, nano)[0]
    # the warm-up freeing none of the floored seeds says none, not a count under "frees"
    stuck = _table(
        "nanogpt", {s: NEVER for s in SEEDS}, {s: NEVER for s in SEEDS}, plans.WARMUP_COSINE
    )
    long, short = S.puzzle_clauses(delayed, stuck)
    assert "frees nanoGPT's AttnOnly at none of the 5 seeds" in long
    assert "warm-up frees none of 5 floored nanoGPT seeds" in short
    # a constant rate that floors no nanoGPT seed: nothing to free
    early = _table("nanogpt", {s: 200.0 for s in SEEDS}, EARLY, plans.WARMUP_COSINE)
    long, short = S.puzzle_clauses(delayed, early)
    assert f"constant rate keeps on the floor to step {plans.PREFIX_STEPS} none of its 5" in long
    assert "constant rate floors none of its 5 seeds" in short
    # a diverged run is an outcome of none, but its seed is no longer pending: no "so far" once
    # every other seed is trained; with nothing trained, each side says so
    div = nano.assign(status=nano.seed.map(lambda s: "diverged" if s == 7 else "partial"))
    long, _ = S.puzzle_clauses(delayed, div)
    assert "at 4 of the 4 seeds its constant rate keeps on the floor to step" in long
    assert "so far" not in long
    long, short = S.puzzle_clauses(delayed.iloc[:0], nano.iloc[:0])
    assert "no nanoGPT seed has run on both schedules so far" in long
    assert "no ResidualGPT seed has run on both schedules so far" in short
