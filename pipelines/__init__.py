"""Benchmark pipelines, one package per paper, each built from the core library.

Every pipeline package declares itself once in its ``__init__`` with
``dataforge.registry.register(Pipeline(...))`` (see ``dataforge/registry.py`` and "Adding a
pipeline" in docs/architecture.md): config, job builder, click group, checks, tiny example.
Its ``__init__`` and config module import nothing heavy; simulators and torch are imported
inside the functions that need them. Pipelines never import each other.
"""
