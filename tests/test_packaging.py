"""The design card's folders install inside the dataforge namespace, nowhere else."""

from __future__ import annotations

import subprocess
import sys


def test_no_generic_top_level_modules_are_installed(tmp_path):
    code = (
        "import importlib.util as u; "
        "print([m for m in ('cli', 'pipelines', 'templates') if u.find_spec(m)]); "
        "import dataforge.cli.main, dataforge.pipelines.synthetic, dataforge.templates; "
        "print('ok')"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == ["[]", "ok"]


def test_pipelines_are_discoverable_by_name():
    from dataforge.registry import get_pipeline, known_pipelines

    assert "synthetic" in known_pipelines()
    hooks = get_pipeline("synthetic")
    assert hooks is not None and hooks.check_episode is not None and hooks.invariants
    assert get_pipeline("no-such-pipeline") is None
