# The embedded teacher (issue 6): phrase table, training (CUDA GPU), tests, quality benchmark.
TEACHER_DIR := akd_blender/assets/teacher
PY ?= .venv/bin/python

.PHONY: teacher-phrases teacher test-teacher bench-quality-teacher

teacher-phrases:
	HF_HUB_OFFLINE=1 $(PY) -m tools.teacher embed --out $(TEACHER_DIR)/phrases.npz

teacher:
	$(PY) -m tools.teacher train --out $(TEACHER_DIR) --phrases $(TEACHER_DIR)/phrases.npz \
		--seconds 470 --judge-seconds 40 --per-motion 320 --heldout-per-motion 16 --batch 256 --lr 3e-4 --render-batch 64 --seed 0 \
		--size 32 --ground plain --fill 0.8 --views canonical $(TEACHER_ARGS)

test-teacher:
	$(PY) -m pytest -q tests/core/test_motions.py tests/core/test_tiny.py

## bench-quality-teacher: the teacher's own two characters, 24 held-out wordings (the older table)
bench-quality-teacher:
	$(PY) tests/bench/bench_quality.py $(BENCH_QUALITY_ARGS)

## bench-fit: the fit ceiling — the distillation loop fitting each motion's ground-truth video (BENCH_FIT_ARGS=...)
.PHONY: bench-fit
bench-fit: setup
	$(PY) tests/bench/bench_fit.py $(BENCH_FIT_ARGS)

## bench-text: how the teacher's prompt matcher reads the held-out and blind-written wordings (CPU, seconds)
.PHONY: bench-text
bench-text: setup
	$(PY) tests/bench/bench_text.py
