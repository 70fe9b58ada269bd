"""Stage and build the Blender extension zip ``akd_blender-<version>.zip`` (DESIGN §3).

    python scripts/build_extension.py [--out-dir dist] [--no-wheels | --python 3.11 ...] [--stage build/extension]

The staged folder holds ``blender_manifest.toml`` (version from ``akd_blender.__version__``; ``wheels``
and ``platforms`` filled from the bundled wheels), the contents of ``akd_blender/`` (so ``__init__.py``
is at the zip root) and ``wheels/``. The wheels come from ``wheels/cp311/`` and ``wheels/cp313/`` (``make
wheels``) plus any ``wheels/*.whl``; none with ``--no-wheels``. Blender installs the bundled wheels whose
tags match its platform and Python (cp311 on Blender 4.2–5.0, cp313 on 5.1+), so one zip carries both
sets; ``--python 3.11`` bundles that set only (zip ``akd_blender-<version>-cp311.zip``). Two versions of
one distribution that would install on the same Python stop the build. Blender's own
stand-alone ``blender_ext.py`` (found inside the bpy wheel, or given with ``--blender-ext``) validates the
folder, with Blender's tag list, and builds the zip. Prints the zip's path.
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PLATFORM_TAGS = {"manylinux": "linux-x64", "win_amd64": "windows-x64", "macosx": "macos-arm64"}
# the Pythons of the Blender releases the extension supports: 4.2 LTS – 5.0 and 5.1+
BLENDER_PYTHONS = ((3, 11), (3, 13))


def find_blender_ext() -> tuple[Path, Path | None]:
    """(blender_ext.py, tags.py or None) from the newest bpy wheel in this Python's site-packages."""
    import importlib.util

    spec = importlib.util.find_spec("bpy")
    roots = [Path(p) for p in (spec.submodule_search_locations or [])] if spec else []
    for root in roots:
        for version_dir in sorted(root.glob("[0-9]*.[0-9]*"), reverse=True):
            ext = version_dir / "scripts/addons_core/bl_pkg/cli/blender_ext.py"
            tags = version_dir / "scripts/modules/_bpy_internal/extensions/tags.py"
            if ext.is_file():
                return ext, tags if tags.is_file() else None
    sys.exit("build_extension: Blender's blender_ext.py not found (install the bpy wheel or pass --blender-ext)")


def package_version() -> str:
    tree = ast.parse((ROOT / "akd_blender/__init__.py").read_text())
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(getattr(t, "id", "") == "__version__" for t in node.targets):
            return node.value.value
    sys.exit("build_extension: akd_blender.__version__ not found")


def wheel_platforms(wheels: list[Path]) -> list[str]:
    """Blender platform names the bundled wheels are for (pure-Python wheels add none)."""
    found = set()
    for wheel in wheels:
        for key, platform in PLATFORM_TAGS.items():
            if key in wheel.name:
                found.add(platform)
    return sorted(found)


def installs_on(wheel_name: str, python: tuple[int, int]) -> bool:
    """Whether Blender running CPython ``python`` (major, minor) installs the wheel of this file name.

    Blender's rule (``bl_pkg``): a ``pyX`` tag matches major X; ``cpXY`` matches X.Y, or any later 3.x
    when the ABI tag is ``abi3``.
    """
    parts = wheel_name[: -len(".whl")].split("-")
    if not wheel_name.endswith(".whl") or not 5 <= len(parts) <= 6:
        raise ValueError(f"not a wheel file name: {wheel_name}")
    python_tags, abi_tags = parts[-3].split("."), parts[-2].split(".")
    for tag in python_tags:
        if re.fullmatch(r"py\d", tag) and int(tag[2]) == python[0]:
            return True
        found = re.fullmatch(r"cp(\d)(\d+)", tag)
        if found:
            version = (int(found[1]), int(found[2]))
            if version == python or ("abi3" in abi_tags and version[0] == python[0] and version <= python):
                return True
    return False


def distribution(wheel_name: str) -> str:
    """The normalised distribution name of a wheel file (``Typing_Extensions-4.1-…`` → ``typing-extensions``)."""
    return re.sub(r"[-_.]+", "-", wheel_name.split("-", 1)[0]).lower()


