"""``dataforge reproduce``: rebuild a dataset from its manifest and prove it is what the code makes.

The manifest records everything a run depended on: pipeline, dataforge version, config, seed,
format, and the sha256 of every external input file it read (``inputs``). :func:`reproduce`

1. reads the manifest (its self-digest must hold; a newer format version is refused);
2. checks every recorded input file at its location (as recorded, or moved with
   ``--data-dir`` / ``--input NAME=PATH``) against its sha256, before any work;
3. rebuilds the job from the recorded config (``PipelineConfig.from_dict``), or for a curated
   dataset from its parents and its curation record (``dataforge.curate.plan.rebuild``), and
   checks that it has the recorded config hash (else this dataforge makes another dataset
   from that config);
4. runs it into a fresh directory (temporary, or ``keep``: rerunning resumes there);
5. compares every data file (all but ``manifest.json``, whose provenance differs by design):
   the rebuild's sha256 against the dataset's manifest and the bytes on disk. For a shard the
   report names the first episode and array whose decoded values differ. A rebuild that
   rendered with other OpenGL renderers than the manifest records (``environment.opengl``, say
   a GPU's instead of Mesa's llvmpipe) adds a note saying so (:func:`renderer_note`).
"""

from __future__ import annotations

import contextlib
import shutil
import tempfile
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from dataforge._version import __version__
from dataforge.errors import DatasetError, UsageError
from dataforge.inputs import REPRODUCING, Inputs, check_inputs, split_key
from dataforge.outputs import check_apart
from dataforge.progress import Progress
from dataforge.registry import get_pipeline
from dataforge.run import ExecutionOptions, run_job
from dataforge.store.builder import config_diff, flat_identity, header_hash, run_identity
from dataforge.store.hashing import entry_inside
from dataforge.store.manifest import Manifest, read_manifest
from dataforge.store.reader import Dataset


@dataclass(frozen=True)
class Difference:
    """One data file that the rebuild does not reproduce, and how."""

    path: str
    message: str

    def line(self) -> str:
        return f"[differs] {self.path}: {self.message}"


@dataclass
class ReproduceReport:
    root: Path
    pipeline: str
    files: int = 0
    differences: list[Difference] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    kept: Path | None = None

    @property
    def ok(self) -> bool:
        return not self.differences


def check_locations(root: Path, recorded: Inputs, locations: Mapping[str, Path]) -> None:
    """Every location moved with ``--input NAME=PATH`` is one the manifest records inputs
    from, else one line naming it and the recorded ones. ``data-dir`` is exempt: ``--data-dir``
    also comes from ``DATAFORGE_DATA``, set for every command."""
    known = sorted(set(recorded.locations) | {split_key(k)[0] for k in recorded.files})
    for name in sorted(set(locations) - set(known) - {"data-dir"}):
        raise UsageError(
            f"--input {name}=...: {root} records no input location {name!r} (it records: "
            f"{', '.join(known) or 'none'})"
        )


def reproduce(
    root: str | Path,
    *,
    locations: Mapping[str, Path] | None = None,
    options: ExecutionOptions | None = None,
    keep: Path | None = None,
    progress: Progress | None = None,
) -> ReproduceReport:
    """Rebuild the dataset at ``root`` and compare (see the module docstring). ``locations``
    override the recorded input locations by name (``data-dir``, ``metadata-dir``, ...)."""
    root = Path(root)
    manifest = read_manifest(root, verify=True)
    pipeline = get_pipeline(manifest.pipeline)
    if pipeline is None:
        raise DatasetError(
            f"{root} was made by pipeline {manifest.pipeline!r}, which this dataforge does not have"
        )
    report = ReproduceReport(root, manifest.pipeline)
    if manifest.dataforge_version != __version__:
        report.notes.append(
            f"made by dataforge {manifest.dataforge_version}, rebuilt by {__version__}"
        )
    recorded = Inputs.from_dict(manifest.inputs)
    identity = run_identity(manifest.pipeline, manifest.format, manifest.seed, manifest.config)
    if (
        header_hash(identity, manifest.schema, recorded.files, manifest.curation)
        != manifest.config_hash
    ):
        raise DatasetError(
            f"{root}'s manifest records settings that do not give its config hash: it was "
            "edited after the run, so there is nothing trustworthy to rebuild"
        )
    check_locations(root, recorded, locations or {})
    where = {**recorded.locations, **{k: Path(v) for k, v in (locations or {}).items()}}
    check_inputs(recorded.files, where)
    if manifest.curation:  # a subset, merge or split: made again from its parents
        from dataforge.curate.plan import rebuild

        job = rebuild(manifest, where)
    else:
        config = pipeline.config.from_dict(manifest.config)
        inputs = Inputs({**where, REPRODUCING: root})
        job = pipeline.job(config, seed=manifest.seed, fmt=manifest.format, inputs=inputs)
    header = job.header()
    if header.config_hash != manifest.config_hash:
        diff = config_diff(flat_identity(identity), flat_identity(header.identity))
        if not diff and header.schema.to_dict() != manifest.schema.to_dict():
            diff = "the schema"
        raise UsageError(
            f"this dataforge ({__version__}) builds another dataset from what {root}'s "
            f"manifest records ({diff or 'the inputs read'}); reproduce it with dataforge "
            f"{manifest.dataforge_version}"
        )
    with _rebuild_dir(root, keep) as out:
        run = run_job(
            job,
            out,
            options or ExecutionOptions(),
            command=["dataforge", "reproduce", str(root)],
            progress=progress,
        )
        assert run.manifest is not None
        report.files = len(run.manifest.files)
        if (note := renderer_note(manifest.environment, run.manifest.environment)) is not None:
            report.notes.append(note)
        report.differences = compare(root, manifest, out, run.manifest)
        report.kept = out if keep is not None else None
    return report


