"""Stage and build the Blender extension zip ``akd_blender-<version>.zip`` (DESIGN §3).

    python scripts/build_extension.py [--out-dir dist] [--no-wheels] [--stage build/extension]

The staged folder holds ``blender_manifest.toml`` (version from ``akd_blender.__version__``; ``wheels``
and ``platforms`` filled from ``wheels/*.whl`` unless ``--no-wheels``), the contents of ``akd_blender/``
(so ``__init__.py`` is at the zip root) and ``wheels/``. Blender's own stand-alone ``blender_ext.py``
(found inside the bpy wheel, or given with ``--blender-ext``) validates the folder, with Blender's tag
list, and builds the zip. Prints the zip's path.
"""

from __future__ import annotations

import argparse
import ast
import glob
import json
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PLATFORM_TAGS = {"manylinux": "linux-x64", "win_amd64": "windows-x64", "macosx": "macos-arm64"}


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


def stage(stage_dir: Path, with_wheels: bool) -> Path:
    if stage_dir.exists():
        shutil.rmtree(stage_dir)
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc", "*.pyo")
    shutil.copytree(ROOT / "akd_blender", stage_dir, ignore=ignore)
    wheels = sorted(Path(p) for p in glob.glob(str(ROOT / "wheels/*.whl"))) if with_wheels else []
    if wheels:
        (stage_dir / "wheels").mkdir()
        for wheel in wheels:
            shutil.copy2(wheel, stage_dir / "wheels" / wheel.name)
    (stage_dir / "blender_manifest.toml").write_text(manifest_text(package_version(), wheels))
    return stage_dir


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--out-dir", default=str(ROOT / "dist"))
    p.add_argument("--stage", default=str(ROOT / "build/extension/akd_blender"))
    p.add_argument("--no-wheels", action="store_true", help="leave wheels/ out (dependencies already installed)")
    p.add_argument("--blender-ext", help="path to Blender's blender_ext.py")
    args = p.parse_args(argv)

    ext, tags_py = (Path(args.blender_ext), None) if args.blender_ext else find_blender_ext()
    folder = stage(Path(args.stage), not args.no_wheels)
    out_dir = Path(args.out_dir)
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
            ["build", *tag_args, "--source-dir", str(folder), "--output-dir", str(out_dir)],
        ):
            result = subprocess.run([sys.executable, str(ext), *cmd], capture_output=True, text=True)
            if result.returncode != 0:
                sys.stderr.write(result.stdout + result.stderr)
                return result.returncode or 1
    zip_path = out_dir / f"akd_blender-{package_version()}.zip"
    if not zip_path.is_file():
        sys.stderr.write(f"build_extension: expected {zip_path} was not built\n")
        return 1
    print(zip_path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
