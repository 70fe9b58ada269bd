#!/usr/bin/env bash
# Download the pure-Python wheels a Python 3.12 GPU machine without network lacks into .whl/.
set -euo pipefail
cd "$(dirname "$0")/../.."
PIP=${PIP:-.venv/bin/pip}
$PIP download --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
  --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 -d .whl \
  diffusers==0.42.1 roma==1.8.0 diffrp-nvdiffrast==0.3.3.1 importlib_metadata==10.2.0 lazy-importer==0.1.0
ls -la .whl
