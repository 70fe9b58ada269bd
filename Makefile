# akd_blender — the two README commands are `make demo` and `make test`.
SHELL := /bin/bash
# every recipe line stops at its first failing command, a failing command in a pipe included
.SHELLFLAGS := -eu -o pipefail -c
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
SHARED ?= ../shared
export AKD_SHARED := $(abspath $(SHARED))

.PHONY: setup demo test test-all lint bench

## setup: the project venv at .venv (torch CPU build from local disk, bpy 5.0.1, test tools, Ray for the --ray tests)
setup: $(VENV)/.installed
$(VENV)/.installed: requirements.txt requirements-dev.txt requirements-ray.txt
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -r requirements-dev.txt
	touch $@

## demo: the most complete real job that exists (see README)
demo: setup
	$(PY) -m akd_blender.blender.demo --out demo_out

## test: lint + every CPU test (bpy module 5.0.1) + the version-sensitive Blender tests on bpy 4.2.23;
## CI runs exactly this
LEGACY_TESTS := tests/blender/test_keyframes.py tests/blender/test_mirror.py tests/blender/test_build.py
test: setup .venv-4.2.23/.installed
	$(PY) -m ruff check akd_blender tests tools scripts run_akd.py
	$(PY) -m pytest -q -n 2 tests --ignore=tests/bench
	.venv-4.2.23/bin/python -m pytest -q -n 2 -p no:cacheprovider $(LEGACY_TESTS)

.venv-%/.installed: requirements.txt
	$(PYTHON) -m venv .venv-$*
	.venv-$*/bin/python -m pip install --quiet -r requirements.txt bpy==$* pytest==9.2.0 pytest-xdist==3.8.0
	touch $@

## test-all: also every Blender-facing test on bpy 4.2.23 and 4.5.15 (own venvs), and on 5.2.3 and 5.1.2 (test-py313)
test-all: test .venv-4.5.15/.installed test-py313
	for v in 4.2.23 4.5.15; do .venv-$$v/bin/python -m pytest -q -n 2 -p no:cacheprovider tests/blender || exit 1; done

lint: setup
	$(PY) -m ruff check akd_blender tests tools scripts run_akd.py
	$(PY) -m ruff format --check akd_blender tests tools scripts run_akd.py

## bench: speed and memory figures (not part of make test): bench-render, bench-physics, then the test functions
## of tests/bench/bench_*.py (CPU smoke runs; the GPU figures where CUDA is available)
bench: setup bench-render bench-physics
	$(PY) -m pytest -q -s -p no:cacheprovider -o 'python_files=bench_*.py' tests/bench
-include mk/*.mk
