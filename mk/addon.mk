# The add-on as users meet it (issue 5): extension zip, bundled wheels, real-Blender checks.
REAL_BLENDER ?= $(SHARED)/tools/real-blender
EXT_VERSION = $(shell sed -n 's/^__version__ = "\(.*\)"/\1/p' akd_blender/__init__.py)
# pip download does not widen --platform to older manylinux tags: list them all (the nvidia-* wheels
# torch needs are tagged manylinux_2_18 … 2_27)
WHEEL_PLATFORMS ?= $(foreach v,28 27 26 25 24 23 22 21 20 19 18 17 16 15 14 13 12 11 10 9 8 7 6 5,manylinux_2_$(v)_x86_64) \
  manylinux2014_x86_64 manylinux2010_x86_64 manylinux1_x86_64
# CPython 3.11: Blender 4.2 LTS – 5.0; CPython 3.13: Blender 5.1+ (and Debian's 4.3)
WHEEL_PYTHONS ?= 3.11 3.13
# never bundled: numpy (Blender ships its own) and triton (torch.compile's GPU compiler, unused by akd_blender)
WHEEL_SKIP ?= numpy triton

.PHONY: extension extension-cp311 extension-nowheels wheels real-blender-fixtures real-blender-cli real-blender-command \
  real-blender-extension screenshot

## extension: dist/akd_blender-<version>.zip (manifest + akd_blender/ + every wheel in wheels/: cp311 and cp313, so
## one zip serves Blender 4.2 LTS – 5.2), validated and built by blender_ext.py
extension: setup
	$(PY) scripts/build_extension.py --out-dir dist

## extension-cp311: dist/akd_blender-<version>-cp311.zip, the small zip for Blender 4.2 – 5.0 only (torch CPU build);
## Blender 5.1+ refuses to install it (its Python is 3.13)
extension-cp311: setup
	$(PY) scripts/build_extension.py --out-dir dist --python 3.11 --stage build/extension-cp311/akd_blender

## extension-nowheels: the same zip without bundled wheels (for a Blender whose Python already has the dependencies)
extension-nowheels: setup
	$(PY) scripts/build_extension.py --out-dir dist --no-wheels

## wheels: dependency wheels for linux-x64 into an emptied wheels/, one folder per Blender Python: wheels/cp311
## (CPython 3.11, torch CPU build) and wheels/cp313 (CPython 3.13, torch from PyPI: the CUDA build and its nvidia-*
## wheels), see wheels/README.md; the pure-Python wheels of the first set pin their versions for the next
wheels: setup
	mkdir -p wheels build
	rm -rf wheels/*.whl wheels/cp3*/
	grep -v -E '^(#|numpy|matplotlib)' requirements.txt | sed '/^$$/d' > build/wheels-requirements.txt
	: > build/wheels-constraints.txt
	for py in $(WHEEL_PYTHONS); do \
	  $(PY) -m pip download --quiet --dest wheels/cp$${py/./} --only-binary=:all: $(addprefix --platform ,$(WHEEL_PLATFORMS)) \
	    --python-version $$py --implementation cp -r build/wheels-requirements.txt -c build/wheels-constraints.txt || exit 1; \
	  ls wheels/cp3*/ | sed -n -E 's/^([^-]+)-([^-]+)-(py3|py2\.py3)-none-any\.whl$$/\1==\2/p' | sort -u > build/wheels-constraints.txt; \
	  rm -f $(foreach name,$(WHEEL_SKIP),wheels/cp$${py/./}/$(name)-*.whl); \
	  echo "wheels/cp$${py/./}: $$(ls wheels/cp$${py/./} | wc -l) wheels, $$(du -sh wheels/cp$${py/./} | cut -f1)"; \
	done

# inputs the chroot can see (only the project folder is mounted there)
real-blender-fixtures: setup
	mkdir -p build/real-blender build/screenshots
	[ -d build/real-blender/Fox ] || cp -r $(SHARED)/assets/Fox build/real-blender/
	[ -f build/real-blender/tiny-cogvideox/model_index.json ] || $(PY) -c "import sys; sys.path.insert(0, '.'); \
	  from tests.core.dummy_priors import cogvideox_pipeline, save_pipeline; \
	  save_pipeline(cogvideox_pipeline(), 'build/real-blender/tiny-cogvideox')"

## real-blender-cli: `blender -b --python-exit-code 1 -P run_akd.py -- …` on the Fox in the real Blender 4.3 (needs torch in the chroot)
real-blender-cli: real-blender-fixtures
	$(REAL_BLENDER) run -b --python-exit-code 1 -P run_akd.py -- --input build/real-blender/Fox/Fox.gltf \
	  --prompt "a fox trots forward" --model build/real-blender/tiny-cogvideox --steps 2 --frames 4 \
	  --height 16 --width 16 --device cpu --out build/real-blender/fox_out.blend \
	  --report build/real-blender/fox_report.json --preview build/real-blender/fox.mp4 --preview-size 64 \
	  --export build/real-blender/fox.fbx

