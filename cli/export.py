"""``dataforge export FORMAT DIR --out OUT``: a dataset in another tool's format."""

from __future__ import annotations

from pathlib import Path

import click

from dataforge.cli.options import DATASET, OUT, QUIET


@click.group()
def export() -> None:
    """Write a dataset in another tool's format (its pipeline registers what it exports)."""


@export.command("hf")
@click.argument("dataset", type=DATASET)
@OUT
@QUIET
def hf(dataset: Path, out: Path, quiet: bool) -> None:
    """DATASET's rows as a Hugging Face dataset folder in --out (new): parquet files with the
    images embedded, one config per table, and a dataset card (README.md) whose YAML header
    the Hub reads and which records DATASET's manifest sha256. Question sets export (SpaMEM
    tasks: the frames as images; FindingDory tasks: the days' videos); load it with
    datasets.load_dataset(OUT, name=CONFIG) or load_dataset("parquet", data_files=...)."""
    from dataforge.export.hf import HfExport, write_hf
    from dataforge.inputs import check_complete
    from dataforge.outputs import check_apart
    from dataforge.progress import make_progress
    from dataforge.registry import get_pipeline, registered
    from dataforge.store import open_dataset
    from dataforge.store.manifest import manifest_sha256, read_manifest

    check_apart(out, "--out", [dataset])
    manifest = read_manifest(dataset, verify=True)
    check_complete(dataset, manifest)
    pipeline = get_pipeline(manifest.pipeline)
    make = None if pipeline is None else pipeline.export_hook("hf")
    if make is None:
        have = sorted(n for n, p in registered().items() if "hf" in p.exports)
        raise click.UsageError(
            f"{dataset} is a {manifest.pipeline} dataset, which has no hf export "
            f"(these do: {', '.join(have)})"
        )
    with open_dataset(dataset) as ds:
        spec: HfExport = make(ds)
        source = {
            "path": str(Path(dataset).resolve()),
            "pipeline": manifest.pipeline,
            "manifest_sha256": manifest_sha256(dataset),
        }
        record = write_hf(spec, out, source=source, progress=make_progress(quiet))
    rows = sum(t["rows"] for t in record["tables"].values())
    click.echo(f"wrote {rows} rows in {len(record['tables'])} tables to {out}")
