"""The 124M search's rule (lib.claims.search_124m): each condition moves a probe's verdict both
ways, the choice follows departures, then cost, then the list's order, and the search reads
its runs from a runs directory."""

import pandas as pd
import pytest

from lib.claims import search_124m as S
from lib.engine import plans
from lib.engine.config import ConfigError

FLOOR = 6.47


def _s(escape=None, best=6.55, final=None, status="complete", steps=10_000):
    return {
        "escape_step": escape,
        "best_val_loss": best,
        "final_val_loss": best if final is None else final,
        "unigram_floor": FLOOR,
        "status": status,
        "steps": steps,
    }


def _row(probe=None, attn=(None, None), full=None, ffn=None):
    probe = probe or plans.SEARCH_PROBES[0]
    runs = {("AttnOnly", s): a for s, a in zip(plans.SEARCH_SEEDS, attn) if a is not None}
    if full is not None:
        runs["FullResidual", 1337] = full
    if ffn is not None:
        runs["FFNOnly", 1337] = ffn
    return S.probe_row(probe, runs)


LEARNS, STAYS = _s(escape=50, best=5.5), _s()


def test_attnonly_on_the_floor_at_both_seeds_decides_the_probe_without_controls():
    assert _row(attn=(STAYS, STAYS))["qualifies"] is False
    assert _row(attn=(STAYS, None))["qualifies"] is None  # a seed not trained: undecided
    # one seed that left is enough to know AttnOnly leaves "at one seed or
    # more"; the controls then decide
    assert _row(attn=(_s(escape=300, best=6.2), None), full=LEARNS, ffn=STAYS)["qualifies"] is True


def test_each_condition_moves_the_verdict_both_ways():
    left = _s(escape=300, best=6.2)
    assert _row(attn=(STAYS, left), full=LEARNS, ffn=STAYS)["qualifies"] is True
    assert _row(attn=(STAYS, left))["qualifies"] is None  # controls pending
    assert _row(attn=(STAYS, left), full=LEARNS)["qualifies"] is None
    # FFN leaves
    assert _row(attn=(STAYS, left), full=LEARNS, ffn=_s(escape=100, best=6.3))["qualifies"] is False
    # Full Residual must end FULL_BELOW under the floor: just above that
    # line fails, just under passes
    near = _s(escape=50, best=FLOOR - S.FULL_BELOW + 0.01)
    assert _row(attn=(STAYS, left), full=near, ffn=STAYS)["qualifies"] is False
    under = _s(escape=50, best=FLOOR - S.FULL_BELOW - 0.01)
    assert _row(attn=(STAYS, left), full=under, ffn=STAYS)["qualifies"] is True
    # a diverged AttnOnly did not leave; a diverged Full Residual does not learn
    gone = _s(escape=None, status="diverged")
    assert _row(attn=(gone, STAYS))["qualifies"] is False
    assert _row(attn=(left, STAYS), full=_s(status="diverged"), ffn=STAYS)["qualifies"] is False
    # a diverged FFNOnly shows nothing about the floor: it does not stay on it
    assert _row(attn=(left, STAYS), full=LEARNS, ffn=_s(status="diverged"))["qualifies"] is False


def _table(rows):
    return pd.DataFrame(
        [{"probe": n, "departures": d, "tokens per run": t, "qualifies": q} for n, d, t, q in rows]
    )


def test_the_choice_is_fewest_departures_then_cheapest_then_first_listed():
    assert S.choose(_table([("a", 10, 5, True), ("b", 9, 9, True), ("c", 8, 1, False)])) == "b"
    assert S.choose(_table([("a", 9, 5, True), ("b", 9, 4, True)])) == "b"
    assert S.choose(_table([("a", 9, 4, True), ("b", 9, 4, True)])) == "a"
    # none qualifies: no stand-in, and the search is decided
    t = _table([("a", 9, 4, False), ("b", 9, 4, False)])
    assert S.choose(t) is None and S.decided(t)
    # an undecided probe that could still win (fewer departures) holds the choice back
    t = _table([("a", 9, 4, True), ("b", 1, 1, None)])
    assert S.choose(t) is None and not S.decided(t)
    # one that could not (more departures, or equal and more tokens, or equal and listed later) does
    # not: the choice is the one every completion of its runs would give
    for later in (("b", 10, 1, None), ("b", 9, 5, None), ("b", 9, 4, None)):
        t = _table([("a", 9, 4, True), later])
        assert S.decided(t) and S.choose(t) == "a"
        for outcome in (True, False):  # and indeed: either way it goes, "a" is chosen
            assert S.choose(_table([("a", 9, 4, True), (*later[:3], outcome)])) == "a"
    # nothing qualifies yet and one is undecided: undecided
    assert not S.decided(_table([("a", 9, 4, False), ("b", 10, 9, None)]))


