# Video priors + SDS loop (issue 4).
.PHONY: bench-priors test-priors

## test-priors: the priors / losses / distill CPU tests (tiny random diffusers models)
test-priors: setup
	$(PY) -m pytest -q tests/core/test_priors.py tests/core/test_losses.py tests/core/test_distill.py

## bench-priors: full-size random-weight CogVideoX-5B/2B and Wan2.1-1.3B SDS step + 20-step distill (CUDA)
bench-priors: setup
	$(PY) -m tests.bench.bench_priors --out bench_out
