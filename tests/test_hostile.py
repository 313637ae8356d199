"""The hostile pass's failures (issue 57 item 3), one test each, each of which failed
on the code before: bad input and damaged files are refused in one line naming the
file, before anything is written."""

import json
import math

import pytest
import torch

from lib import cli
from lib.engine.experiment import run
from lib.engine.files import RunError, save_torch_atomic, write_json_atomic
from lib.engine.lock import RunLock
from lib.engine.runs import RunDir, run_path

MODE = dict(progress=False, device="cpu")


def refused(argv, capsys, *expected):
    rc = cli.main(argv)
    err = capsys.readouterr().err
    lines = [line for line in err.splitlines() if line.strip()]
    assert rc == 2 and len(lines) == 1 and "Traceback" not in err, err  # one line, no traceback
    for text in expected:
        assert text in lines[0], lines[0]
    return lines[0]


def test_a_run_lock_that_is_a_symbolic_link_is_refused_and_its_target_kept(tmp_path):
    # was: the lock opened through the link and wrote the holder's JSON over the file it points to
    target = tmp_path / "precious.txt"
    target.write_text("keep me")
    (tmp_path / "run").mkdir()
    (tmp_path / "run" / "run.lock").symlink_to(target)
    with pytest.raises(RunError, match="run.lock is a symbolic link"):
        RunLock(tmp_path / "run").acquire()
    assert target.read_text() == "keep me"


def test_sweep_with_an_empty_gpus_is_refused(tmp_path, capsys, monkeypatch):
    from lib.engine.train import Trainer

    def never(*a, **k):
        raise AssertionError("trained: the command was not refused")

    monkeypatch.setattr(Trainer, "fit", never)
    # was: '' is false, so the sweep trained in this one process
    refused(
        ["sweep", "--scale", "cpu", "--gpus", "", "--quiet", "--runs-dir", str(tmp_path)],
        capsys,
        "--gpus ''",
        "e.g. 0,1,2,3",
    )
    assert list(tmp_path.iterdir()) == []


@pytest.fixture
def exp(tiny):
    return tiny()


def partial_without_checkpoint(exp, runs_dir, until=10):
    run(exp, runs_dir=runs_dir, until=until, **MODE)
    rd = RunDir(run_path(exp, runs_dir))
    import shutil

    shutil.rmtree(rd.ckpt.parent)  # a released prefix on a new machine
    return rd


def test_train_until_on_a_damaged_partial_run_is_refused_not_returned(exp, tmp_path):
    rd = partial_without_checkpoint(exp, tmp_path)
    # not the history's best
    write_json_atomic(rd.path / "summary.json", {**rd.summary, "best_val_loss": 1.0})
    # was: the summary returned as it stood (its 1.0 printed as the run's
    # best), where sweep refuses the run
    with pytest.raises(
        RunError, match="partial but damaged: .*best_val_loss 1.0 is not the history's best"
    ):
        run(exp, runs_dir=tmp_path, until=5, **MODE)


@pytest.mark.parametrize(
    "change, expected",
    [
        ({"steps": None}, "steps is missing"),
        ({"steps": "10"}, "steps is '10', not an integer"),
    ],
)
def test_a_partial_summary_of_the_wrong_shape_is_one_line_in_train_until(
    exp, tmp_path, capsys, change, expected
):
    rd = partial_without_checkpoint(exp, tmp_path)
    summ = {**rd.summary, **change}
    write_json_atomic(rd.path / "summary.json", {k: v for k, v in summ.items() if v is not None})
    # was: a TypeError ('>=' not supported between 'str' and 'int') or a KeyError traceback
    with pytest.raises(RunError, match=expected):
        run(exp, runs_dir=tmp_path, until=5, **MODE)


