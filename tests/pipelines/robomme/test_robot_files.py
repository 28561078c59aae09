"""Where the stick robot's generated URDF goes: the user's cache, else a per-user temp folder,
else one line saying what to set."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

robots = pytest.importorskip("dataforge.pipelines.robomme.robots", reason="needs the robomme extra")

from dataforge.errors import DataforgeError  # noqa: E402


@pytest.fixture(autouse=True)
def fresh() -> Iterator[None]:
    """stick_urdf writes once per process: forget that for each test and after them."""
    robots.stick_urdf.cache_clear()
    yield
    robots.stick_urdf.cache_clear()


def test_the_urdf_goes_to_the_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    path = Path(robots.stick_urdf())
    assert path.is_file() and path.is_relative_to(tmp_path)
    assert path.with_suffix(".srdf").is_file() and "camera_link" in path.read_text()


def test_an_unwritable_cache_falls_back_to_temp(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    monkeypatch.setenv("XDG_CACHE_HOME", str(blocker / "cache"))
    monkeypatch.setenv("TMPDIR", str(tmp_path / "tmp"))
    (tmp_path / "tmp").mkdir()
    monkeypatch.setattr(robots.tempfile, "tempdir", None)  # re-read TMPDIR
    path = Path(robots.stick_urdf())
    assert path.is_file() and path.is_relative_to(tmp_path / "tmp")


def test_nowhere_to_write_is_one_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    monkeypatch.setattr(robots, "_cache_dirs", lambda: [blocker / "a", blocker / "b"])
    with pytest.raises(DataforgeError, match="set XDG_CACHE_HOME") as err:
        robots.stick_urdf()
    assert "\n" not in str(err.value)
