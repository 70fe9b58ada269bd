"""How the product reads realistic prompts: right, refused or wrong, per kind and group.

The sets are ``tools/realistic_prompts/{validation,test}.json`` (written blind from the stock-catalogue
groups and typical requests; each prompt with its ``kind``, ``group`` and the ``right`` readings over the
canonical names of ``motion_names.json``). Each prompt is read as a job reads it,
:func:`akd_blender.core.prompt.reading.choose_library_motion` (or, with ``--whole``, as one motion by
:func:`~akd_blender.core.prompt.compose.plan.motion_reader`: the no-composition baseline) and its plan
written as a reading string: parts in order joined by ``" > "``, each part its label, ``":" + style``
when the part has one, and ``"+"`` and the labels of the parts played with it at the same time
(``"walk:march+salute > sit"``). A reading is

- ``right``: it equals a right reading once both are in canonical names ("+" parts as a set), or the
  prompt is ``outside`` the vocabulary and was refused;
- ``style_missed``: the motions are right but a style the right reading asks for was not read
  ("walk" for "walk:sneak"): wrong in the strict figure, right in the lenient one;
- ``refused``: a prompt with right readings was refused;
- ``wrong``: a motion was played that is not right (an ``outside`` prompt played at all included).

    python -m tools.realistic_reading --split validation [--whole] [--json OUT]

The akd_blender imported is whichever is first on ``sys.path`` (``PYTHONPATH=/other/checkout`` scores
that checkout against these sets).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

SETS_DIR = Path(__file__).resolve().parent / "realistic_prompts"
NAMES_PATH = SETS_DIR / "motion_names.json"
SPLITS = ("validation", "test", "test_b")
GROUPS = ("single", "style", "together", "sequence", "outside")
KINDS = ("biped", "quadruped", "bird")
OUTCOMES = ("right", "style_missed", "refused", "wrong")

HOLD_NAME = "idle"
"""The canonical name of a plan's hold part (label ``hold``: the body kept as it is, "stops", "waits")."""

Piece = tuple[str, str | None]
"""One motion of a part: (canonical name, style or None)."""
Reading = tuple[frozenset[Piece], ...]
"""A reading as compared: one set of pieces played together per part, parts in order."""


@dataclass(frozen=True)
class RealisticPrompt:
    """One prompt of a set: its text, the character ``kind``, the ``group`` (single, style, together,
    sequence, outside) and every ``right`` reading (empty: only a refusal is right)."""

    prompt: str
    kind: str
    group: str
    right: tuple[str, ...]


@dataclass(frozen=True)
class Scored:
    """A prompt's outcome: ``read`` is the reading string (None when refused), ``outcome`` one of
    :data:`OUTCOMES`, ``reason`` the refusal's message (or "")."""

    item: RealisticPrompt
    read: str | None
    outcome: str
    reason: str = ""


def load_names(path: Path = NAMES_PATH) -> dict:
    """``motion_names.json``: canonical names per kind, styles per motion and per-kind aliases."""
    return json.loads(path.read_text())


def load_split(split: str, directory: Path = SETS_DIR) -> list[RealisticPrompt]:
    """The prompts of ``split`` ("validation" or "test"), in file order."""
    if split not in SPLITS:
        raise ValueError(f"unknown split {split!r}: one of {', '.join(SPLITS)}")
    rows = json.loads((directory / f"{split}.json").read_text())["prompts"]
    return [RealisticPrompt(r["prompt"], r["kind"], r["group"], tuple(r["right"])) for r in rows]


def part_reading(part: object) -> str:
    """One plan part as a reading: ``label``, ``":" + style`` when set (a part played ``backwards``
    without another style reads as the style ``backwards``), ``"+" + label`` for each part played
    with it (``together``), e.g. ``"walk:sneak+wave"``."""
    text = str(part.label)
    style = getattr(part, "style", None) or ("backwards" if getattr(part, "backwards", False) else None)
    if style:
        text += f":{style}"
    for other in getattr(part, "together", ()) or ():
        text += "+" + (other if isinstance(other, str) else part_reading(other))
    return text


def plan_reading(plan: object) -> str:
    """A plan's parts as one reading string, in order, joined by ``" > "``."""
    return " > ".join(part_reading(p) for p in plan.parts)


