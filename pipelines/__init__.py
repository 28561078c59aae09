"""Benchmark pipelines, one package per paper, each built from the core library.

Every pipeline package registers its hooks with ``dataforge.registry.register_pipeline`` when
imported, keeps heavy imports (simulators, torch) inside the functions that need them, and has
its click commands in ``dataforge.cli.<name>``.
"""
