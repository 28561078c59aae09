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
    pipeline = get_pipeline("synthetic")
    assert pipeline is not None and pipeline.hooks.check_episode is not None
    assert pipeline.hooks.invariants
    assert get_pipeline("no-such-pipeline") is None


def test_a_missing_package_names_the_pipelines_extra(monkeypatch):
    import sys

    import pytest

    from dataforge.errors import MissingDependencyError
    from dataforge.registry import Pipeline, get_pipeline

    houses = get_pipeline("houses")
    assert houses is not None and houses.extra == "procthor"  # not the pipeline's name
    monkeypatch.setitem(sys.modules, "dataforge_missing_probe", None)  # an uninstalled package
    broken = Pipeline(
        name="probe",
        summary="",
        config=object,
        build_job="x:y",
        cli="x:y",
        checks="dataforge_missing_probe",
        extra="procthor",
    )
    with pytest.raises(MissingDependencyError, match=r"pip install 'dataforge\[procthor\]'"):
        _ = broken.hooks
