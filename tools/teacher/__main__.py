"""``python -m tools.teacher {embed,train} [options]`` (see the package docstring)."""

from __future__ import annotations

import argparse
import sys

COMMANDS = ("embed", "train")


def embed(argv: list[str]) -> int:
    """Encode every phrasing of the motion library and save the table (``--out`` .npz)."""
    from akd_blender.core.priors.tiny_model.text import PhraseTable, TextEncoder
    from akd_blender.core.procedural.motions import all_phrasings

    ap = argparse.ArgumentParser(prog="python -m tools.teacher embed")
    ap.add_argument("--out", required=True, help="where to write the phrase table (.npz)")
    args = ap.parse_args(argv)
    phrases = all_phrasings("all")
    vectors = TextEncoder().encode(phrases).numpy()
    PhraseTable(phrases, vectors).save(args.out)
    print(f"{len(phrases)} phrases → {args.out}")
    return 0


def main(argv: list[str] | None = None) -> int:
    """Dispatch to ``embed`` or ``train``; 2 with a usage line for anything else."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] not in COMMANDS:
        print(f"usage: python -m tools.teacher {{{','.join(COMMANDS)}}} [options] (-h for help)", file=sys.stderr)
        return 2
    if argv[0] == "embed":
        return embed(argv[1:])
    from .train import main as train_main

    return train_main(argv[1:])


if __name__ == "__main__":
    sys.exit(main())
