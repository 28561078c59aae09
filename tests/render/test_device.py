"""The OpenGL device (issue 42): DATAFORGE_GL_DEVICE / --gl-device, one-line errors for a bad or
out-of-range device, the renderer that rendered recorded in the manifest (only where something
rendered), and reproduce's note when the rebuild's renderer differs from the recorded one."""

from __future__ import annotations

import dataclasses
import json
import os
from pathlib import Path

import pytest
from dfhelpers import ray_runtime_env_vars
from renderhelpers import gl_config_class, gl_job, needs_egl

from dataforge.errors import UsageError
from dataforge.render import device
from dataforge.run import ExecutionOptions, run_job
from dataforge.store.manifest import read_manifest, write_manifest
from dataforge.store.shard import ShardRecord

ENV = device.ENV
KEYS = {"vendor", "renderer", "version", "device"}
GPU = {
    "vendor": "NVIDIA Corporation",
    "renderer": "NVIDIA H200/PCIe/SSE2",
    "version": "4.6.0 NVIDIA 550.54.15",
    "device": 0,
}


@pytest.fixture
def egl() -> None:
    mark = needs_egl()
    if mark.args[0]:
        pytest.skip(mark.kwargs["reason"])


def one_line(exc: BaseException) -> str:
    text = str(exc)
    assert "\n" not in text and text
    return text


# ------------------------------------------------------------------ choosing the device


@pytest.mark.parametrize(
    ("value", "index"),
    [(None, None), ("", None), ("auto", None), (" AUTO ", None), ("0", 0), ("3", 3), (" 12", 12)],
)
def test_device_values(value: str | None, index: int | None) -> None:
    assert device.parse_device(value) == index
    env = {} if value is None else {ENV: value}
    assert device.requested_device(env) == index
    assert device.context_kwargs(env) == ({} if index is None else {"device_index": index})


@pytest.mark.parametrize("value", ["gpu", "-1", "1.5", "0x1", "cuda:0", "\u0661", "1 2"])
def test_a_bad_device_is_a_one_line_usage_error(value: str) -> None:
    with pytest.raises(UsageError) as info:
        device.requested_device({ENV: value})
    assert one_line(info.value) == (
        f"DATAFORGE_GL_DEVICE must be 'auto' or an EGL device index (0, 1, ...), got {value!r}"
    )
    assert info.value.exit_code == 2


def test_glcontexts_own_variable_may_not_ask_for_another_device() -> None:
    assert device.context_kwargs({ENV: "1", device.GLCONTEXT_ENV: "1"}) == {"device_index": 1}
    with pytest.raises(UsageError, match="GLCONTEXT_DEVICE_INDEX=0 ask for different EGL"):
        device.context_kwargs({ENV: "1", device.GLCONTEXT_ENV: "0"})


def test_glcontexts_refusal_becomes_a_line_saying_what_to_set() -> None:
    exc = Exception("requested device index 5, but found 4 devices")
    assert one_line(device.out_of_range(exc, 5)) == (  # type: ignore[arg-type]
        "DATAFORGE_GL_DEVICE=5 (--gl-device) is out of range: EGL finds 4 devices on this "
        "machine; set it to auto or 0 to 3"
    )
    one = Exception("requested device index 1, but found 1 devices")
    assert str(device.out_of_range(one, 1)).endswith(
        "finds 1 device on this machine; set it to auto or 0"
    )
    # auto on a machine without EGL devices, or another failure: not a usage error
    assert (
        device.out_of_range(Exception("requested device index 0, but found 0 devices"), 0) is None
    )
    assert device.out_of_range(exc, None) is None
    assert device.out_of_range(Exception("eglInitialize failed (0x3001)"), 1) is None


def test_out_of_range_device_on_this_machine(egl: None, monkeypatch: pytest.MonkeyPatch) -> None:
    """Index 64: more EGL devices than a machine has (here: llvmpipe's one)."""
    from dataforge.render import renderer

    monkeypatch.setenv(ENV, "64")
    with pytest.raises(UsageError) as info:
        renderer.create_context()
    assert info.value.exit_code == 2
    text = one_line(info.value)
    assert text.startswith("DATAFORGE_GL_DEVICE=64 (--gl-device) is out of range: EGL finds ")
    assert "; set it to auto or 0" in text
    monkeypatch.setenv(ENV, "gpu0")
    with pytest.raises(UsageError, match="must be 'auto' or an EGL device index"):
        renderer.create_context()


