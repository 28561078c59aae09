"""``dataforge spamem``: generate SpaMEM interaction sequences."""

from __future__ import annotations

import click

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
spamem.add_command(generation_command(TASKS, name="tasks", argument="sequences", help=TASKS_HELP))


@click.group(name="spamem-tasks")
def spamem_tasks() -> None:
    """SpaMEM question sets (the same as 'dataforge spamem tasks', with --sequences)."""


spamem_tasks.add_command(generation_command(TASKS, help=TASKS_HELP))


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
    "--llm-url", required=True, help="OpenAI-compatible server, e.g. http://127.0.0.1:8000/v1."
)
@click.option("--llm-model", required=True, help="Model name the server serves.")
@click.option(
    "--out",
    required=True,
    type=click.Path(dir_okay=False),
    help="Predictions JSONL ({id, answer, error, raw}); an existing file is resumed.",
)
@click.option(
    "--max-images",
    type=click.IntRange(min=1),
    default=None,
    help="At most K images per question, spread over the sequence, always with the last.",
)
@click.option("--tasks", default=None, help="Answer only these tasks, e.g. SOR,VGL,TL.")
@click.option(
    "--workers",
    type=click.IntRange(min=1),
    default=1,
    show_default=True,
    help="Requests in flight at once.",
)
@click.option(
    "--rate",
    type=click.FloatRange(min=0, min_open=True),
    default=None,
    help="At most R requests per second over all workers (default: no limit).",
)
@click.option(
    "--timeout",
    type=click.FloatRange(min=0, min_open=True),
    default=120.0,
    show_default=True,
    help="Seconds to wait for one answer.",
)
@click.option(
    "--retries",
    type=click.IntRange(min=0),
    default=2,
    show_default=True,
    help="Retries of a request that timed out, lost its connection or got HTTP 5xx.",
)
@click.option(
    "--max-tokens",
    type=click.IntRange(min=1),
    default=512,
    show_default=True,
    help="Answer length limit (raise it for reasoning models).",
)
@click.option(
    "--data-root",
    type=click.Path(file_okay=False),
    default=None,
    help="Where the sequences dataset is now (it, or the folder holding it), when the tasks "
    "directory was moved; it must be the one the tasks recorded (its manifest's sha256).",
)
@click.option("--quiet", is_flag=True, help="No progress output.")
def evaluate(tasks_dir: str, **kw: object) -> None:
    """Ask a vision-language model on an OpenAI-compatible server (vLLM serving InternVL,
    LLaVA, Qwen-VL, ...) the questions in TASKS_DIR (dataforge spamem tasks), with their frames
    as PNG images; write one prediction per question to --out for 'dataforge spamem score'.
    Rerunning the same command resumes. Example: dataforge spamem evaluate tasks/ --llm-url
    http://127.0.0.1:8000/v1 --llm-model OpenGVLab/InternVL3-8B --out preds.jsonl"""
    from dataforge.llm.client import LLMSettings
    from dataforge.outputs import check_output_file
    from dataforge.pipelines.spamem.evaluate import run_evaluate

    check_output_file(str(kw["out"]), "--out", inputs=[tasks_dir, kw["data_root"]])  # type: ignore[list-item]
    settings = LLMSettings(
        url=str(kw["llm_url"]),
        model=str(kw["llm_model"]),
        timeout_s=float(kw["timeout"]),  # type: ignore[arg-type]
        max_tokens=int(kw["max_tokens"]),  # type: ignore[call-overload]
    )
    tasks = [t.strip() for t in str(kw["tasks"]).split(",") if t.strip()] if kw["tasks"] else None
    summary = run_evaluate(
        tasks_dir,
        settings=settings,
        out=str(kw["out"]),
        max_images=kw["max_images"],  # type: ignore[arg-type]
        tasks=tasks,
        workers=int(kw["workers"]),  # type: ignore[call-overload]
        rate=kw["rate"],  # type: ignore[arg-type]
        retries=int(kw["retries"]),  # type: ignore[call-overload]
        data_root=kw["data_root"],  # type: ignore[arg-type]
        quiet=bool(kw["quiet"]),
    )
    click.echo(summary.line())
