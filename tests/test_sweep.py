"""Run locks and multi-process sweeps: a plan is trained exactly once, whoever trains it."""

import json
import os
import platform
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from lib.engine.config import ConfigError, get_preset
from lib.engine.experiment import run
from lib.engine.lock import RunLock, RunLocked
from lib.engine.runs import RunDir, run_path
from lib.engine.sweep import shard, without_option

ROOT = Path(__file__).resolve().parents[1]


def write_lock(path: Path, **holder):
    path.mkdir(parents=True, exist_ok=True)
    (path / "run.lock").write_text(
        json.dumps({"host": platform.node(), "pid": os.getpid(), **holder})
    )


def dead_pid() -> int:
    p = subprocess.Popen([sys.executable, "-c", "pass"])
    p.wait()
    return p.pid


HOLD = (
    "import sys, time; from lib.engine.lock import RunLock; l = RunLock(sys.argv[1]); l.acquire(); "
    "print('held', flush=True); time.sleep(60)"
)


def test_a_live_holder_keeps_everyone_else_out(tiny, tmp_path):
    exp = tiny()
    d = run_path(exp, tmp_path)
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLD, str(d)], cwd=ROOT, stdout=subprocess.PIPE, text=True
    )
    try:
        assert holder.stdout.readline().strip() == "held"
        with pytest.raises(RunLocked, match=f"'pid': {holder.pid}"):
            run(exp, runs_dir=tmp_path, progress=False)
        assert RunDir(d).summary is None  # nothing was written
    finally:
        holder.kill()
        holder.wait()
    # Killed without releasing: the kernel dropped its lock, and the next process takes over.
    assert run(exp, runs_dir=tmp_path, progress=False)["status"] == "complete"


def test_a_dead_holders_lock_is_taken_over_with_a_message(tiny, tmp_path, capsys):
    exp = tiny()
    write_lock(run_path(exp, tmp_path), pid=dead_pid())
    assert run(exp, runs_dir=tmp_path, progress=False)["status"] == "complete"
    assert "taking over" in capsys.readouterr().err
    assert RunLock(run_path(exp, tmp_path)).holder()["released"] is True  # released when done


def test_a_released_lock_is_taken_quietly_and_never_deleted(tmp_path, capsys):
    with RunLock(tmp_path):
        pass
    with RunLock(tmp_path):
        pass
    assert "taking over" not in capsys.readouterr().err and (tmp_path / "run.lock").exists()


def test_shard_splits_a_plan_without_overlap():
    exps = list(range(10))
    parts = [shard(exps, f"{k}/3") for k in range(3)]
    assert sorted(sum(parts, [])) == exps and parts[1] == [1, 4, 7]
    for bad in ("3/3", "x/2", "1"):
        with pytest.raises(ConfigError, match="--shard"):
            shard(exps, bad)


def test_gpus_is_never_abbreviated_so_a_worker_cannot_spawn_workers():
    from lib.cli import main

    with pytest.raises(SystemExit):
        main(["sweep", "--plan", "release", "--gpu", "0,1", "--dry-run"])


def test_without_option_drops_the_option_and_its_value():
    assert without_option(["sweep", "--gpus", "0,1", "--seeds", "1"], "--gpus") == [
        "sweep",
        "--seeds",
        "1",
    ]
    assert without_option(["sweep", "--gpus=0,1"], "--gpus") == ["sweep"]


# Two evaluation batches (one for the train estimate): these tests are about who trains a run, and a
# full evaluation is most of a 2-step run's cost.
CHEAP = ["--set", "eval_batches=2", "--set", "train_eval_batches=1"]
SWEEP = [
    "sweep",
    "--scale",
    "cpu",
    "--configs",
    "AttnOnly",
    "--seeds",
    "1",
    "2",
    "--steps",
    "2",
    "--eval-every",
    "2",
    "--device",
    "cpu",
    "--quiet",
    "--no-diagnostics",
    "--poll",
    "0.5",
    *CHEAP,
]


def lib(args, runs_dir, **kw):
    env = {**os.environ, "PYTHONUNBUFFERED": "1", "OMP_NUM_THREADS": "1"}
    return subprocess.Popen(
        [sys.executable, "-m", "lib", *args, "--runs-dir", str(runs_dir)],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        **kw,
    )


