"""A released partial run whose checkpoint is gone (or a run cut off while running, which
never got to say partial), continued: retrained from step 0 beside it, and put in its place
only if the retrain reproduces it.

Checkpoints are never released (about 130 MB at 10M), so a run trained in segments (``--until``)
continues from its checkpoint only on the machine that wrote it. On a new machine ``train`` refuses
to retrain over the released prefix (``experiment._prepare``): nothing released is replaced by a run
nobody has compared with it. The run is retrained from step 0 into another runs directory, to the
released prefix's step or further::

    python -m lib train ... --runs-dir runs-retrain --until N
        # the released run's own command and options
    python -m lib adopt runs-retrain/<the same path>

``adopt`` compares the two histories at every evaluation the released prefix has. If every
validation loss agrees within evaluation noise (``NOISE_SIGMAS`` standard errors of the difference,
from each row's ``val_loss_se``) and the two leave the floor at the same evaluation, the retrain,
with its checkpoint, takes the released run's place (the released files are kept aside in a
``.replaced-*`` sibling, and git keeps them too), and env.json records the comparison. Otherwise
nothing moves: the released prefix stays as it is, and the retrain is another realisation of the
same experiment, which the book does not read.

An adoption is one transaction. Its plan (the files on each side, where the released ones go, the
comparison) is written to ``adopting.json`` in the retrain's folder before anything moves, and in
the released run's folder as the first step; the moves are renames (or copies across file systems,
redone whole when a kill cut one short). The same command run again after a kill finds the plan and
finishes it; meanwhile ``train`` and every reader refuse both folders, naming that command
(``RunDir.adoption_cut_off``).

On the machine type that trained the prefix, with the same execution options, CPU training
repeats bitwise (``tests/test_runs.py``), so a retrain reproduces its prefix exactly. On
another CPU, rounding differs; a run on the floor still agrees within noise, one past its
escape may not, and is then not adopted.
"""

from __future__ import annotations

import math
import shutil
import sys
from pathlib import Path

from .files import RunError, write_json_atomic
from .host import last_commit
from .lock import RunLock
from .runs import ADOPTING, RUNS_DIR, RunDir, run_path
from .thresholds import escape_step

# at every compared evaluation; a 3-sigma band, so one row of pure noise rarely refuses
NOISE_SIGMAS = 3.0


def compare(released: RunDir, retrain: RunDir) -> dict:
    """The retrain's history against the released prefix's, at every evaluation the prefix has: the
    largest difference in validation loss, in standard errors of the difference, and both escape
    steps. Refused (RunError) where the histories cannot be compared: the retrain stops short, a row
    lacks its standard error, or the two evaluate at different steps."""
    steps = released.summary["steps"]
    ours = {r["step"]: r for r in released.history() if r.get("val_loss") is not None}
    theirs = {
        r["step"]: r
        for r in retrain.history()
        if r.get("val_loss") is not None and r["step"] <= steps
    }
    if retrain.summary["steps"] < steps:
        raise RunError(
            f"{retrain.path} reaches step {retrain.summary['steps']}, short of the released "
            f"prefix's {steps}: train it further (--until {steps} or more) before comparing"
        )
    if sorted(ours) != sorted(theirs):
        raise RunError(
            f"{released.path} and {retrain.path} do not evaluate at the same steps up to {steps}"
        )
    worst = 0.0
    for s, a in ours.items():
        b = theirs[s]
        if a.get("val_loss_se") is None or b.get("val_loss_se") is None:
            # no stated noise, no test: nothing is adopted on a comparison that could not refuse
            raise RunError(
                f"step {s} of {released.path if a.get('val_loss_se') is None else retrain.path} "
                "has no val_loss_se, so its evaluation noise is unknown and the histories cannot "
                "be compared"
            )
        se = math.hypot(a["val_loss_se"], b["val_loss_se"])
        diff = abs(a["val_loss"] - b["val_loss"])
        # a zero standard error with a zero difference is agreement (a bitwise
        # repeat); with any difference, none
        worst = max(worst, 0.0 if diff == 0 else (diff / se if se > 0 else math.inf))
    floor = released.summary["unigram_floor"]
    cut = [r for r in retrain.history() if r["step"] <= steps]
    return {
        "steps": steps,
        "max_sigmas": worst,
        "tolerance_sigmas": NOISE_SIGMAS,
        "escape_released": escape_step(released.history(), floor),
        "escape_retrain": escape_step(cut, floor),
    }


