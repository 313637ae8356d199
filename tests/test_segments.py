"""A run trained in segments as the paper-shape 10M runs are (micro-batches, --fast-dropout,
--until), and the rule for a segment whose checkpoint is gone (lib.engine.adopt): tiny runs with
dropout, so the mask stream matters."""

import contextlib
import itertools
import json
import shutil

import pytest
from conftest import raise_at

from lib.engine.adopt import NOISE_SIGMAS, adopt
from lib.engine.experiment import run
from lib.engine.files import RunError, write_jsonl_atomic
from lib.engine.runs import RunDir, run_path

# the whole runs' execution mode, scaled down: the batch of 8 in slices of 4,
# masks from the run's own stream
MODE = dict(progress=False, device="cpu", micro_batch=4, fast_dropout=True)


@pytest.fixture
def exp(tiny):
    return tiny(dropout=0.2)


def history(rd):
    return [{k: v for k, v in r.items() if k != "train_time_s"} for r in rd.history()]


def listing(root):
    # run.lock is the lock's own record of its last holder (rewritten by every process
    # that takes it), not the run's
    return {
        str(p.relative_to(root)): p.read_bytes() if p.name != "run.lock" else b"lock"
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


def test_a_run_trained_in_segments_is_the_run_trained_straight_through(exp, tmp_path):
    run(exp, runs_dir=tmp_path / "straight", **MODE)
    for until in (5, 10, 15, None):  # four segments, each resumed from the last one's checkpoint
        s = run(exp, runs_dir=tmp_path / "segments", until=until, **MODE)
        assert s["status"] == ("complete" if until is None else "partial")
    a, b = (RunDir(run_path(exp, tmp_path / d)) for d in ("straight", "segments"))
    assert history(a) == history(b) and len(history(a)) == 5
    assert [seg["step"] for seg in b.read_json("env.json")["resumed"]] == [5, 10, 15]
    assert all(
        seg["fast_dropout"] and seg["micro_batch"] == 4
        for seg in b.read_json("env.json")["resumed"]
    )


@pytest.mark.parametrize("at", [10, 5])
def test_a_run_stopped_by_ctrl_c_is_released_partial_and_resumes_exactly(exp, tmp_path, at):
    run(exp, runs_dir=tmp_path / "straight", **MODE)
    with pytest.raises(KeyboardInterrupt):
        run(exp, runs_dir=tmp_path / "stopped", callbacks=[raise_at(at, KeyboardInterrupt)], **MODE)
    rd = RunDir(run_path(exp, tmp_path / "stopped"))
    # at the evaluation before the Ctrl-C; at step 0 nothing is a
    # prefix yet, and the summary says so
    assert (rd.summary["status"], rd.summary["steps"]) == (
        ("partial", 5) if at == 10 else ("running", 0)
    )
    assert run(exp, runs_dir=tmp_path / "stopped", **MODE)["status"] == "complete"
    assert history(rd) == history(RunDir(run_path(exp, tmp_path / "straight")))


def test_a_checkpoint_behind_its_history_is_refused(exp, tmp_path):
    run(exp, runs_dir=tmp_path, until=5, **MODE)
    rd = RunDir(run_path(exp, tmp_path))
    old = tmp_path / "old.pt"
    shutil.copy(rd.ckpt, old)
    run(exp, runs_dir=tmp_path, until=10, **MODE)
    shutil.copy(old, rd.ckpt)  # step 5's checkpoint beside a history to step 10
    before = listing(rd.path)
    with pytest.raises(RunError, match="not this history's"):
        run(exp, runs_dir=tmp_path, until=15, **MODE)
    assert listing(rd.path) == before


def lost_checkpoint(exp, released, retrain, until=10):
    """A released prefix to ``until`` whose checkpoint is gone, and a
    retrain from step 0 beside it."""
    run(exp, runs_dir=released, until=until, **MODE)
    rd = RunDir(run_path(exp, released))
    shutil.rmtree(rd.ckpt.parent)  # as on a new machine: checkpoints are not released
    run(exp, runs_dir=retrain, until=until + 5, **MODE)
    return rd, RunDir(run_path(exp, retrain))


def test_a_retrain_that_reproduces_the_prefix_takes_its_place_and_the_run_goes_on(exp, tmp_path):
    rd, re = lost_checkpoint(exp, tmp_path / "runs", tmp_path / "retrain")
    # the released prefix is never trained over
    with pytest.raises(RunError, match="checkpoint is gone"):
        run(exp, runs_dir=tmp_path / "runs", **MODE)
    result = adopt(re.path, tmp_path / "runs")
    # same machine, same options: bitwise
    assert result["max_sigmas"] == 0.0 and result["steps"] == 10
    assert rd.ckpt.exists() and not re.path.exists() and rd.summary["steps"] == 15
    adopted = json.loads((rd.path / "env.json").read_text())["adopted"]
    # the replaced history's commit: none here (the folder is outside the
    # repository), else where git last had it
    assert adopted["steps"] == 10 and adopted["replaced_commit"] is None
    aside = rd.path.with_name(rd.path.name + ".replaced-by-retrain")
    # the released files, kept
    assert json.loads((aside / "summary.json").read_text())["steps"] == 10
    assert run(exp, runs_dir=tmp_path / "runs", **MODE)["status"] == "complete"
    run(exp, runs_dir=tmp_path / "straight", **MODE)
    assert history(rd) == history(RunDir(run_path(exp, tmp_path / "straight")))


@pytest.mark.parametrize("damage", ["shifted", "short", "no_se"])
def test_a_retrain_that_does_not_reproduce_the_prefix_moves_nothing(exp, tmp_path, damage):
    rd, re = lost_checkpoint(exp, tmp_path / "runs", tmp_path / "retrain")
    hist = rd.history()
    # one evaluation far outside the noise: another realisation, not this run
    if damage == "shifted":
        hist[1]["val_loss"] += 50 * NOISE_SIGMAS * hist[1]["val_loss_se"]
        match = "does not reproduce"
    elif damage == "no_se":  # no stated noise: no test, so no adoption
        del hist[1]["val_loss_se"]
        match = "no val_loss_se"
    else:
        hist = hist[:-1]
        match = "same steps"
    write_jsonl_atomic(rd.path / "history.jsonl", hist)
    before = listing(tmp_path)
    with pytest.raises(RunError, match=match):
        adopt(re.path, tmp_path / "runs")
    assert listing(tmp_path) == before


def test_a_damaged_retrain_is_never_adopted(exp, tmp_path):
    # the retrain takes a released run's place: a history that contradicts its summary (a
    # NaN evaluation in a run that says it is fine) is refused by RunDir.problems, the
    # readers' one check, and nothing moves
    rd, re = lost_checkpoint(exp, tmp_path / "runs", tmp_path / "retrain")
    hist = re.history()
    hist[1]["val_loss"] = float("nan")
    write_jsonl_atomic(re.path / "history.jsonl", hist)
    before = listing(tmp_path)
    with pytest.raises(RunError, match="is damaged, so nothing was moved"):
        adopt(re.path, tmp_path / "runs")
    assert listing(tmp_path) == before


def test_adopt_refuses_a_run_that_still_has_its_checkpoint(exp, tmp_path):
    run(exp, runs_dir=tmp_path / "runs", until=10, **MODE)
    run(exp, runs_dir=tmp_path / "retrain", until=10, **MODE)
    before = listing(tmp_path)
    with pytest.raises(RunError, match="has its checkpoint"):
        adopt(RunDir(run_path(exp, tmp_path / "retrain")).path, tmp_path / "runs")
    assert listing(tmp_path) == before


def test_last_commit_names_where_a_released_file_can_be_checked_out_again(tmp_path):
    from lib.engine.host import ROOT, last_commit

    if last_commit(ROOT / "README.md") is None:
        pytest.skip("no git history here (a release tarball)")
    assert len(last_commit(ROOT / "README.md")) == 40
    assert last_commit(tmp_path / "history.jsonl") is None  # outside the repository
    assert last_commit(ROOT / "no-such-file.json") is None  # never committed


class Killed(BaseException):
    """A kill -9 stood in for: nothing of lib catches it."""


def outcome(root):
    # every file under root, its bytes with root's own path written as ROOT
    # (env.json's adopted.from names it)
    return {k: v.replace(str(root).encode(), b"ROOT") for k, v in listing(root).items()}


@contextlib.contextmanager
def killed_at(k, when):
    """lib.engine.adopt's k-th step on the file system (a move, a JSON write, a folder made or
    removed, a file unlinked) stopped ``before`` it, ``after`` it, or, for a move,
    ``during`` it as a move across file systems is: the copy half made, the source still
    whole. Yields the steps seen."""
    from pathlib import Path

    import lib.engine.adopt

    seen, real = (
        [],
        {
            "move": shutil.move,
            "json": lib.engine.adopt.write_json_atomic,
            "mkdir": Path.mkdir,
            "unlink": Path.unlink,
            "rmdir": Path.rmdir,
        },
    )

    def step(kind):
        def do(*args, **kwargs):
            seen.append((kind, Path(args[0]).name))
            if len(seen) != k:
                return real[kind](*args, **kwargs)
            if when == "during" and kind == "move" and Path(args[0]).is_file():
                Path(args[1]).write_bytes(Path(args[0]).read_bytes()[:10])
            elif when == "during" and kind == "move":
                real["mkdir"](Path(args[1]))
            elif when == "after":
                real[kind](*args, **kwargs)
            raise Killed

        return do

    patches = [
        (shutil, "move", step("move")),
        (lib.engine.adopt, "write_json_atomic", step("json")),
        (Path, "mkdir", step("mkdir")),
        (Path, "unlink", step("unlink")),
        (Path, "rmdir", step("rmdir")),
    ]
    try:
        for obj, name, fake in patches:
            setattr(obj, name, fake)
        yield seen
    finally:
        for (obj, name, _), kind in zip(patches, real):
            setattr(obj, name, real[kind])


@pytest.mark.parametrize("when", ["before", "during", "after"])
def test_an_adoption_killed_at_any_step_is_finished_by_the_same_command(exp, tmp_path, when):
    lost_checkpoint(exp, tmp_path / "base" / "runs", tmp_path / "base" / "retrain")

    def copy(name):
        shutil.copytree(tmp_path / "base", tmp_path / name)
        return tmp_path / name, RunDir(run_path(exp, tmp_path / name / "retrain")).path

    root, src = copy("straight")
    want = adopt(src, root / "runs")
    expected = outcome(root)
    for k in itertools.count(1):
        root, src = copy(f"k{k}")
        with killed_at(k, when) as seen:
            try:
                adopt(src, root / "runs")
            except Killed:
                pass
            else:
                break  # fewer than k steps: each has been killed at
        released = RunDir(run_path(exp, root / "runs"))
        # its files in three places: nobody trains or reads it
        if (released.path / "adopting.json").exists():
            with pytest.raises(RunError, match="adoption that was cut off"):
                run(exp, runs_dir=root / "runs", **MODE)
            assert "cut off" in released.problems(exp)[0]
        # killed after its last step: done, and the same command says so
        if outcome(root) == expected:
            with pytest.raises(
                RunError, match="does not exist .*an adoption from it that finished"
            ):
                adopt(src, root / "runs")
        else:
            assert adopt(src, root / "runs") == want, seen[-1]  # the same command
        assert outcome(root) == expected, (k, when, seen[-1])
    assert k > 20 and ("move", "checkpoints") in seen and ("json", "env.json") in seen


def test_adopt_refuses_a_source_inside_the_tree_it_adopts_into(exp, tmp_path):
    rd, _ = lost_checkpoint(exp, tmp_path / "runs", tmp_path / "retrain")
    # a retrain inside the released tree
    run(exp, runs_dir=tmp_path / "runs" / "retrain", until=15, **MODE)
    before = listing(tmp_path)
    with pytest.raises(RunError, match="is inside .* among the runs a retrain is adopted into"):
        adopt(RunDir(run_path(exp, tmp_path / "runs" / "retrain")).path, tmp_path / "runs")
    assert listing(tmp_path) == before


@pytest.mark.parametrize("damage", [b"", b"not a checkpoint"])
def test_adopt_refuses_a_retrain_whose_checkpoint_cannot_be_loaded(exp, tmp_path, damage):
    rd, re = lost_checkpoint(exp, tmp_path / "runs", tmp_path / "retrain")
    re.ckpt.write_bytes(damage)  # zero bytes (a full disk), or another file
    before = listing(tmp_path)
    with pytest.raises(
        RunError, match="latest.pt is truncated, damaged or not a file this project wrote"
    ):
        adopt(re.path, tmp_path / "runs")
    assert listing(tmp_path) == before


@pytest.mark.parametrize("dirty", [True, False])
def test_adopt_into_the_released_runs_refuses_a_retrain_from_uncommitted_lib(
    exp, tmp_path, monkeypatch, dirty
):
    import lib.engine.adopt

    # a stand-in for the released runs/
    monkeypatch.setattr(lib.engine.adopt, "RUNS_DIR", tmp_path / "runs")
    rd, re = lost_checkpoint(exp, tmp_path / "runs", tmp_path / "retrain")
    run(exp, runs_dir=tmp_path / "retrain", **MODE)  # a second segment, to the end
    env = re.read_json("env.json")
    clean = {"git_commit": "0" * 40, "git_dirty_lib": False}
    env = {**env, **clean, "resumed": [{**seg, **clean} for seg in env["resumed"]]}
    env["resumed"][-1]["git_dirty_lib"] = dirty  # one segment of the retrain from a dirty lib/
    (re.path / "env.json").write_text(json.dumps(env))
    before = listing(tmp_path)
    if dirty:
        with pytest.raises(RunError, match="trained from uncommitted lib/ .* segment from step 15"):
            adopt(re.path, tmp_path / "runs")
        assert listing(tmp_path) == before
    else:
        assert adopt(re.path, tmp_path / "runs")["steps"] == 10


def test_adopt_through_a_symbolic_link_removes_the_link_and_exits_cleanly(exp, tmp_path):
    rd, re = lost_checkpoint(exp, tmp_path / "runs", tmp_path / "retrain")
    (tmp_path / "link").symlink_to(re.path)
    # was: exit 2, "Not a directory"
    assert adopt(tmp_path / "link", tmp_path / "runs")["steps"] == 10
    assert not (tmp_path / "link").is_symlink() and not re.path.exists() and rd.ckpt.exists()


def test_a_run_cut_off_while_running_is_adopted_like_a_partial_one_but_never_while_held(
    exp, tmp_path
):
    # a machine lost mid-run: the summary still says "running" at its last
    # evaluation, and the checkpoint is gone
    rd, re = lost_checkpoint(exp, tmp_path / "runs", tmp_path / "retrain")
    (rd.path / "summary.json").write_text(json.dumps({**rd.summary, "status": "running"}))
    from lib.engine.lock import RunLock, RunLocked

    lock = RunLock(rd.path)
    lock.acquire()  # a live process still training it: nothing moves
    try:
        before = listing(tmp_path)
        with pytest.raises(RunLocked):
            adopt(re.path, tmp_path / "runs")
        assert listing(tmp_path) == before
    finally:
        lock.release()
    assert adopt(re.path, tmp_path / "runs")["max_sigmas"] == 0.0
    assert rd.summary["steps"] == 15 and rd.ckpt.exists()


def test_a_run_cut_off_before_its_first_evaluation_is_not_adopted(exp, tmp_path):
    rd, re = lost_checkpoint(exp, tmp_path / "runs", tmp_path / "retrain")
    (rd.path / "summary.json").write_text(
        json.dumps({**rd.summary, "status": "running", "steps": 0})
    )
    with pytest.raises(RunError, match="nothing to compare"):
        adopt(re.path, tmp_path / "runs")
