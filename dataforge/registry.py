"""The pipeline registry: every pipeline declares itself once, with :func:`register`.

``pipelines/<name>/__init__.py`` is a benchmark's whole registration::

    register(Pipeline(
        name="synthetic",
        summary="Synthetic sphere scenes (store and run machinery test and demo)",
        config=SyntheticConfig,                                   # defaults and help texts
        build_job="dataforge.pipelines.synthetic.generate:build_job",
        cli="dataforge.pipelines.synthetic.cli:synthetic",        # the click group
        checks="dataforge.pipelines.synthetic.checks",            # invariants, stats, previews
        tiny=Example("--scenes 2 ..."),                            # after 'synthetic generate'
    ))

**Stages and tools.** A benchmark may make its datasets in several stages, each reading the
previous one's (MultiON: episodes, then oracle trajectories; FindingDory: episodes, collected
days, tasks). Each stage is a :class:`Pipeline` of its own (its config, job, checks, tiny
example and golden record: everything the conformance suite runs), registered with
``stage_of=`` the benchmark, the ``command`` that makes it in the benchmark's group and the
input location it takes as that command's ``argument``::

    register(Pipeline(name="multion-oracle", stage_of="multion", command="oracle",
                      argument="episodes", ..., tiny=Example("--limit 2",
                      reads=(("episodes", "multion"),))))

so ``dataforge multion oracle DIR`` is the stage's one command. The benchmark's registration
names its ``tools``: the group's commands that make no dataset (evaluate, score, baseline,
export, ...). A benchmark's command group holds exactly its stages' commands and its tools
(``tests/test_registry_stages.py``), and ``dataforge --help`` lists benchmarks only.

The command table of ``dataforge``, ``known_pipelines()``, ``validate``'s invariants,
``stats``, ``inspect --preview``, ``dataforge reproduce``, the golden checksums and the
conformance tests all read these registrations. Everything heavy is named as a lazy
``"module:attribute"`` string, so registering (and ``dataforge --help``) imports no simulator:
a pipeline's ``__init__`` imports only its config module, which must stay light.

The ``checks`` module provides ``INVARIANTS`` (``{key: description}``) and any of
``check_episode(ep) -> Iterable[(key, message)]``, ``check_dataset(ds) -> Iterable[(episode id
or None, key, message)]``, ``stats(ds) -> PipelineStats``, ``preview_frames(ep, count) ->
list[int]``, ``preview(ep, path, step)`` (the pipeline's own ``inspect --preview`` picture, e.g.
all views of one step; ``step`` None: the pipeline's choice) and ``plot(stats, path)`` (its own
``stats --plot`` figure from the :class:`~dataforge.stats.DatasetStats`). ``ep`` is a
:class:`~dataforge.store.reader.StoredEpisode` and ``ds`` a :class:`~dataforge.store.reader.Dataset`
(the aliases :data:`EpisodeCheck` ... :data:`Plot` below). Hooks read the dataset and must not
modify anything.
"""

from __future__ import annotations

import importlib
import pkgutil
import shlex
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dataforge.config import PipelineConfig
from dataforge.errors import DataforgeError, MissingDependencyError

if TYPE_CHECKING:  # for annotations only: importing them would load the store, numpy, the runner
    import click

    from dataforge.inputs import Inputs
    from dataforge.run.job import Job
    from dataforge.stats import DatasetStats
    from dataforge.store.builder import ExtraFile
    from dataforge.store.reader import Dataset, StoredEpisode

# The hooks of a pipeline's checks module (see the module docstring).
EpisodeCheck = Callable[["StoredEpisode"], Iterable[tuple[str, str]]]
DatasetCheck = Callable[["Dataset"], Iterable[tuple[str | None, str, str]]]
StatsFn = Callable[["Dataset"], "PipelineStats"]
PreviewFrames = Callable[["StoredEpisode", int], list[int]]
Preview = Callable[["StoredEpisode", Path, "int | None"], None]
Plot = Callable[["DatasetStats", Path], None]
ExtrasFn = Callable[["Dataset"], Mapping[str, "ExtraFile"]]
PIPELINES_PACKAGE = "dataforge.pipelines"


@dataclass(frozen=True)
class PipelineStats:
    """What ``dataforge stats`` shows for a pipeline.

    ``counts``: named numbers (or small tables as nested dicts) for the summary;
    ``distributions``: named lists of numbers drawn as histograms by ``--plot``.
    """

    counts: Mapping[str, Any] = field(default_factory=dict)
    distributions: Mapping[str, list[float]] = field(default_factory=dict)


@dataclass(frozen=True)
class InputLocation:
    """An external input location a pipeline reads (``--data-dir`` ...): the name is the
    option (``data-dir``) and the location's name in the manifest's ``inputs``."""

    name: str
    help: str
    file: bool | None = False  # a file, not a directory (None: either)
    envvar: str | None = None
    default: str | None = None

    @property
    def param(self) -> str:
        """The click parameter's name (``data_dir``)."""
        return self.name.replace("-", "_")