def plan_dirs(runs_dir):
    from lib.engine.config import replace

    return [
        run_path(
            replace(
                get_preset("cpu", "residualgpt", "AttnOnly", s),
                max_steps=2,
                eval_interval=2,
                eval_batches=2,
                train_eval_batches=1,
            ),
            runs_dir,
        )
        for s in (1, 2)
    ]


def test_workers_and_sweeps_started_at_once_train_the_plan_exactly_once(tmp_path):
    # A two-worker sweep (--gpus: one worker per GPU) and an independent sweep of the
    # same plan, all at once: three processes, two runs, and each run trained in one go
    # by one of them, its lock released.
    workers, other = lib([*SWEEP, "--gpus", "0,1"], tmp_path), lib(SWEEP, tmp_path)
    out, other_out = workers.communicate(timeout=300)[0], other.communicate(timeout=300)[0]
    assert out.count("worker for GPU") == 2
    for d in plan_dirs(tmp_path):
        rd = RunDir(d)
        assert rd.status == "complete", (out, other_out)
        assert "resumed" not in rd.read_json("env.json")  # trained in one go, by one process
        assert RunLock(d).holder()["released"] is True


def test_a_killed_workers_run_is_resumed_by_another(tmp_path):
    long = [
        "train",
        "--scale",
        "cpu",
        "--config",
        "AttnOnly",
        "--seed",
        "3",
        "--steps",
        "400",
        "--eval-every",
        "2",
        "--device",
        "cpu",
        "--quiet",
        "--no-diagnostics",
        *CHEAP,
    ]
    victim = lib(long, tmp_path)
    from lib.engine.config import replace

    d = run_path(
        replace(
            get_preset("cpu", "residualgpt", "AttnOnly", 3),
            max_steps=400,
            eval_interval=2,
            eval_batches=2,
            train_eval_batches=1,
        ),
        tmp_path,
    )
    deadline = time.time() + 120
    while not (d / "checkpoints" / "latest.pt").exists() and time.time() < deadline:
        time.sleep(0.2)
    os.kill(victim.pid, signal.SIGKILL)
    victim.wait()
    assert RunLock(d).holder()["pid"] == victim.pid and RunDir(d).status == "running"
    resume = lib(
        [
            "sweep",
            "--scale",
            "cpu",
            "--configs",
            "AttnOnly",
            "--seeds",
            "3",
            "--steps",
            "400",
            "--eval-every",
            "2",
            "--device",
            "cpu",
            "--quiet",
            "--no-diagnostics",
            "--until",
            "6",
            *CHEAP,
        ],
        tmp_path,
    )
    out, _ = resume.communicate(timeout=300)
    assert "taking over" in out, out
    s = RunDir(d).summary
    assert s["status"] == "partial" and s["steps"] == 6
    assert len(RunDir(d).read_json("env.json")["resumed"]) == 1


# Issue 39, the review's gap B: a sweep decides "done" through RunDir.status and
# RunDir.problems, as `train` does.


@pytest.mark.parametrize(
    "edit, expected",
    [
        # a complete run with a NaN loss in one row: was skipped as done
        (
            lambda d: (d / "history.jsonl").write_text(
                (d / "history.jsonl").read_text().replace('"val_loss": 4.2', '"val_loss": NaN', 1)
            ),
            "is complete but damaged",
        ),
        # was TypeError at s["status"]
        (lambda d: (d / "summary.json").write_text("[1, 2]"), "cannot be read"),
        # was KeyError: 'status'
        (
            lambda d: (d / "summary.json").write_text("{}"),
            "cannot be read",
        ),
    ],
)
def test_a_sweep_refuses_a_damaged_finished_run_as_train_does(tmp_path, fake_run, edit, expected):
    from lib.engine.files import RunError
    from lib.engine.sweep import train_queue

    exp = get_preset("cpu", "residualgpt", "FullResidual", 1337)
    d = fake_run(exp, tmp_path, 1.95, escape=100, n_evals=3)
    # sound: done
    assert train_queue([exp], {"runs_dir": tmp_path, "progress": False}, log=lambda m: None) == []
    edit(d)
    with pytest.raises(RunError) as swept:
        train_queue([exp], {"runs_dir": tmp_path, "progress": False}, log=lambda m: None)
    with pytest.raises(RunError) as trained:
        run(exp, runs_dir=tmp_path, progress=False)
    assert expected in str(swept.value) and str(swept.value) == str(trained.value), (
        swept.value,
        trained.value,
    )
