"""The limitations page's numbers: the compute by page and in all (``lib.book.costs.run_costs`` and
what it feeds), the stand-ins' departures from the paper's presets and the cost of the paper's
runs on this CPU (``lib.book.limitations``), each on a small runs folder built here, so that a
run added or changed moves them."""

import json
import math

import pandas as pd
import pytest

from lib.book import costs as C
from lib.book import limitations as L
from lib.engine import plans
from lib.engine.config import get_preset, recorded_fields
from lib.engine.files import write_json_atomic
from lib.engine.results import trained_whole, whole_cpu_hours


def _run(fake_run, exp, runs_dir, wall_s, env=None, tokens_per_s=1.0, **kw):
    """A fake finished run with ``wall_s`` seconds of wall time,
    ``tokens_per_s`` and ``env`` as its env.json."""
    d = fake_run(exp, runs_dir, **kw)
    s = json.loads((d / "summary.json").read_text())
    write_json_atomic(
        d / "summary.json",
        {**s, "scale": exp.scale, "impl": exp.impl, "wall_s": wall_s, "tokens_per_s": tokens_per_s},
    )
    if env is not None:
        write_json_atomic(d / "env.json", env)
    return d


def _row(table, page):
    return table.set_index("page").loc[C.page_title(page)]


def test_compute_is_summed_per_page_in_reading_order_and_in_all(tmp_path, fake_run):
    _run(fake_run, get_preset("cpu", "nanogpt", "AttnOnly", 1337), tmp_path, 1800)
    _run(fake_run, get_preset("cpu", "nanogpt", "FFNOnly", 42), tmp_path, 1800)
    # the 10M chapter's extra seed
    _run(fake_run, get_preset("cpu", "residualgpt", "FFNOnly", 7), tmp_path, 7200)
    _run(fake_run, get_preset("cpu-bpe", "residualgpt", "AttnOnly", 0), tmp_path, 900)
    costs = C.run_costs(tmp_path)
    t = C.compute_by_page(costs)
    assert list(t.page) == [C.page_title(p) for p, _ in C.page_runs()] + ["all released runs"]
    assert _row(t, "joint_collapse").runs == 2 and _row(t, "joint_collapse").hours == pytest.approx(
        1.0
    )
    assert _row(t, "10m_asymmetry").hours == pytest.approx(2.0)
    assert _row(t, "124m_sweep").hours == pytest.approx(0.25)
    assert _row(t, "mechanism").runs == 0 and _row(t, "mechanism").hours == 0
    assert t.runs.iloc[-1] == 4 and t.hours.iloc[-1] == pytest.approx(3.25)
    shown = C.compute_table(costs).set_index("page")
    assert shown.loc[C.page_title("10m_asymmetry"), "wall-clock hours"] == "2.0"
    assert shown.loc[C.page_title("10m_asymmetry"), "share of the total"] == "62%"
    # one run more moves the page's row and the total
    _run(fake_run, get_preset("cpu", "residualgpt", "AttnOnly", 7), tmp_path, 3600)
    t = C.compute_by_page(C.run_costs(tmp_path))
    assert _row(t, "10m_asymmetry").runs == 2 and t.hours.iloc[-1] == pytest.approx(4.25)


def test_a_run_two_pages_show_is_counted_once_on_the_first(tmp_path, fake_run):
    # seed 1337's AttnOnly is the gain chapter's g = 1 run and one of the
    # fixed-batch chapter's two checkpoints
    _run(fake_run, get_preset("cpu", "residualgpt", "AttnOnly", 1337), tmp_path, 3600)
    t = C.compute_by_page(C.run_costs(tmp_path))
    assert _row(t, "gain_confound").runs == 1 and _row(t, "fixed_val_batches").runs == 0
    assert t.runs.iloc[-1] == 1


def test_a_run_in_training_is_not_counted_and_a_run_no_page_shows_gets_its_own_row(
    tmp_path, fake_run
):
    _run(fake_run, get_preset("cpu", "nanogpt", "AttnOnly", 1337), tmp_path, 600, status="running")
    _run(fake_run, get_preset("cpu", "residualgpt", "AttnOnly", 999), tmp_path, 1800)  # in no plan
    costs = C.run_costs(tmp_path)
    assert list(costs.page) == [""]
    t = C.compute_by_page(costs)
    assert t.set_index("page").loc["shown on no page"].hours == pytest.approx(0.5)
    assert t.runs.iloc[-1] == 1


def test_every_released_run_is_counted_on_a_page_that_shows_it():
    # a plan left out of page_runs would put its runs under "shown on no page" (the escape map's
    # warm-up axis and the nanoGPT schedule seeds once did)
    costs = C.run_costs()
    assert len(costs) and list(costs.path[costs.page == ""]) == []


def test_a_run_whose_files_describe_another_experiment_is_left_out_and_named(tmp_path, fake_run):
    exp = get_preset("cpu", "nanogpt", "AttnOnly", 1337)
    other = get_preset("cpu", "nanogpt", "FFNOnly", 1337).to_dict()
    d = _run(fake_run, exp, tmp_path, 600, config=other)
    costs = C.run_costs(tmp_path)
    assert costs.empty and any(str(d) in why for why in costs.attrs["left_out"])


