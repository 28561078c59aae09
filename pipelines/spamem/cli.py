"""``dataforge spamem``: generate SpaMEM interaction sequences."""

from __future__ import annotations

from typing import Any

import click

from dataforge.cli.evaluation import evaluation_options, evaluation_run
from dataforge.cli.generation import generation_command
from dataforge.pipelines.spamem import PIPELINE, TASKS


@click.group()
def spamem() -> None:
    """SpaMEM: spawn / place / remove sequences in ProcTHOR houses, each state captured from 8
    azimuths x 2 heights (RGB, depth, instance and semantic masks, poses, 2D/3D boxes, world
    graphs). Check a dataset with 'dataforge validate', summarise it with 'dataforge stats',
    look at a step with 'dataforge inspect DIR --preview p.png'.
    """


spamem.add_command(
    generation_command(
        PIPELINE,
        help="Generate SpaMEM sequences into --out (resumable, deterministic per --seed). "
        "Example: dataforge spamem generate --houses 1000 --out spamem/",
    )
)

TASKS_HELP = (
    "Question sets of the SpaMEM dataset DIR into --out: L1 static perception (SOR, VGL, DPE, "
    "RSR, CC, IC at step 0), L2 text- and L3 visual-conditioned memory (SOR-M, LOR, VGL-M, TL, "
    "RSR-M, STT, SED-Add/Rem, CSR-Add/Rem), short- and long-term, RGB and RGB-D: one JSONL "
    "file per level x task x horizon x modality under questions/, answers computed from the "
    "stored graphs, masks, depths and boxes. Example: dataforge spamem tasks spamem/ --out tasks/"
)
spamem.add_command(generation_command(TASKS, help=TASKS_HELP))


@spamem.command()
@click.argument("tasks_dir", metavar="TASKS_DIR", type=click.Path(file_okay=False))
@click.option(
    "--kind",
    required=True,
    type=click.Choice(["oracle", "prior", "blind", "rule", "evidence"]),
    help="oracle: the ground truth; prior: procthor's receptacle co-occurrence statistics, "
    "never the images; blind: each task's most frequent answer; rule: prompt-only rules (the "
    "step the prompt names, the first listed candidates, the most common count, empty sets); "
    "evidence: what a perfect perceiver reads from each record's own frames (masks, depth, "
    "poses) and, at L2, its prompt's text history, which shows whether they hold the answer.",
)
@click.option(
    "--out", required=True, type=click.Path(dir_okay=False), help="Predictions JSONL to write."
)
@click.option("--tasks", default=None, help="Only these tasks, e.g. SOR,VGL,TL.")
def baseline(tasks_dir: str, kind: str, out: str, tasks: str | None) -> None:
    """Answer the questions in TASKS_DIR without a model, to score beside a model's answers
    (dataforge spamem score TASKS_DIR --predictions OUT). Example: dataforge spamem baseline
    tasks/ --kind prior --out prior.jsonl"""
    from dataforge.outputs import check_output_file
    from dataforge.pipelines.spamem.baselines import run_baseline

    check_output_file(out, "--out", inputs=[tasks_dir])
    n = run_baseline(tasks_dir, kind=kind, out=out, tasks=tasks)
    click.echo(f"wrote {n} {kind} answers to {out}")


@spamem.command()
@click.argument("tasks_dir", metavar="TASKS_DIR", type=click.Path(file_okay=False))
@click.option(
    "--predictions",
    "-p",
    required=True,
    type=click.Path(dir_okay=False),
    help="The model's answers (dataforge spamem evaluate): JSONL of {id, answer, error, raw}.",
)
@click.option("--json", "as_json", is_flag=True, help="Print the scores as JSON.")
@click.option(
    "--by",
    default="level,task,horizon,modality",
    show_default=True,
    help="Group the questions by these fields (comma-separated).",
)
@click.option(
    "--allow-missing",
    is_flag=True,
    help="Score questions without a prediction, or with an invalid answer, as wrong "
    "(default: an error).",
)
@click.option("--tasks", default=None, help="Score only these tasks, e.g. SOR,VGL,TL.")
def score(tasks_dir: str, predictions: str, **kw: object) -> None:
    """Score a model's answers to the questions in TASKS_DIR with the paper's metrics: its
    equations 1-6, mean ± SD per level x task x horizon x modality (dataforge spamem tasks
    makes the questions, evaluate or baseline the --predictions).
    Example: dataforge spamem score tasks/ --predictions preds.jsonl --json"""
    from dataforge.pipelines.spamem.score import run_score

    run_score(
        tasks_dir,
        predictions,
        as_json=bool(kw["as_json"]),
        by=str(kw["by"]),
        allow_missing=bool(kw["allow_missing"]),
        tasks=kw["tasks"],  # type: ignore[arg-type]
    )


@spamem.command()
@click.argument("tasks_dir", type=click.Path(file_okay=False))
@click.option(
    "--max-images",
    type=click.IntRange(min=1),
    default=None,
    help="At most K images per question, spread over the sequence, always with the last.",
)
@click.option("--tasks", default=None, help="Answer only these tasks, e.g. SOR,VGL,TL.")
@evaluation_options(
    out_help="Predictions JSONL ({id, answer, error, raw}).",
    data_root_help="Where the sequences dataset is now (it, or the folder holding it), when the "
    "tasks directory was moved.",
)
def evaluate(tasks_dir: str, **kw: Any) -> None:
    """Ask a vision-language model on an OpenAI-compatible server (vLLM serving InternVL,
    LLaVA, Qwen-VL, ...) the questions in TASKS_DIR (dataforge spamem tasks), with their frames
    as PNG images; write one prediction per question to --out for 'dataforge spamem score'.
    Rerunning the same command resumes. Example: dataforge spamem evaluate tasks/ --llm-url
    http://127.0.0.1:8000/v1 --llm-model OpenGVLab/InternVL3-8B --out preds.jsonl"""
    from dataforge.pipelines.spamem.evaluate import run_evaluate

    run = evaluation_run(kw, inputs=[tasks_dir])
    tasks = [t.strip() for t in str(kw["tasks"]).split(",") if t.strip()] if kw["tasks"] else None
    result = run_evaluate(
        tasks_dir, run, max_images=kw["max_images"], tasks=tasks, data_root=kw["data_root"]
    )
    click.echo(result.line())