def renderers(environment: Mapping[str, Any]) -> list[str]:
    """The OpenGL renderers a manifest's ``environment`` records (``opengl``), as
    ``"GL_RENDERER (GL_VENDOR, OpenGL GL_VERSION)"``, distinct and sorted; the device index
    does not count (the same GPU model renders the same on either of two)."""
    found = environment.get("opengl") if isinstance(environment, Mapping) else None
    out = {
        f"{d.get('renderer')} ({d.get('vendor')}, OpenGL {d.get('version')})"
        for d in (found if isinstance(found, list) else ())
        if isinstance(d, Mapping)
    }
    return sorted(out)


def renderer_note(recorded: Mapping[str, Any], rebuilt: Mapping[str, Any]) -> str | None:
    """A line for reproduce's report when the rebuild rendered with other OpenGL renderers than
    the dataset's manifest records (``environment`` of each); None when they agree or neither
    rendered. Not a failure by itself: the data files decide."""
    was, now = renderers(recorded), renderers(rebuilt)
    if was == now:
        return None
    if not now:
        return f"the dataset was rendered with {'; '.join(was)}, the rebuild rendered nothing"
    if not was:
        return (
            f"the rebuild rendered with {'; '.join(now)}; the dataset records no OpenGL renderer "
            "(made before dataforge recorded it, or it rendered nothing)"
        )
    return (
        f"the rebuild rendered with {'; '.join(now)}, the dataset was rendered with "
        f"{'; '.join(was)}: rendered images may differ by small pixel amounts"
    )


@contextlib.contextmanager
def _rebuild_dir(root: Path, keep: Path | None) -> Iterator[Path]:
    if keep is not None:
        check_apart(keep, "--keep", [root])
        yield Path(keep).absolute()
        return
    tmp = Path(tempfile.mkdtemp(prefix="dataforge-reproduce-"))
    try:
        yield tmp / "dataset"
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def compare(
    root: Path, manifest: Manifest, rebuilt_root: Path, rebuilt: Manifest
) -> list[Difference]:
    """Every data file of ``root`` that differs from the rebuild: missing, extra, a manifest
    entry that differs, or bytes on disk that differ from the entry."""
    found: list[Difference] = []
    by_shard: dict[str, list[tuple[str, str]]] = {}
    for rel in sorted(set(manifest.files) | set(rebuilt.files)):
        want, have = rebuilt.files.get(rel), manifest.files.get(rel)
        if want is None:
            reason = "listed in the dataset's manifest but not made by the rebuild"
        elif have is None:
            reason = "made by the rebuild but not listed in the dataset's manifest"
        elif have.sha256 != want.sha256:
            reason = "its manifest sha256 differs from the rebuild's"
        else:
            disk = _disk_sha256(root, rel)
            if disk == want.sha256:
                continue
            reason = (
                "missing on disk (or not a regular file)"
                if disk is None
                else "the bytes on disk differ from the manifest and the rebuild"
            )
        shard = manifest.shard_of(rel) or rebuilt.shard_of(rel)
        if shard is None:
            found.append(Difference(rel, reason))
        else:
            by_shard.setdefault(shard, []).append((rel, reason))
    for shard, files in by_shard.items():
        detail = first_difference(root, manifest, rebuilt_root, rebuilt, shard)
        found += [Difference(rel, f"{reason}; {detail}") for rel, reason in files]
    return sorted(found, key=lambda d: d.path)


def _disk_sha256(root: Path, rel: str) -> str | None:
    """sha256 of the dataset's file, read without following links (None: not a regular file)."""
    try:
        return entry_inside(root, rel).sha256
    except OSError:
        return None


def first_difference(
    root: Path, manifest: Manifest, rebuilt_root: Path, rebuilt: Manifest, shard: str
) -> str:
    """The first episode (in the rebuild's order) and array of ``shard`` whose decoded values
    differ between the dataset and the rebuild."""
    ids = [e for e, loc in rebuilt.episodes.items() if loc.shard == shard]
    with Dataset(root, manifest) as a, Dataset(rebuilt_root, rebuilt) as b:
        for eid in ids:
            if eid not in a.manifest.episodes:
                return f"episode {eid!r} is missing from the dataset"
            try:
                ea, eb = a[eid], b[eid]
                for name in b.schema:
                    if name not in a.schema:
                        return f"first difference: array {name!r} is missing (episode {eid!r})"
                    va, vb = ea[name].read(), eb[name].read()
                    if va.shape != vb.shape or not np.array_equal(va, vb, equal_nan=_nan_ok(vb)):
                        return f"first difference: array {name!r} of episode {eid!r}{_row(va, vb)}"
                if ea.metadata != eb.metadata:
                    return f"first difference: the metadata of episode {eid!r}"
            except Exception as exc:  # a corrupted shard: say where it stops decoding
                return f"episode {eid!r} does not decode in the dataset ({type(exc).__name__})"
    return "every episode decodes to the same values (the encoded bytes differ)"


def _nan_ok(a: np.ndarray) -> bool:
    return a.dtype.kind in "fc"


def _row(a: Any, b: Any) -> str:
    if a.shape != b.shape:
        return f" (shape {a.shape} != {b.shape})"
    if a.ndim == 0:
        return ""
    rows = np.flatnonzero(
        [not np.array_equal(x, y, equal_nan=_nan_ok(b)) for x, y in zip(a, b, strict=True)]
    )
    return f" (row {int(rows[0])})" if len(rows) else ""