def test_the_compute_statement_says_what_trained_the_runs(tmp_path, fake_run):
    cpu = {"device": "cpu", "device_name": "cpu", "threads": 2}
    _run(fake_run, get_preset("cpu", "nanogpt", "AttnOnly", 1337), tmp_path, 3600, env=cpu)
    _run(
        fake_run,
        get_preset("cpu", "nanogpt", "FFNOnly", 1337),
        tmp_path,
        3600,
        env={**cpu, "device_name": "Intel Xeon", "resumed": [{**cpu, "device_name": "AMD EPYC"}]},
    )
    text = C.compute_statement(C.run_costs(tmp_path))
    assert text.startswith(
        "The 2 released runs took 2.0 hours of wall-clock time in all (0.1 days), every one on "
        "a CPU and none on a GPU: their env.json files give the device cpu and 2 threads."
    )
    # a resumed run's every segment is named; a run that names no processor is counted as such
    assert (
        "They name the processor for 1 run (AMD EPYC; Intel Xeon: 1 run) and not for the other 1, "
        "trained before"
    ) in text
    _run(
        fake_run,
        get_preset("cpu", "nanogpt", "NoResidual", 1337),
        tmp_path,
        3600,
        env={"device": "cuda", "device_name": "NVIDIA A100", "threads": 8},
    )
    text = C.compute_statement(C.run_costs(tmp_path))
    assert (
        "1 of them on a GPU" in text
        and "the device cpu in 2 runs, the device cuda in 1 run" in text
    )
    assert "2 threads in 2 runs, 8 threads in 1 run" in text
    # one thread is singular; a run resumed on another count names both
    assert C._threads(1) == "1 thread" and C._threads("1; 2") == "1 and 2 threads"


def test_the_departures_are_every_field_that_differs_from_the_paper_preset():
    t = L.stand_in_departures()
    bpe = (
        t[t["stand-in"] == "cpu-bpe for 124M (ResidualGPT)"]
        .set_index("field")
        .drop(columns="stand-in")
    )
    # read from the presets, both directions: a field that differs is listed, one that agrees is not
    paper, stand = recorded_fields(get_preset("124M")), recorded_fields(get_preset("cpu-bpe"))
    assert set(bpe.index) - {"parameters", "tokens per run"} == {
        k for k in paper if paper[k] != stand[k]
    }
    assert "n_layer" not in bpe.index  # 12 at both
    assert bpe.loc["dataset"].tolist() == ["openwebtext", "shakespeare_gpt2"]
    assert bpe.loc["precision"].tolist() == ["bf16", "fp32"]
    # config.py's comments, test_config's pins
    assert bpe.loc["parameters"].tolist() == ["124,356,864", "8,814,976"]
    assert bpe.loc["tokens per run"].tolist() == [
        f"{20000 * 16 * 8 * 1024:,}",
        f"{800 * 8 * 128:,}",
    ]
    # one comparison per stand-in and implementation the chapters train
    assert list(dict.fromkeys(t["stand-in"])) == [
        "cpu for 10M (nanoGPT)",
        "cpu for 10M (ResidualGPT)",
        "cpu-bpe for 124M (ResidualGPT)",
        "cpu-bpe-ramp for 124M (ResidualGPT)",
    ]
    ramp = t[t["stand-in"] == "cpu-bpe-ramp for 124M (ResidualGPT)"].set_index("field")
    assert (
        "warmup_steps" not in ramp.index and "lr" not in ramp.index and "dropout" not in ramp.index
    )
    assert ramp.loc["max_steps", "stand-in's value"] == "1,200"
    nano = t[t["stand-in"] == "cpu for 10M (nanoGPT)"].set_index("field").drop(columns="stand-in")
    assert "lr" not in nano.index  # nanoGPT keeps its constant 3e-4 at the stand-in
    assert nano.loc["parameters"].tolist() == ["10,788,929", "1,220,673"]


