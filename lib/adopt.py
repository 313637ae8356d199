"""A released partial run whose checkpoint is gone, continued: retrained from step 0 beside it, and put in its
place only if the retrain reproduces it.

Checkpoints are never released (about 130 MB at 10M), so a run trained in segments (``--until``) continues
from its checkpoint only on the machine that wrote it. On a new machine ``train`` refuses to retrain over the
released prefix (``experiment._prepare``): nothing released is replaced by a run nobody has compared with it.
The run is retrained from step 0 into another runs directory, to the released prefix's step or further::

    python -m lib train ... --runs-dir runs-retrain --until N     # the released run's own command and options
    python -m lib adopt runs-retrain/<the same path>

``adopt`` compares the two histories at every evaluation the released prefix has. If every validation loss
agrees within evaluation noise (``NOISE_SIGMAS`` standard errors of the difference, from each row's
``val_loss_se``) and the two leave the floor at the same evaluation, the retrain, with its checkpoint, takes
the released run's place (the released files are kept aside in a ``.replaced-*`` sibling, and git keeps them
too), and env.json records the comparison. Otherwise nothing moves: the released prefix stays as it is, and
the retrain is another realisation of the same experiment, which the book does not read.

On the machine type that trained the prefix, with the same execution options, CPU training repeats bitwise
(``tests/test_runs.py``), so a retrain reproduces its prefix exactly. On another CPU, rounding differs; a run on
the floor still agrees within noise, one past its escape may not, and is then not adopted.
"""
from __future__ import annotations

import math
import shutil
import sys
from pathlib import Path

from .files import RunError, write_json_atomic
from .host import last_commit
from .runs import RUNS_DIR, RunDir, RunLock, run_path
from .thresholds import escape_step

NOISE_SIGMAS = 3.0  # at every compared evaluation; a 3-sigma band, so one row of pure noise rarely refuses


def compare(released: RunDir, retrain: RunDir) -> dict:
    """The retrain's history against the released prefix's, at every evaluation the prefix has: the largest
    difference in validation loss, in standard errors of the difference, and both escape steps. Refused
    (RunError) where the histories cannot be compared: the retrain stops short, a row lacks its standard
    error, or the two evaluate at different steps."""
    steps = released.summary["steps"]
    ours = {r["step"]: r for r in released.history() if r.get("val_loss") is not None}
    theirs = {r["step"]: r for r in retrain.history() if r.get("val_loss") is not None and r["step"] <= steps}
    if retrain.summary["steps"] < steps:
        raise RunError(f"{retrain.path} reaches step {retrain.summary['steps']}, short of the released prefix's "
                       f"{steps}: train it further (--until {steps} or more) before comparing")
    if sorted(ours) != sorted(theirs):
        raise RunError(f"{released.path} and {retrain.path} do not evaluate at the same steps up to {steps}")
    worst = 0.0
    for s, a in ours.items():
        b = theirs[s]
        if a.get("val_loss_se") is None or b.get("val_loss_se") is None:
            # no stated noise, no test: nothing is adopted on a comparison that could not refuse
            raise RunError(f"step {s} of {released.path if a.get('val_loss_se') is None else retrain.path} has no "
                           f"val_loss_se, so its evaluation noise is unknown and the histories cannot be compared")
        se = math.hypot(a["val_loss_se"], b["val_loss_se"])
        diff = abs(a["val_loss"] - b["val_loss"])
        # a zero standard error with a zero difference is agreement (a bitwise repeat); with any difference, none
        worst = max(worst, 0.0 if diff == 0 else (diff / se if se > 0 else math.inf))
    floor = released.summary["unigram_floor"]
    cut = [r for r in retrain.history() if r["step"] <= steps]
    return {"steps": steps, "max_sigmas": worst, "tolerance_sigmas": NOISE_SIGMAS,
            "escape_released": escape_step(released.history(), floor), "escape_retrain": escape_step(cut, floor)}


def adopt(retrain_dir, runs_dir=RUNS_DIR) -> dict:
    """Put the retrain in ``retrain_dir`` in the place of the same experiment's partial run under ``runs_dir``
    whose checkpoint is gone, if it reproduces it (``compare``); return the comparison. Refused, with nothing
    moved, otherwise."""
    retrain = RunDir(retrain_dir)
    if retrain.status not in ("partial", "complete"):
        raise RunError(f"{retrain.path} is {retrain.status or 'not a run'}: only a partial or complete retrain "
                       f"can be adopted")
    exp = retrain.experiment()
    released = RunDir(run_path(exp, runs_dir))
    if released.path.resolve() == retrain.path.resolve():
        raise RunError(f"{retrain.path} is already the run under {runs_dir}; give the retrain's own directory")
    if released.status != "partial" or released.ckpt.exists():
        why = ("has its checkpoint: continue it with --until" if released.ckpt.exists()
               else f"is {released.status or 'missing'}")
        raise RunError(f"{released.path} {why}; only a partial run whose checkpoint is gone is replaced by a retrain")
    released.check_config(exp)
    # the retrain becomes a released run: it must pass the one check every reader asks (RunDir.problems) first
    if found := retrain.problems(exp):
        raise RunError(f"{retrain.path} is damaged, so nothing was moved: {'; '.join(found)}")
    if retrain.status == "partial" and not retrain.ckpt.exists():
        raise RunError(f"{retrain.path} is partial without its checkpoint: adopted, it could not be continued either")
    result = compare(released, retrain)
    same_escape = result["escape_released"] == result["escape_retrain"]
    if result["max_sigmas"] > NOISE_SIGMAS or not same_escape:
        raise RunError(f"{retrain.path} does not reproduce {released.path} within evaluation noise (largest "
                       f"difference {result['max_sigmas']:.2f} standard errors, tolerance {NOISE_SIGMAS:g}; escape "
                       f"{result['escape_released']} released, {result['escape_retrain']} retrained): nothing was "
                       f"moved, the released prefix stays as it is")
    # where the replaced history is released, once its folder (kept aside, git-ignored) is gone
    replaced_commit = last_commit(released.path / "history.jsonl")
    with RunLock(released.path), RunLock(retrain.path):
        aside = released.path.with_name(released.path.name + ".replaced-by-retrain")
        if aside.exists():
            raise RunError(f"{aside} exists from an earlier adoption; move it away first")
        aside.mkdir()
        for child in released.path.iterdir():
            if child.name != "run.lock":  # the held lock stays in place (see RunLock)
                shutil.move(child, aside / child.name)
        for child in retrain.path.iterdir():
            if child.name != "run.lock":
                shutil.move(child, released.path / child.name)
        env = released.read_json("env.json") or {}
        env["adopted"] = {**result, "from": str(retrain.path), "replaced_kept_in": aside.name,
                          "replaced_commit": replaced_commit}
        write_json_atomic(released.path / "env.json", env)
    Path(retrain.path / "run.lock").unlink(missing_ok=True)  # released above; the emptied retrain goes
    retrain.path.rmdir()
    print(f"{released.path}: replaced by the retrain from {retrain.path} (largest difference "
          f"{result['max_sigmas']:.2f} standard errors over {result['steps']} steps; the released files are in "
          f"{aside})", file=sys.stderr)
    return result
