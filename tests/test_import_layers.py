"""The import layers of docs/architecture.md, read from the source with ``ast`` (every import
statement, inside functions too): the core names no pipeline and no CLI module, a pipeline never
imports another pipeline, and the store sits below the pipeline registry (nothing it imports,
directly or through other modules, reaches the registry)."""

from __future__ import annotations

import ast
from collections.abc import Mapping
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
# top-level folder -> the package it installs as (setup.py)
FOLDERS = {"dataforge": "dataforge", "cli": "dataforge.cli", "pipelines": "dataforge.pipelines"}
PIPELINES = "dataforge.pipelines"
CLI = "dataforge.cli"
STORE = "dataforge.store"
ABOVE_STORE = ("dataforge.registry", "dataforge.inputs", "dataforge.run", CLI, PIPELINES)


def modules() -> dict[str, Path]:
    """Every module of the three folders by its dotted name."""
    out = {}
    for folder, package in FOLDERS.items():
        for path in sorted((ROOT / folder).rglob("*.py")):
            parts = list(path.relative_to(ROOT / folder).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts = parts[:-1]
            out[".".join([package, *parts])] = path
    return out


def imports_of(name: str, source: str, known: Mapping[str, Path], is_package: bool) -> set[str]:
    """The ``dataforge`` modules a module's source imports (``from a import b`` counts as ``a.b``
    when that is a module)."""
    package = name if is_package else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module or ""
            found.add(module)
            found.update(f"{module}.{a.name}" for a in node.names if f"{module}.{a.name}" in known)
    return {m for m in found if m == "dataforge" or m.startswith("dataforge.")}


@pytest.fixture(scope="module")
def graph() -> dict[str, set[str]]:
    known = modules()
    return {
        name: imports_of(name, path.read_text(), known, path.name == "__init__.py")
        for name, path in known.items()
    }


def under(module: str, package: str) -> bool:
    return module == package or module.startswith(package + ".")


def pipeline_of(module: str) -> str | None:
    """``multion`` for ``dataforge.pipelines.multion.score``; None outside the pipelines."""
    if not module.startswith(PIPELINES + "."):
        return None
    return module[len(PIPELINES) + 1 :].split(".")[0]


def test_the_reader_sees_imports() -> None:
    """The analysis itself: absolute, relative and function-level imports, and a module named
    in ``from package import module``."""
    known = {"dataforge.store.hashing": Path(), "dataforge.store": Path()}
    src = (
        "import os\nfrom dataforge.errors import X\nfrom . import hashing\n"
        "def f():\n    from dataforge.registry import get_pipeline\n"
    )
    got = imports_of("dataforge.store.validation", src, known, is_package=False)
    assert got == {
        "dataforge.errors",
        "dataforge.store",
        "dataforge.store.hashing",
        "dataforge.registry",
    }


def test_the_graph_covers_the_tree(graph: dict[str, set[str]]) -> None:
    assert len(graph) > 200
    assert "dataforge.store.hashing" in graph["dataforge.store.validation"]
    assert any(pipeline_of(m) == "multion" for m in graph)


def test_the_core_names_no_pipeline_and_no_cli(graph: dict[str, set[str]]) -> None:
    bad = sorted(
        f"{m} imports {d}"
        for m, deps in graph.items()
        if not (under(m, PIPELINES) or under(m, CLI))
        for d in deps
        if under(d, PIPELINES) or under(d, CLI)
    )
    assert not bad, "; ".join(bad)


def test_pipelines_never_import_each_other(graph: dict[str, set[str]]) -> None:
    bad = sorted(
        f"{m} imports {d}"
        for m, deps in graph.items()
        if pipeline_of(m)
        for d in deps
        if pipeline_of(d) and pipeline_of(d) != pipeline_of(m)
    )
    assert not bad, "; ".join(bad)


def test_the_store_sits_below_the_registry(graph: dict[str, set[str]]) -> None:
    """Nothing the store imports, however indirectly, reaches the registry, the inputs, the
    runner, the CLI or a pipeline (validation gets the pipelines' checks as a lookup)."""
    reach: set[str] = set()
    todo = [m for m in graph if under(m, STORE)]
    while todo:
        for dep in graph.get(todo.pop(), ()):
            if dep in graph and dep not in reach:
                reach.add(dep)
                todo.append(dep)
    bad = sorted(m for m in reach if any(under(m, top) for top in ABOVE_STORE))
    assert not bad, f"the store reaches {', '.join(bad)}"
