# Judging motions on any body: artist fixtures, the motion judge's training, the unseen-rig benchmark.
.PHONY: artist-fixtures motion-judge bench-unseen bench-quality test-judge bench-gaits

ARTISTS := bench_out/artists

## artist-fixtures: bench_out/artists — every rig under $(SHARED)/assets and its own clips as .npz (Blender's importers)
artist-fixtures: setup
	$(PY) tests/bench/artist_fixtures.py --out $(ARTISTS)

## motion-judge: train the shipped motion judge on this CPU (about 13 min) into akd_blender/assets/motion_judge
motion-judge: artist-fixtures
	$(PY) -m tools.motion_judge --out akd_blender/assets/motion_judge --train-members 150 --heldout-members 20 \
		--per-motion 2 --seconds 480 --batch 128 --seed 1 --threads 1 --artists $(ARTISTS)

## bench-unseen: distil on held-out family members and artist rigs, judge, exit 1 below BENCH_UNSEEN_BAR
BENCH_UNSEEN_BAR ?= 0.5
bench-unseen: artist-fixtures
	$(PY) tests/bench/bench_unseen.py --artists $(ARTISTS) --bar $(BENCH_UNSEEN_BAR) $(BENCH_UNSEEN_ARGS)

## bench-quality: the quality benchmark on rigs no model saw (bench-unseen)
bench-quality: bench-unseen

test-judge: setup
	$(PY) -m pytest -q tests/core/test_judge_window.py tests/core/test_motion_judge.py tests/tools

## bench-gaits: gaits drawn off the library's (footfalls, duty factors, on the spot) on Rigify's quadrupeds and a robot dog, judged; exit 1 below 80 %
bench-gaits: setup
	$(PY) tests/bench/bench_gaits.py --out bench_out/gaits.json
