"""Package discovery for the remapped folders; all other metadata lives in pyproject.toml."""

from setuptools import find_packages, setup

# Top-level folder -> the package it installs as (see [tool.setuptools] package-dir).
MAPPED = {
    "dataforge": "dataforge",
    "cli": "dataforge.cli",
    "pipelines": "dataforge.pipelines",
    "templates": "dataforge.templates",
}

packages = []
for folder, package in MAPPED.items():
    packages.append(package)
    packages += [f"{package}.{sub}" for sub in find_packages(folder)]

setup(packages=packages)