def collect_wheels(wheel_dir: Path, pythons: tuple[tuple[int, int], ...]) -> list[Path]:
    """The wheels to bundle for ``pythons``: every file of ``wheel_dir/cpXY/`` (one folder per Python, as
    ``make wheels`` fills them) and each ``wheel_dir/*.whl`` that installs on one of them; one file per name.

    Raises ValueError (naming both files) when two versions of one distribution would install on the same
    Python, since Blender would then keep only the newer one.
    """
    chosen: dict[str, Path] = {}
    for py in pythons:
        for wheel in sorted((wheel_dir / f"cp{py[0]}{py[1]}").glob("*.whl")):
            chosen.setdefault(wheel.name, wheel)
    for wheel in sorted(wheel_dir.glob("*.whl")):
        if any(installs_on(wheel.name, py) for py in pythons):
            chosen.setdefault(wheel.name, wheel)
    wheels = sorted(chosen.values(), key=lambda w: w.name)
    for py in BLENDER_PYTHONS:
        seen: dict[str, str] = {}
        for wheel in wheels:
            if installs_on(wheel.name, py):
                other = seen.setdefault(distribution(wheel.name), wheel.name)
                if other != wheel.name:
                    raise ValueError(f"{other} and {wheel.name} both install on Python {py[0]}.{py[1]}: keep one")
    return wheels


def manifest_text(version: str, wheels: list[Path]) -> str:
    text = (ROOT / "blender_manifest.toml").read_text()
    text = re.sub(r'(?m)^version = ".*"$', f'version = "{version}"', text)
    if wheels:
        listed = ",\n".join(f'  "./wheels/{w.name}"' for w in wheels)
        extra = f"wheels = [\n{listed},\n]\n"
        platforms = wheel_platforms(wheels)
        if platforms:
            extra += f"platforms = {json.dumps(platforms)}\n"
        text = text.replace("\n[permissions]", f"\n{extra}\n[permissions]", 1)
    return text


def stage(stage_dir: Path, wheels: list[Path]) -> Path:
    """Stage the extension folder; the wheels are hard links where the file system allows (they are large)."""
    if stage_dir.exists():
        shutil.rmtree(stage_dir)
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc", "*.pyo")
    shutil.copytree(ROOT / "akd_blender", stage_dir, ignore=ignore)
    if wheels:
        (stage_dir / "wheels").mkdir()
        for wheel in wheels:
            try:
                os.link(wheel, stage_dir / "wheels" / wheel.name)
            except OSError:
                shutil.copy2(wheel, stage_dir / "wheels" / wheel.name)
    (stage_dir / "blender_manifest.toml").write_text(manifest_text(package_version(), wheels))
    return stage_dir


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--out-dir", default=str(ROOT / "dist"))
    p.add_argument("--stage", default=str(ROOT / "build/extension/akd_blender"))
    p.add_argument("--no-wheels", action="store_true", help="leave wheels/ out (dependencies already installed)")
    p.add_argument(
        "--python",
        action="append",
        metavar="X.Y",
        help="bundle only the wheels this Blender Python installs (repeatable; default: 3.11 and 3.13)",
    )
    p.add_argument("--wheel-dir", default=str(ROOT / "wheels"), help="where the wheels are (default: wheels/)")
    p.add_argument("--blender-ext", help="path to Blender's blender_ext.py")
    args = p.parse_args(argv)

    if args.python and not all(re.fullmatch(r"3\.\d+", v) for v in args.python):
        p.error(f"--python takes versions like 3.11, got {' '.join(args.python)}")
    pythons = tuple((3, int(v.split(".")[1])) for v in args.python) if args.python else BLENDER_PYTHONS
    try:
        wheels = [] if args.no_wheels else collect_wheels(Path(args.wheel_dir), pythons)
    except ValueError as err:
        sys.stderr.write(f"build_extension: {err}\n")
        return 2
    ext, tags_py = (Path(args.blender_ext), None) if args.blender_ext else find_blender_ext()
    folder = stage(Path(args.stage), wheels)
    out_dir = Path(args.out_dir).resolve()
    suffix = "".join(f"-cp{a}{b}" for a, b in pythons) if args.python else ""
    zip_path = out_dir / f"akd_blender-{package_version()}{suffix}.zip"
    out_dir.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        tag_args = []
        if tags_py is not None:  # Blender's own tag list, as JSON for blender_ext.py
            namespace: dict = {}
            exec(compile(tags_py.read_text(), str(tags_py), "exec"), namespace)
            names = {"addons": "add-on", "themes": "theme"}
            tags = {names[k]: sorted(v) for k, v in namespace.items() if k in names and isinstance(v, set | list | tuple)}
            if tags:
                (Path(tmp) / "tags.json").write_text(json.dumps(tags))
                tag_args = ["--valid-tags", str(Path(tmp) / "tags.json")]
        for cmd in (
            ["validate", *tag_args, str(folder)],
            ["build", *tag_args, "--source-dir", str(folder), "--output-filepath", str(zip_path)],
        ):
            result = subprocess.run([sys.executable, str(ext), *cmd], capture_output=True, text=True)
            if result.returncode != 0:
                sys.stderr.write(result.stdout + result.stderr)
                return result.returncode or 1
    if not zip_path.is_file():
        sys.stderr.write(f"build_extension: expected {zip_path} was not built\n")
        return 1
    print(zip_path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
