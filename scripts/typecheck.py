"""Type-check dataforge (the core, ``cli/`` and ``pipelines/``) with mypy.

The three folders install as one package through setuptools ``package-dir`` (``cli/`` ->
``dataforge.cli``, ``pipelines/`` -> ``dataforge.pipelines``), which mypy cannot follow. So the
package is laid out as it installs, with symbolic links in a temporary folder, mypy checks it
there (settings: ``[tool.mypy]`` in pyproject.toml), and the paths it reports are written back
as the repository's. Exit status: mypy's.

    python scripts/typecheck.py            # every module
    python scripts/typecheck.py --core     # dataforge/ only
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# top-level folder -> where it installs inside the dataforge package ("" is the package itself)
MAPPED = {"cli": "cli", "pipelines": "pipelines", "templates": "templates"}


def lay_out(into: Path, core_only: bool) -> Path:
    """``into/dataforge``: links to every entry of ``dataforge/`` plus ``cli``, ``pipelines``
    and ``templates`` where they install."""
    package = into / "dataforge"
    package.mkdir()
    for entry in sorted((ROOT / "dataforge").iterdir()):
        if entry.name != "__pycache__":
            (package / entry.name).symlink_to(entry)
    if not core_only:
        for folder, name in MAPPED.items():
            (package / name).symlink_to(ROOT / folder)
    return package


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--core", action="store_true", help="dataforge/ only")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="dataforge-typecheck-") as tmp:
        lay_out(Path(tmp), args.core)
        config = ["--config-file", str(ROOT / "pyproject.toml")]
        cache = ["--cache-dir", str(ROOT / ".mypy_cache")]
        cmd = [sys.executable, "-m", "mypy", *config, *cache, "-p", "dataforge"]
        run = subprocess.run(cmd, cwd=tmp, capture_output=True, text=True, env=dict(os.environ))
    out = run.stdout + run.stderr
    for link, real in (("dataforge/cli/", "cli/"), ("dataforge/pipelines/", "pipelines/")):
        out = out.replace(link, real)
    sys.stdout.write(out)
    return run.returncode


if __name__ == "__main__":
    raise SystemExit(main())
