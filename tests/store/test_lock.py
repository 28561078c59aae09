"""One writer per directory: a live holder refuses others; a dead holder's lock is cleared."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from dataforge.errors import LockedError
from dataforge.store.lock import DirLock


def test_second_holder_is_refused_with_pid(tmp_path):
    with DirLock(tmp_path), pytest.raises(LockedError, match=r"another dataforge run \(pid \d+"):
        DirLock(tmp_path).acquire()
    with DirLock(tmp_path) as again:  # released: free again
        assert again.stale is None
    assert not (tmp_path / ".dataforge").exists()


def test_lock_held_by_another_process_is_refused(tmp_path):
    code = (
        "import sys,time; from dataforge.store.lock import DirLock; "
        f"l=DirLock({str(tmp_path)!r}).acquire(); print('locked', flush=True); time.sleep(60)"
    )
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout.readline().strip() == "locked"
        with pytest.raises(LockedError, match=f"pid {proc.pid}"):
            DirLock(tmp_path).acquire()
    finally:
        proc.kill()
        proc.wait()
    with DirLock(tmp_path) as lock:  # the kernel dropped the dead process's flock
        assert lock.stale is not None and lock.stale["pid"] == proc.pid
        assert lock.stale["alive"] is False


def test_stale_lock_file_of_dead_pid_is_cleared(tmp_path):
    (tmp_path / ".dataforge").mkdir()
    (tmp_path / ".dataforge" / "lock").write_text(
        json.dumps({"pid": 2**22 + 12345, "host": "elsewhere"})
    )
    with DirLock(tmp_path) as lock:
        assert lock.stale["pid"] == 2**22 + 12345
        assert json.loads((tmp_path / ".dataforge" / "lock").read_text())["pid"] > 0
