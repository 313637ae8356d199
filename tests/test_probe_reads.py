"""The search probe's runs read as the chosen stand-in's (lib.engine.probe_reads): which runs of the
sweep a probe trained, where each is read from, and that a sweep does not train one again."""

import pytest

from lib.engine import plans, probe_reads
from lib.engine.config import get_preset, replace
from lib.engine.runs import RunDir, run_path

RAMP = plans.STAND_IN_124M


def ramp(config, seed):
    return get_preset(RAMP, "residualgpt", config, seed)


def test_the_probe_trained_four_of_the_sweeps_runs_and_no_others():
    # AttnOnly at both search seeds, the controls at 1337; never a seed or configuration the
    # probe did not train (Full Residual 42, No Residual, seed 123)
    have = {
        (c, s)
        for c in ("FullResidual", "AttnOnly", "FFNOnly", "NoResidual")
        for s in plans.SEEDS_124M
        if probe_reads.probe_run_of(ramp(c, s)) is not None
    }
    assert have == {("AttnOnly", 1337), ("AttnOnly", 42), ("FullResidual", 1337), ("FFNOnly", 1337)}
    probe_run = probe_reads.probe_run_of(ramp("AttnOnly", 42))
    assert probe_run.scale == "cpu-bpe" and probe_run.train.max_steps == 20000


@pytest.mark.parametrize(
    "change",
    [
        dict(dropout=0.0),  # another field: another run
        dict(max_steps=1000),  # the probe stopped at 1,200, not at this budget
        dict(lr=3e-4),
    ],
)
def test_an_experiment_that_differs_from_the_probe_in_any_other_way_has_no_probe_run(change):
    assert probe_reads.probe_run_of(replace(ramp("AttnOnly", 1337), **change)) is None


def test_a_budget_past_the_warm_up_has_no_probe_run_since_the_rates_part(monkeypatch):
    # Stopped at 2,500 steps, past the 2,000-step warm-up, the probe's rate decays towards its
    # 20,000th step and the preset's towards its 2,500th: every field but the budget agrees, and
    # only the rate check tells them apart.
    probe = plans.search_probe("124M warm-up slope")
    monkeypatch.setattr(plans, "search_probe", lambda name: probe._replace(stop=2500))
    assert probe_reads.probe_run_of(replace(ramp("AttnOnly", 1337), max_steps=2500)) is None
    monkeypatch.setattr(plans, "search_probe", lambda name: probe._replace(stop=1800))
    assert probe_reads.probe_run_of(replace(ramp("AttnOnly", 1337), max_steps=1800)) is not None


def test_a_probe_run_stopped_at_the_budget_is_read_where_the_run_has_no_directory(
    tmp_path, fake_run
):
    exp = ramp("AttnOnly", 1337)
    probe_run = probe_reads.probe_run_of(exp)
    # nothing at all: the experiment's own (missing) directory, whose command the chapter prints
    assert probe_reads.released_run(exp, tmp_path).path == run_path(exp, tmp_path)
    fake_run(probe_run, tmp_path, best=5.7, status="partial", steps=1200, floor=6.47)
    rd = probe_reads.released_run(exp, tmp_path)
    assert isinstance(rd, probe_reads.ProbeRun) and rd.path == run_path(probe_run, tmp_path)
    assert rd.status == "complete" and rd.summary["best_val_loss"] == 5.7
    assert rd.problems(exp) == [] and rd.problems(ramp("AttnOnly", 42))
    # the sweep's own finished run always comes first
    fake_run(exp, tmp_path, best=5.8, floor=6.47)
    assert probe_reads.released_run(exp, tmp_path).summary["best_val_loss"] == 5.8


@pytest.mark.parametrize("steps", [1150, 1250])
def test_a_probe_run_stopped_short_of_the_budget_or_past_it_is_not_read(tmp_path, fake_run, steps):
    exp = ramp("FFNOnly", 1337)
    fake_run(
        probe_reads.probe_run_of(exp),
        tmp_path,
        best=6.48,
        status="partial",
        steps=steps,
        floor=6.47,
    )
    assert type(probe_reads.released_run(exp, tmp_path)) is RunDir


def test_a_probe_run_whose_files_fail_their_checks_is_not_read(tmp_path, fake_run):
    exp = ramp("FullResidual", 1337)
    probe_run = probe_reads.probe_run_of(exp)
    # its config.json describes another experiment than its directory
    fake_run(
        probe_run,
        tmp_path,
        best=5.3,
        status="partial",
        steps=1200,
        floor=6.47,
        config=replace(probe_run, seed=7).to_dict(),
    )
    assert type(probe_reads.released_run(exp, tmp_path)) is RunDir


def test_a_sweep_reads_a_probe_run_as_trained_and_force_trains_its_own(
    tmp_path, fake_run, monkeypatch
):
    from lib.engine import experiment, sweep

    exp = ramp("AttnOnly", 42)
    fake_run(
        probe_reads.probe_run_of(exp), tmp_path, best=5.8, status="partial", steps=1200, floor=6.47
    )
    trained, said = [], []
    monkeypatch.setattr(experiment, "run", lambda e, **kw: trained.append(e) or {})
    sweep.train_queue([exp], {"runs_dir": tmp_path}, log=said.append)
    assert trained == [] and "probe's" in said[0] and "read from" in said[0]
    assert "steps20000" in said[0]
    sweep.train_queue([exp], {"runs_dir": tmp_path, "force": True}, log=said.append)
    assert trained == [exp]


@pytest.mark.parametrize("own", ["partial", "unreadable", "started"])
def test_a_run_of_its_own_in_any_state_is_never_shadowed_by_the_probes(tmp_path, fake_run, own):
    # a run being trained, stopped or damaged in its own directory is the trainer's to resume or
    # refuse: reading the probe's would hide it, and a sweep would skip it
    exp = ramp("AttnOnly", 1337)
    fake_run(probe_reads.probe_run_of(exp), tmp_path, best=5.7, status="partial", steps=1200)
    d = run_path(exp, tmp_path)
    if own == "partial":
        fake_run(exp, tmp_path, best=6.2, status="partial", steps=600, floor=6.47)
    else:
        d.mkdir(parents=True)
        if own == "unreadable":
            (d / "summary.json").write_text("{broken")
    assert type(probe_reads.released_run(exp, tmp_path)) is RunDir


def test_the_released_124m_chapter_names_each_run_it_reads_from_a_probe():
    from lib.claims.runset import RunSet

    lines = RunSet.of("124m_sweep").probe_run_lines()
    # the three seed-1337 runs; AttnOnly seed 42 has the sweep's own, which comes first
    assert [line.split("/")[2] for line in lines] == ["FullResidual", "AttnOnly", "FFNOnly"]
    assert all("seed1337: read from cpu-bpe/" in line and "steps20000" in line for line in lines), (
        lines
    )


def test_a_run_trained_both_ways_is_named_with_both_bests(tmp_path, fake_run):
    from lib.claims.runset import RunSet

    exp = ramp("AttnOnly", 42)
    fake_run(probe_reads.probe_run_of(exp), tmp_path, best=5.82, status="partial", steps=1200)
    rs = RunSet.of("124m_sweep", released_dir=tmp_path)
    assert rs.both_ways_lines() == []  # only the probe's: read, not "both ways"
    fake_run(exp, tmp_path, best=5.77, floor=6.47)
    assert rs.both_ways_lines() == ["AttnOnly seed 42: best 5.770 (read), 5.820 as the probe's run"]
