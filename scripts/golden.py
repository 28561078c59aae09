"""Write tests/golden/<pipeline>.json: run each registered pipeline's tiny example (``--seed 0``)
and record the sha256 of every data file and decoded array (``dataforge/golden.py``).

    make golden                                   # every pipeline (inputs from $DATAFORGE_DATA)
    python scripts/golden.py --pipelines ir2r     # some
    python scripts/golden.py --check              # compare only, write nothing

An intended change to what a generator makes shows as a reviewed diff of tests/golden/.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from dataforge import golden
from dataforge.registry import registered

ROOT = Path(__file__).resolve().parents[1]
GOLDEN_DIR = ROOT / "tests" / "golden"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--pipelines", default="all", help="'all' or a comma-separated list")
    default_data = os.environ.get("DATAFORGE_DATA", str(ROOT.parent / "shared" / "data"))
    ap.add_argument("--data-dir", type=Path, default=Path(default_data))
    ap.add_argument("--check", action="store_true", help="compare with the goldens, write nothing")
    args = ap.parse_args()
    pipelines = registered()
    names = list(pipelines) if args.pipelines == "all" else args.pipelines.split(",")
    failed = 0
    read_tmp = tempfile.TemporaryDirectory(prefix="golden-reads-")
    made: dict[str, Path] = {}

    def tiny(name: str) -> Path:
        """The tiny dataset of pipeline ``name`` that another's tiny example reads (made from
        the tiny datasets it reads in turn)."""
        if name not in made:
            out = Path(read_tmp.name) / name
            p = pipelines[name]
            reads = {up: tiny(up) for up in (p.tiny.read_pipelines if p.tiny else ())}
            cli = p.example_args(out, data_dir=args.data_dir, reads=reads)
            subprocess.run([sys.executable, "-m", "dataforge.cli.main", *cli], check=True)
            made[name] = out
        return made[name]

    for name in names:
        pipeline = pipelines[name]
        if pipeline.tiny is None:
            print(f"{name}: no tiny example, skipped")
            continue
        if missing := pipeline.missing_data(args.data_dir):
            print(f"{name}: skipped, needs {', '.join(missing)} in {args.data_dir}")
            continue
        with tempfile.TemporaryDirectory(prefix=f"golden-{name}-") as tmp:
            out = Path(tmp) / "ds"
            reads = {up: tiny(up) for up in pipeline.tiny.read_pipelines}
            cli = pipeline.example_args(out, data_dir=args.data_dir, reads=reads)
            r = subprocess.run([sys.executable, "-m", "dataforge.cli.main", *cli], text=True)
            if r.returncode != 0:
                print(f"{name}: the tiny example failed (exit {r.returncode})")
                failed += 1
                continue
            command = golden.example_command(pipeline)
            path = GOLDEN_DIR / f"{name}.json"
            if args.check:
                problems = golden.compare(pipeline, out, json.loads(path.read_text()))
                print("\n".join(problems) or f"{name}: matches {path}")
                failed += bool(problems)
                continue
            golden.write(path, golden.record(pipeline, out, command))
            print(f"{name}: wrote {path.relative_to(ROOT)}")
    read_tmp.cleanup()
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