def test_a_non_finite_value_in_a_checkpoint_is_a_run_error_naming_the_file(exp, tmp_path):
    run(exp, runs_dir=tmp_path, until=10, **MODE)
    rd = RunDir(run_path(exp, tmp_path))
    state = torch.load(rd.ckpt, weights_only=True)
    name = next(iter(state["trainer"]["model"]))
    state["trainer"]["model"][name].view(-1)[0] = math.nan
    save_torch_atomic(rd.ckpt, state)
    before = rd.history()
    # was: resumed, and recorded as a divergence at the next evaluation: a permanent, wrong result
    with pytest.raises(RunError, match=f"latest.pt holds non-finite values in {name}"):
        run(exp, runs_dir=tmp_path, **MODE)
    assert rd.history() == before and rd.summary["status"] == "partial"


@pytest.mark.parametrize(
    "damage, expected",
    [
        ("shape", "does not fit the model"),
        ("missing", "does not fit the model"),
        ("no_optimizer", "has no optimizer"),
        ("no_batches", "has no batches"),
        ("moment", "AdamW state"),
    ],
)
def test_a_checkpoint_of_the_right_experiment_but_the_wrong_shape_is_one_line(
    exp, tmp_path, damage, expected
):
    run(exp, runs_dir=tmp_path, until=10, **MODE)
    rd = RunDir(run_path(exp, tmp_path))
    state = torch.load(rd.ckpt, weights_only=True)
    t = state["trainer"]
    name = next(iter(t["model"]))
    if damage == "shape":
        t["model"][name] = torch.zeros(3, 3)
    elif damage == "missing":
        del t["model"][name]
    elif damage == "no_optimizer":
        del t["optimizer"]
    elif damage == "no_batches":
        del t["batches"]
    else:
        first = next(iter(t["optimizer"]["state"].values()))
        first["exp_avg"] = torch.zeros(7)
    save_torch_atomic(rd.ckpt, state)
    # was: torch's RuntimeError or a KeyError, a traceback naming no file
    with pytest.raises(RunError, match=f"latest.pt .*{expected}"):
        run(exp, runs_dir=tmp_path, **MODE)


@pytest.mark.parametrize("env", [[1], {"resumed": 5}])
def test_a_damaged_env_json_on_resume_is_one_line_naming_it(exp, tmp_path, env):
    run(exp, runs_dir=tmp_path, until=10, **MODE)
    rd = RunDir(run_path(exp, tmp_path))
    (rd.path / "env.json").write_text(json.dumps(env))
    # was: AttributeError ('list' object has no attribute 'get') or a TypeError
    with pytest.raises(
        RunError, match="env.json (is not a JSON object|has a 'resumed' that is not a list)"
    ):
        run(exp, runs_dir=tmp_path, **MODE)


def test_two_values_never_share_a_directory_name():
    from lib.engine.config import get_preset, replace

    base = get_preset("cpu", "residualgpt", "AttnOnly", 1337)
    a, b = (run_path(replace(base, lr=v)).name for v in (0.002, 0.0020000001))
    # was: both lr-0.002 (:g keeps 6 significant digits), so the second run
    # resumed or returned the first
    assert a != b and a.endswith("_lr-0.002") and b.endswith("_lr-0.0020000001")


def test_a_val_seed_too_large_for_a_generator_is_refused_before_anything_is_written(
    tmp_path, capsys
):
    # was: refused only once the run directory and its lock existed, by
    # an overflow that named no field
    refused(
        [
            "train",
            "--scale",
            "cpu",
            "--config",
            "AttnOnly",
            "--quiet",
            "--runs-dir",
            str(tmp_path),
            "--set",
            "val_seed=123456789012345678901234567890",
        ],
        capsys,
        "val_seed must be an integer from 0",
    )
    assert list(tmp_path.iterdir()) == []


def test_prepare_never_overwrites_another_tools_train_bin(tmp_path):
    from lib.engine import data

    src = tmp_path / "docs.jsonl"
    src.write_text(
        "".join(json.dumps({"text": f"Document {i}: the cat sat."}) + "\n" for i in range(12))
    )
    (tmp_path / "out").mkdir()
    # nanoGPT's names, no meta.json
    (tmp_path / "out" / "train.bin").write_bytes(b"nanoGPT's tokens")
    with pytest.raises(data.DataError, match="holds train.bin but no meta.json"):
        data.prepare_openwebtext(out_dir=tmp_path / "out", source=str(src), n_docs=12, val_every=4)
    assert (tmp_path / "out" / "train.bin").read_bytes() == b"nanoGPT's tokens"
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["train.bin"]
    # --force replaces them, as it replaces a prepared set
    assert (
        data.prepare_openwebtext(
            out_dir=tmp_path / "out", source=str(src), n_docs=12, val_every=4, force=True
        )["n_docs"]
        == 12
    )


