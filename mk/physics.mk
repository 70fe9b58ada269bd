# Physics grounding (issue 7): before/after metrics, tracking error, speed and one plot per case.
.PHONY: bench-physics

## bench-physics: bench_out/physics_<case>.png + bench_out/bench_physics.json; prints s of compute per s of motion
bench-physics: setup
	$(PY) tests/bench/bench_physics.py --out bench_out
