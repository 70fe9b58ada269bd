# Renderer (issue 3): contact sheet of the Fox and the renderer's own figures.
.PHONY: contact-sheet bench-render

## contact-sheet: bench_out/fox_walk_contact_sheet.png, the Fox's Walk at 4 frames (torch backend)
contact-sheet: setup
	$(PY) tests/bench/contact_sheet.py --out bench_out/fox_walk_contact_sheet.png

## bench-render: renderer speed / agreement figures (GPU parts run where CUDA is available)
bench-render: setup
	$(PY) tests/bench/bench_render.py --out bench_out
