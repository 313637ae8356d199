"""The search probe's runs read as the chosen stand-in's (lib.engine.twins): which runs are twins,
where each is read from, and that a sweep does not train one again."""

import pytest

from lib.engine import plans, twins
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
        if twins.twin_of(ramp(c, s)) is not None
    }
    assert have == {("AttnOnly", 1337), ("AttnOnly", 42), ("FullResidual", 1337), ("FFNOnly", 1337)}
    twin = twins.twin_of(ramp("AttnOnly", 42))
    assert twin.scale == "cpu-bpe" and twin.train.max_steps == 20000


@pytest.mark.parametrize(
    "change",
    [
        dict(dropout=0.0),  # another field: another run
        dict(max_steps=1000),  # the probe stopped at 1,200, not at this budget
        dict(lr=3e-4),
    ],
)
def test_an_experiment_that_differs_from_the_probe_in_any_other_way_has_no_twin(change):
    assert twins.twin_of(replace(ramp("AttnOnly", 1337), **change)) is None


def test_a_budget_past_the_warm_up_has_no_twin_since_the_rates_part(monkeypatch):
    # Stopped at 2,500 steps, past the 2,000-step warm-up, the probe's rate decays towards its
    # 20,000th step and the preset's towards its 2,500th: every field but the budget agrees, and
    # only the rate check tells them apart.
    probe = plans.search_probe("124M warm-up slope")
    monkeypatch.setattr(plans, "search_probe", lambda name: probe._replace(stop=2500))
    assert twins.twin_of(replace(ramp("AttnOnly", 1337), max_steps=2500)) is None
    monkeypatch.setattr(plans, "search_probe", lambda name: probe._replace(stop=1800))
    assert twins.twin_of(replace(ramp("AttnOnly", 1337), max_steps=1800)) is not None


def test_a_twin_stopped_at_the_budget_is_read_in_place_of_a_missing_run(tmp_path, fake_run):
    exp = ramp("AttnOnly", 1337)
    twin = twins.twin_of(exp)
    # nothing at all: the experiment's own (missing) directory, whose command the chapter prints
    assert twins.released_run(exp, tmp_path).path == run_path(exp, tmp_path)
    fake_run(twin, tmp_path, best=5.7, status="partial", steps=1200, floor=6.47)
    rd = twins.released_run(exp, tmp_path)
    assert isinstance(rd, twins.TwinRun) and rd.path == run_path(twin, tmp_path)
    assert rd.status == "complete" and rd.summary["best_val_loss"] == 5.7
    assert rd.summary["read_as"] == str(run_path(exp, "."))
    assert rd.problems(exp) == [] and rd.problems(ramp("AttnOnly", 42))
    # the sweep's own finished run always comes first
    fake_run(exp, tmp_path, best=5.8, floor=6.47)
    assert twins.released_run(exp, tmp_path).summary["best_val_loss"] == 5.8


@pytest.mark.parametrize("steps", [1150, 1250])
def test_a_twin_stopped_short_of_the_budget_or_past_it_is_not_read(tmp_path, fake_run, steps):
    exp = ramp("FFNOnly", 1337)
    fake_run(twins.twin_of(exp), tmp_path, best=6.48, status="partial", steps=steps, floor=6.47)
    assert type(twins.released_run(exp, tmp_path)) is RunDir


def test_a_twin_whose_files_fail_their_checks_is_not_read(tmp_path, fake_run):
    exp = ramp("FullResidual", 1337)
    twin = twins.twin_of(exp)
    # its config.json describes another experiment than its directory
    fake_run(
        twin,
        tmp_path,
        best=5.3,
        status="partial",
        steps=1200,
        floor=6.47,
        config=replace(twin, seed=7).to_dict(),
    )
    assert type(twins.released_run(exp, tmp_path)) is RunDir


def test_a_sweep_reads_a_twin_as_trained_and_force_trains_its_own(tmp_path, fake_run, monkeypatch):
    from lib.engine import experiment, sweep

    exp = ramp("AttnOnly", 42)
    fake_run(twins.twin_of(exp), tmp_path, best=5.8, status="partial", steps=1200, floor=6.47)
    trained, said = [], []
    monkeypatch.setattr(experiment, "run", lambda e, **kw: trained.append(e) or {})
    sweep.train_queue([exp], {"runs_dir": tmp_path}, log=said.append)
    assert trained == [] and "twin" in said[0] and "steps20000" in said[0]
    sweep.train_queue([exp], {"runs_dir": tmp_path, "force": True}, log=said.append)
    assert trained == [exp]
