"""A curated dataset (subset, merge, split) is a job like a pipeline's: its units copy episodes
from the parents into new shards, so the runner writes them atomically, resumes after Ctrl-C,
shows progress and runs on Ray; ``finalize`` writes episodes.csv, the pipeline's files beside
the shards (its registered ``extras``, made again for the episodes kept), Croissant and the
manifest.

What it records: the parents are its inputs (``parent1``, ``parent2``, ...: each one's path and
its ``manifest.json`` sha256, which counts in the config hash and which ``reproduce`` checks),
and so are the parents' own inputs (a stage's checks read its upstream dataset through them);
``curation`` names the operation and its settings (``where``; ``rename``; ``by``, ``fractions``,
``seed`` and ``part``). The pipeline, config, format and schema are the parents' (a merge's
seed is its first parent's; every parent's seed is in ``curation``), so ``validate`` runs the
pipeline's checks on it, and readers of the pipeline read it. :func:`rebuild` makes the same
job again from a curated manifest (``dataforge reproduce``).

Units: one per parent shard that keeps an episode, named as the parent's unit; in a merge a
unit id that an earlier parent already has becomes ``<unit>-p<k>`` (k: the parent's position,
from 1), and so does an episode id with ``--rename`` (without it, a merge refuses episode ids
that two parents share).
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from dataforge.curate.where import Where, episode_fields, parse_where
from dataforge.errors import DatasetError, UsageError
from dataforge.inputs import Inputs, check_complete, split_key
from dataforge.progress import Progress
from dataforge.run import Job, WorkUnit
from dataforge.store import Episode, open_dataset
from dataforge.store.builder import config_diff
from dataforge.store.manifest import Manifest, read_manifest
from dataforge.store.reader import Dataset
from dataforge.store.schema import Schema

OPERATIONS = ("subset", "merge", "split")


@dataclass(frozen=True)
class Parent:
    """A dataset a curation reads: its input location name, folder and verified manifest."""

    location: str
    root: Path
    manifest: Manifest


@dataclass(frozen=True)
class Pick:
    """One episode kept: its parent (index), id there, id and unit in the curated dataset."""

    parent: int
    id: str
    new_id: str
    unit: str


def open_parents(paths: Sequence[Path | str], inputs: Inputs) -> list[Parent]:
    """The parents at ``paths``, recorded in ``inputs`` as ``parent1``, ``parent2``, ... (their
    manifests hashed); a damaged or unfinished one is a one-line error."""
    out = []
    for k, path in enumerate(paths, 1):
        location = f"parent{k}"
        root = Path(path)
        inputs.locations[location] = root
        if not (root / "manifest.json").is_file():
            raise UsageError(f"{root} is not a finished dataforge dataset (no manifest.json)")
        inputs.file(location, "manifest.json", "dataset manifest")
        manifest = read_manifest(root, verify=True)
        check_complete(root, manifest)
        out.append(Parent(location, root, manifest))
    return out


def episode_length(schema: Schema, rows: Mapping[str, tuple[int, int]]) -> int:
    """An episode's rows in its longest time-indexed (variable-length) array; 0 without one."""
    spans = [b - a for name, (a, b) in rows.items() if schema[name].shape[0] is None]
    return max(spans, default=0)


def scan(
    parent: Parent, progress: Progress | None = None
) -> Iterator[tuple[str, str, dict[str, Any]]]:
    """(episode id, unit, fields for ``--where``) of every episode of ``parent``, in its
    order (reading each shard's metadata once)."""
    m = parent.manifest
    if progress is not None:
        progress.start(f"reading {parent.root.name}", len(m.episodes))
    with Dataset(parent.root, m) as ds:
        for loc in m.episodes.values():
            length = episode_length(m.schema, loc.rows)
            yield loc.id, loc.unit, episode_fields(loc.id, loc.unit, length, ds[loc.id].metadata)
            if progress is not None:
                progress.advance()
    if progress is not None:
        progress.stop()


