"""Package discovery for the remapped folders; all other metadata lives in pyproject.toml."""

from setuptools import find_namespace_packages, find_packages, setup

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
    # templates/<pipeline>/ folders hold data files only (no __init__.py): namespace packages
    find = find_namespace_packages if folder == "templates" else find_packages
    packages += [f"{package}.{sub}" for sub in find(folder)]

setup(packages=packages)