@pytest.fixture
def no_timing(monkeypatch):
    import lib.engine.bench

    def never(*a, **k):
        raise AssertionError("timed: the command was not refused")

    monkeypatch.setattr(lib.engine.bench, "step_cost", never)
    monkeypatch.setattr(lib.engine.bench, "bench", never)


def test_bench_refuses_a_micro_batch_that_does_not_divide_the_batch_before_timing(
    capsys, no_timing
):
    # was: refused by the trainer after 2.5 minutes of timing the other loops
    refused(
        ["bench", "--step-cost-only", "--micro-batches", "8", "7"],
        capsys,
        "--micro-batch 7",
        "valid: 1, 2",
    )


def test_bench_refuses_a_batch_that_cannot_fit_in_memory(capsys, no_timing):
    # was: no memory check (train has one), so the machine's memory went first
    refused(["bench", "--scales", "cpu", "--batch-size", "100000000"], capsys, "GiB of memory")


def test_a_partial_summary_without_scale_is_one_line_in_train_until(exp, tmp_path, capsys):
    rd = partial_without_checkpoint(exp, tmp_path)
    write_json_atomic(
        rd.path / "summary.json", {k: v for k, v in rd.summary.items() if k != "scale"}
    )
    from lib.engine.config import off_preset_fields

    argv = [
        "train",
        "--scale",
        "cpu",
        "--config",
        "AttnOnly",
        "--quiet",
        "--runs-dir",
        str(tmp_path),
        "--until",
        "5",
        "--steps",
        str(exp.train.max_steps),
    ]
    # the same run
    argv += [a for k, v in off_preset_fields(exp).items() for a in ("--set", f"{k}={v}")]
    # was: a KeyError traceback printing the summary's line
    assert cli.main(argv) == 0, capsys.readouterr().err
    assert json.loads(capsys.readouterr().out.splitlines()[-1])["scale"] is None
    assert [p.name for p in rd.path.parent.iterdir()] == [rd.path.name]  # no other run was trained


@pytest.mark.parametrize(
    "change, expected",
    [
        ({"steps": None}, "steps is missing"),
        ({"steps": "10"}, "steps is '10', not an integer"),
    ],
)
def test_adopt_refuses_a_released_summary_of_the_wrong_shape_in_one_line(
    exp, tmp_path, change, expected
):
    from lib.engine.adopt import adopt

    rd = partial_without_checkpoint(exp, tmp_path / "runs")
    run(exp, runs_dir=tmp_path / "retrain", until=15, **MODE)
    summ = {**rd.summary, **change}
    write_json_atomic(rd.path / "summary.json", {k: v for k, v in summ.items() if v is not None})
    # was: a KeyError or a TypeError from the comparison
    with pytest.raises(RunError, match=f"summary.json: {expected}"):
        adopt(RunDir(run_path(exp, tmp_path / "retrain")).path, tmp_path / "runs")


def no_space(*a, **k):
    import errno

    raise OSError(errno.ENOSPC, "No space left on device")


@pytest.mark.parametrize("call, named", [("fsync", "config.json"), ("pwrite", "run.lock")])
def test_a_full_disk_at_a_runs_first_write_names_the_file_and_leaves_nothing(
    exp, tmp_path, monkeypatch, call, named
):
    import os

    # the disk fills at the run's first write (its lock, or config.json)
    monkeypatch.setattr(os, call, no_space)
    # was: "[Errno 28] No space left on device" naming no file, and run.lock
    # with empty folders left behind
    with pytest.raises(RunError, match=f"{named}"):
        run(exp, runs_dir=tmp_path / "runs", **MODE)
    assert list(tmp_path.iterdir()) == []