@dataclass(frozen=True)
class Example:
    """A small real generation of a pipeline: the options after its generation command
    (``dataforge multion generate``; the tests add ``--out``, ``--data-dir``, workers).
    ``data``: files under ``--data-dir`` it reads, so tests skip with a reason when absent.
    A pipeline's ``tiny`` example makes at least two units with two episodes of the same kind;
    it is what the conformance suite runs and what ``tests/golden/<pipeline>.json`` records."""

    args: tuple[str, ...] | str  # a string is split as a shell would
    data: tuple[str, ...] = ()
    # (input location, pipeline): the location is given the tiny dataset of that pipeline: the
    # previous stage's (e.g. MultiON's oracle reads MultiON episodes)
    reads: tuple[tuple[str, str], ...] = ()

    def __post_init__(self) -> None:
        if isinstance(self.args, str):
            object.__setattr__(self, "args", tuple(shlex.split(self.args)))

    @property
    def read_pipelines(self) -> tuple[str, ...]:
        """The pipelines whose tiny datasets the example reads."""
        return tuple(name for _, name in self.reads)


@dataclass(frozen=True)
class Hooks:
    """A pipeline's loaded checks module (see the module docstring)."""

    invariants: Mapping[str, str] = field(default_factory=dict)
    check_episode: EpisodeCheck | None = None
    check_dataset: DatasetCheck | None = None
    stats: StatsFn | None = None
    preview_frames: PreviewFrames | None = None
    preview: Preview | None = None
    plot: Plot | None = None


@dataclass(frozen=True)
class Pipeline:
    """One pipeline's registration (see the module docstring)."""

    name: str
    summary: str
    config: type[PipelineConfig]
    build_job: str  # "module:function": (config, *, seed, fmt, inputs) -> dataforge.run.Job
    cli: str | None = None  # "module:attribute": a benchmark's click group (stages: None)
    checks: str | None = None  # module with INVARIANTS and the hooks
    extra: str | None = None  # the pip extra it needs beyond the core install
    inputs: tuple[InputLocation, ...] = ()
    tiny: Example | None = None
    # a stage of another benchmark: its generation command is in that benchmark's group
    stage_of: str | None = None
    command: str = "generate"  # the generation command's name in the group
    argument: str | None = None  # an input location taken as the command's argument
    # a benchmark's commands that make no dataset (evaluate, score, baseline, export, ...)
    tools: tuple[str, ...] = ()
    # "module:function": (dataset) -> {relative path: bytes or writer}, the files beside the
    # shards made from the episodes (and the dataset's config): what generation writes and
    # what a curated dataset (dataforge.curate) gets again for the episodes it keeps
    extras: str | None = None
    # format -> "module:function": (dataset) -> what `dataforge export FORMAT` writes
    # (hf: dataforge.export.hf.HfExport)
    exports: Mapping[str, str] = field(default_factory=dict)
    # "module:function": (episode, rerun recording) -> None, what `dataforge view` adds to the
    # generic recording (dataforge.viz.rerun_view)
    viewer: str | None = None
    # Arrays that a library does not make bit-identical across CPUs: golden tests compare their
    # per-frame channel means within this absolute tolerance instead of their sha256, and the
    # extra files matching ``golden_derived`` (copies of those arrays that validate checks
    # against the shards) through the shards (dataforge/golden.py, docs/development.md).
    golden_tolerance: Mapping[str, float] = field(default_factory=dict)
    golden_derived: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if (self.cli is None) == (self.stage_of is None):
            raise DataforgeError(
                f"pipeline {self.name!r}: a benchmark names its cli group, a stage its stage_of"
            )
        if self.stage_of is not None and self.tools:
            raise DataforgeError(f"pipeline {self.name!r}: tools belong to the benchmark")
        if self.argument is not None and self.argument not in {i.name for i in self.inputs}:
            raise DataforgeError(f"pipeline {self.name!r}: argument {self.argument!r} is no input")

    @property
    def benchmark(self) -> str:
        """The benchmark whose command group holds this pipeline's generation command."""
        return self.stage_of or self.name

    @property
    def command_path(self) -> tuple[str, str]:
        """``dataforge <benchmark> <command>``: the generation command."""
        return (self.benchmark, self.command)

    def _load(self, ref: str) -> Any:
        module, _, attr = ref.partition(":")
        try:
            mod = importlib.import_module(module)
        except ModuleNotFoundError as exc:
            if (exc.name or "").split(".")[0] == "dataforge":
                raise  # a bug of dataforge's own, not a missing package
            hint = f": pip install 'dataforge[{self.extra}]'" if self.extra else ""
            raise MissingDependencyError(
                f"pipeline {self.name!r} needs the package {exc.name!r}{hint}"
            ) from exc
        return getattr(mod, attr) if attr else mod

    def export_hook(self, kind: str) -> Callable[[Dataset], Any] | None:
        """The registered ``exports[kind]`` function, or None."""
        ref = self.exports.get(kind)
        return None if ref is None else self._load(ref)

    def viewer_hook(self) -> Callable[[StoredEpisode, Any], None] | None:
        """The registered ``viewer`` function, or None."""
        return None if self.viewer is None else self._load(self.viewer)

    def extras_hook(self) -> ExtrasFn | None:
        """The registered ``extras`` function, or None."""
        return None if self.extras is None else self._load(self.extras)

    def job(
        self, config: PipelineConfig, *, seed: int, fmt: str, inputs: Inputs | None = None
    ) -> Job:
        """The pipeline's :class:`~dataforge.run.Job` for ``config``."""
        from dataforge.inputs import Inputs

        build = self._load(self.build_job)
        return build(config, seed=seed, fmt=fmt, inputs=inputs if inputs is not None else Inputs())

    def example_args(
        self,
        out: Path | str,
        *,
        data_dir: Path | str | None = None,
        seed: int = 0,
        reads: Mapping[str, Path | str] | None = None,
    ) -> list[str]:
        """The command line (after ``dataforge``) of the tiny example, writing into ``out``;
        ``reads``: the tiny datasets of the pipelines the example reads, by pipeline name."""
        if self.tiny is None:
            raise DataforgeError(f"pipeline {self.name!r} declares no tiny example")
        args = [*self.command_path, *self.tiny.args, "--seed", str(seed)]
        args += ["--out", str(out), "--quiet"]
        if self.tiny.data:
            args += ["--data-dir", str(data_dir)]
        for location, name in self.tiny.reads:
            if reads is None or name not in reads:
                raise DataforgeError(f"{self.name}'s tiny example reads {name}'s tiny dataset")
            given = str(reads[name])
            args += [given] if location == self.argument else [f"--{location}", given]
        return args

    def missing_data(self, data_dir: Path | str | None) -> list[str]:
        """The files of the tiny example's ``data`` absent from ``data_dir``."""
        if self.tiny is None or not self.tiny.data:
            return []
        if data_dir is None:
            return list(self.tiny.data)
        return [rel for rel in self.tiny.data if not (Path(data_dir) / rel).exists()]

    def command_group(self) -> click.Group:
        """The click group of the benchmark this pipeline belongs to."""
        benchmark = self if self.stage_of is None else get_pipeline(self.stage_of)
        if benchmark is None or benchmark.cli is None:
            raise DataforgeError(f"pipeline {self.name!r}: no benchmark {self.stage_of!r}")
        return benchmark._load(benchmark.cli)

    def generation_command(self) -> click.Command:
        """The command that makes this pipeline's datasets (``dataforge multion oracle``)."""
        return self.command_group().commands[self.command]

    def stages(self) -> list[Pipeline]:
        """A benchmark's pipelines: itself, then the stages registered with its name."""
        return [self, *(p for p in registered().values() if p.stage_of == self.name)]

    @cached_property
    def hooks(self) -> Hooks:
        if self.checks is None:
            return Hooks()
        mod = self._load(self.checks)
        return Hooks(
            invariants=dict(getattr(mod, "INVARIANTS", {})),
            check_episode=getattr(mod, "check_episode", None),
            check_dataset=getattr(mod, "check_dataset", None),
            stats=getattr(mod, "stats", None),
            preview_frames=getattr(mod, "preview_frames", None),
            preview=getattr(mod, "preview", None),
            plot=getattr(mod, "plot", None),
        )