# -- the three operations -----------------------------------------------------------------------


def subset_picks(parent: Parent, where: Where, progress: Progress | None = None) -> list[Pick]:
    picks = [
        Pick(0, eid, eid, unit) for eid, unit, fields in scan(parent, progress) if where(fields)
    ]
    if not picks:
        n = len(parent.manifest.episodes)
        raise UsageError(f"--where {where.text!r} keeps none of the {n} episodes of {parent.root}")
    return picks


def check_mergeable(parents: Sequence[Parent]) -> None:
    """One line naming the first difference that makes two parents not one dataset: pipeline,
    format version, shard format, schema or config (seeds may differ)."""
    first = parents[0].manifest
    for p in parents[1:]:
        m = p.manifest
        for what, a, b in (
            ("pipeline", first.pipeline, m.pipeline),
            ("format version", first.format_version, m.format_version),
            ("shard format", first.format, m.format),
        ):
            if a != b:
                raise UsageError(f"cannot merge {p.root}: its {what} is {b!r}, not {a!r}")
        if m.schema.to_dict() != first.schema.to_dict():
            raise UsageError(f"cannot merge {p.root}: its arrays (schema) differ")
        if dict(m.config) != dict(first.config):
            diff = config_diff(
                {f"--{k}": v for k, v in first.config.items()},
                {f"--{k}": v for k, v in m.config.items()},
            )
            raise UsageError(f"cannot merge {p.root}: its config differs ({diff})")


def merge_picks(parents: Sequence[Parent], *, rename: bool) -> list[Pick]:
    check_mergeable(parents)
    picks: list[Pick] = []
    ids: dict[str, Path] = {}
    units: dict[str, int] = {}
    for k, p in enumerate(parents):
        renamed_units: dict[str, str] = {}
        for loc in p.manifest.episodes.values():
            new = loc.id
            if new in ids:
                if not rename:
                    raise UsageError(
                        f"episode {loc.id!r} is in both {ids[new]} and {p.root}: pass --rename "
                        f"to rename the later one ({loc.id}-p{k + 1})"
                    )
                new = f"{loc.id}-p{k + 1}"
                if new in ids:
                    raise UsageError(f"--rename: {new!r} is taken too (in {ids[new]})")
            ids[new] = p.root
            if loc.unit not in renamed_units:
                unit = loc.unit
                if units.get(unit, k) != k:
                    unit = f"{loc.unit}-p{k + 1}"
                renamed_units[loc.unit] = unit
                units[unit] = k
            picks.append(Pick(k, loc.id, new, renamed_units[loc.unit]))
    return picks


def parse_fractions(text: str) -> dict[str, float]:
    """``train=0.9,val=0.1`` -> {"train": 0.9, "val": 0.1}: names are folder names, fractions
    positive and summing to 1."""
    out: dict[str, float] = {}
    for part in text.split(","):
        name, _, value = part.partition("=")
        name = name.strip()
        try:
            frac = float(value)
        except ValueError:
            frac = -1.0
        if not name or not name.replace("_", "").replace("-", "").isalnum() or not frac > 0:
            raise UsageError(
                f"--fractions {text!r}: give NAME=FRACTION,... (e.g. train=0.9,val=0.1)"
            )
        if name in out:
            raise UsageError(f"--fractions {text!r}: {name!r} is given twice")
        out[name] = frac
    if len(out) < 2 or abs(sum(out.values()) - 1.0) > 1e-9:
        raise UsageError(f"--fractions {text!r}: two or more parts summing to 1")
    return out