def test_device_zero_renders_and_is_described(egl: None, monkeypatch: pytest.MonkeyPatch) -> None:
    from dataforge.render import renderer

    monkeypatch.setenv(ENV, "0")
    start = device.mark()
    ctx = renderer.create_context()
    try:
        description = device.describe(ctx, 0)
        assert set(description) == KEYS and description["device"] == 0
        assert all(description[k] for k in ("vendor", "renderer", "version"))
        if description["vendor"].startswith("Mesa"):  # no GPU: Mesa's software rasteriser
            assert "llvmpipe" in description["renderer"]
        assert device.used_since(start) == (description,)
        assert device.used_since(device.mark()) == ()
    finally:
        ctx.release()


# ------------------------------------------------------------------------- the manifest


def test_a_rendered_dataset_records_its_renderer(egl: None, tmp_path: Path) -> None:
    from dataforge.render import shared_context

    report = run_job(gl_job(render=True), tmp_path / "ds", ExecutionOptions())
    assert report.manifest is not None
    recorded = read_manifest(tmp_path / "ds").environment["opengl"]
    ctx = shared_context()
    assert recorded == [json.loads(device._described[id(ctx)])]
    (gl,) = recorded
    assert set(gl) == KEYS and gl["renderer"] == ctx.info["GL_RENDERER"]
    assert gl["vendor"] == ctx.info["GL_VENDOR"] and gl["version"] == ctx.info["GL_VERSION"]


def test_a_dataset_that_rendered_nothing_records_no_renderer(egl: None, tmp_path: Path) -> None:
    """Even in a process that has rendered before (this one has)."""
    from dataforge.render import shared_context

    shared_context()
    run_job(gl_job(render=False), tmp_path / "ds", ExecutionOptions())
    environment = read_manifest(tmp_path / "ds").environment
    assert "opengl" not in environment and "numerics" in environment