def parse_reading(reading: str, kind: str, names: dict) -> Reading:
    """``reading`` in canonical names: each name mapped through ``names["aliases"][kind]`` (a
    catalogue name to the library label that plays it, applied the same way to both sides of a
    comparison), a hold part read as :data:`HOLD_NAME`, each part's ``+`` pieces as a set."""
    aliases = names.get("aliases", {}).get(kind, {})
    parts = []
    for part in reading.split(">"):
        pieces = set()
        for piece in part.split("+"):
            name, _, style = piece.strip().partition(":")
            name = HOLD_NAME if name == "hold" else name
            pieces.add((aliases.get(name, name), style or None))
        parts.append(frozenset(pieces))
    return tuple(parts)


def style_missed(read: Reading, right: Reading) -> bool:
    """True when ``read`` has the motions of ``right`` and differs only by styles ``right`` asks for
    and ``read`` does not have (no style read where another one, or none, was asked)."""
    if len(read) != len(right):
        return False
    missed = False
    for got, want in zip(read, right):
        got_styles, want_styles = dict(got), dict(want)
        if len(got_styles) != len(got) or len(want_styles) != len(want) or set(got_styles) != set(want_styles):
            return False
        for name, style in want_styles.items():
            if got_styles[name] == style:
                continue
            if got_styles[name] is not None:
                return False
            missed = True
    return missed


def outcome(item: RealisticPrompt, read: str | None, names: dict) -> str:
    """``item``'s outcome (:data:`OUTCOMES`) when read as ``read`` (None: refused)."""
    if read is None:
        return "right" if not item.right else "refused"
    if not item.right:
        return "wrong"
    got = parse_reading(read, item.kind, names)
    rights = [parse_reading(r, item.kind, names) for r in item.right]
    if got in rights:
        return "right"
    if any(style_missed(got, r) for r in rights):
        return "style_missed"
    return "wrong"


def plan_reader() -> Callable[[str, str], str]:
    """``read(prompt, kind) -> reading string`` as a job reads its prompt
    (:func:`~akd_blender.core.prompt.reading.choose_library_motion`: the whole prompt's reading
    or its plan); raises InputError when refused."""
    from akd_blender.core.errors import InputError
    from akd_blender.core.prompt.reading import choose_library_motion
    from akd_blender.core.prompt.understanding import refusal_reason

    def read(prompt: str, kind: str) -> str:
        choice, reading = choose_library_motion(prompt, kind)
        if choice is None:
            raise InputError(refusal_reason(reading, kind) if reading is not None else "not read")
        return plan_reading(choice.plan) if choice.plan is not None else choice.label

    return read


def whole_reader() -> Callable[[str, str], str]:
    """The no-composition baseline: the whole prompt read as one motion of ``kind``; raises
    InputError when not understood."""
    from akd_blender.core.errors import InputError
    from akd_blender.core.prompt.compose.plan import motion_reader

    def read(prompt: str, kind: str) -> str:
        reading = motion_reader(kind)(prompt)
        if not reading.understood:
            raise InputError(f"not understood (best {reading.motion}, similarity {reading.similarity:.2f})")
        return reading.motion.rsplit("/", 1)[-1]

    return read


def score(items: Iterable[RealisticPrompt], read: Callable[[str, str], str], names: dict) -> list[Scored]:
    """Each item read by ``read`` and scored; a refusal is an InputError (PromptNotUnderstood among them)."""
    from akd_blender.core.errors import InputError

    scored = []
    for item in items:
        try:
            text = read(item.prompt, item.kind)
        except InputError as refusal:
            scored.append(Scored(item, None, outcome(item, None, names), str(refusal)))
            continue
        scored.append(Scored(item, text, outcome(item, text, names)))
    return scored


def tally(scored: Iterable[Scored]) -> dict[tuple[str, str], Counter]:
    """Outcome counts per (kind, group), per (kind, "all") and per ("all", "all")."""
    counts: dict[tuple[str, str], Counter] = {}
    for s in scored:
        for key in ((s.item.kind, s.item.group), (s.item.kind, "all"), ("all", "all")):
            counts.setdefault(key, Counter())[s.outcome] += 1
    return counts