def test_departures_count_the_fields_and_a_stop_before_the_schedules_end():
    ramp = plans.search_probe("124M warm-up slope")
    d = S.probe_departures(ramp)
    assert (
        "warmup_steps" not in d
        and "max_steps" not in d
        and d["steps trained"] == (20000, ramp.stop)
    )
    # the 124M's optimisation, read from it
    assert "lr" not in d and "min_lr" not in d and "dropout" not in d
    first = S.probe_departures(plans.search_probe("124M optimisation"))
    assert "steps trained" not in first and first["max_steps"] == (20000, 800)
    assert S.probe_tokens(plans.search_probe("4,096 tokens a step")) == 300 * 4 * 8 * 128


def test_an_unknown_probe_is_refused_naming_the_valid_ones():
    with pytest.raises(ConfigError, match="valid: 124M warm-up slope"):
        plans.search_probe("nope")


def test_the_search_reads_its_runs_and_a_short_run_is_not_counted(tmp_path, fake_run):
    probe = plans.search_probe("124M warm-up slope")
    runs = plans.probe_runs(probe)
    fake_run(
        runs["AttnOnly", 1337], tmp_path, best=6.55, status="partial", steps=probe.stop, floor=FLOOR
    )
    fake_run(
        runs["AttnOnly", 42],
        tmp_path,
        best=6.2,
        escape=600,
        status="partial",
        steps=probe.stop,
        floor=FLOOR,
    )
    row = S.search_table(tmp_path).set_index("probe").loc[probe.name]
    assert row["AttnOnly left"] and row["AttnOnly 42 escape"] == 600 and pd.isna(row["qualifies"])
    fake_run(
        runs["FullResidual", 1337],
        tmp_path,
        best=5.4,
        escape=50,
        status="partial",
        steps=probe.stop,
        floor=FLOOR,
    )
    fake_run(
        runs["FFNOnly", 1337],
        tmp_path,
        best=6.5,
        status="partial",
        steps=probe.stop // 2,
        floor=FLOOR,
    )
    row = S.search_table(tmp_path).set_index("probe").loc[probe.name]
    assert pd.isna(row["qualifies"])  # FFNOnly stopped short of the probe's stop: not yet decided


def test_every_probe_stops_at_an_evaluation_within_its_schedule():
    for p in plans.SEARCH_PROBES:
        e = plans.probe_runs(p)["AttnOnly", 1337]
        assert p.stop <= e.train.max_steps and p.stop % e.train.eval_interval == 0
        assert plans.search_stop(e) == p.stop


def test_the_page_names_the_chosen_probe_or_says_none_qualifies():
    rows = [_row(probe=p, attn=(STAYS, STAYS)) for p in plans.SEARCH_PROBES]
    table = pd.DataFrame(rows)
    assert S.choose(table) is None and "No probe qualifies" in S.search_reading(table)
    left = _s(escape=300, best=6.2)
    rows[1] = _row(probe=plans.SEARCH_PROBES[1], attn=(left, STAYS), full=LEARNS, ffn=STAYS)
    table = pd.DataFrame(rows)
    assert S.choose(table) == plans.SEARCH_PROBES[1].name
    assert f"chooses **{plans.SEARCH_PROBES[1].name}**" in S.search_reading(table)
    # the second probe has no preset
    assert "No preset is defined for it yet" in S.search_reading(table)
    rows[0] = _row(probe=plans.SEARCH_PROBES[0], attn=(left, STAYS), full=LEARNS, ffn=STAYS)
    text = S.search_reading(pd.DataFrame(rows), runs_dir="/nonexistent")
    assert "`cpu-bpe-ramp`, trains Table 5's 16 runs: 0 of 16 trained" in text
    shown = S.search_shown(table).set_index("probe")
    assert shown.loc[plans.SEARCH_PROBES[1].name, "qualifies"] == "yes"
    assert (
        shown.loc[plans.SEARCH_PROBES[1].name, "AttnOnly 1337: best; left the floor at"]
        == "6.200; step 300"
    )


def test_the_ramp_stand_in_trains_the_ramp_probes_rates_for_its_budget():
    from lib.engine.config import get_preset
    from lib.engine.train import lr_at

    probe = plans.search_probe("124M warm-up slope")
    for config in ("AttnOnly", "FFNOnly"):
        ours, trained = (
            get_preset("cpu-bpe-ramp", "residualgpt", config),
            plans.probe_runs(probe)[config, 1337],
        )
        assert ours.train.max_steps == probe.stop
        assert [lr_at(ours.train, s) for s in range(probe.stop)] == [
            lr_at(trained.train, s) for s in range(probe.stop)
        ]
        assert ours.model == trained.model and ours.dataset == trained.dataset
        same = (
            "batch_size",
            "grad_accum",
            "eval_interval",
            "eval_batches",
            "beta2",
            "weight_decay",
            "grad_clip",
        )
        assert all(getattr(ours.train, f) == getattr(trained.train, f) for f in same)


