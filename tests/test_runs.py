"""Run directories: determinism, resume equivalence, atomicity, no overwrite, divergence."""

import json
import math

import pytest
import torch
from conftest import raise_at

from lib.engine.experiment import run
from lib.engine.files import RunError, write_json_atomic
from lib.engine.host import cpu_model
from lib.engine.runs import RunDir, run_path
from lib.engine.train import Callback

TIMING = ("train_time_s",)


def losses(history):
    return [{k: v for k, v in r.items() if k not in TIMING} for r in history]


def test_same_seed_twice_gives_identical_history(tiny, tmp_path):
    exp = tiny()
    run(exp, runs_dir=tmp_path / "a", progress=False)
    run(exp, runs_dir=tmp_path / "b", progress=False)
    a, b = (RunDir(run_path(exp, tmp_path / d)).history() for d in "ab")
    assert losses(a) == losses(b) and len(a) == 5


class Killed(BaseException):
    """A process killed outright (SIGKILL, a lost machine): no handler of lib's sees it,
    unlike a Ctrl-C's KeyboardInterrupt, which marks the run partial at its last
    evaluation (tests/test_segments.py)."""


def crash_at(exp, runs_dir, step):
    """Run ``exp`` until the checkpoint at ``step`` is written, then 'kill' it."""
    import lib.engine.experiment as E

    orig = E.Trainer.fit

    def fit_then_crash(self, *args, **kwargs):
        # after the recorder: the checkpoint at `step` exists
        self.callbacks.append(raise_at(step, Killed))
        return orig(self, *args, **kwargs)

    E.Trainer.fit = fit_then_crash
    try:
        with pytest.raises(Killed):
            run(exp, runs_dir=runs_dir, progress=False)
    finally:
        E.Trainer.fit = orig


@pytest.mark.parametrize("dropout", [0.0, 0.2])
def test_resume_after_kill_equals_uninterrupted(tiny, tmp_path, dropout):
    exp = tiny(dropout=dropout)
    run(exp, runs_dir=tmp_path / "full", progress=False)
    crash_at(exp, tmp_path / "killed", 10)
    rd = RunDir(run_path(exp, tmp_path / "killed"))
    assert rd.status == "running" and rd.ckpt.exists() and rd.history()[-1]["step"] == 10
    run(exp, runs_dir=tmp_path / "killed", progress=False)
    full = RunDir(run_path(exp, tmp_path / "full"))
    assert losses(rd.history()) == losses(full.history())
    assert rd.summary["best_val_loss"] == full.summary["best_val_loss"]
    assert rd.read_json("env.json")["resumed"][0]["step"] == 10


def test_complete_run_is_not_retrained_or_overwritten(tiny, tmp_path):
    exp = tiny()
    s1 = run(exp, runs_dir=tmp_path, progress=False)
    rd = RunDir(run_path(exp, tmp_path))
    before = {p.name: p.stat().st_mtime_ns for p in rd.path.iterdir() if p.is_file()}
    s2 = run(exp, runs_dir=tmp_path, progress=False)
    assert s1 == s2
    assert before == {p.name: p.stat().st_mtime_ns for p in rd.path.iterdir() if p.is_file()}
    run(exp, runs_dir=tmp_path, progress=False, force=True)  # forced: the old one is kept aside
    assert len(list(rd.path.parent.glob(rd.path.name + ".replaced-*"))) == 1


def test_directory_of_another_experiment_is_refused(tiny, tmp_path):
    exp = tiny()
    rd = RunDir(run_path(exp, tmp_path))
    write_json_atomic(rd.path / "config.json", {"something": "else"})
    with pytest.raises(RunError, match="config.json"):
        run(exp, runs_dir=tmp_path, progress=False)


