"""A run killed at any instant of its writes (before, during or after each write of config.json,
env.json, the history, the checkpoint and the summary) is resumed by the same command to the history
of the run trained straight through: lib.engine.experiment._Recorder's order of writes and
RunDir.interrupted_rows' rule. Every write of lib.engine.files goes through ``_atomic``, so killing
the k-th call of it reaches every write of a run."""

import contextlib
import io
import itertools
import re

import pytest

from lib.engine import files
from lib.engine.experiment import run
from lib.engine.files import RunError, load_torch_file
from lib.engine.runs import RunDir, run_path

# the whole runs' execution mode (micro-batches, dropout's own mask
# stream), on a run of three evaluations
MODE = dict(progress=False, device="cpu", micro_batch=2, fast_dropout=True)
TIMINGS = {"train_time_s", "train_s", "wall_s", "tokens_per_s", "updated"}


class Killed(BaseException):
    """A kill -9 stood in for: nothing of lib catches it, as nothing
    of a process outlives SIGKILL."""


@pytest.fixture
def exp(tiny):
    return tiny(
        dropout=0.2,
        n_layer=1,
        n_embd=16,
        block_size=16,
        batch_size=4,
        max_steps=4,
        eval_interval=2,
        eval_batches=2,
        train_eval_batches=1,
        warmup_steps=2,
    )


