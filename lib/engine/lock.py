"""``run.lock``: two processes never train one run. Held with ``fcntl.flock`` for as long as a
process trains the run (lib.engine.experiment), adopts it (lib.engine.adopt) or writes its
weights; a sweep that meets a held run trains the next one and comes back (lib.engine.sweep)."""

from __future__ import annotations

import datetime as dt
import errno
import json
import os
import platform
import sys
from pathlib import Path

from .files import RunError


class RunLocked(RunError):
    """Another live process is training this run."""


class RunLock:
    """``run.lock`` in a run directory, held with ``fcntl.flock`` while a process trains the run, so
    two processes never train one run. The kernel releases the lock when its holder dies (killed,
    preempted, out of memory), so a dead holder never blocks anyone; the file keeps the last
    holder's host, pid and start time, for the message a blocked process prints and for the one a
    process taking over prints. The file is never deleted (deleting a locked file lets a third
    process lock a new one beside it). flock is per host on most network file systems: run one sweep
    per host on a shared ``runs/``, or use ``--shard``."""

    def __init__(self, path):
        self.path = Path(path) / "run.lock"
        self._fd: int | None = None

    # Advisory only: the JSON is for messages. Whether the run is held is the
    # kernel's lock, never this file.
    def holder(self) -> dict | None:
        try:
            return json.loads(self.path.read_text() or "null")
        except (OSError, ValueError):
            return None

    def acquire(self) -> None:
        import fcntl

        self.path.parent.mkdir(parents=True, exist_ok=True)
        # Opened, never replaced: flock locks the inode, so the file must stay the same one for
        # every process (an atomic rename, as _atomic does for the other files, would give each
        # process its own lock). O_NOFOLLOW: a run.lock that is a symbolic link is refused, never
        # opened through (the holder's record would be written over whatever file it points to).
        try:
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o644)
        except OSError as e:
            if e.errno != errno.ELOOP:
                raise
            raise RunError(
                f"{self.path} is a symbolic link (to {os.readlink(self.path)}); a run's lock is "
                "never opened through one: remove the link"
            ) from None
        try:
            # Non-blocking: a sweep does not wait on a held run; it trains the next one and
            # comes back (lib.engine.sweep).
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            raise RunLocked(
                f"{self.path.parent} is being trained by {self.holder() or 'another process'} "
                f"(lock {self.path})"
            ) from None
        # The previous holder's record, read only once the lock is ours: no live
        # process can be writing it now.
        before = self.holder()
        # A record without "released" means its holder died holding the lock (the kernel
        # freed it): the run will be resumed from its last checkpoint, and the message says
        # whose work is being taken over.
        if before and before.get("pid") is not None and before.get("released") is not True:
            print(
                (
                    f"taking over {self.path}: its last holder "
                    f"{before.get('host')}:{before.get('pid')} is gone without releasing it"
                ),
                file=sys.stderr,
            )
        me = {
            "host": platform.node(),
            "pid": os.getpid(),
            "since": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
        }
        # Rewritten in place through the locked descriptor, for the reason above; the JSON is small,
        # so a reader that catches it half-written only gets a holder of None in its message.
        try:
            os.ftruncate(fd, 0)
            os.pwrite(fd, json.dumps(me).encode(), 0)
        except OSError as e:
            # a full disk, said with the file (the OSError of a descriptor names none)
            fcntl.flock(fd, fcntl.LOCK_UN)
            os.close(fd)
            raise RunError(f"could not write {self.path}: {e.strerror}") from None
        self._fd = fd

    def release(self) -> None:
        if self._fd is None:
            return
        import fcntl

        # Marked released before unlocking, so the next holder can tell a clean exit from
        # a dead process and stays quiet; the file keeps the last holder's host and pid
        # for whoever looks at it later.
        held = self.holder() or {}
        os.ftruncate(self._fd, 0)
        os.pwrite(self._fd, json.dumps({**held, "released": True}).encode(), 0)
        fcntl.flock(self._fd, fcntl.LOCK_UN)
        os.close(self._fd)
        self._fd = None

    def __enter__(self):
        self.acquire()
        return self

    # Released on an exception too: a run that raised is no longer being
    # trained and may be retried at once.
    def __exit__(self, *exc):
        self.release()