def test_no_two_runs_of_the_search_share_a_directory_and_a_dataset_is_its_scales():
    from lib.engine.config import get_preset, replace
    from lib.engine.runs import run_path

    paths = [run_path(e, "r") for e in plans.search_124m()]
    assert len(paths) == len(set(paths))
    sotu = [
        e
        for p in plans.SEARCH_PROBES
        if p.scale == "cpu-sotu"
        for e in plans.probe_runs(p).values()
    ]
    assert sotu and all(e.dataset == "sotu_gpt2" for e in sotu)
    # another dataset under a scale would share that scale's directories:
    # refused, naming the scale that has it
    with pytest.raises(ConfigError, match="valid scales for 'sotu_gpt2': cpu-sotu"):
        run_path(replace(get_preset("cpu-bpe"), dataset="sotu_gpt2"), "r")


def test_a_run_trained_past_its_probes_stop_is_left_out_not_read_later(tmp_path, fake_run, capsys):
    probe = plans.search_probe("124M warm-up slope")
    e = plans.probe_runs(probe)["AttnOnly", 1337]
    fake_run(
        e, tmp_path, best=6.2, escape=600, status="partial", steps=probe.stop + 100, floor=FLOOR
    )
    row = S.search_table(tmp_path).set_index("probe").loc[probe.name]
    assert pd.isna(row["AttnOnly 1337 best"]) and "past the probe's stop" in capsys.readouterr().out


def test_the_released_search_shows_what_its_runs_hold():
    table = S.search_table()
    shown = S.search_shown(table).set_index("probe").loc["124M warm-up slope"]
    assert shown["AttnOnly 1337: best; left the floor at"] == "5.715; step 550"
    assert shown["AttnOnly 42: best; left the floor at"] == "5.820; step 550"
    assert shown["floor"] == "6.475" and "1 thread" in shown["CPU minutes"]


def test_the_released_search_chooses_the_ramp_probe():
    table = S.search_table()
    row = table.set_index("probe").loc["124M warm-up slope"]
    assert row["qualifies"] is True and row["FFNOnly stays"] and row["Full Residual learns"]
    assert round(row["Full Residual final"], 3) == 5.283 and round(row["FFNOnly best"], 3) == 6.485
    assert S.decided(table) and S.choose(table) == "124M warm-up slope"


def test_the_chapter_reads_table_5_at_the_stand_in_the_released_search_chose():
    from lib.claims.runset import CHAPTERS

    chosen = S.choose(S.search_table())
    assert chosen is not None and plans.SEARCH_STAND_INS[chosen] == plans.STAND_IN_124M
    spec = CHAPTERS["124m_sweep"]
    assert spec.stand_in == plans.STAND_IN_124M and spec.earlier == ("cpu-bpe",)


def _answer(
    attn,
    ffn=(6.53, 6.54),
    full=(5.2, 5.3),
    first_attn=(6.54, 6.53),
    order="NOT TESTED",
    sensitivity="NOT TESTED",
    kind="chosen",
):
    from lib.claims.verdicts import Claim

    def summ(rows):
        return pd.DataFrame(
            [
                {"config": c, "seed": i, "best_val_loss": b, "final_val_loss": f, "best_step": 850}
                for c, vals in rows
                for i, (b, f) in enumerate(vals)
            ]
        )

    ours = summ(
        [
            ("FullResidual", [(v, v) for v in full]),
            ("AttnOnly", attn),
            ("FFNOnly", [(v, v) for v in ffn]),
        ]
    )
    first = summ([("AttnOnly", [(v, v) for v in first_attn])])
    return S.sweep_answer(
        ours,
        6.478,
        "cpu-bpe-ramp",
        Claim(order, "o"),
        Claim(sensitivity, "s"),
        first,
        "cpu-bpe",
        6.528,
        kind=kind,
    )