def test_the_paper_scale_cost_is_the_presets_arithmetic_over_the_measured_rate(tmp_path, fake_run):
    fast, slow = plans.paper_10m_prefix()[:2]
    _run(fake_run, fast, tmp_path, 3600, status="partial", steps=300, tokens_per_s=2000.0)
    _run(fake_run, slow, tmp_path, 7200, status="partial", steps=100, tokens_per_s=500.0)
    costs = C.run_costs(tmp_path)
    cost = L.paper_scale_cost(costs).set_index("paper's preset")
    tokens_10m = 3000 * 64 * 256
    assert cost.loc["10M", "tokens per run"] == tokens_10m
    assert cost.loc["10M", "hours per run"] == pytest.approx(tokens_10m / 2000 / 3600)
    assert cost.loc["10M", "hours per run at the median rate"] == pytest.approx(
        tokens_10m / 1250 / 3600
    )
    ratio = cost.loc["124M", "FLOPs per token, relative to 10M"]
    assert 10 < ratio < 14  # 124M's 6N plus attention over 10M's
    assert cost.loc["124M", "hours per run"] == pytest.approx(
        20000 * 16 * 8 * 1024 * ratio / 2000 / 3600
    )
    # Table 5 and its NoResidual anchor
    assert cost.loc["124M", "runs planned"] == len(plans.SEEDS_124M) * 3 + 1
    text = L.cannot_test_statement(costs)
    assert text.startswith(
        "The 2 released runs at the paper's 10M shape are prefixes: they trained 100 to 300 of "
        "its 3,000 steps, at 500 to 2,000 training tokens/s."
    )
    assert (
        f"At the fastest of those rates one whole 10M run takes "
        f"{tokens_10m / 2000 / 3600:.1f} hours," in text
    )
    assert "Trained whole" not in text
    shown = L.paper_scale_shown(L.paper_scale_cost(costs)).set_index("paper's preset")
    assert shown.loc["124M", "tokens per run"] == "2,621,440,000"
    # before a whole run is released, the summary's hours for one are the estimate, and say so
    assert L.whole_run_hours(costs) == (pytest.approx(tokens_10m / 2000 / 3600),) * 2 + (False,)
    # a run trained to its budget is counted whole, apart from the prefixes (issue 56:
    # two of the released are whole)
    whole = plans.paper_10m_whole()[0]
    _run(fake_run, whole, tmp_path, 18000, status="complete", steps=3000, tokens_per_s=1000.0)
    # once one is, they are what it took, evaluations and all
    assert L.whole_run_hours(C.run_costs(tmp_path)) == (5.0, 5.0, True)
    text = L.cannot_test_statement(C.run_costs(tmp_path))
    assert text.startswith(
        "Of the 3 released runs at the paper's 10M shape, 1 trained all of its 3,000 steps and 2 "
        "are prefixes of it, trained 100 to 300 steps, at 500 to 2,000 training tokens/s."
    ), text
    # what the whole run took, before the estimate at the best rate (training alone)
    assert (
        "Trained whole on a CPU here, a run took 5.0 hours, evaluations and a busy machine "
        "included; training alone, at the fastest of those rates one whole 10M run takes" in text
    )
    # a whole run stopped between its segments is in training, not a prefix
    other = plans.paper_10m_whole()[1]
    _run(fake_run, other, tmp_path, 3600, status="partial", steps=400, tokens_per_s=1000.0)
    text = L.cannot_test_statement(C.run_costs(tmp_path))
    assert text.startswith(
        "Of the 4 released runs at the paper's 10M shape, 1 trained all of its 3,000 steps, 1 is a "
        "whole run still in training (at step 400) and 2 are prefixes of it, trained 100 to 300 "
        "steps,"
    ), text


def test_without_a_released_10m_run_the_cost_is_not_measured(tmp_path):
    costs = C.run_costs(tmp_path)
    assert math.isnan(
        L.paper_scale_cost(costs).set_index("paper's preset").loc["124M", "hours per run"]
    )
    assert "not measured" in L.cannot_test_statement(costs)


def test_whole_cpu_hours_is_the_one_rule_for_what_a_whole_run_took():
    # the paper-shape claims' cost and the limitations page's both read this one rule
    def t(*rows):
        return pd.DataFrame(rows, columns=["steps", "max_steps", "wall_s", "device"])

    two = t((3000, 3000, 5.8 * 3600, "cpu"), (3000, 3000, 7.1 * 3600, "cpu"))
    assert whole_cpu_hours(two) == (pytest.approx(5.8), pytest.approx(7.1))
    # a prefix, a GPU's run, a run with no clock: none is a whole CPU run
    assert whole_cpu_hours(t((300, 3000, 3600.0, "cpu"))) is None
    assert whole_cpu_hours(t((3000, 3000, 360.0, "cuda:0"))) is None
    assert whole_cpu_hours(t((3000, 3000, float("nan"), "cpu"))) is None
    # one of each: the CPU's whole run alone
    mixed = t(
        (3000, 3000, 6.0 * 3600, "cpu"), (300, 3000, 0.5 * 3600, "cpu"), (3000, 3000, 1.0, "cuda")
    )
    assert whole_cpu_hours(mixed) == (pytest.approx(6.0), pytest.approx(6.0))
    assert whole_cpu_hours(pd.DataFrame()) is None


def test_trained_whole_is_the_one_test_of_a_whole_run():
    # the summary's "N of them whole", the limitations page's whole runs and whole_cpu_hours all
    # count with it (test_summary moves the sentence the count makes both ways): a run at its
    # budget is whole, one short of it is not
    runs = pd.DataFrame(
        {
            "steps": [3000, 2999, 300, 800],
            "max_steps": [3000, 3000, 3000, 800],
        }
    )
    assert list(trained_whole(runs)) == [True, False, False, True]
    assert not trained_whole(runs.assign(steps=[2999, 2999, 300, 799])).any()
    # a run that does not record its steps is not whole; no run, no whole run
    unrecorded = runs.assign(steps=[float("nan"), 3000, 300, 800])
    assert list(trained_whole(unrecorded)) == [False, True, False, True]
    assert trained_whole(runs.iloc[0:0]).sum() == 0
