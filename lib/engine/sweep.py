"""Sweeps: a plan's runs trained by one process, by one worker process per GPU (``--gpus``), or by
one shard of a cluster job array (``--shard k/n``). The run lock (``lib.engine.lock.RunLock``)
is what keeps two processes off one run, so workers need no coordinator: each walks the whole
queue, trains what is neither finished nor held, and comes back for runs held by others until
they are finished or their holder is gone (a killed worker's run is then resumed from its
checkpoint by whoever comes back first).
"""

from __future__ import annotations

import os
import subprocess
import sys
import time

from .config import ConfigError, Experiment
from .lock import RunLocked
from .runs import RunDir, run_path


def is_done(rd: RunDir, exp: Experiment, until: int | None) -> bool:
    """Finished (complete or diverged), or a prefix that already reaches ``until``; a RunError, in
    the words `train` uses, for such a run whose files fail ``RunDir.problems`` (a sweep stops
    there, for a person to look)."""
    # RunDir.status never raises: a summary.json that is no object, or unreadable, reads
    # "unreadable" and is not done, so the run is handed to lib.engine.experiment.run,
    # which refuses it naming the file.
    status = rd.status
    # A diverged run is finished: lib.engine.train stops it at the first non-finite
    # loss and it is never resumed.
    if status in ("complete", "diverged"):
        rd.refuse_damaged(exp)
        return True
    if until is None or status != "partial":
        return False
    # A prefix still being trained may be mid-way between its two writes; only one that
    # claims to be at its stop is held to its files (problems checks that steps is an
    # integer before it is compared).
    steps = rd.summary.get("steps")
    if isinstance(steps, int) and steps < until:
        return False
    rd.refuse_damaged(exp)
    return True


def shard(exps: list[Experiment], spec: str | None) -> list[Experiment]:
    """``k/n``: every n-th run from the k-th (0-based), so n jobs split a plan without talking."""
    if spec is None:
        return exps
    try:
        # Strided (k, k + n, k + 2n, ...): the n jobs cover the plan exactly once without talking to
        # each other. That relies on every job resolving the plan to the same list in the same
        # order, which lib.engine.plans does (a plan is a function of its arguments alone).
        k, n = (int(x) for x in spec.split("/"))
    except ValueError:
        raise ConfigError(f"--shard {spec!r}: expected k/n with integers, e.g. 0/4") from None
    # 0-based, as most cluster array indices are. k >= n is refused: exps[n::n] would
    # quietly train part of shard 0 again.
    if not 0 <= k < n:
        raise ConfigError(f"--shard {spec!r}: need 0 <= k < n")
    return exps[k::n]


def train_queue(
    exps: list[Experiment],
    run_kwargs: dict,
    keep_weights=lambda e: False,
    poll_s: float = 10.0,
    log=print,
    on_done=lambda summary: None,
) -> list[dict]:
    """Train every run of ``exps`` that is not done, in order; a run another live process holds is
    skipped and visited again after each pass (every ``poll_s`` seconds once nothing else is
    left). ``until`` in ``run_kwargs`` is a step, None, or a function of the experiment (a plan
    whose runs stop at different prefixes)."""
    from .experiment import run
    from .probe_reads import ProbeRun, released_run

    runs_dir, until = run_kwargs.get("runs_dir"), run_kwargs.get("until")
    summaries, visited = [], set()
    while True:
        # The runs another live process held on this pass; the loop ends on the
        # first pass that finds none.
        held = []
        for i, exp in enumerate(exps, 1):
            rd = RunDir(run_path(exp, runs_dir))
            # A plan whose runs stop at different prefixes (10m_prefix's control stops at 100 steps)
            # passes a function, asked again after each segment: a rule that reads the run
            # (plans.schedule_10m_until: 100 steps past its escape) moves its stop as the run goes,
            # and the run is trained until the stop it gives is reached.
            while True:
                stop = until(exp) if callable(until) else until
                # --force retrains a finished run once (its first visit);
                # afterwards a finished run is done.
                if not (run_kwargs.get("force") and i not in visited) and is_done(rd, exp, stop):
                    break
                # A search probe's run of the same experiment (lib.engine.probe_reads) is read in
                # its place, not trained again; `python -m lib train` trains the experiment's own.
                if not run_kwargs.get("force") and stop in (None, exp.train.max_steps):
                    if isinstance(standing := released_run(exp, runs_dir), ProbeRun):
                        log(f"[{i}/{len(exps)}] probe's   {standing.read_line()}")
                        break
                visited.add(i)
                log(
                    f"[{i}/{len(exps)}] {rd.status or 'missing':9s} {rd.path}"
                    + (f" (to step {stop:,})" if stop else "")
                )
                try:
                    summaries.append(
                        run(exp, keep_weights=keep_weights(exp), **{**run_kwargs, "until": stop})
                    )
                    on_done(summaries[-1])
                except RunLocked as e:
                    # Not an error: another process is training it. Any other error (a damaged run,
                    # a full disk) stops the sweep, since it is for a person to look at.
                    log(f"  held by another process, will come back: {e}")
                    held.append(rd.path)
                    break
                if not callable(until):
                    break
        if not held:
            return summaries
        # Only while some run is held: a killed holder's run is then resumed by whoever comes back
        # first, and a finished one is skipped as done.
        time.sleep(poll_s)