_REGISTRY: dict[str, Pipeline] = {}
_discovered = False


def register(pipeline: Pipeline) -> Pipeline:
    """Register a pipeline (from its package's ``__init__``); returns it."""
    previous = _REGISTRY.get(pipeline.name)
    if previous is not None and previous.build_job != pipeline.build_job:
        raise DataforgeError(f"two pipelines are registered as {pipeline.name!r}")
    _REGISTRY[pipeline.name] = pipeline
    return pipeline


def registered() -> dict[str, Pipeline]:
    """Every pipeline installed under ``dataforge.pipelines``, by name (imports each package's
    light ``__init__`` once)."""
    global _discovered
    if not _discovered:
        pkg = importlib.import_module(PIPELINES_PACKAGE)
        for m in pkgutil.iter_modules(pkg.__path__):
            if m.ispkg:
                importlib.import_module(f"{PIPELINES_PACKAGE}.{m.name}")
        _discovered = True
    return dict(sorted(_REGISTRY.items()))


def known_pipelines() -> list[str]:
    return list(registered())


def get_pipeline(name: str) -> Pipeline | None:
    """The registration of pipeline ``name``, or None if no such pipeline is installed."""
    return _REGISTRY.get(name) or registered().get(name)


def invariant_hooks(name: str) -> Hooks | None:
    """Pipeline ``name``'s checks (its invariants and their hooks), or None if no such pipeline
    is installed: the lookup :func:`dataforge.store.validation.validate` asks."""
    pipeline = get_pipeline(name)
    return pipeline.hooks if pipeline is not None else None
