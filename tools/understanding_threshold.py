"""Choose :data:`akd_blender.core.prompt.understanding.UNDERSTOOD_THRESHOLD` (``python -m tools.understanding_threshold``,
``make understanding-threshold``; CPU, offline, about 3 minutes on 2 cores).

The prompts are ``tools/understanding_prompts.json``: per kind of character, wordings of its
motions that are in no vocabulary ("known"), another kind's motions ("other_kind") and, for every
kind, motions no kind has and nonsense ("unknown"); a "validation" and a separate "test" set. Each
kind's prompts are read against :func:`~akd_blender.core.prompt.understanding.library_vocabulary` of that
kind. A known wording is *right* when read as its motion with a score at or above the threshold,
*misread* when read as another motion at or above it, *refused* below it; another kind's motion and
the unknown prompts are right when refused.

The threshold (0.20 … 0.80 in steps of 0.01) with the best balanced accuracy on the validation
set (mean of known right and unknown refused; the lowest on ties) is printed with both sets'
figures, then the test set and the blind wordings of ``tests/core/blind_wordings.json`` read
against the shipped teacher's vocabulary (:func:`~akd_blender.core.prompt.understanding.teacher_vocabulary`)
at the chosen threshold.

Two more figures judge the reading itself (not the threshold): *leave-one-out*, each training
phrasing and extra wording of the role library read against its kind's vocabulary without it and
without the held-out phrasings (how many are read as their own motion, any score), and
``--benchmark``, the unseen-rig benchmark's prompts (``tests/bench/bench_unseen.py``: the library's
held-out phrasings, a test set) read against their kind's vocabulary without the held-out phrasings
as that benchmark reads them (how many are read as their motion, and how many of those at or above
the threshold). ``--raw`` reads with the plain cosine instead of the within-motion whitened one and
``--ridge R`` with another :data:`~akd_blender.core.prompt.understanding.WHITENING_RIDGE` (both only to
compare; the exit status then ignores the shipped threshold). ``--json PATH`` writes every figure.
Exit 1 when the chosen threshold is not the shipped one.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
PROMPTS = Path(__file__).with_name("understanding_prompts.json")
BLIND = ROOT / "tests" / "core" / "blind_wordings.json"
CANDIDATES = np.round(np.arange(0.20, 0.8001, 0.01), 2)


def cases(split: dict, kinds: tuple[str, ...]) -> list[tuple[str, str, str | None]]:
    """(kind, prompt, expected motion or None for "refuse") of one split."""
    out = []
    for kind, motions in split["known"].items():
        out += [(kind, p, f"{kind}/{label}") for label, ps in motions.items() for p in ps]
    for kind, rows in split["other_kind"].items():
        out += [(kind, p, None) for p, _ in rows]
    out += [(kind, p, None) for p in split["unknown"] for kind in kinds]
    return out


def readings(rows: list[tuple[str, str, str | None]], vocabularies: dict, encoder) -> list[tuple[str | None, str, float]]:
    """(expected, motion read, score) per row, each read against its kind's vocabulary."""
    vectors = encoder.encode([p for _, p, _ in rows])
    out = []
    for (kind, prompt, expected), v in zip(rows, vectors):
        u = vocabularies[kind].understand(prompt, v)
        out.append((expected, u.motion, u.similarity))
    return out


def leave_one_out(kinds: tuple[str, ...], encoder, whiten: bool, ridge: float) -> tuple[int, int]:
    """(read as their own motion, wordings): each non-held-out wording of each kind read against its
    kind's vocabulary (held-out phrasings left out) without that wording."""
    from akd_blender.core.prompt.understanding import MotionSpace, library_vocabulary, rank_motions

    right = total = 0
    for kind in kinds:
        rows = library_vocabulary(kind, heldout=False)
        vectors = encoder.encode([w for w, _, _ in rows])
        for i, (_, motion, _) in enumerate(rows):
            keep = [j for j in range(len(rows)) if j != i]
            motions, trained = [rows[j][1] for j in keep], [rows[j][2] for j in keep]
            space = MotionSpace(vectors[keep], motions, whiten, ridge)
            right += rank_motions(space.similarities(vectors[i]), motions, trained)[0][2] == motion
            total += 1
    return right, total


