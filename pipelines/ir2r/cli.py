"""``dataforge ir2r``: Iterative Room-to-Room tours (Krantz et al., IVLN, CVPR 2023)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from dataforge.cli.generation import generation_command
from dataforge.cli.options import input_options
from dataforge.pipelines.ir2r import PIPELINE

if TYPE_CHECKING:
    from dataforge.run.job import Job
    from dataforge.run.runner import RunReport

# --data-dir as the tours command declares it (its registered input location)
data_dir_option = input_options([loc for loc in PIPELINE.inputs if loc.name == "data-dir"])


@click.group()
def ir2r() -> None:
    """Iterative Room-to-Room (IR2R, IR2R-CE): R2R episodes ordered into tours of a scene.

    Paths of a scene are split into inter-navigable sets and each set is ordered by an
    asymmetric TSP (LKH-3) over oracle distances between consecutive episodes; each tour is
    repeated once per instruction. 'stats' prints the paper's Table 1, 'plot' draws a tour,
    'export' merges split datasets into the authors' single tours file, 'score' computes t-nDTW
    and the episodic metrics of predictions.
    """


def _table_row(report: RunReport, job: Job) -> None:
    """After a run: the paper's Table 1 row of the tours written."""
    if report.dry_run:
        return
    from dataforge.pipelines.ir2r.api import split_table
    from dataforge.pipelines.ir2r.table import TABLE1_HEADER, table1_row

    row = table1_row(split_table(report.root))
    click.echo("  ".join(f"{h} {v}" for h, v in zip(TABLE1_HEADER, row, strict=True)))


ir2r.add_command(
    generation_command(
        PIPELINE,
        help="Build the tours of one split into --out: tours_<split>.json plus a validated table.",
        after=_table_row,
    )
)


@ir2r.command()
@click.argument("directory", type=click.Path(path_type=Path, file_okay=False))
@click.option("--json", "as_json", is_flag=True, help="Print the row as JSON (unrounded).")
def stats(directory: Path, as_json: bool) -> None:
    """The paper's Table 1 row for the tours in DIRECTORY.

    Scenes, episodes, tours, tours per scene (the paper's "duplicates per set" column), and
    tour length in episodes: mean, min, max, population SD.
    """
    from dataforge.pipelines.ir2r.api import split_table
    from dataforge.pipelines.ir2r.table import TABLE1_HEADER, table1_row

    t = split_table(directory)
    if as_json:
        click.echo(json.dumps(t, indent=1))
        return
    from rich.console import Console
    from rich.table import Table

    table = Table(title=f"IR2R Table 1 ({directory})", title_justify="left")
    for h in TABLE1_HEADER:
        table.add_column(h, justify="left" if h == "split" else "right")
    table.add_row(*table1_row(t))
    Console().print(table)


@ir2r.command()
@click.argument("directory", type=click.Path(path_type=Path, file_okay=False))
@click.option("--scan", required=True, help="Scene (scan id) whose tour to draw.")
@click.option(
    "--out", required=True, type=click.Path(path_type=Path, dir_okay=False), help="PNG to write."
)
@click.option("--set", "set_index", type=click.IntRange(min=0), default=0, show_default=True)
@click.option("--repetition", type=click.IntRange(min=0), default=0, show_default=True)
@data_dir_option
def plot(
    directory: Path, scan: str, out: Path, set_index: int, repetition: int, data_dir: Path
) -> None:
    """Draw a tour of SCAN on its navigation graph, beside the split's tour-length histogram."""
    from dataforge.outputs import check_output_file
    from dataforge.pipelines.ir2r.api import plot as draw

    check_output_file(out, "--out", inputs=[directory, data_dir])
    path = draw(directory, scan, out, data_dir=data_dir, set_index=set_index, repetition=repetition)
    click.echo(f"plot written to {path}")


@ir2r.command()
@click.argument(
    "directories",
    nargs=-1,
    required=True,
    type=click.Path(path_type=Path, file_okay=False),
)
@click.option(
    "--out",
    required=True,
    type=click.Path(path_type=Path, dir_okay=False),
    help="File to write: tours_iVLN.json for IVLN, data/tours.json for IVLN-CE.",
)
def export(directories: tuple[Path, ...], out: Path) -> None:
    """Merge tours datasets of several splits into the authors' one tours file.

    Each DIRECTORY is a dataset written by 'dataforge ir2r tours' (one split each). IVLN reads
    one tours_iVLN.json holding every split ({split: {scan: [["<path_id>_<k>", ...]]}}) and
    picks a split by name (its training entry point asks for 'train'); IVLN-CE reads
    data/tours.json, the same layout with VLN-CE episode ids, from --continuous datasets. Two
    datasets of one split, or discrete and continuous together, are refused. The file is written
    atomically, splits in the order train, val_seen, val_unseen, test, scenes sorted.
    """
    from dataforge.outputs import check_output_file
    from dataforge.pipelines.ir2r.api import export as run_export
    from dataforge.pipelines.ir2r.export import SPLIT_ORDER

    check_output_file(out, "--out", inputs=directories)
    result = run_export(list(directories), out)
    counts = ", ".join(f"{s} ({result.tours[s]} tours)" for s in result.splits)
    click.echo(f"{result.path}: {result.kind} tours for {result.reader}, splits {counts}")
    missing = [s for s in SPLIT_ORDER if s not in result.splits]
    if missing:
        note = "; the authors' training reads 'train'" if "train" in missing else ""
        click.echo(f"  not in the file: {', '.join(missing)}{note}")


