"""A run's files written whole or not at all, and its torch files loaded refusing
what this project did not write.

Every file a run directory (lib.engine.runs) writes but its lock goes through here: JSON and JSON
Lines with NaN turned into null, the checkpoint and weights.pt through torch. A write goes to a
temporary sibling renamed into place, so a reader or a resumed run never meets half a file; a full
disk is named as such, with the file. The JSON files are read back by lib.engine.runs.RunDir,
which names a file it cannot parse.
"""

from __future__ import annotations

import errno
import json
import math
import os
import shutil
import tempfile
from pathlib import Path

import torch


class RunError(RuntimeError):
    """A run directory or checkpoint that cannot be used; the message names the file."""


def _umask() -> int:
    """The process's umask, read without changing it (Linux);
    elsewhere by setting and restoring it."""
    try:
        # Setting the umask to read it changes it for every thread of the process for that
        # instant (a file created meanwhile by another thread, such as tiktoken's
        # download, would get the wrong mode).
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("Umask:"):
                return int(line.split()[1], 8)
    except OSError:
        pass
    # No /proc (macOS): set and restore at once, the only portable way to read it.
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def _atomic(path: Path, write) -> None:
    """Write ``path`` through a temporary sibling renamed into place, so a reader never sees half a
    file and a killed writer leaves the old file whole (its ``.tmp`` is removed on error here, and
    by ``remove_stale_tmp`` after a kill). The file gets the mode an ordinary ``open`` would (0666
    less the umask), not mkstemp's 0600. A full disk is named as such, with the file."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    # The temporary file is a sibling, not in /tmp: os.replace is atomic only within one file
    # system. Its leading dot and .tmp suffix are what remove_stale_tmp looks for.
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        # mkstemp's 0600 would make every run file private to the user who
        # trained it; open() would not.
        os.fchmod(fd, 0o666 & ~_umask())
        with os.fdopen(fd, "wb") as f:
            write(f)
            f.flush()
            # On disk before the rename: after a power cut the name holds the old
            # file or the whole new one.
            os.fsync(f.fileno())
        os.replace(tmp, path)
    # BaseException: a Ctrl-C in the middle of torch.save must not leave a .tmp
    # beside the checkpoint either.
    except BaseException as e:
        # Whether the disk is full is read before the partial file is removed (which
        # frees what it took). torch reports a full disk as its own RuntimeError
        # ("unexpected pos ..."), not as ENOSPC.
        full = (
            isinstance(e, OSError)
            and e.errno == errno.ENOSPC
            or (isinstance(e, RuntimeError) and _disk_full(path.parent))
        )
        Path(tmp).unlink(missing_ok=True)
        if full:
            raise RunError(
                f"disk full: could not write {path} "
                f"({shutil.disk_usage(path.parent).free / 2**20:.0f} MiB free there)"
            ) from e
        raise


# A RuntimeError from torch.save carries no errno, so a full disk is inferred from what
# is left: with less than 64 MiB free the failure is read as the disk; with more, torch's
# own error is passed on unchanged.
def _disk_full(folder: Path, below: int = 64 * 2**20) -> bool:
    try:
        return shutil.disk_usage(folder).free < below
    except OSError:
        return False


def remove_stale_tmp(folder: Path) -> list[Path]:
    """Delete the ``.<name>.*.tmp`` files a killed writer left in
    ``folder`` (never a finished file)."""
    # Safe only under the run lock (lib.engine.experiment calls it at the end of a run): a live
    # writer's .tmp would match too. Returned so that a caller or a test can say what was removed.
    stale = sorted(Path(folder).glob(".*.tmp"))
    for p in stale:
        p.unlink(missing_ok=True)
    return stale


def finite(obj):
    """``obj`` with every NaN or infinite float replaced by None: JSON has no NaN or Infinity, and a
    reader must see a missing value, not a number. (A diverged run says why in its own fields.)"""
    # numpy's float64 subclasses float, so it is caught here as well.
    if isinstance(obj, float):
        return obj if math.isfinite(obj) else None
    if isinstance(obj, dict):
        return {k: finite(v) for k, v in obj.items()}
    # Per-layer diagnostics are lists of floats; one NaN layer becomes null, the others stay.
    if isinstance(obj, (list, tuple)):
        return [finite(v) for v in obj]
    return obj


def write_json_atomic(path, obj) -> None:
    # Sorted keys and a fixed indent: a rewritten config.json or summary.json differs from the
    # committed one only where a value changed, so git diffs of released runs stay readable.
    # allow_nan=False makes any NaN that escaped finite() an error here, not a file Python reads but
    # strict readers (JSON.parse) refuse.
    text = (
        json.dumps(finite(obj), indent=2, sort_keys=True, default=_jsonable, allow_nan=False) + "\n"
    )
    _atomic(path, lambda f: f.write(text.encode()))


def _jsonl(rows) -> list[str]:
    return [json.dumps(finite(r), default=_jsonable, allow_nan=False) for r in rows]


def write_jsonl_atomic(path, rows) -> None:
    # One evaluation per line (JSON Lines): the history is rewritten whole after each
    # evaluation, so a diff between two commits of a run shows the new rows, and a
    # reader can parse it line by line.
    text = "".join(line + "\n" for line in _jsonl(rows))
    _atomic(path, lambda f: f.write(text.encode()))


def as_written(rows) -> list[dict]:
    """``rows`` as ``write_jsonl_atomic`` writes them and a reader reads them back (NaN as None,
    numpy and tensor scalars as numbers): what a history held in memory, such as a checkpoint's,
    is compared with the file by."""
    # JSON round-trips Python floats exactly, so a row written from the
    # same values reads back equal.
    return [json.loads(line) for line in _jsonl(rows)]


def _jsonable(x):
    if isinstance(x, float) and not math.isfinite(x):
        return None
    # A numpy scalar that is no float subclass (float32, int64) or a
    # one-element tensor: its Python number.
    if hasattr(x, "item"):
        return x.item()
    raise TypeError(f"not JSON serialisable: {type(x).__name__}")


# The checkpoint is rewritten after every evaluation: a kill during
# torch.save must keep the last one.
def save_torch_atomic(path, obj) -> None:
    _atomic(path, lambda f: torch.save(obj, f))


def save_bytes_atomic(path, data: bytes) -> None:
    _atomic(path, lambda f: f.write(data))


def load_torch_file(path: Path, remedy: str):
    """A checkpoint or ``weights.pt`` this project wrote, loaded with ``weights_only=True`` (no code
    runs). A damaged or foreign file is this project's RunError naming the file and the remedy;
    torch's own message is not passed on, since its advice (retry with ``weights_only=False``) is
    the wrong one for a hostile file."""
    try:
        # weights_only: a weights.pt comes with a clone of the repository, and a crafted pickle
        # could run code when a chapter loads it (tests/test_integrity.py). map_location="cpu": a
        # checkpoint written on a GPU loads on a machine without one; load_state_dict then copies it
        # onto the model's own device.
        return torch.load(path, map_location="cpu", weights_only=True)
    except Exception as e:  # truncated files and refused pickles raise several different errors
        raise RunError(
            f"{path} is truncated, damaged or not a file this project wrote "
            f"({type(e).__name__}); {remedy}"
        ) from None