## real-blender-extension: the real Blender 4.3 (Python 3.13; of the dependencies only Debian's numpy) installs the
## zip of `make extension` with its bundled cp313 wheels, then runs `blender -b -P run_akd.py -- …` on the Fox with
## the embedded teacher; torch and the rest come from the extension's wheels
REAL_BLENDER_FOX_JOB := --input build/real-blender/Fox/Fox.gltf --prompt "a fox trots forward" --frames 8 --device cpu
real-blender-extension: real-blender-fixtures
	test -f dist/akd_blender-$(EXT_VERSION).zip || $(MAKE) extension
	! $(REAL_BLENDER) sh python3 -c "import torch" 2>/dev/null  # the chroot's own Python has no torch
	# numpy, which official Blender builds ship and the zip leaves out, is a separate package on Debian
	$(REAL_BLENDER) sh sh -c 'python3 -c "import numpy" 2>/dev/null || apt-get install -y -qq python3-numpy >/dev/null'
	# a previous install, if any, goes first (none to remove is not a failure)
	$(REAL_BLENDER) run --command extension remove user_default.akd_blender >/dev/null 2>&1 || true
	time $(REAL_BLENDER) run --command extension install-file -r user_default -e dist/akd_blender-$(EXT_VERSION).zip
	$(REAL_BLENDER) run -b --python-exit-code 1 --python-expr "import torch; print('torch', torch.__version__, torch.__file__)"
	time $(REAL_BLENDER) run -b --python-exit-code 1 -P run_akd.py -- $(REAL_BLENDER_FOX_JOB) \
	  --out build/real-blender/fox_ext.blend --report build/real-blender/fox_ext.json --preview build/real-blender/fox_ext.mp4

## screenshot: the AKD panel in the real Blender 4.3 GUI, idle and while distilling (build/screenshots/)
# `real-blender gui` captures the screen whatever the script did: a script that fails never prints
# AKD-GUI-READY (scripts/screenshot_panel.py), and the target fails with it
SCREENSHOT_LOG = $(or $(AKD_CHROOT),/tmp/akd-real-blender)/tmp/real-blender-gui.log
screenshot_ready = grep -q AKD-GUI-READY $(SCREENSHOT_LOG) || { tail -20 $(SCREENSHOT_LOG); \
  echo "screenshot: scripts/screenshot_panel.py failed: $(1) is not the panel" >&2; rm -f $(1); exit 1; }
screenshot: real-blender-fixtures
	# numpy, which official Blender builds ship, is a separate package on Debian (the glTF importer needs it)
	$(REAL_BLENDER) sh sh -c 'python3 -c "import numpy" 2>/dev/null || apt-get install -y -qq python3-numpy >/dev/null'
	$(REAL_BLENDER) gui build/screenshots/akd_panel.png --factory-startup -P scripts/screenshot_panel.py
	$(call screenshot_ready,build/screenshots/akd_panel.png)
	# the running view distils: Blender's Python needs torch (`make real-blender-extension` installs the add-on with its wheels)
	$(REAL_BLENDER) run -b --python-exit-code 1 --python-expr "import torch" >/dev/null 2>&1 || { \
	  echo "screenshot: the running view needs torch in the chroot's Blender; run make real-blender-extension first" >&2; exit 1; }
	$(REAL_BLENDER) gui build/screenshots/akd_panel_running.png --factory-startup -P scripts/screenshot_panel.py \
	  -- --running build/real-blender/tiny-cogvideox
	$(call screenshot_ready,build/screenshots/akd_panel_running.png)

## real-blender-command: install the zip (no wheels) into the real Blender 4.3 and run `blender --command akd …`
real-blender-command: real-blender-fixtures
	$(PY) scripts/build_extension.py --no-wheels --out-dir build/real-blender/dist --stage build/real-blender/stage/akd_blender
	$(REAL_BLENDER) run --command extension install-file -r user_default -e build/real-blender/dist/akd_blender-$(EXT_VERSION).zip
	$(REAL_BLENDER) run --command akd --input build/real-blender/Fox/Fox.gltf --prompt "a fox trots forward" \
	  --model build/real-blender/tiny-cogvideox --steps 2 --frames 4 --height 16 --width 16 --device cpu \
	  --out build/real-blender/fox_cmd.blend --report build/real-blender/fox_cmd.json
	$(REAL_BLENDER) run --command extension remove user_default.akd_blender