def benchmark_cases(artists: Path) -> list[tuple[str, str, str]]:
    """(kind, prompt, motion) of the unseen-rig benchmark's default cases (``make_cases(12, 8, …)``)."""
    sys.path.insert(0, str(ROOT / "tests" / "bench"))
    from bench_unseen import DEFAULT_ARTISTS, make_cases

    return [(c.kind, c.prompt, f"{c.kind}/{c.label}") for c in make_cases(12, 8, artists, DEFAULT_ARTISTS)]


def figures(read: list[tuple[str | None, str, float]], threshold: float) -> dict:
    """Counts and rates at ``threshold``: known right / misread / refused, unknown refused, balanced
    accuracy (the mean of the two rates; the one rate when a set has no prompts of the other group)."""
    known = [(e, m, s) for e, m, s in read if e is not None]
    unknown = [(e, m, s) for e, m, s in read if e is None]
    right = int(sum(s >= threshold and m == e for e, m, s in known))
    misread = int(sum(s >= threshold and m != e for e, m, s in known))
    refused_known = len(known) - right - misread
    refused = int(sum(s < threshold for _, _, s in unknown))
    known_rate = right / max(len(known), 1)
    refused_rate = refused / max(len(unknown), 1)
    return {
        "threshold": float(threshold),
        "known": len(known),
        "known_right": right,
        "known_misread": misread,
        "known_refused": refused_known,
        "unknown": len(unknown),
        "unknown_refused": refused,
        "known_right_rate": round(known_rate, 4),
        "unknown_refused_rate": round(refused_rate, 4),
        "balanced_accuracy": round(float(np.mean([r for r, n in ((known_rate, known), (refused_rate, unknown)) if n])), 4),
    }


def choose(read: list[tuple[str | None, str, float]]) -> float:
    """The candidate with the best balanced accuracy on ``read``, the lowest on ties."""
    scores = [figures(read, t)["balanced_accuracy"] for t in CANDIDATES]
    return float(CANDIDATES[int(np.argmax(scores))])


def _line(name: str, f: dict) -> str:
    refused = f"{f['unknown_refused']}/{f['unknown']} ({f['unknown_refused_rate']:.1%})" if f["unknown"] else "–"
    return (
        f"| {name} | {f['threshold']:.2f} | {f['known_right']}/{f['known']} ({f['known_right_rate']:.1%}) | "
        f"{f['known_misread']} | {f['known_refused']} | {refused} | "
        f"{f['balanced_accuracy']:.1%} |"
    )


