"""Refusing at once a prompt the character's body cannot play: a rig read as kind "other" (two arms and no
legs, a lone chain too short for a serpent …) has no library motions, and drawing a video of it walking
moves nothing it has. The job stops within seconds, in one line naming what was read and what the
motion needs, before any model is loaded or any video drawn."""

from __future__ import annotations

from ..character.roles import BoneRoles
from ..errors import InputError, ModelNotAvailable

__all__ = ["KIND_NEEDS", "CannotPlay", "body_summary", "needs_text", "refuse_unplayable"]

KIND_NEEDS = {  # kind -> (legs, what else it needs)
    "biped": (2, ""),
    "quadruped": (4, ""),
    "bird": (2, "2 wings"),
    "hexapod": (6, ""),
    "serpent": (0, "a legless body at least twice as long as tall"),
}

MANY_LEGGED = "hexapod"
"""The kind whose leg count in :data:`KIND_NEEDS` is its least: any even number of legs from 6 on."""


def needs_text(kinds: list[str]) -> str:
    """What a motion of ``kinds`` needs, in words: "2 legs", "2, 4, 6 or more legs, or a legless body at
    least twice as long as tall", "2 legs and 2 wings"."""
    plain = sorted({KIND_NEEDS[k][0] for k in kinds if k in KIND_NEEDS and KIND_NEEDS[k][0] and not KIND_NEEDS[k][1]})
    words = []
    if plain:
        counts = [str(n) for n in plain]
        if MANY_LEGGED in kinds and KIND_NEEDS[MANY_LEGGED][0] == plain[-1]:
            words.append(", ".join(counts) + " or more legs")  # the many-legged kind takes any even number from 6
        else:
            words.append((", ".join(counts[:-1]) + " or " + counts[-1] if len(counts) > 1 else counts[0]) + " legs")
    for k in kinds:
        legs, more = KIND_NEEDS.get(k, (0, k))
        if more and legs not in plain:  # "2 legs and 2 wings" says nothing more where 2 legs do
            words.append(f"{legs} legs and {more}" if legs else more)
    words = list(dict.fromkeys(words))
    return ", or ".join(words) if words else "a body of another kind"


class CannotPlay(InputError):
    """The character's kind has no motions and the prompt asks for one that needs a body it lacks (exit 2).
    The message is one line: the kind and limbs read, the prompt, the motion it reads as and what that needs."""


def body_summary(roles: BoneRoles) -> str:
    """The kind and limbs read, e.g. "kind other: 2 arms, no legs" (legs always named; arms, wings, a
    head and a tail where found)."""
    parts = [f"{len(roles.legs)} legs" if roles.legs else "no legs"]
    parts += [f"{len(limbs)} {word}" for limbs, word in ((roles.arms, "arms"), (roles.wings, "wings")) if limbs]
    parts += [word for present, word in ((roles.head is not None, "a head"), (bool(roles.tail), "a tail")) if present]
    return f"kind {roles.kind}: " + ", ".join(sorted(parts, key=lambda p: not p.endswith(("arms", "wings"))))


def refuse_unplayable(prompt: str, roles: BoneRoles, refuse_unknown: bool) -> None:
    """Raise :class:`CannotPlay` when ``roles.kind`` has no library motions and ``prompt`` reads as a known
    motion of another kind (the best understood reading over the kinds that have motions), naming what
    that motion needs (:data:`KIND_NEEDS`, every kind that has it); with ``refuse_unknown`` (the embedded
    teacher, which draws only the library's motions) also when no kind understands it. Does nothing for a
    kind that has library motions. ModelNotAvailable when the sentence encoder is not installed."""
    from ..motion.library import KINDS, motions_for
    from ..prompt.reading import library_understanding

    if roles.kind in KINDS:
        return
    try:
        readings = [library_understanding(prompt, kind) for kind in KINDS]
    except ModelNotAvailable:  # no sentence encoder: the prompt cannot be read, a video model's job goes on
        return
    understood = [r for r in readings if r.understood]
    found = body_summary(roles)
    if not understood:
        if refuse_unknown:
            nearest = max(readings, key=lambda r: r.similarity)
            raise CannotPlay(
                f'{found}: no motions for this kind, and "{prompt}" matches no known motion of another '
                f"(nearest {nearest.motion}, similarity {nearest.similarity:.2f}); nothing was drawn"
            )
        return
    best = max(understood, key=lambda r: r.similarity)
    label = best.motion.rsplit("/", 1)[-1]
    needs = needs_text([kind for kind in KINDS if label in {spec.label for spec in motions_for(kind)}])
    raise CannotPlay(
        f'{found}: "{prompt}" reads as {best.motion} (similarity {best.similarity:.2f}), which needs {needs}; nothing was drawn'
    )
