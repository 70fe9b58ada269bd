# akd_blender — the two README commands are `make demo` and `make test`.
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
SHARED ?= ../shared
export AKD_SHARED := $(abspath $(SHARED))

.PHONY: setup demo test test-all lint bench

## setup: the project venv at .venv (torch CPU build from local disk, bpy 5.0.1, test tools)
setup: $(VENV)/.installed
$(VENV)/.installed: requirements.txt requirements-dev.txt
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -r requirements-dev.txt
	touch $@

## demo: the most complete real job that exists (see README)
demo: setup
	$(PY) -m akd_blender.blender.demo --out demo_out

## test: lint + every CPU test (bpy module 5.0.1); CI runs exactly this
test: setup
	$(PY) -m ruff check akd_blender tests run_akd.py
	$(PY) -m pytest -q -n 2 tests --ignore=tests/bench

## test-all: also the Blender-facing tests on bpy 4.2.23 and 4.5.15 (own venvs)
test-all: test
	for v in 4.2.23 4.5.15; do \
	  [ -f .venv-$$v/.installed ] || { $(PYTHON) -m venv .venv-$$v && .venv-$$v/bin/pip install --quiet -r requirements.txt bpy==$$v pytest pytest-xdist && touch .venv-$$v/.installed; }; \
	  .venv-$$v/bin/python -m pytest -q -n 2 tests/blender || exit 1; \
	done

lint: setup
	$(PY) -m ruff check akd_blender tests run_akd.py
	$(PY) -m ruff format --check akd_blender tests run_akd.py

## bench: speed and memory figures (not part of make test)
bench: setup
	$(PY) -m pytest -q -s tests/bench
-include mk/*.mk