@ir2r.command()
@click.option(
    "--tours",
    "tours_file",
    required=True,
    type=click.Path(path_type=Path, dir_okay=False),
    help="tours_<split>.json (IVLN format).",
)
@click.option(
    "--reference",
    required=True,
    type=click.Path(path_type=Path, dir_okay=False),
    help="The split's episodes: R2R_<split>.json, or a VLN-CE .json.gz for IR2R-CE.",
)
@click.option(
    "--predictions",
    "predictions_file",
    required=True,
    type=click.Path(path_type=Path, dir_okay=False),
    help='{instr_id: [viewpoint, ...]} or {instr_id: {"trajectory": [[x, y, z], ...]}} '
    "(or the R2R submission list).",
)
@click.option("--split", default=None, help="Split key of the tours file (if it holds several).")
@data_dir_option
@click.option(
    "--distance",
    type=click.Choice(("auto", "graph", "habitat", "euclidean")),
    default="auto",
    show_default=True,
    help="Point distance: graph (discrete, from --data-dir), habitat (CE, --scenes-dir), or "
    "euclidean (an approximation for CE without navmeshes). auto picks by the reference.",
)
@click.option("--scenes-dir", type=click.Path(path_type=Path, file_okay=False), default=None)
@click.option("--threshold", type=float, default=3.0, show_default=True, help="nDTW d_th (m).")
@click.option(
    "--success-distance", type=float, default=3.0, show_default=True, help="SR/OS radius (m)."
)
@click.option(
    "--protocol",
    type=click.Choice(("ivln", "paper")),
    default="ivln",
    show_default=True,
    help="ivln: the authors' code (IVLN env.py/eval_utils.py, IVLN-CE tour_ndtw.py): success "
    "NE < d, discrete SPL over the reference path's length, t-nDTW with episode boundaries "
    "pinned to the agent's (CE: Euclidean points, n-1 episode weights). paper: the paper's "
    "wording: NE <= d, SPL over the shortest distance, points of different episodes "
    "infinitely far apart.",
)
@click.option(
    "--allow-offset-start",
    is_flag=True,
    help="Score trajectories that do not start at their episode's start (else an error "
    "naming the episode; CE allows 0.25 m, where IVLN-CE's oracle stops).",
)
@click.option("--json", "as_json", is_flag=True, help="Print the scores as JSON.")
@click.option(
    "--per-episode",
    type=click.Path(path_type=Path, dir_okay=False),
    default=None,
    help="Also write every episode's metrics to this JSON file.",
)
def score(**kw: Any) -> None:
    """t-nDTW (tour-level nDTW) and episodic TL, NE, OS, nDTW, SR, SPL of predictions.

    --tours takes a tours_<split>.json or a merged file from 'export' (then --split). The
    protocol is printed and recorded in the JSON output.
    """
    from dataforge.outputs import check_output_file
    from dataforge.pipelines.ir2r.api import score as run_score
    from dataforge.pipelines.ir2r.score import write_json

    if kw["per_episode"] is not None:  # before any work: one line, not a late traceback
        read = ("tours_file", "reference", "predictions_file", "data_dir", "scenes_dir")
        check_output_file(kw["per_episode"], "--per-episode", inputs=[kw[k] for k in read])
    result = run_score(
        tours_file=kw["tours_file"],
        reference=kw["reference"],
        predictions_file=kw["predictions_file"],
        data_dir=kw["data_dir"],
        split=kw["split"],
        distance=kw["distance"],
        scenes_dir=kw["scenes_dir"],
        ndtw_threshold=kw["threshold"],
        success_distance=kw["success_distance"],
        protocol=kw["protocol"],
        allow_offset_start=kw["allow_offset_start"],
    )
    if kw["per_episode"] is not None:
        write_json(kw["per_episode"], result.per_episode)
    d = result.to_dict()
    if kw["as_json"]:
        click.echo(json.dumps(d, indent=1))
        return
    e = result.episodic
    click.echo(
        f"{result.split} ({result.protocol} protocol): {result.episodes} episodes in "
        f"{result.tours} tours  "
        f"t-nDTW {100 * result.t_ndtw:.1f}  TL {e['trajectory_length']:.2f}  "
        f"NE {e['navigation_error']:.2f}  OS {100 * e['oracle_success']:.1f}  "
        f"nDTW {100 * e['ndtw']:.1f}  SR {100 * e['success']:.1f}  SPL {100 * e['spl']:.1f}"
    )
