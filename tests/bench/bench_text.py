"""How the embedded teacher's prompt matcher reads new wordings (``make bench-text``, CPU, seconds).

For the library's held-out phrasings (24) and the blind-written wordings of
``tests/core/blind_wordings.json`` (72), count how many each matching rule reads as the motion
meant: the nearest single wording, the mean of a motion's 3 best wordings (the shipped rule,
:func:`akd_blender.core.prompt.sentence_encoder.understand`) and the motion's centroid, each over the
training phrasings alone or with the extra wordings of :mod:`akd_blender.core.motion.library.wordings`.
Prints a markdown table and the misread wordings of the shipped rule.

    python tests/bench/bench_text.py
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from akd_blender.core.motion.library.labelled import MOTIONS, prompt_vocabulary  # noqa: E402
from akd_blender.core.prompt.sentence_encoder import TextEncoder, understand  # noqa: E402

BLIND = Path(__file__).resolve().parents[1] / "core" / "blind_wordings.json"


def reader(rule: str, vectors: torch.Tensor, motions: list[str], trained: list[bool]):
    """prompt embedding [D] → the motion a rule ("nearest", "best 3", "centroid") reads it as."""
    if rule != "centroid":  # the nearest single wording is the best-1 average
        top = 1 if rule == "nearest" else 3
        return lambda prompt: motions[understand(prompt, vectors, motions, trained, top=top)[0]]
    names = list(dict.fromkeys(motions))
    centroids = torch.stack([vectors[[i for i, m in enumerate(motions) if m == n]].mean(0) for n in names])
    centroids = torch.nn.functional.normalize(centroids, dim=-1)
    return lambda prompt: names[int((centroids @ prompt).argmax())]


def main() -> int:
    encoder = TextEncoder()
    sets = {
        "held-out": [(f"{s.character}/{s.label}", p) for specs in MOTIONS.values() for s in specs for p in s.heldout_phrasings],
        "blind": [(m, p) for m, ps in json.loads(BLIND.read_text()).items() for p in ps],
    }
    embedded = {name: encoder.encode([p for _, p in rows]) for name, rows in sets.items()}
    print("| known wordings | rule | " + " | ".join(f"{n} ({len(r)})" for n, r in sets.items()) + " |")
    print("|---|---|" + "---|" * len(sets))
    for extra in (False, True):
        known = [row for row in prompt_vocabulary() if extra or row[2]]
        vectors = encoder.encode([p for p, _, _ in known])
        motions, trained = [m for _, m, _ in known], [t for _, _, t in known]
        for rule in ("nearest", "best 3", "centroid"):
            read_as, cells = reader(rule, vectors, motions, trained), []
            for name, rows in sets.items():
                read = [read_as(e) for e in embedded[name]]
                cells.append(f"{sum(r == m for r, (m, _) in zip(read, rows))}")
                if extra and rule == "best 3":
                    for r, (m, p) in zip(read, rows):
                        if r != m:
                            print(f"shipped rule misreads {p!r} ({m}) as {r}", file=sys.stderr)
            words = "training + extra" if extra else "training only"
            shipped = " (shipped)" if extra and rule == "best 3" else ""
            print(f"| {words} | {rule}{shipped} | " + " | ".join(cells) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
