"""Run directories that describe themselves (STYLE rule 5).

``runs/<scale>/<impl>/<config>[/gain-<mode>-<g>]/seed<N>[_steps<S>][_<precision>][_mixer-local][_<field>-<value>...]/``
holds
``config.json`` (resolved), ``env.json``, ``history.jsonl``, ``summary.json``
and ``checkpoints/latest.pt``. Every write is atomic; a complete run is never
overwritten unless forced (and then the old directory is kept aside).

Longer than the house's ~350 lines because every rule about a run directory (its path from the
experiment, its atomic files, the lock, the checks that a run is what its config says, the checkpoint) lives
here and nowhere else.
"""
from __future__ import annotations

import datetime as dt
import errno
import json
import math
import os
import platform
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import torch

from .config import Experiment, off_preset_fields, off_preset_precision, off_preset_steps

ROOT = Path(__file__).resolve().parent.parent
RUNS_DIR = ROOT / "runs"


class RunError(RuntimeError):
    """A run directory or checkpoint that cannot be used; the message names the file."""


def _umask() -> int:
    """The process's umask, read without changing it (Linux); elsewhere by setting and restoring it."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("Umask:"):
                return int(line.split()[1], 8)
    except OSError:
        pass
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def _atomic(path: Path, write) -> None:
    """Write ``path`` through a temporary sibling renamed into place, so a reader never sees half a file and a
    killed writer leaves the old file whole (its ``.tmp`` is removed on error here, and by ``remove_stale_tmp``
    after a kill). The file gets the mode an ordinary ``open`` would (0666 less the umask), not mkstemp's 0600.
    A full disk is named as such, with the file."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        os.fchmod(fd, 0o666 & ~_umask())
        with os.fdopen(fd, "wb") as f:
            write(f)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException as e:
        # Whether the disk is full is read before the partial file is removed (which frees what it took).
        # torch reports a full disk as its own RuntimeError ("unexpected pos ..."), not as ENOSPC.
        full = isinstance(e, OSError) and e.errno == errno.ENOSPC or (
            isinstance(e, RuntimeError) and _disk_full(path.parent))
        Path(tmp).unlink(missing_ok=True)
        if full:
            raise RunError(f"disk full: could not write {path} "
                           f"({shutil.disk_usage(path.parent).free / 2**20:.0f} MiB free there)") from e
        raise


def _disk_full(folder: Path, below: int = 64 * 2**20) -> bool:
    try:
        return shutil.disk_usage(folder).free < below
    except OSError:
        return False


def remove_stale_tmp(folder: Path) -> list[Path]:
    """Delete the ``.<name>.*.tmp`` files a killed writer left in ``folder`` (never a finished file)."""
    stale = sorted(Path(folder).glob(".*.tmp"))
    for p in stale:
        p.unlink(missing_ok=True)
    return stale