@contextlib.contextmanager
def killed_at(k, when, exc=Killed):
    """lib.engine.files._atomic that stops the process at its k-th call: ``before`` the write,
    ``during`` it (the temporary sibling half-written and left, as a kill leaves it; the old file in
    place) or ``after`` the rename. Yields the list of the files written or attempted, in order."""
    real, seen = files._atomic, []

    def atomic(path, write):
        seen.append(path.name)
        if len(seen) != k:
            return real(path, write)
        if when == "during":
            buf = io.BytesIO()
            write(buf)
            data = buf.getvalue()
            path.parent.mkdir(parents=True, exist_ok=True)
            (path.parent / f".{path.name}.killed.tmp").write_bytes(data[: len(data) // 2])
        elif when == "after":
            real(path, write)
        raise exc

    files._atomic = atomic
    try:
        yield seen
    finally:
        files._atomic = real


def rows(rd):
    return [{k: v for k, v in r.items() if k not in TIMINGS} for r in rd.history()]


def summary(rd):
    return {k: v for k, v in rd.summary.items() if k not in TIMINGS}


def names(rd):
    return sorted(str(p.relative_to(rd.path)) for p in rd.path.rglob("*"))


@pytest.fixture
def straight(exp, tmp_path):
    rd = RunDir(run_path(exp, tmp_path / "straight"))
    run(exp, runs_dir=tmp_path / "straight", **MODE)
    assert len(rd.history()) == 3 and not rd.ckpt.parent.exists()
    return rd


@pytest.mark.parametrize("when", ["before", "during", "after"])
def test_a_run_killed_at_any_write_resumes_to_the_straight_history(exp, tmp_path, straight, when):
    killed = []
    for k in itertools.count(1):
        runs_dir = tmp_path / f"k{k}"
        with killed_at(k, when) as seen:
            try:
                run(exp, runs_dir=runs_dir, **MODE)
            except Killed:
                killed.append(seen[-1])
            else:
                break  # the run made fewer than k writes: each of them has been killed at
        rd = RunDir(run_path(exp, runs_dir))
        s = run(exp, runs_dir=runs_dir, **MODE)  # the same command
        assert s["status"] == "complete", (k, when, seen[-1])
        assert rows(rd) == rows(straight), (k, when, seen[-1])
        assert summary(rd) == summary(straight), (k, when, seen[-1])
        # nothing left over: no checkpoint of a finished run, no half-written file
        assert names(rd) == names(straight), (k, when, seen[-1])
    # every kind of file was killed at, and every evaluation's three writes
    assert killed[:2] == ["config.json", "env.json"] and killed[-1] == "summary.json"
    assert killed[2:-1] == ["history.jsonl", "latest.pt", "summary.json"] * 3


def test_a_run_killed_again_and_again_while_it_resumes_still_ends_at_the_straight_history(
    exp, tmp_path, straight
):
    # each attempt is killed at its own j-th write, so kills fall in the resumes' writes too
    # (env.json's new segment, the cut of an interrupted row), one after another in the same run
    for j in itertools.count(1):
        with killed_at(j, ("before", "during", "after")[j % 3]):
            try:
                run(exp, runs_dir=tmp_path / "again", **MODE)
            except Killed:
                continue
        break
    rd = RunDir(run_path(exp, tmp_path / "again"))
    assert rows(rd) == rows(straight) and names(rd) == names(straight)
    # killed five times, resumed from checkpoints
    assert j > 5 and len(rd.read_json("env.json")["resumed"]) >= 2


@pytest.mark.parametrize("k", range(1, 13))
def test_a_ctrl_c_at_any_write_says_where_the_run_stands_and_the_same_command_resumes_it(
    exp, tmp_path, straight, k
):
    with killed_at(k, "after", KeyboardInterrupt), pytest.raises(KeyboardInterrupt):
        run(exp, runs_dir=tmp_path, **MODE)
    rd = RunDir(run_path(exp, tmp_path))
    said = rd.standing()
    assert "run the same command again" in said
    # "its last evaluation and checkpoint" only where the checkpoint is at the step it names
    if m := re.search(r"stands at step (\d+) .*its last evaluation and checkpoint", said):
        state = load_torch_file(rd.ckpt, "")
        assert state["trainer"]["step"] == int(m[1]) == rd.history()[-1]["step"], said
    elif "step-0 checkpoint" in said:
        assert load_torch_file(rd.ckpt, "")["trainer"]["step"] == 0
    run(exp, runs_dir=tmp_path, **MODE)
    assert rows(rd) == rows(straight)


def history_with_old_checkpoint(exp, runs_dir):
    """A run at step 4 of 8 beside its step-2 checkpoint, put back from an earlier segment."""
    import shutil

    run(exp, runs_dir=runs_dir, until=2, **MODE)
    rd = RunDir(run_path(exp, runs_dir))
    shutil.copy(rd.ckpt, runs_dir / "old.pt")
    run(exp, runs_dir=runs_dir, until=4, **MODE)
    shutil.copy(runs_dir / "old.pt", rd.ckpt)
    return rd


def test_a_checkpoint_whose_own_history_disagrees_with_the_file_is_refused(tiny, tmp_path):
    exp = tiny(dropout=0.2, max_steps=8, eval_interval=2)
    rd = history_with_old_checkpoint(exp, tmp_path)
    hist = rd.history()
    # the evaluation past the checkpoint as a kill leaves it (the summary not yet past the
    # checkpoint), but the rows up to the checkpoint are another run's: nothing is cut
    hist[0]["val_loss"] += 1e-6
    files.write_jsonl_atomic(rd.path / "history.jsonl", hist)
    files.write_json_atomic(
        rd.path / "summary.json", {**rd.summary, "steps": 2, "status": "running"}
    )
    before = (rd.path / "history.jsonl").read_bytes()
    with pytest.raises(RunError, match=r"records another history .* its row at step 0 differs"):
        run(exp, runs_dir=tmp_path, until=6, **MODE)
    assert (rd.path / "history.jsonl").read_bytes() == before


def test_rows_the_summary_has_recorded_are_never_cut(tiny, tmp_path):
    # the old checkpoint is one evaluation behind, as after a kill, but the summary is at
    # step 4: its checkpoint was written, so this one is an older segment's, and resuming
    # it would rewrite a released row
    exp = tiny(dropout=0.2, max_steps=8, eval_interval=2)
    history_with_old_checkpoint(exp, tmp_path)
    with pytest.raises(
        RunError, match="is at step 2 but .* reaches step 4 and .* step 4: the checkpoint is not"
    ):
        run(exp, runs_dir=tmp_path, until=6, **MODE)


def test_a_refused_resume_leaves_the_row_a_kill_left_where_it_was(exp, tmp_path, straight):
    # the step-2 row written, its checkpoint not
    with killed_at(6, "after") as seen, pytest.raises(Killed):
        run(exp, runs_dir=tmp_path, **MODE)
    assert seen[-1] == "history.jsonl"
    rd = RunDir(run_path(exp, tmp_path))
    before = (rd.path / "history.jsonl").read_bytes()
    # resumed the wrong way: refused
    with pytest.raises(RunError, match="trained with --fast-dropout"):
        run(exp, runs_dir=tmp_path, **{**MODE, "fast_dropout": False})
    # nothing cut by a resume that did not happen
    assert (rd.path / "history.jsonl").read_bytes() == before
    run(exp, runs_dir=tmp_path, **MODE)
    assert rows(rd) == rows(straight)