def main(argv: list[str] | None = None) -> int:
    sys.path.insert(0, str(ROOT))
    from akd_blender.core.motion.library import KINDS
    from akd_blender.core.prompt.sentence_encoder import TextEncoder
    from akd_blender.core.prompt.understanding import (
        UNDERSTOOD_THRESHOLD,
        WHITENING_RIDGE,
        MotionSpace,
        PromptVocabulary,
        library_vocabulary,
        teacher_vocabulary,
    )

    ap = argparse.ArgumentParser(prog="python -m tools.understanding_threshold", description=__doc__.splitlines()[0])
    ap.add_argument("--json", help="write every figure to this file")
    ap.add_argument("--raw", action="store_true", help="read with the plain cosine (no within-motion whitening)")
    ap.add_argument("--ridge", type=float, default=None, help="another whitening ridge (default WHITENING_RIDGE)")
    ap.add_argument("--benchmark", action="store_true", help="also read the unseen-rig benchmark's prompts (a test set)")
    ap.add_argument("--artists", default=str(ROOT / "bench_out" / "artists"), help="bench_unseen's artist rigs folder")
    args = ap.parse_args(argv)
    whiten, ridge = not args.raw, WHITENING_RIDGE if args.ridge is None else args.ridge

    data = json.loads(PROMPTS.read_text())
    encoder = TextEncoder()

    def vocabulary(rows):
        vocab = PromptVocabulary(rows, encoder, whiten=whiten)
        if whiten and ridge != WHITENING_RIDGE:
            vocab._space = MotionSpace(vocab.vectors, vocab.motions, True, ridge)
        return vocab

    vocabularies = {kind: vocabulary(library_vocabulary(kind)) for kind in KINDS}
    known_wordings = {w.lower() for v in vocabularies.values() for w in v.wordings}
    known_wordings |= {w.lower() for w, _, _ in teacher_vocabulary()}
    sets = {name: cases(data[name], KINDS) for name in ("validation", "test")}
    clashes = [p for rows in sets.values() for _, p, _ in rows if p.lower() in known_wordings]
    if clashes:
        print(f"prompts that are vocabulary wordings: {clashes}", file=sys.stderr)
        return 1
    shared = {p for _, p, _ in sets["validation"]} & {p for _, p, _ in sets["test"]}
    if shared:
        print(f"prompts in both sets: {sorted(shared)}", file=sys.stderr)
        return 1

    read = {name: readings(rows, vocabularies, encoder) for name, rows in sets.items()}
    chosen = choose(read["validation"])
    result = {"chosen": chosen, "shipped": UNDERSTOOD_THRESHOLD}
    print("| set (role library, per kind) | threshold | known read right | misread | refused | unknown refused | balanced |")
    print("|---|---|---|---|---|---|---|")
    for name in ("validation", "test"):
        f = figures(read[name], chosen)
        result[name] = f
        print(_line(name, f))
    result["sweep"] = {name: [figures(read[name], t) for t in CANDIDATES] for name in read}

    # The shipped text-only teacher's vocabulary (both characters of the named-bone library): the test
    # set's biped and quadruped prompts (its motions known, the role library's others refused) and the blind wordings.
    teacher = vocabulary(teacher_vocabulary())
    teacher_motions = set(teacher.motions)
    belongs = {p: m for ps in data["test"]["other_kind"].values() for p, m in ps}
    rows = []
    for kind, prompt, expected in sets["test"]:
        expected = belongs.get(prompt, expected)
        if kind in ("biped", "quadruped"):
            rows.append(("biped", prompt, expected if expected in teacher_motions else None))
    blind = [("biped", p, m) for m, ps in json.loads(BLIND.read_text()).items() for p in ps]
    for name, rows_ in (("teacher: test (biped, quadruped)", rows), ("teacher: blind_wordings.json", blind)):
        vocab = {"biped": teacher}
        f = figures(readings(rows_, vocab, encoder), chosen)
        result[name] = f
        print(_line(name, f))
    right, total = leave_one_out(KINDS, encoder, whiten, ridge)
    result["leave_one_out"] = {"right": right, "wordings": total}
    print(f"leave-one-out: {right}/{total} vocabulary wordings read as their own motion ({right / total:.1%})")
    if args.benchmark:
        bench = benchmark_cases(Path(args.artists))
        plain = {kind: vocabulary(library_vocabulary(kind, heldout=False)) for kind in KINDS}
        read_bench = readings(bench, plain, encoder)
        own = [(m == e, s >= chosen) for e, m, s in read_bench]
        result["benchmark"] = {
            "prompts": len(own),
            "read_right": sum(r for r, _ in own),
            "understood_right": sum(r and u for r, u in own),
        }
        print(
            f"benchmark prompts: {sum(r for r, _ in own)}/{len(own)} read as their motion, "
            f"{sum(r and u for r, u in own)} of them at or above {chosen:.2f}"
        )
        for (kind, prompt, expected), (_, motion, score) in zip(bench, read_bench):
            if motion != expected:
                print(f"benchmark: {kind}: {prompt!r} expected {expected}, read {motion} {score:.3f}", file=sys.stderr)
    print(f"chosen threshold {chosen:.2f} (shipped UNDERSTOOD_THRESHOLD = {UNDERSTOOD_THRESHOLD:.2f})")
    for name in ("validation", "test"):
        for (kind, prompt, expected), (_, motion, score) in zip(sets[name], read[name]):
            ok = (score >= chosen and motion == expected) if expected else score < chosen
            if not ok:
                print(f"{name}: {kind}: {prompt!r} expected {expected or 'refused'}, read {motion} {score:.3f}", file=sys.stderr)
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=1))
    if chosen != UNDERSTOOD_THRESHOLD and not args.raw and ridge == WHITENING_RIDGE:
        print(f"the chosen threshold differs from the shipped one: set UNDERSTOOD_THRESHOLD = {chosen:.2f}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
