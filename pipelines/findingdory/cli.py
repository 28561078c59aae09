"""``dataforge findingdory``: episodes with pick-and-place rearrangements, experience
collection, tasks, evaluation, scores, baselines and the findingdory-train export."""

from __future__ import annotations

from typing import Any

import click

from dataforge.cli.evaluation import evaluation_options, evaluation_run
from dataforge.cli.generation import generation_command
from dataforge.pipelines.findingdory import COLLECT, PIPELINE, TASKS
from dataforge.pipelines.findingdory.evaluate import EVAL_DEFAULTS


@click.group()
def findingdory() -> None:
    """FindingDory: memory tasks over an embodied agent's day of pick-and-place
    rearrangements. 'episodes' draws the rearrangements (objects, start and goal receptacles,
    distractors, pick and place spots, receptacle viewpoints) in ProcTHOR houses (or HSSD scenes
    through habitat-sim: --scenes habitat:DIR). Check a dataset with 'dataforge validate',
    summarise it with 'dataforge stats', draw an episode's plan with 'dataforge inspect
    --preview'.
    """


findingdory.add_command(
    generation_command(
        PIPELINE,
        help="Draw FindingDory episodes into --out, one work unit per scene (resumable, "
        "deterministic per --seed; draws that fail are counted by reason). Example: "
        "dataforge findingdory episodes --scenes generate:30 --split val --episodes 4 "
        "--out findingdory/episodes",
    )
)

COLLECT_HELP = (
    "Play every episode of the FindingDory episodes dataset DIR with the oracle agent into "
    "--out: per frame the head camera's RGB (clean), depth, instance and semantic masks, "
    "pose, action, time of day and room, plus the interaction log the tasks are made from; "
    "--video mp4 also writes videos/<episode>.mp4, each frame stamped with its clock "
    "top-left and its frame number top-right. Example: dataforge "
    "findingdory collect fd/episodes --video mp4 --out fd/experience"
)
findingdory.add_command(generation_command(COLLECT, help=COLLECT_HELP))

TASKS_HELP = (
    "Instantiate the 60 templates of the paper's Table 3 from every collected day of DIR into "
    "--out: instruction, goal entities, predicate and every valid goal frame (teleport to the "
    "frame's pose in the world as the day left it, render and check), per subgoal, with "
    "solvability and tasks.jsonl in the authors' QA fields. Example: dataforge findingdory "
    "tasks fd/experience --out fd/tasks"
)
findingdory.add_command(generation_command(TASKS, help=TASKS_HELP))


@findingdory.command()
@click.argument("tasks_dir", metavar="TASKS_DIR", type=click.Path(file_okay=False))
@click.option(
    "--frames",
    type=click.IntRange(min=1),
    default=96,
    show_default=True,
    help="Frames of the day sent per task, subsampled uniformly (upstream: 96 in its "
    "config, 768 in its script; the paper 24-768).",
)
@click.option(
    "--max-side",
    type=click.IntRange(min=16),
    default=320,
    show_default=True,
    help="Longest side (pixels) of each frame sent.",
)
@click.option("--templates", default=None, help="Only these templates, e.g. T01,T31.")
@click.option(
    "--parse",
    type=click.Choice(["upstream", "strict"]),
    default="upstream",
    show_default=True,
    help="How replies are read: upstream's VLM agent's way (JSON5 "
    "or a Python dict, int() of each index, an unusable answer or an index outside "
    "the frames scored as frame 0) or strict (JSON, integers; else scored as wrong). "
    "Recorded in every prediction.",
)
@evaluation_options(
    out_help="Predictions JSONL ({id, frame_indices, error, raw}).",
    data_root_help="Where the experience dataset is now, when it was moved.",
    defaults=EVAL_DEFAULTS,
)
def evaluate(tasks_dir: str, **kw: Any) -> None:
    """Ask a video-language model on an OpenAI-compatible server (vLLM serving Qwen2.5-VL,
    InternVL, ...) every task of TASKS_DIR (dataforge findingdory tasks) with the day's frames,
    and write the frames it picks to --out for 'dataforge findingdory score'. Rerunning the same
    command resumes. Example: dataforge findingdory evaluate fd/tasks --llm-url
    http://127.0.0.1:8000/v1 --llm-model Qwen/Qwen2.5-VL-7B-Instruct --out preds.jsonl"""
    from dataforge.pipelines.findingdory.evaluate import run_evaluate

    run = evaluation_run(kw, inputs=[tasks_dir])
    line = run_evaluate(
        tasks_dir,
        run,
        frames=int(kw["frames"]),
        max_side=int(kw["max_side"]),
        templates=_templates(kw["templates"]),
        data_root=kw["data_root"],
        parse=str(kw["parse"]),
    )
    click.echo(line)


def _templates(text: object) -> list[str] | None:
    if not text:
        return None
    from dataforge.pipelines.findingdory.templates import check_template_ids

    return check_template_ids([t.strip() for t in str(text).split(",") if t.strip()])