def test_truncated_checkpoint_error_names_the_file(tiny, tmp_path):
    exp = tiny()
    crash_at(exp, tmp_path, 10)  # leaves an unfinished run with its checkpoint
    rd = RunDir(run_path(exp, tmp_path))
    data = rd.ckpt.read_bytes()
    rd.ckpt.write_bytes(data[: len(data) // 2])
    with pytest.raises(RunError, match=str(rd.ckpt)):
        run(exp, runs_dir=tmp_path, progress=False)


def test_foreign_checkpoint_is_refused(tiny, tmp_path):
    exp = tiny()
    rd = RunDir(run_path(exp, tmp_path))
    rd.ckpt.parent.mkdir(parents=True)
    torch.save({"model": {}}, rd.ckpt)
    with pytest.raises(RunError, match="different experiment"):
        run(exp, runs_dir=tmp_path, progress=False)


def test_atomic_write_leaves_old_file_on_failure(tmp_path):
    p = tmp_path / "x.json"
    write_json_atomic(p, {"a": 1})
    with pytest.raises(TypeError):
        write_json_atomic(p, {"a": object()})
    assert json.loads(p.read_text()) == {"a": 1}
    assert [q.name for q in tmp_path.iterdir()] == ["x.json"]  # no temporary left behind


class LastRow(Callback):
    """The trainer's own last history row, before anything is written to disk."""

    row = None

    def on_history(self, trainer, step):
        self.row = dict(trainer.history[-1])


def test_nan_loss_marks_run_diverged_and_keeps_history(tiny, tmp_path):
    exp = tiny(lr=1e6, grad_clip=0.0, warmup_steps=1, max_steps=200, eval_interval=2)
    last = LastRow()
    s = run(exp, runs_dir=tmp_path, progress=False, callbacks=[last])
    rd = RunDir(run_path(exp, tmp_path))
    assert s["status"] == "diverged" and s["steps"] < 200
    # in the trainer: the step's loss, a float that is NaN or infinite
    assert last.row["diverged"] is True and last.row["step"] == s["steps"]
    assert isinstance(last.row["train_loss"], float) and not math.isfinite(last.row["train_loss"])
    # on disk: JSON has no NaN or Infinity, so the same row holds null
    # there (lib.engine.files.finite)
    hist = rd.history()
    assert hist[-1] == {**last.row, "train_loss": None, "val_loss": None}
    assert len(hist) > 1


def test_run_directory_describes_itself(tiny, tmp_path):
    exp = tiny()
    s = run(exp, runs_dir=tmp_path, progress=False)
    rd = RunDir(run_path(exp, tmp_path))
    env = rd.read_json("env.json")
    assert {"torch", "device", "deterministic", "git_commit", "git_dirty_lib"} <= set(env)
    # which CPU, and the instruction set torch's kernels were chosen
    # for: two hosts round differently
    assert env["device_name"] == cpu_model() and env["cpu_capability"] in (
        "DEFAULT",
        "AVX2",
        "AVX512",
        "ZVECTOR",
        "VSX",
        "SVE256",
    )
    assert rd.read_json("config.json")["config_name"] == "AttnOnly"
    for key in (
        "scale",
        "impl",
        "config",
        "seed",
        "steps",
        "best_val_loss",
        "best_step",
        "final_val_loss",
        "status",
        "tokens_per_s",
        "wall_s",
        "escape_step",
        "unigram_floor",
    ):
        assert key in s
    assert s["status"] == "complete" and s["steps"] == 20
    # only resuming needs it
    assert not rd.ckpt.parent.exists() and not (rd.path / "weights.pt").exists()
    run(tiny(seed=2), runs_dir=tmp_path, progress=False, keep_weights=True)
    assert (run_path(tiny(seed=2), tmp_path) / "weights.pt").exists()
    assert rd.path.parts[-4:-1] == ("cpu", "residualgpt", "AttnOnly")
    # every field the tiny run changes from the `cpu` preset is in its name:
    # no other experiment shares it
    assert rd.path.name == (
        "seed1337_steps20_batch_size-8_block_size-32_eval_batches-3_eval_interval-5_n_embd-32_"
        "n_head-2_n_layer-2_train_eval_batches-2_warmup_steps-5"
    )


def test_evaluation_interval_does_not_change_the_trained_model(tiny, tmp_path):
    """Evaluating every 5 or every 10 steps trains on the same batches, so the losses at the
    shared evaluation steps agree exactly (dropout on, to include the global RNG)."""
    exp5, exp10 = tiny(eval_interval=5, dropout=0.1), tiny(eval_interval=10, dropout=0.1)
    every5 = run(exp5, runs_dir=tmp_path / "a", progress=False)
    every10 = run(exp10, runs_dir=tmp_path / "b", progress=False)
    h5 = {r["step"]: r["val_loss"] for r in RunDir(run_path(exp5, tmp_path / "a")).history()}
    h10 = {r["step"]: r["val_loss"] for r in RunDir(run_path(exp10, tmp_path / "b")).history()}
    assert sorted(h10) == [0, 10, 20] and all(h5[s] == h10[s] for s in h10)
    assert every5["final_val_loss"] == every10["final_val_loss"]


# --- prefix runs (--until) --------------------------------------------------------
def test_a_run_killed_at_a_checkpoint_and_resumed_to_that_step_ends_partial(tiny, tmp_path):
    # stopped right after its step-10 checkpoint on the way further, then asked to stop at step 10:
    # nothing is left to train, and the run ends as the prefix it is (partial, checkpoint kept),
    # not "stopped before max_steps"
    exp = tiny()
    crash_at(exp, tmp_path, 10)
    rd = RunDir(run_path(exp, tmp_path))
    assert rd.status == "running"
    s = run(exp, runs_dir=tmp_path, progress=False, until=10)
    assert (
        (s["status"], s["steps"]) == ("partial", 10) and rd.status == "partial" and rd.ckpt.exists()
    )
    assert [r["step"] for r in rd.history()] == [0, 5, 10]
    full = run(exp, runs_dir=tmp_path / "full", progress=False)
    assert run(exp, runs_dir=tmp_path, progress=False)["status"] == "complete"
    assert (
        losses(rd.history()) == losses(RunDir(run_path(exp, tmp_path / "full")).history()) and full
    )


@pytest.mark.parametrize("impl", ["residualgpt", "nanogpt"])  # nanogpt: random validation batches
def test_prefix_then_resume_equals_uninterrupted(tiny, tmp_path, impl):
    from lib.engine.config import replace

    # nanogpt: its model recipe (replace resets the bundle fields) and random validation batches,
    # whose generator state must survive the resume too.
    exp = replace(tiny(dropout=0.2), impl=impl, val_mode="random" if impl == "nanogpt" else "fixed")
    run(exp, runs_dir=tmp_path / "full", progress=False)
    s = run(exp, runs_dir=tmp_path / "prefix", progress=False, until=10)
    rd = RunDir(run_path(exp, tmp_path / "prefix"))
    assert (s["status"], s["steps"], s["max_steps"]) == ("partial", 10, 20) and rd.ckpt.exists()
    assert [r["step"] for r in rd.history()] == [0, 5, 10]
    assert run(exp, runs_dir=tmp_path / "prefix", progress=False, until=15)["status"] == "partial"
    s = run(exp, runs_dir=tmp_path / "prefix", progress=False)
    assert s["status"] == "complete" and not rd.ckpt.exists()
    full = RunDir(run_path(exp, tmp_path / "full")).history()
    assert losses(rd.history()) == losses(full)


def test_prefix_uses_the_full_runs_schedule(tiny, tmp_path):
    exp = tiny()
    run(exp, runs_dir=tmp_path, progress=False, until=10)
    hist = RunDir(run_path(exp, tmp_path)).history()
    from lib.engine.train import lr_at

    assert hist[-1]["lr"] == lr_at(exp.train, 9) and exp.train.max_steps == 20


def test_complete_run_is_never_replaced_by_a_prefix(tiny, tmp_path):
    exp = tiny()
    run(exp, runs_dir=tmp_path, progress=False)
    rd = RunDir(run_path(exp, tmp_path))
    before = {p.name: p.read_bytes() for p in rd.path.iterdir()}
    s = run(exp, runs_dir=tmp_path, progress=False, until=10)
    assert s["status"] == "complete" and s["steps"] == 20
    assert {p.name: p.read_bytes() for p in rd.path.iterdir()} == before


def test_prefix_must_end_on_an_evaluation(tiny, tmp_path):
    from lib.engine.config import ConfigError

    with pytest.raises(ConfigError, match="multiple of the evaluation interval"):
        run(tiny(), runs_dir=tmp_path, progress=False, until=7)


def test_released_prefix_without_checkpoint_is_kept_if_it_reaches_far_enough(tiny, tmp_path):
    exp = tiny()
    run(exp, runs_dir=tmp_path, progress=False, until=10)
    rd = RunDir(run_path(exp, tmp_path))
    rd.ckpt.unlink()  # as on a fresh clone: checkpoints are not released
    assert run(exp, runs_dir=tmp_path, progress=False, until=10)["steps"] == 10
    # further: refused (it cannot be continued, and retraining here would replace it;
    # lib.engine.adopt), nothing written run.lock: the lock's record of its holder and the second it
    # took it (rewritten by each taker), not the run's
    before = {
        p.name: p.read_bytes() for p in rd.path.iterdir() if p.is_file() and p.name != "run.lock"
    }
    with pytest.raises(RunError, match="checkpoint is gone"):
        run(exp, runs_dir=tmp_path, progress=False)
    assert {
        p.name: p.read_bytes() for p in rd.path.iterdir() if p.is_file() and p.name != "run.lock"
    } == before
    # --force: from step 0, the prefix moved aside
    s = run(exp, runs_dir=tmp_path, progress=False, force=True)
    assert s["status"] == "complete"
    assert len(list(tmp_path.rglob("seed1337*.replaced-*"))) == 1


# --- nothing wrong in silence --------------------------------------------------------
def test_json_files_never_hold_nan_or_infinity(tmp_path):
    write_json_atomic(tmp_path / "s.json", {"best": float("nan"), "rows": [1.0, float("inf")]})
    text = (tmp_path / "s.json").read_text()
    assert "NaN" not in text and "Infinity" not in text
    assert json.loads(text) == {"best": None, "rows": [1.0, None]}


@pytest.mark.parametrize("gain", [float("nan"), float("inf"), 0.0, -1.0])
def test_gains_must_be_finite_and_positive(tiny, gain):
    from lib.engine.config import ConfigError, replace

    with pytest.raises(ConfigError, match="finite number > 0"):
        replace(tiny(), gain_mode="runtime", gain=gain)


def test_a_resume_that_switches_diagnostics_is_refused(tiny, tmp_path):
    exp = tiny()
    run(exp, runs_dir=tmp_path, progress=False, until=10)
    assert RunDir(run_path(exp, tmp_path)).read_json("env.json")["diagnostics"] is True
    with pytest.raises(RunError, match="diagnostics on"):
        run(exp, runs_dir=tmp_path, progress=False, diagnostics=False)


def test_checkpoints_load_without_running_code(tiny, tmp_path):
    # A crafted pickle whose unpickling would run code: weights_only=True refuses it, nothing runs.
    import pickle

    exp = tiny()
    rd = RunDir(run_path(exp, tmp_path))
    rd.ckpt.parent.mkdir(parents=True)
    marker = tmp_path / "ran"

    class Payload:
        def __reduce__(self):
            return (open, (str(marker), "w"))

    torch.save({"x": Payload()}, rd.ckpt, pickle_module=pickle)
    assert not marker.exists()
    with pytest.raises(RunError):
        rd.load_checkpoint(exp)
    assert not marker.exists()


def test_a_complete_run_without_summary_is_rebuilt_never_retrained(tiny, tmp_path, capsys):
    exp = tiny()
    run(exp, runs_dir=tmp_path, progress=False)
    rd = RunDir(run_path(exp, tmp_path))
    before, history = rd.summary, (rd.path / "history.jsonl").read_bytes()
    (rd.path / "summary.json").unlink()
    # lost too: restored, so that the run's readers accept it again
    (rd.path / "config.json").unlink()
    s = run(exp, runs_dir=tmp_path, progress=False)
    assert (rd.path / "history.jsonl").read_bytes() == history  # not a step trained again
    assert rd.problems(exp) == []
    assert "rebuilt from its complete history" in capsys.readouterr().err
    for k in (
        "status",
        "steps",
        "best_val_loss",
        "best_step",
        "final_val_loss",
        "escape_step",
        "unigram_floor",
        "n_params",
    ):
        assert s[k] == before[k], k
    assert s["rebuilt_from_history"] is True


def test_a_summary_rebuilt_beside_an_env_json_that_is_no_object_names_no_device(
    tiny, tmp_path, capsys
):
    # the rebuild reads the device from env.json; one that is no JSON object is not the rebuild's
    # to refuse (RunDir.problems names it), so the summary is rebuilt with no device rather than
    # the run ending in a traceback
    exp = tiny()
    run(exp, runs_dir=tmp_path, progress=False)
    rd = RunDir(run_path(exp, tmp_path))
    (rd.path / "summary.json").unlink()
    (rd.path / "env.json").write_text("[1, 2]")
    s = run(exp, runs_dir=tmp_path, progress=False)
    assert s["rebuilt_from_history"] is True and s["device"] is None
    # and every reader still leaves the run out, by name
    assert any("env.json" in p for p in rd.problems(exp))


def test_an_unfinished_history_without_summary_or_checkpoint_is_refused(tiny, tmp_path):
    exp = tiny()
    crash_at(exp, tmp_path, 10)
    rd = RunDir(run_path(exp, tmp_path))
    (rd.path / "summary.json").unlink()
    rd.ckpt.unlink()
    with pytest.raises(RunError, match="history to step 10 of 20 but no finished summary.json"):
        run(exp, runs_dir=tmp_path, progress=False)


def test_a_resume_restores_a_deleted_config(tiny, tmp_path):
    exp = tiny()
    crash_at(exp, tmp_path, 10)
    rd = RunDir(run_path(exp, tmp_path))
    (rd.path / "config.json").unlink()
    run(exp, runs_dir=tmp_path, progress=False)
    assert rd.read_json("config.json") == exp.to_dict() and rd.status == "complete"


def test_a_running_run_without_checkpoint_is_refused_not_overwritten(tiny, tmp_path):
    # A run cut off where its checkpoint could not follow (a GPU
    # machine that starts bare each call).
    exp = tiny()
    crash_at(exp, tmp_path, 10)
    rd = RunDir(run_path(exp, tmp_path))
    rd.ckpt.unlink()
    history = (rd.path / "history.jsonl").read_bytes()
    with pytest.raises(RunError, match="no checkpoint to resume from"):
        run(exp, runs_dir=tmp_path, progress=False)
    assert (rd.path / "history.jsonl").read_bytes() == history


def test_resuming_with_an_until_below_the_checkpoint_stops_there_as_a_prefix(tiny, tmp_path):
    exp = tiny()
    crash_at(exp, tmp_path, 15)
    s = run(exp, runs_dir=tmp_path, progress=False, until=10)
    assert (s["status"], s["steps"]) == ("partial", 15)


def test_determinism_is_switched_both_ways_and_off_costs_nothing(monkeypatch):
    # set_deterministic(False) in a process where it is already off skips torch's call (which
    # imports torch._inductor, ~2 s a process); on, and off again, go through it.
    import torch

    from lib.engine import train

    calls = []
    real = torch.use_deterministic_algorithms
    monkeypatch.setattr(
        torch, "use_deterministic_algorithms", lambda on: (calls.append(on), real(on))
    )
    try:
        train.set_deterministic(False)
        assert calls == [] and not torch.are_deterministic_algorithms_enabled()
        train.set_deterministic(True)
        assert torch.are_deterministic_algorithms_enabled()
        train.set_deterministic(False)
        assert calls == [True, False] and not torch.are_deterministic_algorithms_enabled()
    finally:
        real(False)


def test_the_cpu_model_is_read_from_cpuinfo_and_its_absence_is_said(tmp_path):
    info = tmp_path / "cpuinfo"
    info.write_text(
        "processor\t: 0\nvendor_id\t: AuthenticAMD\nmodel name\t: AMD EPYC 7B13\n\nprocessor\t: 1\n"
        "model name\t: AMD EPYC 7B13\n"
    )
    assert cpu_model(info) == "AMD EPYC 7B13"
    # an ARM kernel's
    info.write_text("processor\t: 0\nBogoMIPS\t: 50.00\nCPU implementer\t: 0x41\n")
    assert cpu_model(info).startswith("unknown ") and "no model name in" in cpu_model(info)
    assert "no model name in" in cpu_model(tmp_path / "absent")


def test_segments_read_each_stretch_of_training_from_env_json(tmp_path):
    rd = RunDir(tmp_path)
    assert rd.segments() == []  # no env.json: nothing recorded
    (tmp_path / "env.json").write_text(
        json.dumps(
            {
                "micro_batch": None,
                "resumed": [{"step": 150, "micro_batch": 8, "fast_dropout": True}],
            }
        )
    )
    # before --fast-dropout existed
    assert rd.segments() == [
        {"step": 0, "micro_batch": None, "fast_dropout": False},
        {"step": 150, "micro_batch": 8, "fast_dropout": True},
    ]