def test_spawned_workers_report_what_they_rendered_with(
    egl: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two spawned workers inherit DATAFORGE_GL_DEVICE; the manifest records their context
    once (the same device), with the device they were asked for."""
    monkeypatch.setenv(ENV, "0")
    run_job(gl_job(render=True, units=3), tmp_path / "ds", ExecutionOptions(workers=2))
    (gl,) = read_manifest(tmp_path / "ds").environment["opengl"]
    assert set(gl) == KEYS and gl["device"] == 0 and gl["renderer"]


def test_a_shard_record_carries_its_renderer_through_the_journal() -> None:
    plain = ShardRecord(unit="u0", path="shards/u0.zarr", episodes=(), files={})
    assert "opengl" not in plain.to_dict()  # journal lines of datasets that do not render
    assert ShardRecord.from_dict(plain.to_dict()) == plain
    rendered = dataclasses.replace(plain, opengl=(GPU,))
    line = json.loads(json.dumps(rendered.to_dict()))
    assert line["opengl"] == [GPU] and ShardRecord.from_dict(line).opengl == (GPU,)


def test_the_builder_records_distinct_renderers(tmp_path: Path) -> None:
    """Units rendered on two GPU models (two Ray nodes, say): both, each once, sorted."""
    from dataforge.store.builder import DatasetBuilder

    other = {**GPU, "renderer": "NVIDIA A100-SXM4-80GB/PCIe/SSE2"}
    builder = DatasetBuilder.open(tmp_path / "ds", gl_job(render=False, units=3).header())
    builder.committed = {
        f"u{i}": ShardRecord(f"u{i}", f"shards/u{i}.zarr", (), {}, opengl=gl)
        for i, gl in enumerate([(GPU,), (other,), (GPU, other)])
    }
    assert builder.opengl() == [other, GPU]


# ---------------------------------------------------------------------------- reproduce


def test_reproduce_notes_a_renderer_that_differs() -> None:
    from dataforge.reproduce import renderer_note

    llvmpipe = {
        "vendor": "Mesa/X.org",
        "renderer": "llvmpipe (LLVM 15.0.6, 256 bits)",
        "version": "4.5 (Core Profile) Mesa 22.3.6",
        "device": "auto",
    }
    assert renderer_note({"opengl": [llvmpipe]}, {"opengl": [llvmpipe]}) is None
    assert renderer_note({"opengl": [llvmpipe]}, {"opengl": [{**llvmpipe, "device": 0}]}) is None
    assert renderer_note({}, {}) is None
    note = renderer_note({"opengl": [llvmpipe]}, {"opengl": [GPU]})
    assert note == (
        "the rebuild rendered with NVIDIA H200/PCIe/SSE2 (NVIDIA Corporation, OpenGL 4.6.0 "
        "NVIDIA 550.54.15), the dataset was rendered with llvmpipe (LLVM 15.0.6, 256 bits) "
        "(Mesa/X.org, OpenGL 4.5 (Core Profile) Mesa 22.3.6): rendered images may differ by "
        "small pixel amounts"
    )
    older = renderer_note({}, {"opengl": [llvmpipe]})
    assert older is not None and "the dataset records no OpenGL renderer" in older
    assert renderer_note({"opengl": "garbage"}, {}) is None  # an odd manifest is no failure


def test_reproduce_says_when_the_recorded_renderer_differs(
    egl: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture
) -> None:
    """A dataset recorded as rendered on a GPU, rebuilt here: the report says so in a note, and
    the files still decide (identical: reproduced)."""
    from dataforge import registry
    from dataforge.cli.main import main

    pipeline = registry.Pipeline(
        name="test-gl",
        summary="renders a box",
        config=gl_config_class(),
        build_job="renderhelpers:build_gl_job",
        cli="unused:unused",
    )
    monkeypatch.setitem(registry._REGISTRY, "test-gl", pipeline)
    root = tmp_path / "ds"
    run_job(gl_job(render=True), root, ExecutionOptions())
    manifest = read_manifest(root)
    environment = {**manifest.environment, "opengl": [GPU]}
    write_manifest(root, dataclasses.replace(manifest, environment=environment))
    assert main(["reproduce", str(root), "--quiet"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("note: the rebuild rendered with ")
    assert out[0].endswith(
        ", the dataset was rendered with NVIDIA H200/PCIe/SSE2 (NVIDIA Corporation, OpenGL "
        "4.6.0 NVIDIA 550.54.15): rendered images may differ by small pixel amounts"
    )
    assert out[1].startswith(f"reproduced {root}: all ")


# ---------------------------------------------------------------------------- the options


def test_gl_device_option_sets_the_variable_for_the_workers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture
) -> None:
    from dataforge.cli.main import main

    monkeypatch.setenv(ENV, "auto")  # recorded, so that what main() sets is undone afterwards
    monkeypatch.delenv(ENV)
    args = ["synthetic", "generate", "--scenes", "1", "--out", str(tmp_path / "ds"), "--dry-run"]
    assert main([*args, "--gl-device", "1"]) == 0
    assert os.environ[ENV] == "1"
    assert main([*args, "--gl-device", "gpu"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith(
        "error: Invalid value for '--gl-device' (env var: 'DATAFORGE_GL_DEVICE'): must be 'auto' "
        "or an EGL device index (0, 1, ...), got 'gpu'"
    )
    monkeypatch.setenv(ENV, "two")  # the variable is checked before any work too
    assert main(args) == 2
    assert "got 'two'" in capsys.readouterr().err
    monkeypatch.delenv(ENV)
    assert main(["reproduce", "--help"]) == 0
    assert "--gl-device" in capsys.readouterr().out


def test_no_test_leaves_a_device_set() -> None:
    """What the option sets in this process is undone by the tests that set it (a leftover
    index would reach every later test's subprocesses)."""
    assert os.environ.get(ENV) in (None, "auto")


def test_ray_workers_get_the_drivers_device_only_when_it_has_one(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Without one in the driver, each node keeps its own DATAFORGE_GL_DEVICE."""
    pytest.importorskip("ray")
    monkeypatch.setenv(ENV, "2")
    assert ray_runtime_env_vars()[ENV] == "2"
    monkeypatch.delenv(ENV)
    assert ENV not in ray_runtime_env_vars()
