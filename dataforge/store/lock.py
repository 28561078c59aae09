"""One writer per dataset directory: an ``flock`` on ``.dataforge/lock``.

The kernel drops an ``flock`` when its process dies, so a lock file left by a killed run is stale by
construction: the next run takes it over (and says whose it was). A live holder makes a second run
fail at once with a one-line error naming its pid. The file holds the holder's pid, host and start
time, for that message only. Lock files are not shared across hosts on all network file systems:
run one driver per output directory. :class:`FileLock` is the same for one output file that a
command appends to (``<file>.lock`` beside it): one evaluation run per predictions file.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import json
import os
import socket
import stat
import time
from pathlib import Path
from typing import Any

from dataforge.errors import LockedError, UsageError
from dataforge.store.layout import CONTROL_DIR, LOCK_FILE, control_dir, entry_kind


def check_control_dir(root: Path) -> None:
    """Refuse a ``.dataforge`` that is a symbolic link (or not a folder): the lock, journal and
    staging would be written wherever it points. (The output directory itself may be a link to a
    folder: that is the user's own choice, made on the command line.)"""
    path = control_dir(Path(root))
    kind = entry_kind(path)
    if kind == "link":
        raise UsageError(
            f"refusing to use {path}: it is a symbolic link, and a run's lock, journal and "
            "staging stay inside the output directory; remove the link"
        )
    if kind not in (None, "dir"):
        raise UsageError(f"refusing to use {path}: it is not a folder; remove it")


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
        self.subject = self.root  # what the lock guards, for the message
        self._fd: int | None = None
        self.stale: dict[str, Any] | None = None

    def _prepare(self) -> int:
        """Flags to open the lock's folder with, after checking it may hold the lock."""
        check_control_dir(self.root)
        return os.O_NOFOLLOW

    def _read_info(self, fd: int) -> dict[str, Any]:
        try:
            os.lseek(fd, 0, os.SEEK_SET)
            return json.loads(os.read(fd, 4096).decode() or "{}")
        except (OSError, ValueError):
            return {}

    def _open(self) -> int:
        """Open (create) the lock file without following a link: not ``.dataforge`` nor the lock
        file itself may be one, or the pid written below would land outside the directory."""
        nofollow = self._prepare()
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise UsageError(f"cannot create {self.path.parent}: {exc.strerror}") from None
        flags = os.O_RDONLY | os.O_DIRECTORY | nofollow
        try:
            dfd = os.open(self.path.parent, flags)
        except OSError as exc:
            raise UsageError(f"cannot open {self.path.parent}: {exc.strerror}") from None
        try:
            fd = os.open(
                self.path.name,
                os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_NONBLOCK,
                0o644,
                dir_fd=dfd,
            )
        except OSError as exc:
            why = "it is a symbolic link" if exc.errno == errno.ELOOP else exc.strerror
            raise UsageError(f"cannot create lock {self.path}: {why}") from None
        finally:
            os.close(dfd)
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            os.close(fd)
            raise UsageError(f"cannot use lock {self.path}: it is not a regular file")
        return fd

    def acquire(self) -> DirLock:
        while True:
            fd = self._open()
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError as exc:
                info = self._read_info(fd)
                os.close(fd)
                if exc.errno not in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
                    raise UsageError(f"cannot lock {self.path}: {exc.strerror}") from None
                who = f"pid {info.get('pid', '?')} on {info.get('host', '?')}"
                raise LockedError(
                    f"{self.subject} is being written by another dataforge run ({who}); "
                    "wait for it to finish or stop it, then rerun"
                ) from None
            try:
                same = os.fstat(fd).st_ino == os.lstat(self.path).st_ino
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
        self._tidy()
        os.close(self._fd)
        self._fd = None

    def _tidy(self) -> None:
        with contextlib.suppress(OSError):
            self.path.parent.rmdir()  # only when nothing else is left in .dataforge/

    def __enter__(self) -> DirLock:
        return self.acquire()

    def __exit__(self, *exc: object) -> None:
        self.release()


class FileLock(DirLock):
    """Exclusive lock on one output file that a command appends to (an evaluation's JSONL):
    an ``flock`` on ``<file>.lock`` beside it, with :class:`DirLock`'s rules (a second live
    run fails at once in one line; a killed run's lock is taken over). The file's folder may
    be a link (the user's choice); the lock file itself may not."""

    def __init__(self, target: Path) -> None:
        super().__init__(Path(target).parent)
        self.subject = Path(target)
        self.path = self.subject.with_name(self.subject.name + ".lock")

    def _prepare(self) -> int:
        return 0

    def _tidy(self) -> None:
        pass
