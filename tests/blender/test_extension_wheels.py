"""Wheels for two Pythons in one extension zip (scripts/build_extension.py).

Blender 4.2–5.0 run CPython 3.11 and Blender 5.1+ CPython 3.13; Blender installs the bundled wheels whose
tags match its own Python. The file-name rule of ``installs_on`` is checked against Blender's own wheel
filter on the Python running the test, and a zip holding one real wheel per Python is installed into a
fresh Blender user folder: Blender must import the wheel built for its Python, and must refuse a zip that
holds only the other Python's wheels.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from scripts.build_extension import collect_wheels, installs_on, main  # noqa: E402

HERE = sys.version_info[:2]
OTHER = (3, 13) if HERE == (3, 11) else (3, 11)
# file names as pip downloads them for the two sets, plus the tag forms Blender treats specially
WHEEL_NAMES = [
    "torch-2.13.0+cpu-cp311-cp311-manylinux_2_28_x86_64.whl",
    "torch-2.13.0-cp313-cp313-manylinux_2_28_x86_64.whl",
    "safetensors-0.8.0-cp310-abi3-manylinux_2_17_x86_64.manylinux2014_x86_64.whl",
    "psutil-7.2.2-cp36-abi3-manylinux2010_x86_64.manylinux_2_12_x86_64.manylinux_2_28_x86_64.whl",
    "hf_xet-1.8.0-cp38-abi3-manylinux2014_x86_64.manylinux_2_17_x86_64.whl",
    "nvidia_cublas-13.1.1.3-py3-none-manylinux_2_27_x86_64.whl",
    "glfw-2.11.0-py2.py3-none-manylinux_2_28_x86_64.whl",
    "roma-1.8.0-py3-none-any.whl",
    "charset_normalizer-3.5.3-cp313-cp313-manylinux1_x86_64.manylinux_2_28_x86_64.manylinux_2_5_x86_64.whl",
    "pyyaml-6.0.4-cp311-cp311-manylinux2014_x86_64.manylinux_2_17_x86_64.manylinux_2_28_x86_64.whl",
    "newer_abi-1.0-cp312-abi3-manylinux_2_28_x86_64.whl",
    "future-1.0-cp314-cp314-manylinux_2_28_x86_64.whl",
    "legacy-1.0-py2-none-any.whl",
]


def test_installs_on_agrees_with_blenders_own_filter():
    from bl_pkg.bl_extension_ops import _extensions_wheel_filter_for_this_system as blender_filter

    kept = set(blender_filter([f"./wheels/{name}" for name in WHEEL_NAMES]))
    assert kept, "Blender kept none of the wheels"
    for name in WHEEL_NAMES:
        assert installs_on(name, HERE) == (f"./wheels/{name}" in kept), name


def test_installs_on_both_pythons():
    assert installs_on("torch-2.13.0-cp313-cp313-manylinux_2_28_x86_64.whl", (3, 13))
    assert not installs_on("torch-2.13.0-cp313-cp313-manylinux_2_28_x86_64.whl", (3, 11))
    assert installs_on("newer_abi-1.0-cp312-abi3-manylinux_2_28_x86_64.whl", (3, 13))
    assert not installs_on("newer_abi-1.0-cp312-abi3-manylinux_2_28_x86_64.whl", (3, 11))
    assert all(installs_on("roma-1.8.0-py3-none-any.whl", py) for py in ((3, 11), (3, 13)))
    with pytest.raises(ValueError, match="not a wheel"):
        installs_on("roma-1.8.0.tar.gz", (3, 11))


def test_collect_wheels_per_python_folder_and_duplicates(tmp_path):
    for folder, name in [
        ("cp311", "torch-2.13.0+cpu-cp311-cp311-manylinux_2_28_x86_64.whl"),
        ("cp311", "roma-1.8.0-py3-none-any.whl"),
        ("cp313", "torch-2.13.0-cp313-cp313-manylinux_2_28_x86_64.whl"),
        ("cp313", "roma-1.8.0-py3-none-any.whl"),
        ("cp313", "nvidia_cublas-13.1.1.3-py3-none-manylinux_2_27_x86_64.whl"),
        (".", "extra-1.0-cp313-cp313-manylinux_2_28_x86_64.whl"),
    ]:
        (tmp_path / folder).mkdir(exist_ok=True)
        (tmp_path / folder / name).write_bytes(b"")
    both = [w.name for w in collect_wheels(tmp_path, ((3, 11), (3, 13)))]
    assert both == sorted(set(both)) and len(both) == 5  # roma once
    only_311 = {w.name for w in collect_wheels(tmp_path, ((3, 11),))}
    assert only_311 == {"torch-2.13.0+cpu-cp311-cp311-manylinux_2_28_x86_64.whl", "roma-1.8.0-py3-none-any.whl"}

    (tmp_path / "cp313" / "roma-1.9.0-py3-none-any.whl").write_bytes(b"")
    with pytest.raises(ValueError, match=r"roma-1\.8\.0-py3-none-any\.whl and roma-1\.9\.0-py3-none-any\.whl"):
        collect_wheels(tmp_path, ((3, 11), (3, 13)))


def _write_wheel(folder: Path, python: tuple[int, int]) -> Path:
    """A real wheel (PEP 427: module, METADATA, WHEEL, RECORD) of ``akd_wheel_probe`` for CPython ``python``."""
    tag = f"cp{python[0]}{python[1]}"
    info = "akd_wheel_probe-1.0.dist-info"
    files = {
        "akd_wheel_probe/__init__.py": f'BUILT_FOR = "{tag}"\n',
        f"{info}/METADATA": "Metadata-Version: 2.1\nName: akd_wheel_probe\nVersion: 1.0\n",
        f"{info}/WHEEL": f"Wheel-Version: 1.0\nGenerator: akd-tests\nRoot-Is-Purelib: false\nTag: {tag}-{tag}-manylinux_2_28_x86_64\n",
    }
    record = []
    for name, text in files.items():
        digest = base64.urlsafe_b64encode(hashlib.sha256(text.encode()).digest()).rstrip(b"=").decode()
        record.append(f"{name},sha256={digest},{len(text.encode())}")
    files[f"{info}/RECORD"] = "\n".join([*record, f"{info}/RECORD,,"]) + "\n"
    (folder / tag).mkdir(parents=True, exist_ok=True)
    path = folder / tag / f"akd_wheel_probe-1.0-{tag}-{tag}-manylinux_2_28_x86_64.whl"
    with zipfile.ZipFile(path, "w") as zf:
        for name, text in files.items():
            zf.writestr(name, text)
    return path


_INSTALL = r"""
import json, sys
import bpy
result = {}
for key, zip_path in (("other_only", sys.argv[1]), ("both", sys.argv[2])):
    try:
        result[key] = sorted(bpy.ops.extensions.package_install_files(filepath=zip_path, repo="user_default", enable_on_install=True))
    except RuntimeError as err:
        result[key] = ["ERROR", str(err)]