def _refusals(retrain: RunDir, runs_dir) -> tuple:
    """The released run and the retrain's experiment, once every reason not to adopt has been ruled
    out; a RunError naming the first one otherwise (nothing written)."""
    # A source inside the target tree (or the released runs/) would be a
    # released run moved and then removed.
    for tree in {Path(runs_dir).resolve(), RUNS_DIR.resolve()}:
        if retrain.path.resolve().is_relative_to(tree):
            raise RunError(
                f"{retrain.path} is inside {tree}, among the runs a retrain is adopted into; give "
                "a retrain trained elsewhere (--runs-dir runs-retrain)"
            )
    if retrain.status not in ("partial", "complete"):
        raise RunError(
            f"{retrain.path} is {retrain.status or 'not a run'}: only a partial or complete "
            "retrain can be adopted"
        )
    exp = retrain.experiment()
    released = RunDir(run_path(exp, runs_dir))
    if wrong := released.adoption_cut_off():  # another retrain's adoption into it, not finished
        raise RunError(wrong)
    # A run cut off mid-way (its process killed, or its machine gone, before Ctrl-C could mark it
    # partial) still says "running": without a checkpoint it is a prefix to its last evaluation
    # like a partial run, once no live process holds it (the lock, taken below before anything
    # moves, refuses one that does).
    if released.status not in ("partial", "running") or released.ckpt.exists():
        why = (
            "has its checkpoint: continue it with --until"
            if released.ckpt.exists()
            else f"is {released.status or 'missing'}"
        )
        raise RunError(
            f"{released.path} {why}; only a partial run (or one cut off while running) whose "
            "checkpoint is gone is replaced by a retrain"
        )
    released.check_config(exp)
    if released.status == "running" and not released.summary.get("steps"):
        raise RunError(
            f"{released.path} was cut off before its first evaluation past step 0: there is "
            "nothing to compare a retrain with; move it away and train the run again"
        )
    # The comparison reads its steps, floor and best: a summary without them, or
    # of another type, is named here.
    if wrong := released.summary_shape(released.summary):
        raise RunError(f"{released.path} is damaged, so nothing was moved: {wrong}")
    # the retrain becomes a released run: it must pass the one check every
    # reader asks (RunDir.problems) first
    if found := retrain.problems(exp):
        raise RunError(f"{retrain.path} is damaged, so nothing was moved: {'; '.join(found)}")
    if retrain.status == "partial":
        if not retrain.ckpt.exists():
            raise RunError(
                f"{retrain.path} is partial without its checkpoint: adopted, it could not be "
                "continued either"
            )
        # The run goes on from this checkpoint once adopted: a zero-byte, damaged or foreign
        # one, or one at another step than the history's, would be found only then, after the
        # released prefix had been replaced.
        state = retrain.load_checkpoint(exp)["trainer"]
        if state.get("step") != retrain.summary["steps"] or retrain.interrupted_rows(state):
            raise RunError(
                f"{retrain.ckpt} is at step {state.get('step')}, not the retrain's step "
                f"{retrain.summary['steps']}; nothing was moved"
            )
    # A released run must come from committed code (tests/test_released.py), every segment of it, as
    # `train` and `sweep` refuse to train into runs/ from a dirty lib/.
    if Path(runs_dir).resolve().is_relative_to(RUNS_DIR.resolve()):
        env = retrain.read_json("env.json")
        if bad := [
            seg.get("step", 0)
            for seg in [env, *env.get("resumed", [])]
            if seg.get("git_dirty_lib") is not False or not seg.get("git_commit")
        ]:
            raise RunError(
                f"{retrain.path} was trained from uncommitted lib/ (or with no commit recorded; "
                f"the segment from step {bad[0]}), so it could never be released: retrain it from "
                "a commit"
            )
    return released, exp


