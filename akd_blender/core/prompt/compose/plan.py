"""A prompt read as a plan: library motions in order, each with its variation, side, repetitions and
duration.

:func:`plan_prompt` cuts the prompt into parts (:func:`~.sequence.split_parts`), takes each part's
modifier words out (:func:`~.words.read_modifiers`) and reads what is left as one motion of the
character's kind with an ``understand`` callable (its gait style taken out by
:func:`~.words.read_style` and its subject said neutrally by :func:`~.words.without_subject` first, so
"the orc sneaks" is read as a walk, sneaking) (:func:`motion_reader`: the same reading as
:class:`~akd_blender.core.prompt.understanding.PromptVocabulary` over
:func:`~akd_blender.core.prompt.understanding.library_vocabulary`, the offline sentence encoder). A part
that reads as no motion (below :data:`~akd_blender.core.prompt.understanding.LIBRARY_THRESHOLD`) is
refused with :class:`PartNotUnderstood`, naming that part. A clause played at the same time as the one
before (:func:`~.sequence.split_clauses`: "walks while waving") joins that part as one of its
``together`` parts when the two drive different body parts (:func:`played_together`); else it follows
it. :meth:`Plan.describe` is the "understood as" line, e.g. ``walk (slow) → sit`` or ``walk + wave (right)``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from functools import lru_cache

from ...assets import ASSETS_DIR
from ...errors import InputError
from ...motion.library import role_motion
from ...motion.library.gait_styles import GAIT_LABELS, GAIT_STYLES
from ...motion.library.labelled import Variation
from ..understanding import (
    MOTIONS_COMMAND,
    PromptNotUnderstood,
    Understanding,
    kind_vocabulary,
    refusal_reason,
)
from .sequence import AFTER, AND, WITH, normalise, split_clauses
from .words import Modifiers, is_empty, is_hold, read_modifiers, read_style, without_subject, words

__all__ = [
    "HOLD",
    "LEADING_PARTS",
    "Part",
    "Plan",
    "PartNotUnderstood",
    "plan_prompt",
    "motion_reader",
    "shared_encoder",
    "direction_said_for",
    "motion_parts",
    "neutral_reading",
    "played_together",
]

Understand = Callable[[str], Understanding]

HOLD = "hold"
"""The label of a part that keeps the body as it is ("stops", "waits", "stays there": ``words.json``
``hold_phrases``), for its duration or ``hold_seconds``."""

LEADING_PARTS: frozenset[str] = frozenset({"root", "legs"})
"""The body parts that carry the body: of parts played together, the one that drives them leads (its
clip is played whole) and the others' body parts are laid over it; two that both drive them cannot be
played together."""


@dataclass(frozen=True)
class Part:
    """One motion of a plan.

    Attributes:
        label: the library motion (e.g. ``"walk"``); motion: ``"<kind>/<label>"``.
        text: the part as written; core: what was read as the motion (modifier words taken out).
        similarity: the reading's score (:class:`~akd_blender.core.prompt.understanding.Understanding`).
        speed: factor on the motion's tempo (1 = the library's). amplitude: factor on its angles,
            travel and height. direction: +1 or -1, :class:`Variation`'s (a turn to the left / right).
        side: "left" or "right": the limb of a one-limb motion (wave, kick, punch); None: the library's.
        repetitions: times the motion is played (a cyclic motion gets that many units, a one-shot
            motion is played again). duration: seconds, None: the motion's natural length.
        heading: degrees the body turns before a travelling part (+ left), e.g. "walks to the left".
        backwards: a travelling part played backwards (walking backwards).
        words: the modifier phrases that set these fields.
        style: the gait's style ("sneak", "limp" …, ``words.json`` ``styles``), None: the plain gait.
        together: parts played at the same time as this one, each on its own body parts (this part
            drives the root and legs where one of them does: :func:`played_together`).
    """

    label: str
    motion: str
    text: str
    core: str
    similarity: float
    speed: float = 1.0
    amplitude: float = 1.0
    direction: int = 1
    side: str | None = None
    repetitions: int = 1
    duration: float | None = None
    heading: float = 0.0
    backwards: bool = False
    words: tuple[str, ...] = ()
    style: str | None = None
    together: tuple[Part, ...] = ()

    def variation(self, facing: float = 0.0, speed: float | None = None) -> Variation:
        """The library :class:`Variation` of this part facing ``facing`` (radians), at ``speed``
        (default: the part's own)."""
        return Variation(
            speed=self.speed if speed is None else speed,
            amplitude=self.amplitude,
            direction=self.direction,
            facing=facing,
            style=self.style,
        )

    def describe(self) -> str:
        """E.g. ``walk (slow, to the left, 4 s)``, ``jump ×2 (big)``, ``wave (left)``, ``walk (sneaking)``,
        ``walk + wave (right)``."""
        return " + ".join([self._describe_alone(), *(p.describe() for p in self.together)])

    def _describe_alone(self) -> str:
        notes = []
        if self.style:
            notes.append(words()["styles"][self.style]["said_as"])
        if self.speed != 1.0:
            notes.append("slow" if self.speed < 1 else "fast")
        if self.amplitude != 1.0:
            notes.append("small" if self.amplitude < 1 else "big")
        if self.label in _classes()["turning"] and self.direction != 1:
            notes.append("right")
        elif self.label in _classes()["turning"]:
            notes.append("left")
        if self.heading:
            notes.append("to the left" if self.heading > 0 else "to the right")
        if self.backwards:
            notes.append("backwards")
        if self.side:
            notes.append(self.side)
        if self.duration is not None:
            notes.append(f"{self.duration:g} s")
        count = f" ×{self.repetitions}" if self.repetitions != 1 else ""
        return f"{self.label}{count}" + (f" ({', '.join(notes)})" if notes else "")


@dataclass(frozen=True)
class Plan:
    """A prompt as motions in order: ``prompt`` as given, the character's ``kind`` and its ``parts``."""

    prompt: str
    kind: str
    parts: tuple[Part, ...]

    def describe(self) -> str:
        """The "understood as" line: each part's :meth:`Part.describe` joined by arrows, e.g.
        ``walk (slow) → sit``."""
        return " → ".join(p.describe() for p in self.parts)

    def facts(self) -> dict:
        """The report's fields: ``understood_as`` (:meth:`describe`) and ``parts`` (one dict each)."""
        return {
            "understood_as": self.describe(),
            "parts": [
                {
                    k: getattr(p, k)
                    for k in ("label", "text", "speed", "amplitude", "direction", "side", "repetitions", "duration", "style")
                }
                | {"similarity": round(p.similarity, 4), "together": [t.label for t in p.together]}
                for p in self.parts
            ],
        }


class PartNotUnderstood(PromptNotUnderstood):
    """One part of a composed prompt matches no known motion, or asks for another kind's (exit 2). ``part``:
    its text; ``index``: its place (0-based); ``understanding``: the refused reading. The message is one line
    naming the part (:func:`~akd_blender.core.prompt.understanding.refusal_reason`)."""

    def __init__(self, prompt: str, part: str, index: int, count: int, understanding: Understanding, kind: str) -> None:
        where = f"part {index + 1} of {count}" if count > 1 else "the prompt"
        InputError.__init__(
            self,
            f'{where}, "{part}", {refusal_reason(understanding, kind)}; the known motions: '
            f'`{MOTIONS_COMMAND} --kind {kind}` (prompt: "{" ".join(prompt.split())}")',
        )
        self.understanding, self.part, self.index = understanding, part, index


@lru_cache(maxsize=1)
def _classes() -> dict[str, frozenset[str]]:
    m = words()["motions"]
    return {k: frozenset(m[k]) for k in ("travelling", "turning", "sided", "cyclic", "rising", "ending_low", "leading")}


def shared_encoder():
    """The offline sentence encoder with the shipped image teacher's phrase table (one per process)."""
    return _encoder()


@lru_cache(maxsize=1)
def _encoder():

    from ..sentence_encoder import PhraseTable, TextEncoder

    table = ASSETS_DIR / "teacher_image" / "phrases.npz"
    return TextEncoder(PhraseTable.load(table) if table.is_file() else None)


def motion_reader(kind: str, encoder=None) -> Understand:
    """``understand(text) -> Understanding``: ``text`` read among the library motions of ``kind``
    (:func:`~akd_blender.core.prompt.understanding.library_vocabulary`, held-out and extra wordings
    included) with ``encoder`` (default :func:`shared_encoder`), its subject said neutrally
    (:func:`neutral_reading`); the wordings are encoded once per kind and encoder. InputError for a
    kind the library has no motions for."""
    vocabulary = kind_vocabulary(kind, encoder if encoder is not None else shared_encoder())
    return lambda text: neutral_reading(vocabulary.understand, text, kind)


def neutral_reading(understand: Understand, text: str, kind: str) -> Understanding:
    """``text`` read by ``understand`` with its subject said neutrally for a ``kind`` character
    (:func:`~.words.without_subject`: "the orc walks" → "someone walks"), or as written where that
    reads better (understood where the other is not, else a wording the vocabulary holds word for word,
    else a higher score); the reading's ``prompt`` is ``text``."""
    neutral = without_subject(normalise(text), kind)
    reading = replace(understand(neutral), prompt=text)
    if neutral == normalise(text):
        return reading
    written = understand(text)
    return max(reading, written, key=lambda r: (r.understood, r.exact, r.similarity))


def _part(kind: str, text: str, core: str, reading: Understanding, mods: Modifiers) -> Part:
    label = reading.motion.rsplit("/", 1)[-1]
    classes = _classes()
    direction, heading, backwards, side = 1, 0.0, False, mods.side
    turn = float(words()["travel_turn_degrees"])
    if mods.direction in ("left", "right"):
        if label in classes["turning"]:
            direction = 1 if mods.direction == "left" else -1
        elif label in classes["travelling"]:
            heading = turn if mods.direction == "left" else -turn
        elif _sided(kind, label) and side is None:
            side = mods.direction
    if mods.direction == "backward" and label in classes["travelling"]:
        backwards = True
    return Part(
        label=label,
        motion=reading.motion,
        text=text,
        core=core,
        similarity=float(reading.similarity),
        speed=float(mods.speed or 1.0),
        amplitude=_amplitude(label, mods),
        direction=direction,
        side=side if _sided(kind, label) else None,
        repetitions=int(mods.repetitions or 1),
        duration=mods.duration,
        heading=heading,
        backwards=backwards,
        words=mods.words,
        style=mods.style if mods.style in gait_styles(kind, label) else None,
    )


def _sided(kind: str, label: str) -> bool:
    """Whether motion ``label`` of ``kind`` is played by one limb the prompt may name ("with the left
    hand"): its spec says so, or ``words.json`` lists it ``sided``."""
    return label in _classes()["sided"] or role_motion(kind, label).sided


def _amplitude(label: str, mods: Modifiers) -> float:
    """The part's amplitude: the modifiers', with the words ``words.json`` reads otherwise for this
    motion (``amplitude_by_motion``: "a low crouch" is a deep one) given their meaning for it."""
    amplitude = float(mods.amplitude or 1.0)
    overrides = words()["amplitude_by_motion"].get(label, {})
    base = words()["amplitude_words"]
    for phrase in mods.words:
        word = phrase.split()[-1]
        if word in overrides and word in base:
            amplitude *= float(overrides[word]) / float(base[word])
    return amplitude


def plan_prompt(prompt: str, kind: str, understand: Understand | None = None, participles: bool = True) -> Plan:
    """``prompt`` as a :class:`Plan` for a character of ``kind``.

    ``understand``: reads a part's text as a motion of ``kind`` (default :func:`motion_reader`).
    ``participles``: a motion verb in -ing said without a comma is a part of its own
    (:func:`~.sequence.split_clauses`). A
    fragment with modifiers and no motion ("…, twice", "…, slowly") modifies the part before it (the
    first such one, the part after it); "again" alone repeats the part before it; "stops", "waits",
    "stays there" … make a :data:`HOLD` part; a rise after a motion that does not end low is dropped
    (:func:`_without_own_returns`). InputError for an
    empty prompt or one with modifiers only; :class:`PartNotUnderstood` naming the first part that
    matches no motion well enough."""
    understand = understand or motion_reader(kind)
    read = [(c.text, *_modifiers_and_style(c.text), c.link) for c in split_clauses(prompt, participles)]
    count = sum(not is_empty(core) for _, core, _, _ in read)
    readings = [None if is_empty(core) or is_hold(core) else understand(core) for _, core, _, _ in read]
    parts: list[Part] = []
    pending = Modifiers()
    for k, (text, core, mods, link) in enumerate(read):
        if is_empty(core):
            if mods.repeat_previous and parts:
                again = _part(kind, text, parts[-1].core, _reading_of(parts[-1]), Modifiers().merged(mods))
                parts.append(replace(parts[-1], text=text) if len(mods.words) == 1 else again)
            elif parts:
                last = parts[-1]
                merged = _modifiers_of(last).merged(mods)
                parts[-1] = _part(kind, last.text + ", " + text, last.core, _reading_of(last), merged)
            else:
                pending = pending.merged(mods)
            continue
        if is_hold(core):
            mods = pending.merged(mods)
            parts.append(Part(HOLD, HOLD, text, core, 1.0, duration=mods.duration, words=mods.words))
            pending = Modifiers()
            continue
        reading = readings[k]
        if not reading.understood and _step_of_neighbour(k, read, readings):
            continue
        if not reading.understood:
            raise PartNotUnderstood(prompt, text, len(parts), count, reading, kind)
        part = _part(kind, text, core, reading, pending.merged(mods))
        joined = played_together(parts[-1], part, link == WITH) if link != AFTER and parts and parts[-1].label != HOLD else None
        if joined is not None:
            parts[-1] = joined
        else:
            parts.append(part)
        pending = Modifiers()
    if not parts:
        raise InputError(f'the prompt "{normalise(prompt)}" names no motion')
    return Plan(prompt, kind, _without_own_returns(parts))


def _step_of_neighbour(k: int, read: list, readings: list[Understanding | None]) -> bool:
    """Whether clause ``k``, read as no motion, is a step of the motion of a clause it is joined to by
    "and" or a comma ("slips" in "slips and falls": its nearest motion is the fall's)."""
    neighbours = ([k - 1] if read[k][3] == AND else []) + ([k + 1] if k + 1 < len(read) and read[k + 1][3] == AND else [])
    return any(
        readings[n] is not None and readings[n].understood and readings[n].motion == readings[k].motion for n in neighbours
    )


def _modifiers_and_style(text: str) -> tuple[str, Modifiers]:
    """``text`` without its modifier and style words, and the :class:`Modifiers` they set (the style in
    ``Modifiers.style``)."""
    core, mods = read_modifiers(text)
    core, style = read_style(core)
    return core, replace(mods, style=style, words=mods.words + ((style,) if style else ()))


def gait_styles(kind: str, label: str) -> tuple[str, ...]:
    """The styles motion ``label`` of ``kind`` plays (its gait's, ``GAIT_STYLES``; none for a motion that
    is no gait)."""
    return GAIT_STYLES.get(kind, ()) if label in GAIT_LABELS.get(kind, ()) else ()


def motion_parts(kind: str, label: str, side: str | None = None) -> frozenset[str]:
    """The body parts motion ``label`` of ``kind`` drives (the spec's ``parts``: "root", "legs", "torso",
    "head", "arms", "arm", "tail", "wings"), a sided motion's "arm" named by its side ("arm.right";
    the library's side, the right, when ``side`` is None)."""
    spec = role_motion(kind, label)
    return frozenset(f"arm.{side or 'right'}" if p == "arm" else p for p in spec.parts)


def _overlaps(a: frozenset[str], b: frozenset[str]) -> bool:
    """Whether two sets of body parts share one ("arms" holds both "arm.left" and "arm.right")."""

    def spread(parts: frozenset[str]) -> set[str]:
        return {q for p in parts for q in (("arm.left", "arm.right") if p == "arms" else (p,))}

    return bool(spread(a) & spread(b))


def played_together(base: Part, extra: Part, said: bool = True) -> Part | None:
    """``base`` with ``extra`` played at the same time, or None when they cannot be: both are motions of the
    legs and body (``words.json`` ``leading``: "walks while running"), or two laid-over parts drive one
    body part besides the root and legs;
    unless ``said`` (the prompt says "while", "at the same time" …), also when ``extra`` would lead
    ("waves and walks away" is a wave, then a walk).
    The leading motion leads (``together`` holds the others, laid over its body parts but the root and
    legs: a bark while sitting barks with the head); with none, the first that drives the root or legs,
    else ``base``. ``extra`` the same motion as one already played: ``base`` as it is."""
    if extra.label == HOLD:
        return None
    members = [replace(base, together=()), *base.together]
    if any(m.label == extra.label for m in members):
        return base
    members.append(extra)
    kind = base.motion.rsplit("/", 1)[0]
    parts = [motion_parts(kind, m.label, m.side) for m in members]
    leading = [k for k, m in enumerate(members) if m.label in _classes()["leading"]]
    if len(leading) > 1:
        return None
    lead = next(iter(leading), next((k for k, p in enumerate(parts) if p & LEADING_PARTS), 0))
    parts = [p if k == lead else p - LEADING_PARTS for k, p in enumerate(parts)]
    if not said and lead == len(members) - 1:
        return None
    laid = [k for k in range(len(members)) if k != lead]
    if any(_overlaps(parts[i], parts[j]) for n, i in enumerate(laid) for j in laid[n + 1 :]):
        return None
    return replace(members[lead], together=tuple(members[k] for k in laid))


def _without_own_returns(parts: list[Part]) -> tuple[Part, ...]:
    """``parts`` without a rise ("stands back up": a ``rising`` motion of ``words.json``, e.g. get_up)
    that follows a motion which does not end low (not ``ending_low``: a bow comes back up by itself):
    that rise is the motion's own return, not a motion of its own."""
    classes = _classes()
    kept: list[Part] = []
    for part in parts:
        if part.label in classes["rising"] and kept and kept[-1].label not in classes["ending_low"] and kept[-1].label != HOLD:
            continue
        kept.append(part)
    return tuple(kept)


def direction_said_for(part: Part, motion: str) -> bool:
    """Whether ``part``'s text says a direction ("to the right", "left", "backwards") that fits its own
    motion (one that turns or travels, ``words.json``) but not ``motion`` (a ``kind/label`` that does
    neither: "turns towards the right" is a turn, whatever else its words are close to)."""
    classes = _classes()
    moves = classes["turning"] | classes["travelling"]
    return read_modifiers(part.text)[1].direction is not None and part.label in moves and motion.rsplit("/", 1)[-1] not in moves


def _reading_of(part: Part) -> Understanding:
    """A stand-in reading that names ``part``'s motion (to rebuild the part with other modifiers)."""
    return Understanding(part.core, part.motion, part.core, part.similarity, (), 0.0, -1)


def _modifiers_of(part: Part) -> Modifiers:
    """The modifiers that made ``part`` (speed, amplitude, side, repetitions, duration, direction)."""
    direction = None
    if part.label in _classes()["turning"] and part.direction == -1:
        direction = "right"
    elif part.heading:
        direction = "left" if part.heading > 0 else "right"
    elif part.backwards:
        direction = "backward"
    return Modifiers(
        speed=part.speed if part.speed != 1.0 else None,
        amplitude=part.amplitude if part.amplitude != 1.0 else None,
        direction=direction,
        side=part.side,
        repetitions=part.repetitions if part.repetitions != 1 else None,
        duration=part.duration,
        words=part.words,
        style=part.style,
    )
