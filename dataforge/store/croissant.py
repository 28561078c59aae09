"""Croissant 1.0 metadata (https://mlcommons.org/croissant/) and the ``episodes.csv`` it describes.

Croissant has no vocabulary for chunked tensors, so the shards are declared as a FileSet and the
episode index (``episodes.csv``: episode id, unit, shard, and rows per array) is the record set a
Croissant loader can read. Both files are deterministic: no timestamps, sorted content.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Mapping, Sequence
from typing import Any

from dataforge.store.episode import EpisodeLocation
from dataforge.store.hashing import FileEntry
from dataforge.store.layout import EPISODE_INDEX, SHARDS_DIR, SUFFIX
from dataforge.store.schema import Schema

CONFORMS_TO = "http://mlcommons.org/croissant/1.0"

# The Croissant 1.0 JSON-LD context, as the specification defines it.
_CONTEXT: dict[str, Any] = {
    "@language": "en",
    "@vocab": "https://schema.org/",
    "citeAs": "cr:citeAs",
    "column": "cr:column",
    "conformsTo": "dct:conformsTo",
    "cr": "http://mlcommons.org/croissant/",
    "rai": "http://mlcommons.org/croissant/RAI/",
    "data": {"@id": "cr:data", "@type": "@json"},
    "dataType": {"@id": "cr:dataType", "@type": "@vocab"},
    "dct": "http://purl.org/dc/terms/",
    "equivalentProperty": "cr:equivalentProperty",
    "examples": {"@id": "cr:examples", "@type": "@json"},
    "extract": "cr:extract",
    "field": "cr:field",
    "fileProperty": "cr:fileProperty",
    "fileObject": "cr:fileObject",
    "fileSet": "cr:fileSet",
    "format": "cr:format",
    "includes": "cr:includes",
    "isLiveDataset": "cr:isLiveDataset",
    "jsonPath": "cr:jsonPath",
    "key": "cr:key",
    "md5": "cr:md5",
    "parentField": "cr:parentField",
    "path": "cr:path",
    "recordSet": "cr:recordSet",
    "references": "cr:references",
    "regex": "cr:regex",
    "repeated": "cr:repeated",
    "replace": "cr:replace",
    "samplingRate": "cr:samplingRate",
    "sc": "https://schema.org/",
    "separator": "cr:separator",
    "source": "cr:source",
    "subField": "cr:subField",
    "transform": "cr:transform",
}

_ENCODING = {"zarr": "application/vnd+zarr", "hdf5": "application/x-hdf5"}


def episode_index_columns(schema: Schema) -> list[str]:
    cols = ["episode_id", "unit", "shard"]
    for name in schema:
        cols += [f"{name}_start", f"{name}_stop"]
    return cols


def episode_index_csv(schema: Schema, episodes: Sequence[EpisodeLocation]) -> bytes:
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(episode_index_columns(schema))
    for loc in episodes:
        row: list[Any] = [loc.id, loc.unit, loc.shard]
        for name in schema:
            row += list(loc.rows[name])
        w.writerow(row)
    return buf.getvalue().encode()


def _field(name: str, data_type: str, description: str) -> dict[str, Any]:
    return {
        "@type": "cr:Field",
        "@id": f"episodes/{name}",
        "name": name,
        "description": description,
        "dataType": data_type,
        "source": {"fileObject": {"@id": EPISODE_INDEX}, "extract": {"column": name}},
    }


def croissant_metadata(
    *,
    name: str,
    description: str,
    version: str,
    fmt: str,
    schema: Schema,
    index_file: FileEntry,
    license_url: str | None = None,
    url: str | None = None,
    citation: str | None = None,
    extra_files: Mapping[str, FileEntry] | None = None,
) -> dict[str, Any]:
    """The Croissant JSON-LD document of a dataset."""
    distribution: list[dict[str, Any]] = [
        {
            "@type": "cr:FileObject",
            "@id": EPISODE_INDEX,
            "name": EPISODE_INDEX,
            "description": "Episode index: episode id, work unit, shard and rows of every array",
            "contentUrl": EPISODE_INDEX,
            "contentSize": f"{index_file.size} B",
            "encodingFormat": "text/csv",
            "sha256": index_file.sha256,
        },
        {
            "@type": "cr:FileSet",
            "@id": "shards",
            "name": "shards",
            "description": (
                f"One {fmt} shard per work unit; arrays "
                + ", ".join(f"{n} {s.dtype}{s.shape_str()}" for n, s in schema.items())
                + "; sha256 of every file in manifest.json"
            ),
            "encodingFormat": _ENCODING[fmt],
            "includes": f"{SHARDS_DIR}/*{SUFFIX[fmt]}",
        },
    ]
    for rel, entry in sorted((extra_files or {}).items()):
        distribution.append(
            {
                "@type": "cr:FileObject",
                "@id": rel,
                "name": rel,
                "contentUrl": rel,
                "contentSize": f"{entry.size} B",
                "encodingFormat": "application/octet-stream",
                "sha256": entry.sha256,
            }
        )
    fields = [
        _field("episode_id", "sc:Text", "Episode id, unique in the dataset"),
        _field("unit", "sc:Text", "Work unit (one shard) the episode was generated in"),
        _field("shard", "sc:Text", "Shard path relative to the dataset root"),
    ]
    for arr, spec in schema.items():
        what = f"{spec.dtype}{spec.shape_str()}" + (f" in {spec.units}" if spec.units else "")
        fields.append(_field(f"{arr}_start", "sc:Integer", f"first row of {arr} ({what})"))
        fields.append(_field(f"{arr}_stop", "sc:Integer", f"row after the last of {arr}"))
    doc: dict[str, Any] = {
        "@context": _CONTEXT,
        "@type": "sc:Dataset",
        "name": name,
        "description": description,
        "conformsTo": CONFORMS_TO,
        "version": version,
        "distribution": distribution,
        "recordSet": [
            {
                "@type": "cr:RecordSet",
                "@id": "episodes",
                "name": "episodes",
                "description": "One record per episode",
                "key": {"@id": "episodes/episode_id"},
                "field": fields,
            }
        ],
    }
    if license_url:
        doc["license"] = license_url
    if url:
        doc["url"] = url
    if citation:
        doc["citeAs"] = citation
    return doc