def finite(obj):
    """``obj`` with every NaN or infinite float replaced by None: JSON has no NaN or Infinity, and a reader
    must see a missing value, not a number. (A diverged run says why in its own fields.)"""
    if isinstance(obj, float):
        return obj if math.isfinite(obj) else None
    if isinstance(obj, dict):
        return {k: finite(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [finite(v) for v in obj]
    return obj


def write_json_atomic(path, obj) -> None:
    text = json.dumps(finite(obj), indent=2, sort_keys=True, default=_jsonable, allow_nan=False) + "\n"
    _atomic(path, lambda f: f.write(text.encode()))


def write_jsonl_atomic(path, rows) -> None:
    text = "".join(json.dumps(finite(r), default=_jsonable, allow_nan=False) + "\n" for r in rows)
    _atomic(path, lambda f: f.write(text.encode()))


def _jsonable(x):
    if isinstance(x, float) and not math.isfinite(x):
        return None
    if hasattr(x, "item"):
        return x.item()
    raise TypeError(f"not JSON serialisable: {type(x).__name__}")


def save_torch_atomic(path, obj) -> None:
    _atomic(path, lambda f: torch.save(obj, f))


def save_bytes_atomic(path, data: bytes) -> None:
    _atomic(path, lambda f: f.write(data))


def run_path(exp: Experiment, runs_dir=RUNS_DIR) -> Path:
    parts = [exp.scale, exp.impl, exp.config_name]
    if exp.gain_mode is not None:
        parts.append(f"gain-{exp.gain_mode}-{exp.gain:g}")
    leaf = f"seed{exp.seed}"
    if off_preset_steps(exp):  # a shortened or longer run never shares a directory with the preset's
        leaf += f"_steps{exp.train.max_steps}"
    if off_preset_precision(exp):  # e.g. the bf16 CPU prefix of the author's fp32 nanoGPT
        leaf += f"_{exp.train.precision}"
    if exp.model.mixer != "attention":  # the local-mixer test (§7.2) never shares the attention run's directory
        leaf += f"_mixer-{exp.model.mixer}"
    for key, value in sorted(off_preset_fields(exp).items()):  # a bundle factor on its own, another depth, ...
        leaf += f"_{key}-{value:g}" if isinstance(value, float) else f"_{key}-{value}"
    return Path(runs_dir).joinpath(*parts, leaf)


def git_state() -> dict:
    def git(*args):
        try:
            return subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True,
                                  timeout=10).stdout.strip()
        except (OSError, subprocess.SubprocessError):
            return ""
    commit = git("rev-parse", "HEAD")
    dirty = bool(git("status", "--porcelain", "--", "lib"))  # does the code that trained differ?
    return {"git_commit": commit or None, "git_dirty_lib": dirty}


# Read once, when lib is imported: a long sweep process keeps running the code it
# imported, so a later commit must not be credited with its runs.
GIT_AT_IMPORT = git_state()


def environment(device: str, deterministic: bool, compile: bool, precision: str = "fp32",
                diagnostics: bool = True) -> dict:
    import numpy
    env = {"python": sys.version.split()[0], "torch": torch.__version__, "numpy": numpy.__version__,
           "platform": platform.platform(), "processor": platform.processor() or platform.machine(),
           "device": device, "threads": torch.get_num_threads(),
           "deterministic": deterministic, "compile": compile, "diagnostics": diagnostics,
           "cublas_workspace_config": os.environ.get("CUBLAS_WORKSPACE_CONFIG"),
           "started": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"), **GIT_AT_IMPORT}
    env["precision"] = "bf16 autocast" if precision == "bf16" else "fp32"
    if device.startswith("cuda"):
        env.update(device_name=torch.cuda.get_device_name(device), cuda=torch.version.cuda)
    else:
        env.update(device_name="cpu")
    return env


def _as_experiment(d: dict) -> Experiment | None:
    """The experiment a config.json describes, or None when it describes none."""
    try:
        return Experiment.from_dict(d)
    except (KeyError, TypeError, ValueError):
        return None


def _differences(a: Experiment, b: Experiment) -> dict:
    """The fields (dotted) in which two experiments differ: ``{field: (a's value, b's value)}``."""
    def flat(d, pre=""):
        for k, v in d.items():
            if isinstance(v, dict):
                yield from flat(v, f"{pre}{k}.")
            else:
                yield f"{pre}{k}", v
    fa, fb = dict(flat(a.to_dict())), dict(flat(b.to_dict()))
    return {k: (fa.get(k), fb.get(k)) for k in sorted(set(fa) | set(fb)) if fa.get(k) != fb.get(k)}


class RunDir:
    def __init__(self, path):
        self.path = Path(path)
        self.ckpt = self.path / "checkpoints" / "latest.pt"

    def read_json(self, name: str):
        p = self.path / name
        if not p.exists():
            return None
        try:
            return json.loads(p.read_text())
        except (OSError, ValueError) as e:
            raise RunError(f"{p} is not readable JSON ({e})") from e

    @property
    def summary(self) -> dict | None:
        return self.read_json("summary.json")

    @property
    def status(self) -> str | None:
        """The summary's status, None without one, and ``"unreadable"`` when summary.json cannot be read (never
        an exception: every reader asks this first; ``problems`` names the file)."""
        try:
            s = self.summary
        except RunError:
            return "unreadable"
        return s.get("status", "unreadable") if isinstance(s, dict) else None if s is None else "unreadable"

    def history(self) -> list[dict]:
        p = self.path / "history.jsonl"
        if not p.exists():
            return []
        rows = []
        for i, line in enumerate(p.read_text().splitlines(), 1):
            if line:
                try:
                    rows.append(json.loads(line))
                except ValueError as e:
                    raise RunError(f"{p} line {i} is not JSON ({e})") from e
        return rows

    def problems(self, exp: Experiment) -> list[str]:
        """Why this finished run cannot stand for ``exp`` (empty when it can): each reader of ``runs/`` (the
        chapters, ``report``) leaves such a run out and names the file. Checked: the three files exist and
        parse; ``config.json`` describes ``exp`` (not just the path); the history reaches the summary's step,
        which is the budget for a complete run; the summary's best loss is the history's."""
        out = []
        try:
            cfg, summ, hist = self.read_json("config.json"), self.summary, self.history()
        except RunError as e:
            return [str(e)]
        if not (self.path / "env.json").exists():
            out.append(f"{self.path / 'env.json'} is missing")
        if cfg is None:
            out.append(f"{self.path / 'config.json'} is missing")
        elif _as_experiment(cfg) != exp:
            got = _as_experiment(cfg)
            diff = "" if got is None else ", ".join(
                f"{k}={v} (expected {want})" for k, (v, want) in _differences(got, exp).items())
            out.append(f"{self.path / 'config.json'} describes another experiment than its directory"
                       + (f": {diff}" if diff else ""))
        if summ is None:
            return out + [f"{self.path / 'summary.json'} is missing"]
        if not isinstance(summ, dict) or summ.get("status") is None:
            return out + [f"{self.path / 'summary.json'} has no status"]
        if not hist:
            return out + [f"{self.path / 'history.jsonl'} is missing or empty"]
        last = hist[-1].get("step")
        if last != summ.get("steps"):
            out.append(f"{self.path / 'history.jsonl'} ends at step {last}, {self.path / 'summary.json'} says "
                       f"{summ.get('steps')}")
        if summ.get("status") == "complete":
            if summ.get("steps") != exp.train.max_steps:
                out.append(f"{self.path / 'summary.json'} says complete at step {summ.get('steps')} of a "
                           f"{exp.train.max_steps}-step budget")
            vals = [r["val_loss"] for r in hist if r.get("val_loss") is not None]
            best = summ.get("best_val_loss")
            if not vals or best is None or not math.isclose(min(vals), best, rel_tol=1e-9, abs_tol=1e-12):
                out.append(f"{self.path / 'summary.json'} best_val_loss {best} is not the history's best "
                           f"{min(vals) if vals else None}")
        return out

    def experiment(self) -> Experiment:
        """The experiment ``config.json`` describes; a clear error if there is none."""
        cfg = self.read_json("config.json")
        exp = _as_experiment(cfg) if isinstance(cfg, dict) else None
        if exp is None:
            raise RunError(f"{self.path / 'config.json'} is " + ("missing: not a run directory" if cfg is None
                                                                 else "not a valid experiment"))
        return exp

    def placement_problems(self, runs_dir) -> list[str]:
        """``problems`` of the experiment this run's own config.json describes, and whether the run is in that
        experiment's directory under ``runs_dir`` (for readers that walk a folder rather than a plan)."""
        try:
            exp = self.experiment()
        except RunError as e:
            return [str(e)]
        where = run_path(exp, runs_dir)
        return self.problems(exp) + ([] if where == self.path else [
            f"{self.path / 'config.json'} describes another experiment than its directory (it belongs in {where})"])

    def check_config(self, exp: Experiment) -> None:
        """Refuse to reuse a directory that holds a different experiment."""
        existing = self.read_json("config.json")
        # Compared as resolved experiments, so a config.json written before a field existed (and so
        # holding its default) still matches.
        if existing is not None and _as_experiment(existing) != exp:
            raise RunError(f"{self.path / 'config.json'} describes a different experiment; "
                           f"use another runs directory or remove it")

    def load_checkpoint(self, exp: Experiment) -> dict:
        if not self.ckpt.exists():
            raise RunError(f"{self.ckpt} does not exist (a run deletes its checkpoint when it finishes)")
        state = load_torch_file(self.ckpt, "delete it to retrain from scratch")
        if not isinstance(state, dict) or _as_experiment(state.get("experiment") or {}) != exp:
            raise RunError(f"checkpoint {self.ckpt} belongs to a different experiment "
                           f"(or another program); delete it or use another runs directory")
        return state


def load_torch_file(path: Path, remedy: str):
    """A checkpoint or ``weights.pt`` this project wrote, loaded with ``weights_only=True`` (no code runs). A
    damaged or foreign file is this project's RunError naming the file and the remedy; torch's own message is
    not passed on, since its advice (retry with ``weights_only=False``) is the wrong one for a hostile file."""
    try:
        return torch.load(path, map_location="cpu", weights_only=True)
    except Exception as e:  # truncated files and refused pickles raise several different errors
        raise RunError(f"{path} is truncated, damaged or not a file this project wrote "
                       f"({type(e).__name__}); {remedy}") from None


class RunLocked(RunError):
    """Another live process is training this run."""


class RunLock:
    """``run.lock`` in a run directory, held with ``fcntl.flock`` while a process trains the run, so two
    processes never train one run. The kernel releases the lock when its holder dies (killed, preempted,
    out of memory), so a dead holder never blocks anyone; the file keeps the last holder's host, pid and
    start time, for the message a blocked process prints and for the one a process taking over prints.
    The file is never deleted (deleting a locked file lets a third process lock a new one beside it).
    flock is per host on most network file systems: run one sweep per host on a shared ``runs/``, or
    use ``--shard``."""

    def __init__(self, path):
        self.path = Path(path) / "run.lock"
        self._fd: int | None = None

    def holder(self) -> dict | None:
        try:
            return json.loads(self.path.read_text() or "null")
        except (OSError, ValueError):
            return None

    def acquire(self) -> None:
        import fcntl
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            raise RunLocked(f"{self.path.parent} is being trained by {self.holder() or 'another process'} "
                            f"(lock {self.path})") from None
        before = self.holder()
        if before and before.get("pid") is not None and before.get("released") is not True:
            print(f"taking over {self.path}: its last holder {before.get('host')}:{before.get('pid')} is gone "
                  f"without releasing it", file=sys.stderr)
        me = {"host": platform.node(), "pid": os.getpid(),
              "since": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")}
        os.ftruncate(fd, 0)
        os.pwrite(fd, json.dumps(me).encode(), 0)
        self._fd = fd

    def release(self) -> None:
        if self._fd is None:
            return
        import fcntl
        held = self.holder() or {}
        os.ftruncate(self._fd, 0)
        os.pwrite(self._fd, json.dumps({**held, "released": True}).encode(), 0)
        fcntl.flock(self._fd, fcntl.LOCK_UN)
        os.close(self._fd)
        self._fd = None

    def __enter__(self):
        self.acquire()
        return self

    def __exit__(self, *exc):
        self.release()


def export_weights(rd: RunDir) -> None:
    """Write ``weights.pt`` from the checkpoint of a run that has just finished (``train --keep-weights``): the
    model weights in fp16 plus the experiment and the step they are from (~2.4 MB at `cpu`). Refused for a
    checkpoint that is not the run's last step: a prefix's weights must never pass for the run's."""
    exp = rd.experiment()
    state = rd.load_checkpoint(exp)
    step, status = state["trainer"]["step"], state["trainer"].get("status")
    if status != "complete" or step != exp.train.max_steps:
        raise RunError(f"{rd.ckpt} is step {step} of {exp.train.max_steps} ({status}): weights.pt holds a complete "
                       f"run's final weights; train it to the end with --keep-weights")
    weights = {k: v.half() if v.is_floating_point() else v for k, v in state["trainer"]["model"].items()}
    save_torch_atomic(rd.path / "weights.pt", {"experiment": state["experiment"], "model": weights, "step": step})


def list_runs(runs_dir=RUNS_DIR) -> list[RunDir]:
    return [RunDir(p.parent) for p in sorted(Path(runs_dir).rglob("summary.json"))]