def split_picks(
    parent: Parent,
    by: str,
    fractions: Mapping[str, float],
    seed: int,
    progress: Progress | None = None,
) -> dict[str, list[Pick]]:
    """Episodes grouped by the value of field ``by`` (``--where``'s fields); the groups, sorted
    by value, are shuffled with ``seed``, and each in turn goes to the part whose episodes so
    far fall furthest below its fraction of all (ties: the order given). No group is in two
    parts; a part that gets no group is a one-line error."""
    key = parse_where(by)
    if len(key.fields) != 1 or key.fields[0] != by:
        raise UsageError(f"--by {by!r}: name one field (e.g. house, task, unit)")
    groups: dict[str, list[Pick]] = {}
    for eid, unit, fields in scan(parent, progress):
        if by not in fields:
            known = ", ".join(sorted(k for k in fields if not k.startswith("metadata.")))
            raise UsageError(
                f"--by {by!r}: episode {eid!r} has no such field (its fields: {known})"
            )
        value = json.dumps(fields[by], sort_keys=True)
        groups.setdefault(value, []).append(Pick(0, eid, eid, unit))
    names = list(fractions)
    if len(groups) < len(names):
        raise UsageError(f"--by {by!r}: {len(groups)} value(s), fewer than the {len(names)} parts")
    order = sorted(groups)
    total = sum(len(g) for g in groups.values())
    counts = dict.fromkeys(names, 0)
    parts: dict[str, list[Pick]] = {n: [] for n in names}
    for i in np.random.default_rng(seed).permutation(len(order)):
        group = groups[order[int(i)]]
        name = max(names, key=lambda n: (fractions[n] * total - counts[n], -names.index(n)))
        parts[name].extend(group)
        counts[name] += len(group)
    position = {eid: k for k, eid in enumerate(parent.manifest.episodes)}
    for name, picks in parts.items():
        if not picks:
            raise UsageError(
                f"--fractions: part {name!r} gets no {by} (its fraction is below one group's "
                "share): give it a larger fraction"
            )
        picks.sort(key=lambda p: position[p.id])  # the parent's order
    return parts


# -- the job --------------------------------------------------------------------------------------


def copy_episodes(unit: WorkUnit, rng: np.random.Generator) -> Iterator[Episode]:
    """The unit's episodes read from its parent (one at a time: memory is one episode)."""
    with open_dataset(unit.params["parent"]) as ds:
        for old, new in unit.params["episodes"]:
            ep = ds[old]
            yield Episode(new, ep.read(), ep.metadata)


def curated_job(
    parents: Sequence[Parent],
    picks: Sequence[Pick],
    curation: Mapping[str, Any],
    inputs: Inputs,
) -> Job:
    """The job that writes ``picks`` (see the module docstring)."""
    from dataforge.registry import get_pipeline

    first = parents[0].manifest
    units: dict[str, tuple[int, list[list[str]]]] = {}
    for pick in picks:
        parent, episodes = units.setdefault(pick.unit, (pick.parent, []))
        if parent != pick.parent:
            raise DatasetError(f"unit {pick.unit!r} would take episodes of two parents")
        episodes.append([pick.id, pick.new_id])
    work = tuple(
        WorkUnit(uid, {"parent": str(parents[k].root), "episodes": eps})
        for uid, (k, eps) in units.items()
    )
    inherit_inputs(parents, inputs)
    pipeline = get_pipeline(first.pipeline)
    croissant = _croissant(parents[0].root)
    return Job(
        pipeline=first.pipeline,
        name=first.name,
        config=dict(first.config),
        seed=first.seed,
        format=first.format,
        schema=first.schema,
        units=work,
        produce=copy_episodes,
        extra_files=None if pipeline is None else pipeline.extras_hook(),
        description=f"{curation['op']} of: {croissant.get('description', first.name)}",
        license_url=croissant.get("license"),
        url=croissant.get("url"),
        citation=croissant.get("citeAs"),
        inputs=inputs,
        curation=dict(curation),
    )


