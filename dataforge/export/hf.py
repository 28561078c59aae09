"""``dataforge export hf``: a dataset's rows as a Hugging Face dataset folder.

A pipeline registers ``exports={"hf": "module:function"}``, a function of the dataset that
returns an :class:`HfExport`: its tables (Hugging Face *configs*: name -> column types) and one
streaming pass of ``(table, row)`` pairs. This module writes them with pyarrow::

    README.md                          the dataset card: YAML header (configs, licence, the
                                       source dataset's manifest sha256), description, fields
    data/<table>/part-00000.parquet    rows, ROWS_PER_FILE per file, images embedded
    ...                                what the export's ``files`` writes (videos the rows
                                       name by relative path)
    export.json                        what was written, from which dataset

Column types: ``string``, ``int64``, ``float64``, ``bool``, ``strings`` (a list of strings),
``ints`` (a list of integers), ``image`` (PNG bytes) and ``images`` (a list of them). Images are
stored as Hugging Face's ``Image`` feature stores them (a struct of ``bytes`` and ``path``) and the
files carry the features in their ``huggingface`` schema metadata, so
``datasets.load_dataset("parquet", data_files=...)`` and ``load_dataset(OUT, name=TABLE)`` give
``PIL`` images. Values that are not of one type (typed answers) go as JSON strings.

``--out`` appears complete or not at all (written beside it, then renamed); the same dataset
and version write byte-identical files.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from dataforge._version import __version__
from dataforge.errors import MissingDependencyError, UsageError
from dataforge.progress import Progress

ROWS_PER_FILE = 1000
SPLIT = "test"  # every table is one split: these are evaluation sets
COLUMN_TYPES = ("string", "int64", "float64", "bool", "strings", "ints", "image", "images")
_VALUE = {"string": "string", "int64": "int64", "float64": "float64", "bool": "bool"}


@dataclass(frozen=True)
class HfExport:
    """What a pipeline exports: ``tables`` (name -> column -> type), ``rows()`` (one pass of
    ``(table, row)``), ``files(root)`` (writes other files under the export's root, e.g. the
    videos rows name by relative path; optional), and the card's ``title``, ``description``,
    ``fields`` (column -> meaning), ``licence`` (a URL) and ``citation``."""

    tables: Mapping[str, Mapping[str, str]]
    rows: Callable[[], Iterable[tuple[str, Mapping[str, Any]]]]
    title: str
    description: str
    fields: Mapping[str, str] = field(default_factory=dict)
    licence: str | None = None
    citation: str | None = None
    files: Callable[[Path], None] | None = None

    def __post_init__(self) -> None:
        for name, columns in self.tables.items():
            bad = {c: t for c, t in columns.items() if t not in COLUMN_TYPES}
            if bad or not name.replace("-", "").replace("_", "").isalnum():
                raise ValueError(f"table {name!r}: bad name or column types {bad}")


def require_pyarrow() -> Any:
    try:
        import pyarrow
        import pyarrow.parquet
    except ImportError:
        raise MissingDependencyError(
            "dataforge export hf needs pyarrow: pip install 'dataforge[hf]'"
        ) from None
    return pyarrow


def arrow_schema(columns: Mapping[str, str], metadata: Mapping[str, str]) -> Any:
    pa = require_pyarrow()
    image = pa.struct([("bytes", pa.binary()), ("path", pa.string())])
    types = {
        **{k: getattr(pa, v if v != "bool" else "bool_")() for k, v in _VALUE.items()},
        "strings": pa.list_(pa.string()),
        "ints": pa.list_(pa.int64()),
        "image": image,
        "images": pa.list_(image),
    }
    fields = [pa.field(name, types[kind]) for name, kind in columns.items()]
    return pa.schema(fields, metadata={k.encode(): v.encode() for k, v in metadata.items()})


def hf_features(columns: Mapping[str, str]) -> dict[str, Any]:
    """The ``datasets`` features of ``columns`` as its ``Features.to_dict`` writes them."""

    def one(kind: str) -> dict[str, Any]:
        if kind in _VALUE:
            return {"dtype": _VALUE[kind], "_type": "Value"}
        if kind == "image":
            return {"_type": "Image"}
        inner = {"strings": "string", "ints": "int64", "images": "image"}[kind]
        return {"feature": one(inner), "_type": "List"}

    return {name: one(kind) for name, kind in columns.items()}


def _cell(kind: str, value: Any) -> Any:
    if kind == "image":
        return {"bytes": bytes(value), "path": None}
    if kind == "images":
        return [{"bytes": bytes(v), "path": None} for v in value]
    return value


class _TableWriter:
    """Rows of one table into ``data/<table>/part-NNNNN.parquet``, ROWS_PER_FILE a file."""

    def __init__(self, root: Path, name: str, columns: Mapping[str, str]) -> None:
        self.dir = root / "data" / name
        self.columns = dict(columns)
        meta = {"huggingface": json.dumps({"info": {"features": hf_features(columns)}})}
        self.schema = arrow_schema(columns, meta)
        self.buffer: list[dict[str, Any]] = []
        self.files: list[str] = []
        self.rows = 0

    def add(self, row: Mapping[str, Any]) -> None:
        missing = set(self.columns) - set(row)
        if missing:
            raise ValueError(f"a row of {self.dir.name} lacks {sorted(missing)}")
        self.buffer.append({c: _cell(k, row[c]) for c, k in self.columns.items()})
        if len(self.buffer) >= ROWS_PER_FILE:
            self.flush()

    def flush(self) -> None:
        if not self.buffer:
            return
        pa = require_pyarrow()
        import pyarrow.parquet as pq

        self.dir.mkdir(parents=True, exist_ok=True)
        rel = f"data/{self.dir.name}/part-{len(self.files):05d}.parquet"
        table = pa.Table.from_pylist(self.buffer, schema=self.schema)
        pq.write_table(table, self.dir.parent.parent / rel, compression="zstd")
        self.files.append(rel)
        self.rows += len(self.buffer)
        self.buffer = []


def write_hf(
    export: HfExport,
    out: Path,
    *,
    source: Mapping[str, str],
    progress: Progress | None = None,
    total: int | None = None,
) -> dict[str, Any]:
    """Write ``export`` into the new folder ``out`` (see the module docstring); ``source``
    names the dataset (``path``, ``pipeline``, ``manifest_sha256``). Returns export.json's
    record."""
    from dataforge.store.atomic import remove_path

    require_pyarrow()
    out = Path(out)
    if out.exists() and any(out.iterdir()):
        raise UsageError(f"--out {out} exists and is not empty: give a new folder")
    tmp = out.with_name(f".tmp-{out.name}")
    remove_path(tmp)
    tmp.mkdir(parents=True)
    try:
        writers = {n: _TableWriter(tmp, n, cols) for n, cols in export.tables.items()}
        if progress is not None:
            progress.start("export hf", total or 0)
        for name, row in export.rows():
            if name not in writers:
                raise ValueError(f"a row names table {name!r}, which the export does not declare")
            writers[name].add(row)
            if progress is not None:
                progress.advance()
        for w in writers.values():
            w.flush()
        if progress is not None:
            progress.stop()
        used = {n: w for n, w in writers.items() if w.rows}
        if export.files is not None:
            export.files(tmp)
        parquet = {f for w in used.values() for f in w.files}
        others = sorted(
            p.relative_to(tmp).as_posix()
            for p in tmp.rglob("*")
            if p.is_file() and p.relative_to(tmp).as_posix() not in parquet
        )
        record = {
            "dataforge_version": __version__,
            "source": dict(source),
            "tables": {n: {"rows": w.rows, "files": w.files} for n, w in used.items()},
            "files": {rel: _sha256(tmp / rel) for rel in others},
        }
        (tmp / "README.md").write_text(card(export, used, record), encoding="utf-8")
        (tmp / "export.json").write_text(json.dumps(record, indent=1, sort_keys=True) + "\n")
        if out.exists():
            out.rmdir()
        tmp.rename(out)
    except BaseException:
        remove_path(tmp)
        raise
    return record


def card(export: HfExport, writers: Mapping[str, _TableWriter], record: Mapping[str, Any]) -> str:
    """The dataset card: a YAML header the Hub reads (values written as JSON, which YAML
    reads too), then the description, the tables, the fields and the citation."""
    lines = ["---"]
    if export.licence:
        lines += ["license: other", f"license_link: {json.dumps(export.licence)}"]
    lines += [f"pretty_name: {json.dumps(export.title)}", "configs:"]
    for name in writers:
        lines += [
            f"- config_name: {json.dumps(name)}",
            "  data_files:",
            f"  - split: {SPLIT}",
            f"    path: {json.dumps(f'data/{name}/*.parquet')}",
        ]
    lines += ["dataforge:"]
    for key, value in sorted(dict(record["source"]).items()):
        lines.append(f"  {key}: {json.dumps(value)}")
    lines += [f"  version: {json.dumps(record['dataforge_version'])}", "---", ""]
    lines += [f"# {export.title}", "", export.description, ""]
    src = record["source"]
    lines += [
        f"Exported by dataforge {record['dataforge_version']} from the {src.get('pipeline')} "
        f"dataset whose manifest.json has sha256 `{src.get('manifest_sha256')}`.",
        "",
        "| table (config) | rows |",
        "|---|---|",
        *(f"| {n} | {w.rows} |" for n, w in writers.items()),
        "",
    ]
    if export.fields:
        lines += ["| field | meaning |", "|---|---|"]
        lines += [f"| `{k}` | {v} |" for k, v in export.fields.items()] + [""]
    if export.citation:
        lines += ["## Citation", "", "```", export.citation, "```", ""]
    return "\n".join(lines)


def _sha256(path: Path) -> str:
    from dataforge.store.hashing import sha256_file

    return sha256_file(path)