@findingdory.command()
@click.argument("tasks_dir", metavar="TASKS_DIR", type=click.Path(file_okay=False))
@click.option(
    "--predictions",
    "-p",
    required=True,
    type=click.Path(dir_okay=False),
    help="Frames picked per task (evaluate or baseline): JSONL of {id, frame_indices}.",
)
@click.option(
    "--trajectories",
    "-t",
    type=click.Path(dir_okay=False),
    default=None,
    help="Low-level runs from the day's final pose: JSONL of {id, positions, yaws, "
    "stops}; adds LL-SR and LL-SPL (scored where HL succeeded).",
)
@click.option("--templates", default=None, help="Only these templates, e.g. T01,T31.")
@click.option(
    "--allow-missing",
    is_flag=True,
    help="Score tasks without a prediction as failures instead of stopping.",
)
@click.option("--json", "as_json", is_flag=True, help="Print the scores as JSON.")
def score(tasks_dir: str, predictions: str, **kw: object) -> None:
    """Score predicted frames on TASKS_DIR with the paper's metrics (B.3): HL-SR, HL-SPL (over
    entities, as upstream; HL-SPL-frames: over frames), DTG-SR, SC-SR (teleport to each
    predicted frame and check the predicates, with coverage or distance dropped), and with
    --trajectories LL-SR and LL-SPL, per template category and overall, solvable and
    unsolvable tasks apart. Example: dataforge findingdory score fd/tasks
    --predictions preds.jsonl"""
    import json

    from dataforge.pipelines.findingdory.scoring import run_score, table

    report = run_score(
        tasks_dir,
        predictions,
        trajectories=kw["trajectories"],  # type: ignore[arg-type]
        allow_missing=bool(kw["allow_missing"]),
        templates=_templates(kw["templates"]),
    )
    if kw["as_json"]:
        click.echo(json.dumps(report, indent=1, sort_keys=True))
    else:
        from rich.console import Console

        Console().print(table(report))


@findingdory.command()
@click.argument("tasks_dir", metavar="TASKS_DIR", type=click.Path(file_okay=False))
@click.option(
    "--kind",
    required=True,
    type=click.Choice(["oracle", "last-frame", "random"]),
    help="oracle: the nearest valid goal frames; last-frame: the day's last frame; "
    "random: uniform frames (--seed).",
)
@click.option("--out", required=True, type=click.Path(dir_okay=False), help="Predictions JSONL.")
@click.option("--seed", type=int, default=0, show_default=True, help="For --kind random.")
def baseline(tasks_dir: str, kind: str, out: str, seed: int) -> None:
    """Pick frames without a model, to score beside a model's picks. The oracle scores HL-SR =
    HL-SPL-frames = 1 on solvable tasks; last-frame and random show that the walk-away at the end of
    the day defeats trivial answers. Example: dataforge findingdory baseline fd/tasks --kind
    last-frame --out last.jsonl"""
    from dataforge.outputs import check_output_file
    from dataforge.pipelines.findingdory.baselines import run_baseline

    check_output_file(out, "--out", inputs=[tasks_dir])
    n = run_baseline(tasks_dir, kind=kind, out=out, seed=seed)
    click.echo(f"wrote {n} {kind} predictions to {out}")


@findingdory.command()
@click.argument(
    "tasks_dirs", metavar="TASKS_DIR...", nargs=-1, required=True, type=click.Path(file_okay=False)
)
@click.option(
    "--out",
    required=True,
    type=click.Path(),
    help="Folder to write (new or empty; keep 'findingdory' in its path: "
    "findingdory-train asserts it).",
)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["findingdory-train"]),
    default="findingdory-train",
    show_default=True,
    help="findingdory-train: the QA rows and videos its sft_video_llm.py and "
    "evaluate_video_llm.py read.",
)
@click.option(
    "--frames",
    type=int,
    default=96,
    show_default=True,
    help="Frames kept per day's video, even, 4..768 (the authors' release: 96).",
)
@click.option(
    "--data-root",
    type=click.Path(file_okay=False),
    default=None,
    help="Where the experience dataset of the one TASKS_DIR is now, when it was "
    "moved; it must be the one the tasks recorded.",
)
def export(
    tasks_dirs: tuple[str, ...], out: str, fmt: str, frames: int, data_root: str | None
) -> None:
    """Write the tasks of TASKS_DIR (one or more tasks datasets: train and val days) and the
    days they were made from as the authors' fine-tuning code reads them: train.jsonl and
    validation.jsonl rows (ep_id, video, question, answer, task_id, high_level_category,
    low_level_category, num_interactions; answer: the valid frames of each subgoal as indices
    into the video, e.g. "[[3, 4], [17]]"), a dataset card naming them, and
    videos/<train|val>/ep_id_<episode>.mp4 of --frames frames at 1 fps, stamped with the clock
    and the index. Tasks without a valid frame among the kept ones are left out (export.json
    lists them). Pass --out as both --dataset_name and --video_cache_dir. Example: dataforge
    findingdory export fd/tasks-train fd/tasks-val --out fd/findingdory-train"""
    from dataforge.pipelines.findingdory.export import run_export

    result = run_export(tasks_dirs, out, fmt=fmt, frames=frames, data_root=data_root)
    rows = ", ".join(f"{s} {n} rows" for s, n in result.rows.items())
    left = sum(result.dropped.values())
    click.echo(
        f"{result.out}: {rows}, {result.videos} videos for findingdory-train"
        + (f"; {left} tasks left out (export.json says why)" if left else "")
    )
