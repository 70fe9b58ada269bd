# Blender 5.1+ (Python 3.13) through the PyPI bpy wheels. Debian 12 has no Python 3.13, so the venvs live in
# the Debian trixie chroot of $(REAL_BLENDER) (its python3.13), under the project folder, which the chroot
# mounts at /project: .venv-py313-<bpy version>. Everything comes from the registries (torch for cp313 from
# PyPI is the CUDA build, and it runs on the CPU; wheels/cp313 of `make wheels` is used where present).
PY313_BPY ?= 5.2.3 5.1.2
PY313_CHROOT := $(or $(AKD_CHROOT),/tmp/akd-real-blender)
PY313_SHARED := build/py313/shared
PY313_XDIST ?= -n 2
# the smoke subset `make test` runs on bpy $(firstword $(PY313_BPY)): the version-sensitive Blender tests
PY313_SMOKE := tests/blender/test_keyframes.py tests/blender/test_extension_wheels.py

.PHONY: test-py313 test-py313-smoke

$(PY313_CHROOT)/usr/bin/python3.13:
	$(REAL_BLENDER) setup

.venv-py313-%/.installed: requirements.txt | $(PY313_CHROOT)/usr/bin/python3.13
	rm -rf .venv-py313-$*
	$(REAL_BLENDER) sh python3.13 -m venv .venv-py313-$*
	grep -v -E '^numpy' requirements.txt > .venv-py313-$*/requirements.txt  # numpy: the one bpy asks for
	$(REAL_BLENDER) sh .venv-py313-$*/bin/python -m pip install --quiet --find-links wheels/cp313 \
	  -r .venv-py313-$*/requirements.txt bpy==$* pytest==9.2.0 pytest-xdist==3.8.0
	touch $@

# the chroot sees only the project folder: the shared assets are copied in
$(PY313_SHARED)/assets/.copied:
	mkdir -p $(PY313_SHARED)
	rm -rf $(PY313_SHARED)/assets && cp -r $(SHARED)/assets $(PY313_SHARED)/assets
	touch $@

# run_py313 BPY_VERSION PYTEST_ARGS: pytest in the chroot's Python 3.13 on that bpy version
run_py313 = echo "== bpy $(1), Python 3.13" && $(REAL_BLENDER) sh env AKD_SHARED=/project/$(PY313_SHARED) \
  .venv-py313-$(1)/bin/python -m pytest -q -p no:cacheprovider $(2)

## test-py313: every Blender-facing test on bpy $(PY313_BPY) (Python 3.13: Blender 5.2 and 5.1)
test-py313: $(foreach v,$(PY313_BPY),.venv-py313-$(v)/.installed) $(PY313_SHARED)/assets/.copied
	$(foreach v,$(PY313_BPY),$(call run_py313,$(v),$(PY313_XDIST) tests/blender) &&) true

## test-py313-smoke: the version-sensitive subset on bpy $(firstword $(PY313_BPY))
test-py313-smoke: .venv-py313-$(firstword $(PY313_BPY))/.installed $(PY313_SHARED)/assets/.copied
	$(call run_py313,$(firstword $(PY313_BPY)),$(PY313_XDIST) $(PY313_SMOKE))

# `make test` (CI) runs the smoke subset too: from nothing (chroot, venv, 11 tests) it took 13.6 min on a
# fresh clone here (2 cores, heavily shared)
test: test-py313-smoke
