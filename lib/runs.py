"""Run directories that describe themselves (STYLE rule 5).

``runs/<scale>/<impl>/<config>[/gain-<mode>-<g>]/seed<N>[_steps<S>][_<precision>][_mixer-local][_<field>-<value>...]/``
holds
``config.json`` (resolved), ``env.json``, ``history.jsonl``, ``summary.json``
and ``checkpoints/latest.pt``. Every write is atomic; a complete run is never
overwritten unless forced (and then the old directory is kept aside).
"""
from __future__ import annotations

import datetime as dt
import json
import math
import os
import platform
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


def _atomic(path: Path, write) -> None:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            write(f)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


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


class RunDir:
    def __init__(self, path):
        self.path = Path(path)
        self.ckpt = self.path / "checkpoints" / "latest.pt"

    def read_json(self, name: str):
        p = self.path / name
        return json.loads(p.read_text()) if p.exists() else None

    @property
    def summary(self) -> dict | None:
        return self.read_json("summary.json")

    @property
    def status(self) -> str | None:
        s = self.summary
        return s["status"] if s else None

    def history(self) -> list[dict]:
        p = self.path / "history.jsonl"
        return [json.loads(line) for line in p.read_text().splitlines() if line] if p.exists() else []

    def check_config(self, exp: Experiment) -> None:
        """Refuse to reuse a directory that holds a different experiment."""
        existing = self.read_json("config.json")
        # Compared as resolved experiments, so a config.json written before a field existed (and so
        # holding its default) still matches.
        if existing is not None and _as_experiment(existing) != exp:
            raise RunError(f"{self.path / 'config.json'} describes a different experiment; "
                           f"use another runs directory or remove it")

    def load_checkpoint(self, exp: Experiment) -> dict:
        try:
            state = torch.load(self.ckpt, map_location="cpu", weights_only=True)
        except Exception as e:  # truncated files raise several different errors
            raise RunError(f"checkpoint {self.ckpt} is truncated or not a torch checkpoint ({e}); "
                           f"delete it to retrain from scratch") from e
        if not isinstance(state, dict) or _as_experiment(state.get("experiment") or {}) != exp:
            raise RunError(f"checkpoint {self.ckpt} belongs to a different experiment "
                           f"(or another program); delete it or use another runs directory")
        return state


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
    """Write ``weights.pt`` from the run's checkpoint: the model weights in fp16 plus the experiment and
    the step they are from (~2.4 MB at `cpu`)."""
    state = rd.load_checkpoint(Experiment.from_dict(rd.read_json("config.json")))
    weights = {k: v.half() if v.is_floating_point() else v for k, v in state["trainer"]["model"].items()}
    save_torch_atomic(rd.path / "weights.pt", {"experiment": state["experiment"], "model": weights,
                                               "step": state["trainer"]["step"]})


def list_runs(runs_dir=RUNS_DIR) -> list[RunDir]:
    return [RunDir(p.parent) for p in sorted(Path(runs_dir).rglob("summary.json"))]
