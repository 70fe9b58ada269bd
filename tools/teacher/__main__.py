"""``python -m tools.teacher {embed,train} [options]`` (see the package docstring)."""

from __future__ import annotations

import argparse
import sys

import numpy as np

COMMANDS = ("embed", "embed-library", "train", "train-family")


def embed(argv: list[str]) -> int:
    """Encode every phrasing of the motion library and save the table (``--out`` .npz)."""
    from akd_blender.core.motion.library.labelled import all_phrasings
    from akd_blender.core.prompt.sentence_encoder import PhraseTable, TextEncoder

    ap = argparse.ArgumentParser(prog="python -m tools.teacher embed")
    ap.add_argument("--out", required=True, help="where to write the phrase table (.npz)")
    args = ap.parse_args(argv)
    phrases = all_phrasings("all")
    vectors = TextEncoder().encode(phrases).numpy()
    PhraseTable(phrases, vectors).save(args.out)
    print(f"{len(phrases)} phrases → {args.out}")
    return 0


def embed_library(argv: list[str]) -> int:
    """Encode every phrasing of the role motion library (train and held-out) and every extra wording
    (``--out`` .npz): the image teacher's phrase table."""
    from akd_blender.core.motion.library import library_phrasings
    from akd_blender.core.motion.library.english import EXTRA_WORDINGS
    from akd_blender.core.prompt.sentence_encoder import PhraseTable, TextEncoder

    ap = argparse.ArgumentParser(prog="python -m tools.teacher embed-library")
    ap.add_argument("--out", required=True, help="where to write the phrase table (.npz)")
    ap.add_argument(
        "--append",
        action="store_true",
        help="keep the table at --out as it is (the vectors a teacher was trained with) and append the wordings it lacks",
    )
    args = ap.parse_args(argv)
    texts = [t for split in ("train", "heldout") for t, _, _ in library_phrasings(split)]
    texts += [w for words in EXTRA_WORDINGS.values() for w in words]
    phrases = list(dict.fromkeys(texts))
    if args.append:
        kept = PhraseTable.load(args.out)
        new = [p for p in phrases if p not in kept]
        vectors = np.concatenate([kept.vectors, TextEncoder().encode(new).numpy()]) if new else kept.vectors
        PhraseTable(kept.phrases + new, vectors).save(args.out)
        print(f"{len(new)} phrases appended → {args.out} ({len(kept.phrases) + len(new)} in all)")
        return 0
    PhraseTable(phrases, TextEncoder().encode(phrases).numpy()).save(args.out)
    print(f"{len(phrases)} phrases → {args.out}")
    return 0


def main(argv: list[str] | None = None) -> int:
    """Dispatch to one of :data:`COMMANDS`; 2 with a usage line for anything else."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] not in COMMANDS:
        print(f"usage: python -m tools.teacher {{{','.join(COMMANDS)}}} [options] (-h for help)", file=sys.stderr)
        return 2
    if argv[0] == "embed":
        return embed(argv[1:])
    if argv[0] == "embed-library":
        return embed_library(argv[1:])
    if argv[0] == "train-family":
        from .train_family import main as train_family_main

        return train_family_main(argv[1:])
    from .train import main as train_main

    return train_main(argv[1:])


if __name__ == "__main__":
    sys.exit(main())
