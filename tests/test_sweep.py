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

from lib.config import ConfigError, get_preset
from lib.experiment import run
from lib.runs import RunDir, RunLock, RunLocked, run_path
from lib.sweep import shard, without_option

ROOT = Path(__file__).resolve().parents[1]


def write_lock(path: Path, **holder):
    path.mkdir(parents=True, exist_ok=True)
    (path / "run.lock").write_text(json.dumps({"host": platform.node(), "pid": os.getpid(), **holder}))


def dead_pid() -> int:
    p = subprocess.Popen([sys.executable, "-c", "pass"])
    p.wait()
    return p.pid


def test_a_live_holder_keeps_everyone_else_out(tiny, tmp_path):
    exp = tiny()
    write_lock(run_path(exp, tmp_path))  # this process is alive
    with pytest.raises(RunLocked, match="is being trained by"):
        run(exp, runs_dir=tmp_path, progress=False)
    assert RunDir(run_path(exp, tmp_path)).summary is None  # nothing was written


def test_a_dead_holders_lock_is_taken_over_with_a_message(tiny, tmp_path, capsys):
    exp = tiny()
    write_lock(run_path(exp, tmp_path), pid=dead_pid())
    assert run(exp, runs_dir=tmp_path, progress=False)["status"] == "complete"
    assert "taking over" in capsys.readouterr().err
    assert not (run_path(exp, tmp_path) / "run.lock").exists()  # released when done


def test_another_hosts_lock_is_never_taken_over(tmp_path):
    write_lock(tmp_path, host="elsewhere", pid=dead_pid())
    with pytest.raises(RunLocked):
        RunLock(tmp_path).acquire()


def test_shard_splits_a_plan_without_overlap():
    exps = list(range(10))
    parts = [shard(exps, f"{k}/3") for k in range(3)]
    assert sorted(sum(parts, [])) == exps and parts[1] == [1, 4, 7]
    for bad in ("3/3", "x/2", "1"):
        with pytest.raises(ConfigError, match="--shard"):
            shard(exps, bad)


def test_without_option_drops_the_option_and_its_value():
    assert without_option(["sweep", "--gpus", "0,1", "--seeds", "1"], "--gpus") == ["sweep", "--seeds", "1"]
    assert without_option(["sweep", "--gpus=0,1"], "--gpus") == ["sweep"]


SWEEP = ["sweep", "--scale", "cpu", "--configs", "AttnOnly", "--seeds", "1", "2", "--steps", "2",
         "--eval-every", "2", "--device", "cpu", "--quiet", "--no-diagnostics", "--poll", "0.5"]


def lib(args, runs_dir, **kw):
    env = {**os.environ, "PYTHONUNBUFFERED": "1", "OMP_NUM_THREADS": "1"}
    return subprocess.Popen([sys.executable, "-m", "lib", *args, "--runs-dir", str(runs_dir)], cwd=ROOT, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, **kw)


def plan_dirs(runs_dir):
    return [run_path(get_preset("cpu", "residualgpt", "AttnOnly", s), runs_dir).with_name(f"seed{s}_steps2")
            for s in (1, 2)]


def trained_by(outputs) -> dict:
    """How many of the processes whose ``outputs`` are given finished each seed (one summary line each)."""
    seeds = [json.loads(line)["seed"] for out in outputs for line in out.splitlines() if line.startswith('{"scale"')]
    return {s: seeds.count(s) for s in set(seeds)}


def test_two_workers_train_the_plan_exactly_once(tmp_path):
    out, _ = lib([*SWEEP, "--gpus", "0,1"], tmp_path).communicate(timeout=300)
    assert out.count("worker for GPU") == 2
    for d in plan_dirs(tmp_path):
        rd = RunDir(d)
        assert rd.status == "complete", out
        assert "resumed" not in rd.read_json("env.json")  # trained in one go, by one worker
        assert not (d / "run.lock").exists()
    assert trained_by([out]) == {1: 1, 2: 1}, out


def test_two_sweeps_started_at_once_never_share_a_run(tmp_path):
    a, b = lib(SWEEP, tmp_path), lib(SWEEP, tmp_path)
    outs = [p.communicate(timeout=300)[0] for p in (a, b)]
    for d in plan_dirs(tmp_path):
        assert RunDir(d).status == "complete" and "resumed" not in RunDir(d).read_json("env.json")
    assert trained_by(outs) == {1: 1, 2: 1}, outs


def test_a_killed_workers_run_is_resumed_by_another(tmp_path):
    long = ["train", "--scale", "cpu", "--config", "AttnOnly", "--seed", "3", "--steps", "400", "--eval-every", "2",
            "--device", "cpu", "--quiet", "--no-diagnostics"]
    victim = lib(long, tmp_path)
    d = run_path(get_preset("cpu", "residualgpt", "AttnOnly", 3), tmp_path).with_name("seed3_steps400")
    deadline = time.time() + 120
    while not (d / "checkpoints" / "latest.pt").exists() and time.time() < deadline:
        time.sleep(0.2)
    os.kill(victim.pid, signal.SIGKILL)
    victim.wait()
    assert (d / "run.lock").exists() and RunDir(d).status == "running"
    resume = lib(["sweep", "--scale", "cpu", "--configs", "AttnOnly", "--seeds", "3", "--steps", "400",
                  "--eval-every", "2", "--device", "cpu", "--quiet", "--no-diagnostics", "--until", "6"], tmp_path)
    out, _ = resume.communicate(timeout=300)
    assert "taking over" in out, out
    s = RunDir(d).summary
    assert s["status"] == "partial" and s["steps"] == 6
    assert len(RunDir(d).read_json("env.json")["resumed"]) == 1