def spawn_workers(argv: list[str], gpus: str, device: str = "auto") -> int:
    """Re-run this sweep (``argv`` without ``--gpus``) once per GPU index in ``gpus``, each worker
    seeing only its GPU (``CUDA_VISIBLE_DEVICES``); returns the worst exit code. ``device``: the
    sweep's ``--device``; only ``cpu`` (asked for by name: one CPU worker per index) runs
    without the GPUs being there."""
    ids = [g.strip() for g in gpus.split(",") if g.strip()]
    if not ids or not all(g.isdigit() for g in ids) or len(set(ids)) != len(ids):
        raise ConfigError(
            f"--gpus {gpus!r}: expected distinct GPU indices separated by commas, e.g. 0,1,2,3"
        )
    # Checked before any worker starts: a worker given an index the machine does not have
    # sees no GPU, and under --device auto would train on the CPU as if it were one. The
    # indices are those this process sees.
    import torch

    if device != "cpu" and not torch.cuda.is_available():
        raise ConfigError(
            f"--gpus {gpus}: this machine has no CUDA device (torch.cuda.is_available() is False); "
            f"sweep without --gpus, or with --device cpu for one CPU worker per index"
        )
    count = torch.cuda.device_count()
    if device != "cpu" and (missing := [g for g in ids if int(g) >= count]):
        raise ConfigError(
            f"--gpus {gpus}: this machine has {count} CUDA device(s), so GPU {', '.join(missing)} "
            f"does not exist; valid indices: 0 to {count - 1}"
        )
    # The workers run at once, each on its own GPU; they share nothing but the run locks in runs/.
    procs = []
    for g in ids:
        # Each worker sees its GPU as cuda:0, so `--device auto` finds it; unbuffered, so the
        # workers' lines reach the shared terminal as they are printed; LIB_SWEEP_WORKER lets
        # lib.cli refuse --gpus inside a worker.
        env = {
            **os.environ,
            "CUDA_VISIBLE_DEVICES": g,
            "PYTHONUNBUFFERED": "1",
            "LIB_SWEEP_WORKER": g,
        }
        # The same interpreter, so a worker runs in the same virtual environment as
        # the command that spawned it.
        procs.append(subprocess.Popen([sys.executable, "-m", "lib", *argv], env=env))
        print(f"worker for GPU {g}: pid {procs[-1].pid}", flush=True)
    # Every worker is waited for, whatever the others do; the exit code is then the worst of theirs.
    codes = [p.wait() for p in procs]
    # A worker killed by signal N returns -N: reported as 128 + N, like a
    # shell, never hidden by a success.
    bad = [128 - c if c < 0 else c for c in codes if c != 0]
    return bad[0] if bad else 0


def without_option(argv: list[str], name: str) -> list[str]:
    """``argv`` with ``name`` and its value removed (``--gpus 0,1`` or ``--gpus=0,1``)."""
    out, skip = [], False
    for a in argv:
        if skip:
            skip = False
        # The value is the next argument (--gpus 0,1).
        elif a == name:
            skip = True
        # The glued spelling (--gpus=0,1) is dropped whole; --gpus cannot be
        # abbreviated (allow_abbrev=False).
        elif not a.startswith(name + "="):
            out.append(a)
    return out


def releasable(runs_dir) -> tuple[list, list[str]]:
    """The run directories under ``runs_dir`` that may be committed as released runs, and
    why each other one may not: a plan's run (``plans.planned``) in its own directory,
    its files consistent (``RunDir.problems``), complete or diverged, or a prefix of a
    prefix plan. Never a ``.replaced-*`` folder that ``--force`` left, a run still
    training, or a run that is in no plan."""
    from pathlib import Path

    from .plans import PLANS, PREFIX_PLANS, planned

    # A partial run is released only as a prefix plan's run: a sweep cut short elsewhere
    # must not pass for one. Compared as whole experiments (to_json), so the budget and
    # every field must be the plan's.
    prefixes = {e.to_json() for name in PREFIX_PLANS for e in PLANS[name]()}
    ok, skipped = [], []
    # Sorted, so the staging script lists and stages in one stable order.
    for s in sorted(Path(runs_dir).rglob("summary.json")):
        rd = RunDir(s.parent)
        status = rd.status
        # First: a folder kept aside by --force still holds a valid-looking
        # run, the one that was replaced.
        if any(".replaced-" in part for part in rd.path.parts):
            why = "kept aside by --force"
        # running (a run training now, or one killed before it finished) and
        # unreadable are never staged.
        elif status not in ("complete", "diverged", "partial"):
            why = f"status {status}"
        # Kept only if its files agree with each other and it sits where its
        # config.json says it belongs.
        elif problems := rd.placement_problems(runs_dir):
            why = "; ".join(problems)
        # A smoke run or another setting: trained here, but not part of the release.
        elif not planned(exp := rd.experiment()):
            why = "in no plan"
        elif status == "partial" and exp.to_json() not in prefixes:
            why = "a partial run of no prefix plan"
        else:
            ok.append(rd.path)
            continue
        skipped.append(f"{rd.path}: {why}")
    return ok, skipped
