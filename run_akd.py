"""Batch entry point: distil text prompts into animations of rigged characters (AKD).

    python run_akd.py --input Fox.gltf --prompt "a fox trots forward" --out fox.blend   (bpy module)
    blender -b --python-exit-code 1 -P run_akd.py -- --input Fox.gltf --prompt "…" --out fox.blend
    blender --command akd --input Fox.gltf --prompt "…" --out fox.blend                   (extension)

Flags, exit codes and the report JSON: akd_blender/blender/cli/distill.py (DESIGN §4). ``--help`` lists them.
"""

from __future__ import annotations

import os
import sys


def _args(argv: list[str]) -> list[str]:
    """The script's own arguments: after ``--`` under Blender, else everything after the script."""
    if "--" in argv:
        return argv[argv.index("--") + 1 :]
    inside_blender = os.path.basename(argv[0]).lower().startswith("blender") if argv else False
    return [] if inside_blender else argv[1:]


def main() -> int:
    here = os.path.dirname(os.path.abspath(__file__))
    if here not in sys.path:
        sys.path.insert(0, here)
    args = _args(sys.argv)
    if "-h" in args or "--help" in args:
        from akd_blender.blender.cli.parser import build_parser

        build_parser().print_help()
        return 0
    from akd_blender.blender.cli.distill import main as cli_main

    return cli_main(args)


if __name__ == "__main__":
    code = main()
    sys.stdout.flush()
    sys.stderr.flush()
    if code:
        sys.exit(code)