def adopt(retrain_dir, runs_dir=RUNS_DIR) -> dict:
    """Put the retrain in ``retrain_dir`` in the place of the same experiment's partial run under
    ``runs_dir`` whose checkpoint is gone, if it reproduces it (``compare``); return the comparison.
    Refused, with nothing moved, otherwise. One transaction: the plan is written to
    ``retrain_dir/adopting.json`` before anything moves, so the same command run again after a kill
    finishes what the first one decided."""
    # A symbolic link to the retrain is followed once, here: the files move out of the
    # folder it points to, which is removed at the end, and the link with it (rmdir of a
    # link fails with "Not a directory").
    link = Path(retrain_dir) if Path(retrain_dir).is_symlink() else None
    retrain = RunDir(Path(retrain_dir).resolve())
    if (retrain.path / ADOPTING).exists():
        plan = retrain.read_json(ADOPTING)
        print(
            f"{retrain.path}: finishing the adoption that was cut off ({plan['released']})",
            file=sys.stderr,
        )
        with RunLock(plan["released"]), RunLock(retrain.path):
            _carry_out(plan)
        return _done(plan, link)
    # Cut off after its plan was removed with the emptied retrain: the
    # released run's marker names it.
    if not retrain.path.exists() or {c.name for c in retrain.path.iterdir()} <= {"run.lock"}:
        for marker in sorted(Path(runs_dir).rglob(ADOPTING)):
            plan = RunDir(marker.parent).read_json(ADOPTING)
            if isinstance(plan, dict) and plan.get("retrain") == str(retrain.path):
                return _done(plan, link)
        if not retrain.path.exists():
            raise RunError(
                f"{retrain.path} does not exist (an adoption from it that finished has removed it, "
                "and env.json's adopted names it in its new place)"
            )
    released, exp = _refusals(retrain, runs_dir)
    result = compare(released, retrain)
    same_escape = result["escape_released"] == result["escape_retrain"]
    if result["max_sigmas"] > NOISE_SIGMAS or not same_escape:
        raise RunError(
            f"{retrain.path} does not reproduce {released.path} within evaluation noise (largest "
            f"difference {result['max_sigmas']:.2f} standard errors, tolerance {NOISE_SIGMAS:g}; "
            f"escape {result['escape_released']} released, {result['escape_retrain']} retrained): "
            "nothing was moved, the released prefix stays as it is"
        )
    aside = released.path.with_name(released.path.name + ".replaced-by-retrain")
    if aside.exists():
        raise RunError(f"{aside} exists from an earlier adoption; move it away first")
    # the files each side has now, by name: what the moves move, so a
    # resumed move takes exactly these
    names = {
        d: sorted(c.name for c in d.path.iterdir() if c.name not in ("run.lock", ADOPTING))
        for d in (released, retrain)
    }
    plan = {
        "released": str(released.path),
        "retrain": str(retrain.path),
        "aside": str(aside),
        "phase": "aside",
        "released_files": names[released],
        "retrain_files": names[retrain],
        # where the replaced history is released, once its folder (kept aside, git-ignored) is gone
        "adopted": {
            **result,
            "from": str(retrain.path),
            "replaced_kept_in": aside.name,
            "replaced_commit": last_commit(released.path / "history.jsonl"),
        },
    }
    with RunLock(released.path), RunLock(retrain.path):
        # from here on, the same command finishes it
        write_json_atomic(retrain.path / ADOPTING, plan)
        _carry_out(plan)
    return _done(plan, link)


def _move(src: Path, dst: Path) -> None:
    """``shutil.move``, resumable: a rename within one file system; across two, a copy that
    a kill can leave half done with its source still whole, so a ``dst`` beside a ``src``
    is such a copy and is replaced."""
    if src.exists():
        if dst.is_dir():
            shutil.rmtree(dst)
        elif dst.exists():
            dst.unlink()
        shutil.move(src, dst)
    elif not dst.exists():
        raise RunError(
            f"{src} is gone and {dst} is not there either: the adoption cannot be finished; the "
            f"released files are in git and in {dst.parent}"
        )


def _carry_out(plan: dict) -> None:
    """The adoption ``plan`` (written by ``adopt``) carried out under both runs' locks, from
    wherever a kill left it: the released files moved aside, the retrain's moved in, env.json's
    ``adopted`` written. Each step is idempotent and ``phase`` says which of the two sets of moves
    is under way, so a rerun repeats no move wrongly."""
    released, retrain, aside = (Path(plan[k]) for k in ("released", "retrain", "aside"))
    # The plan in the released folder too, so that `train` and every reader leave it alone until
    # this is done, and the same command finds it once the retrain's folder is gone.
    if not (released / ADOPTING).exists():
        write_json_atomic(released / ADOPTING, plan)
    if plan["phase"] == "aside":
        aside.mkdir(exist_ok=True)
        for name in plan["released_files"]:
            _move(released / name, aside / name)
        # the held locks stay in place (see lib.engine.lock.RunLock); so do the markers
        plan["phase"] = "in"
        write_json_atomic(retrain / ADOPTING, plan)
    for name in plan["retrain_files"]:
        _move(retrain / name, released / name)
    env = RunDir(released).read_json("env.json") or {}
    write_json_atomic(released / "env.json", {**env, "adopted": plan["adopted"]})


def _done(plan: dict, link: Path | None) -> dict:
    """The emptied retrain folder removed (its lock released, its plan last), the link the command
    named it by, and then the released folder's copy of the plan, so that a kill before leaves a
    plan the same command finds; the comparison returned. Each step may already have been done
    by a command that was cut off."""
    released, retrain, aside = (Path(plan[k]) for k in ("released", "retrain", "aside"))
    (retrain / "run.lock").unlink(missing_ok=True)
    (retrain / ADOPTING).unlink(missing_ok=True)
    if retrain.exists():
        retrain.rmdir()
    if link is not None and link.is_symlink():
        link.unlink()
    (released / ADOPTING).unlink(missing_ok=True)
    result = {
        k: v
        for k, v in plan["adopted"].items()
        if k not in ("from", "replaced_kept_in", "replaced_commit")
    }
    print(
        (
            f"{released}: replaced by the retrain from {retrain} (largest difference "
            f"{result['max_sigmas']:.2f} standard errors over {result['steps']} steps; the "
            f"released files are in {aside})"
        ),
        file=sys.stderr,
    )
    return result