def test_the_chapters_answer_is_computed_from_its_runs():
    # AttnOnly off the floor in both seeds, one of them back on it at the end; FFNOnly on it
    text = _answer([(5.77, 5.77), (6.14, 6.57)])
    assert "At the stand-in the search chose" in text
    assert "AttnOnly leaves the floor in 2 of 2 seeds trained and FFNOnly in 0 of 2" in text
    assert "AttnOnly seed 1 left the floor and fell back onto it" in text
    # ranked by its best, as Table 5 ranks, with where it ended beside
    assert "seed 1: 6.140 at step 850, 6.570 at the end" in text
    assert "Table 5's ordering: NOT TESTED" in text and "in all 2 seeds" in text
    # every AttnOnly on the floor: counted so, and no seed fell back
    text = _answer([(6.54, 6.54), (6.55, 6.55)])
    assert "AttnOnly leaves the floor in 0 of 2" in text and "fell back" not in text
    # FFNOnly off it too; the verdicts as decided; the first stand-in's AttnOnly
    # off its floor is not "stayed"
    text = _answer([(5.77, 5.77)], ffn=(6.2, 6.54), order="CONTRADICTED", first_attn=(6.3,))
    assert "FFNOnly in 1 of 2" in text and "Table 5's ordering: CONTRADICTED at a stand-in" in text
    # a verdict at the stand-in says so; at the paper's 124M, the word alone
    assert "seed sensitivity: HOLDS at a stand-in" in _answer([(5.77, 5.77)], sensitivity="HOLDS")
    assert "sensitivity: HOLDS, s" in _answer([(5.77, 5.77)], sensitivity="HOLDS", kind="paper")
    assert "stayed on the floor in all" not in text
    # opened at the first stand-in, the page says so and does not set that stand-in beside itself
    text = _answer([(6.54, 6.54), (6.55, 6.55)], kind="first")
    assert (
        text.startswith("**At the first stand-in")
        and "At the first stand-in (`cpu-bpe`) AttnOnly" not in text
    )
    with pytest.raises(ValueError, match="valid: chosen, first, paper"):
        _answer([(5.77, 5.77)], kind="other")


def test_the_first_stand_ins_reading_says_why_it_could_not_test_table_5():
    def summ(attn):
        return pd.DataFrame(
            [
                {"config": c, "seed": s, "best_val_loss": v}
                for c, vals in (
                    ("FullResidual", (5.1, 5.2)),
                    ("AttnOnly", attn),
                    ("FFNOnly", (6.54, 6.53)),
                )
                for s, v in enumerate(vals)
            ]
        )

    text = S.first_stand_in_reading(summ((6.54, 6.53)), 6.528, "cpu-bpe")
    assert (
        "Full Residual in 2 of 2; AttnOnly in 0 of 2; FFNOnly in 0 of 2" in text
        and "untestable" in text
    )
    text = S.first_stand_in_reading(summ((6.54, 6.2)), 6.528, "cpu-bpe")
    assert "AttnOnly in 1 of 2" in text and "untestable" not in text


def test_the_reading_says_why_the_probes_after_the_chosen_one_were_not_trained():
    table = S.search_table()
    text = S.search_reading(table)
    untrained = int(table["qualifies"].isna().sum())
    assert untrained and f"The other {untrained} were not trained" in text
    # the sweep at the chosen stand-in, counted as the chapter counts it (the probe's own runs
    # read in place of the sweep's at seeds 1337 and 42: lib.engine.probe_reads)
    assert "Table 5's 16 runs: 16 of 16 trained." in text
    # every probe decided: nothing left untrained to explain
    every = table.assign(qualifies=[True] + [False] * (len(table) - 1))
    assert "were not trained" not in S.search_reading(every)


def test_the_ordering_on_the_seeds_the_search_never_read_is_said_and_can_fail():
    # The search chose its stand-in on the seed-1337 and seed-42 runs the sweep reads again: the
    # ordering rule on the other seeds alone says whether the order needed them
    from lib.claims.parts.s6_2_sweep_124m import _unread_seeds

    def sweep(attn_123, ffn_123=6.50):
        rows = [
            ("FullResidual", 1337, 5.26),
            ("AttnOnly", 1337, 5.8),
            ("AttnOnly", 42, 5.9),
            ("FFNOnly", 1337, 6.49),
            ("FullResidual", 123, 5.27),
            ("AttnOnly", 123, attn_123),
            ("FFNOnly", 123, ffn_123),
        ]
        return pd.DataFrame(rows, columns=["config", "seed", "best_val_loss"])

    chosen = plans.STAND_IN_124M
    said = _unread_seeds(chosen, sweep(6.0), floor=6.48)
    assert said == "; on seeds 123 alone, which the search never read: HOLDS, minimum gap 0.500"
    # seed 123's AttnOnly off the floor but above its FFNOnly: the order fails where the search
    # did not look
    assert "never read: CONTRADICTED" in _unread_seeds(chosen, sweep(6.2, 6.1), floor=6.48)
    # a stand-in no search chose has nothing to set apart
    assert _unread_seeds("cpu-bpe", sweep(6.0), floor=6.48) == ""