def rates(counts: Counter) -> dict[str, float]:
    """Percentages of a count: ``right``, ``refused``, strict ``wrong`` (style missed counted wrong)
    and lenient ``right_lenient`` / ``wrong_lenient`` (style missed counted right)."""
    n = max(1, sum(counts.values()))
    return {
        "right": 100.0 * counts["right"] / n,
        "refused": 100.0 * counts["refused"] / n,
        "wrong": 100.0 * (counts["wrong"] + counts["style_missed"]) / n,
        "right_lenient": 100.0 * (counts["right"] + counts["style_missed"]) / n,
        "wrong_lenient": 100.0 * counts["wrong"] / n,
    }


def table(counts: dict[tuple[str, str], Counter]) -> str:
    """A markdown table: one row per kind (then its groups) and the total, with counts and percentages."""
    head = "| kind | group | prompts | right | style missed | refused | wrong | right % (lenient) | refused % | wrong % strict (lenient) |"
    lines = [head, "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    order = [(k, g) for k in KINDS for g in ("all", *GROUPS)] + [("all", "all")]
    for key in order:
        c = counts.get(key)
        if not c:
            continue
        r = rates(c)
        kind, group = key
        lines.append(
            f"| {'**' + kind + '**' if group == 'all' else ''} | {group} | {sum(c.values())} | {c['right']} | {c['style_missed']} "
            f"| {c['refused']} | {c['wrong']} | {r['right']:.0f} ({r['right_lenient']:.0f}) | {r['refused']:.0f} "
            f"| {r['wrong']:.1f} ({r['wrong_lenient']:.1f}) |"
        )
    return "\n".join(lines)


def strict_wrong_rate(scored: list[Scored]) -> float:
    """Percentage of prompts played as a motion that is not right, a missed style counted wrong."""
    return rates(tally(scored)[("all", "all")])["wrong"]


def run(split: str, whole: bool = False) -> tuple[list[Scored], float]:
    """``split`` read by the product (``whole``: the no-composition baseline); the scored prompts and
    the seconds the reading took (the encoder's load included), on one torch thread."""
    import torch

    names = load_names()
    items = load_split(split)
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # one sentence at a time: more threads only wait on each other (14x slower on 2 busy cores)
    start = time.perf_counter()
    try:
        scored = score(items, whole_reader() if whole else plan_reader(), names)
    finally:
        torch.set_num_threads(threads)
    return scored, time.perf_counter() - start


def checkout() -> str:
    """Where the akd_blender read comes from (its folder)."""
    import akd_blender

    return str(Path(akd_blender.__file__).resolve().parent.parent)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tools.realistic_reading", description=__doc__.split("\n")[0])
    parser.add_argument("--split", choices=SPLITS, default="validation")
    parser.add_argument("--whole", action="store_true", help="read each prompt as one motion (no composition)")
    parser.add_argument("--json", type=Path, help="write the counts and every prompt's reading here")
    args = parser.parse_args(argv)
    scored, seconds = run(args.split, args.whole)
    counts = tally(scored)
    way = "whole prompt as one motion" if args.whole else "as a job reads them"
    distinct = Counter(s.item.kind for s in scored)
    print(
        f"{args.split}: {len(scored)} distinct prompts ({', '.join(f'{k} {n}' for k, n in distinct.items())}); "
        f"read by {way} from {checkout()} in {seconds:.1f} s"
    )
    print(table(counts))
    total = rates(counts[("all", "all")])
    print(f"wrong: {total['wrong']:.1f} % strict, {total['wrong_lenient']:.1f} % lenient")
    for label, kept in (("wrong", "wrong"), ("style missed", "style_missed")):
        rows = [s for s in scored if s.outcome == kept]
        if rows:
            print(f"\n{label} ({len(rows)}):")
            for s in rows:
                right = " | ".join(s.item.right) or "refusal"
                print(f"  [{s.item.kind}/{s.item.group}] {s.item.prompt!r} -> {s.read}  (right: {right})")
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(
            json.dumps(
                {
                    "split": args.split,
                    "reader": way,
                    "checkout": checkout(),
                    "seconds": round(seconds, 1),
                    "counts": {f"{k}/{g}": dict(c) for (k, g), c in counts.items()},
                    "prompts": [
                        {
                            "prompt": s.item.prompt,
                            "kind": s.item.kind,
                            "group": s.item.group,
                            "read": s.read,
                            "outcome": s.outcome,
                            "reason": s.reason,
                        }
                        for s in scored
                    ],
                },
                indent=1,
            )
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
