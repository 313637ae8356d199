"""`torchrun --nproc_per_node 2 -m lib train ...` on the CPU (gloo): the same run as one process.

The two ranks share out each step's ``grad_accum`` micro-batches and DDP averages their
gradients, so the data, the global batch and the update are the single-process run's; only
the order of floating-point sums differs. A prefix (``--until``) resumed by a second
torchrun finishes the same run.
"""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from lib.cli import _experiment, parser
from lib.engine.experiment import run
from lib.engine.runs import RunDir, run_path

ROOT = Path(__file__).resolve().parents[1]
ARGS = [
    "--scale",
    "cpu",
    "--config",
    "AttnOnly",
    "--steps",
    "6",
    "--eval-every",
    "3",
    "--quiet",
    "--set",
    "n_layer=2",
    "--set",
    "n_embd=32",
    "--set",
    "n_head=2",
    "--set",
    "block_size=32",
    "--set",
    "batch_size=4",
    "--set",
    "grad_accum=2",
    "--set",
    "eval_batches=2",
    "--set",
    "train_eval_batches=1",
    "--set",
    "warmup_steps=2",
]
TOLERANCE = 1e-5  # relative, on every recorded loss: float sums in another order


def torchrun(*extra, runs_dir):
    cmd = [
        sys.executable,
        "-m",
        "torch.distributed.run",
        "--standalone",
        "--nproc_per_node",
        "2",
        "-m",
        "lib",
        "train",
        *ARGS,
        *extra,
        "--runs-dir",
        str(runs_dir),
    ]
    r = subprocess.run(
        cmd,
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "OMP_NUM_THREADS": "1"},
    )
    assert r.returncode == 0, r.stderr[-3000:]
    return r


@pytest.fixture
def one_thread():
    import torch

    n = torch.get_num_threads()
    # the same arithmetic as the ranks (OMP_NUM_THREADS=1), and a shared machine
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(n)


def losses(rd: RunDir):
    return [(r["step"], r["val_loss"], r["train_loss"]) for r in rd.history()]


def test_two_ranks_train_the_single_process_run_and_resume_it(tmp_path, one_thread):
    args = parser().parse_args(["train", *ARGS])
    exp = _experiment(args, args.config, args.seed)
    assert exp.train.grad_accum == 2
    run(exp, runs_dir=tmp_path / "one", progress=False)
    one = RunDir(run_path(exp, tmp_path / "one"))

    torchrun("--until", "3", runs_dir=tmp_path / "ddp")
    two = RunDir(run_path(exp, tmp_path / "ddp"))
    assert two.status == "partial" and two.ckpt.exists()
    torchrun(runs_dir=tmp_path / "ddp")
    assert two.status == "complete"
    assert json.loads((two.path / "env.json").read_text())["world_size"] == 2
    a, b = losses(one), losses(two)
    assert [s for s, *_ in a] == [s for s, *_ in b] == [0, 3, 6]
    for (_, va, ta), (_, vb, tb) in zip(a, b):
        assert vb == pytest.approx(va, rel=TOLERANCE) and tb == pytest.approx(ta, rel=TOLERANCE)


def test_a_plan_under_torchrun_is_refused(monkeypatch):
    from conftest import cli  # lib.cli.main in this process, with torchrun's environment

    monkeypatch.setenv("WORLD_SIZE", "2")
    monkeypatch.setenv("RANK", "0")
    r = cli("sweep", "--plan", "mixer_test", "--dry-run")
    assert r.returncode == 2 and "torchrun trains one run" in r.stderr and "--gpus" in r.stderr