try:
    import akd_wheel_probe
    result["built_for"] = akd_wheel_probe.BUILT_FOR
except ImportError as err:
    result["built_for"] = repr(err)
print("RESULT" + json.dumps(result))
"""


def test_one_zip_gives_blender_the_wheel_for_its_python(tmp_path):
    wheel_dir = tmp_path / "wheels"
    for python in (HERE, OTHER):
        _write_wheel(wheel_dir, python)
    stage = str(tmp_path / "stage/akd_blender")
    dist = tmp_path / "dist"
    assert main(["--wheel-dir", str(wheel_dir), "--out-dir", str(dist), "--stage", stage]) == 0
    other = f"{OTHER[0]}.{OTHER[1]}"
    assert main(["--wheel-dir", str(wheel_dir), "--out-dir", str(dist), "--stage", stage, "--python", other]) == 0
    version = __import__("akd_blender").__version__
    both_zip = dist / f"akd_blender-{version}.zip"
    other_zip = dist / f"akd_blender-{version}-cp{OTHER[0]}{OTHER[1]}.zip"
    with zipfile.ZipFile(both_zip) as zf:
        manifest = zf.read("blender_manifest.toml").decode()
        assert {n for n in zf.namelist() if n.startswith("wheels/")} == {
            f"wheels/akd_wheel_probe-1.0-cp{a}{b}-cp{a}{b}-manylinux_2_28_x86_64.whl" for a, b in (HERE, OTHER)
        }
    assert 'platforms = ["linux-x64"]' in manifest and manifest.count("./wheels/akd_wheel_probe-1.0-") == 2

    env = dict(os.environ, BLENDER_USER_RESOURCES=str(tmp_path / "user"), HF_HUB_OFFLINE="1")
    out = subprocess.run(
        [sys.executable, "-c", _INSTALL, str(other_zip), str(both_zip)],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    line = next((ln for ln in out.stdout.splitlines() if ln.startswith("RESULT")), None)
    assert line is not None, out.stderr[-4000:]
    got = json.loads(line[len("RESULT") :])
    # Blender refuses a zip whose wheels are all for another Python
    assert got["other_only"][0] == "ERROR" and "Python version" in got["other_only"][1], got
    assert got["both"] == ["FINISHED"], (got, out.stdout[-3000:])
    assert got["built_for"] == f"cp{HERE[0]}{HERE[1]}", got
