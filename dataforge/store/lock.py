"""One writer per dataset directory: an ``flock`` on ``.dataforge/lock``.

The kernel drops an ``flock`` when its process dies, so a lock file left by a killed run is stale by
construction: the next run takes it over (and says whose it was). A live holder makes a second run
fail at once with a one-line error naming its pid. The file holds the holder's pid, host and start
time, for that message only. Lock files are not shared across hosts on all network file systems:
run one driver per output directory.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import json
import os
import socket
import time
from pathlib import Path
from typing import Any

from dataforge.errors import LockedError, UsageError
from dataforge.store.layout import CONTROL_DIR, LOCK_FILE


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


class DirLock:
    """Exclusive lock on a dataset directory; use as a context manager."""

    def __init__(self, root: Path) -> None:
        self.root = Path(root)
        self.path = self.root / CONTROL_DIR / LOCK_FILE
        self._fd: int | None = None
        self.stale: dict[str, Any] | None = None

    def _read_info(self, fd: int) -> dict[str, Any]:
        try:
            os.lseek(fd, 0, os.SEEK_SET)
            return json.loads(os.read(fd, 4096).decode() or "{}")
        except (OSError, ValueError):
            return {}

    def acquire(self) -> DirLock:
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise UsageError(f"cannot create {self.path.parent}: {exc.strerror}") from None
        while True:
            try:
                fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
            except OSError as exc:
                raise UsageError(f"cannot create lock {self.path}: {exc.strerror}") from None
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError as exc:
                info = self._read_info(fd)
                os.close(fd)
                if exc.errno not in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
                    raise UsageError(f"cannot lock {self.path}: {exc.strerror}") from None
                who = f"pid {info.get('pid', '?')} on {info.get('host', '?')}"
                raise LockedError(
                    f"{self.root} is being written by another dataforge run ({who}); "
                    "wait for it to finish or stop it, then rerun"
                ) from None
            try:
                same = os.fstat(fd).st_ino == os.stat(self.path).st_ino
            except FileNotFoundError:
                same = False
            if not same:  # the previous holder removed the file between our open and flock
                os.close(fd)
                continue
            break
        previous = self._read_info(fd)
        if previous.get("pid"):
            alive = previous.get("host") == socket.gethostname() and _pid_alive(previous["pid"])
            previous["alive"] = alive
            self.stale = previous
        info = {"pid": os.getpid(), "host": socket.gethostname(), "started": time.time()}
        os.ftruncate(fd, 0)
        os.lseek(fd, 0, os.SEEK_SET)
        os.write(fd, json.dumps(info).encode())
        os.fsync(fd)
        self._fd = fd
        return self

    def release(self) -> None:
        if self._fd is None:
            return
        with contextlib.suppress(OSError):
            self.path.unlink()
        with contextlib.suppress(OSError):
            self.path.parent.rmdir()  # only when nothing else is left in .dataforge/
        os.close(self._fd)
        self._fd = None

    def __enter__(self) -> DirLock:
        return self.acquire()

    def __exit__(self, *exc: object) -> None:
        self.release()