def inherit_inputs(parents: Sequence[Parent], inputs: Inputs) -> None:
    """Add the parents' own inputs to ``inputs`` (a stage's checks read the dataset it was
    made from through them), but not a curated parent's parents; an input two parents read
    with different contents is a one-line error."""
    for p in parents:
        recorded = Inputs.from_dict(p.manifest.inputs)
        own = {str(q["input"]) for q in p.manifest.curation.get("parents", [])}
        for key, digest in recorded.files.items():
            location = split_key(key)[0]
            if location in own:
                continue
            if inputs.files.get(key, digest) != digest:
                raise UsageError(f"cannot merge {p.root}: its input {key} differs")
            inputs.files[key] = digest
            if location in recorded.locations:
                inputs.locations.setdefault(location, recorded.locations[location])


def _croissant(root: Path) -> dict[str, Any]:
    try:
        doc = json.loads((root / "croissant.json").read_text())
    except (OSError, ValueError):
        return {}
    return doc if isinstance(doc, dict) else {}


def parents_record(parents: Sequence[Parent]) -> list[dict[str, Any]]:
    """What ``curation`` says of each parent (its path and manifest sha256 are its input's)."""
    return [
        {
            "input": p.location,
            "name": p.manifest.name,
            "seed": p.manifest.seed,
            "episodes": len(p.manifest.episodes),
        }
        for p in parents
    ]


def subset_job(path: Path | str, where: str, progress: Progress | None = None) -> Job:
    inputs = Inputs()
    parents = open_parents([path], inputs)
    cond = parse_where(where)
    picks = subset_picks(parents[0], cond, progress)
    record = {"op": "subset", "where": cond.text, "parents": parents_record(parents)}
    return curated_job(parents, picks, record, inputs)


def merge_job(paths: Sequence[Path | str], *, rename: bool) -> Job:
    if len(paths) < 2:
        raise UsageError("merge needs two or more datasets")
    inputs = Inputs()
    parents = open_parents(paths, inputs)
    picks = merge_picks(parents, rename=rename)
    record = {"op": "merge", "rename": rename, "parents": parents_record(parents)}
    return curated_job(parents, picks, record, inputs)


def split_jobs(
    path: Path | str,
    *,
    by: str,
    fractions: str | Mapping[str, float],
    seed: int,
    progress: Progress | None = None,
) -> dict[str, Job]:
    """One job per part, by part name (the folder it goes to under ``--out``)."""
    fracs = parse_fractions(fractions) if isinstance(fractions, str) else dict(fractions)
    inputs = Inputs()
    parents = open_parents([path], inputs)
    parts = split_picks(parents[0], by, fracs, seed, progress)
    out = {}
    for name, picks in parts.items():
        record = {
            "op": "split",
            "by": by,
            "fractions": fracs,
            "seed": seed,
            "part": name,
            "parents": parents_record(parents),
        }
        out[name] = curated_job(
            parents, picks, record, Inputs(dict(inputs.locations), dict(inputs.files))
        )
    return out


def rebuild(manifest: Manifest, locations: Mapping[str, Path]) -> Job:
    """The job a curated ``manifest`` was written by, from its parents at ``locations`` (each
    checked against its recorded manifest sha256 by the caller: ``reproduce``)."""
    record = dict(manifest.curation)
    op = record.get("op")
    names = [str(p["input"]) for p in record.get("parents", [])]
    if op not in OPERATIONS or not names or any(n not in locations for n in names):
        raise DatasetError(
            f"the manifest's curation record is not one this dataforge reads: {op!r}"
        )
    paths = [locations[n] for n in names]
    if op == "subset":
        return subset_job(paths[0], str(record["where"]))
    if op == "merge":
        return merge_job(paths, rename=bool(record["rename"]))
    jobs = split_jobs(
        paths[0], by=str(record["by"]), fractions=record["fractions"], seed=int(record["seed"])
    )
    part = str(record["part"])
    if part not in jobs:
        raise DatasetError(
            f"the curation record names part {part!r}, which the split does not make"
        )
    return jobs[part]
