# The add-on as users meet it (issue 5): extension zip, bundled wheels, real-Blender checks.
REAL_BLENDER ?= $(SHARED)/tools/real-blender
EXT_VERSION = $(shell sed -n 's/^__version__ = "\(.*\)"/\1/p' akd_blender/__init__.py)
# pip download does not widen --platform to older manylinux tags: list them
WHEEL_PLATFORMS ?= manylinux_2_28_x86_64 manylinux_2_27_x86_64 manylinux_2_17_x86_64 manylinux2014_x86_64 manylinux_2_5_x86_64 manylinux1_x86_64
WHEEL_PYTHON ?= 3.11

.PHONY: extension extension-nowheels wheels real-blender-fixtures real-blender-cli real-blender-command screenshot

## extension: dist/akd_blender-<version>.zip (manifest + akd_blender/ + wheels/), validated and built by blender_ext.py
extension: setup
	$(PY) scripts/build_extension.py --out-dir dist

## extension-nowheels: the same zip without bundled wheels (for a Blender whose Python already has the dependencies)
extension-nowheels: setup
	$(PY) scripts/build_extension.py --out-dir dist --no-wheels

## wheels: dependency wheels for linux-x64 / CPython $(WHEEL_PYTHON) (torch CPU build) into wheels/ (see wheels/README.md)
wheels: setup
	mkdir -p wheels
	grep -v -E '^(#|numpy|matplotlib)' requirements.txt | sed '/^$$/d' > build-wheels-requirements.txt
	$(PY) -m pip download --dest wheels --only-binary=:all: $(addprefix --platform ,$(WHEEL_PLATFORMS)) \
	  --python-version $(WHEEL_PYTHON) --implementation cp -r build-wheels-requirements.txt
	rm -f build-wheels-requirements.txt wheels/numpy-*.whl  # Blender ships its own numpy
	ls wheels/*.whl | wc -l; du -sh wheels

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

## screenshot: the AKD panel in the real Blender 4.3 GUI, idle and while distilling (build/screenshots/)
screenshot: real-blender-fixtures
	$(REAL_BLENDER) gui build/screenshots/akd_panel.png --factory-startup -P scripts/screenshot_panel.py
	$(REAL_BLENDER) gui build/screenshots/akd_panel_running.png --factory-startup -P scripts/screenshot_panel.py \
	  -- --running build/real-blender/tiny-cogvideox

## real-blender-command: install the zip (no wheels) into the real Blender 4.3 and run `blender --command akd …`
real-blender-command: real-blender-fixtures
	$(PY) scripts/build_extension.py --no-wheels --out-dir build/real-blender/dist --stage build/real-blender/stage/akd_blender
	$(REAL_BLENDER) run --command extension install-file -r user_default -e build/real-blender/dist/akd_blender-$(EXT_VERSION).zip
	$(REAL_BLENDER) run --command akd --input build/real-blender/Fox/Fox.gltf --prompt "a fox trots forward" \
	  --model build/real-blender/tiny-cogvideox --steps 2 --frames 4 --height 16 --width 16 --device cpu \
	  --out build/real-blender/fox_cmd.blend --report build/real-blender/fox_cmd.json
	$(REAL_BLENDER) run --command extension remove user_default.akd_blender
