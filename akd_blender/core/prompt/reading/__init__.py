"""Reading a prompt for a character of a kind, in one call: :func:`read_prompt` (prompt + kind → a
:class:`PromptReading`: the library motion or composed plan it asks for, the report's facts, a plan's
frames).

A prompt is read among the library motions of the character's kind as the embedded teacher reads it
(:mod:`..understanding`: the kind's :func:`~.understanding.library_vocabulary` and the offline sentence
encoder, one vocabulary per kind and encoder: :func:`~.understanding.kind_vocabulary`), without the
video model; another kind's motion it asks for more clearly is noted (:func:`with_other_kind`). A prompt
of several motions (told one after another, played at once, with a side, repetitions, a style …) is a
plan of library motions (:func:`composed_plan`, :mod:`.compose`); one motion's variation comes from the
prompt's own words (:func:`prompt_variation`: speed, amplitude, turning direction). The distillation
receives the reading (:mod:`akd_blender.core.distillation.library_start` plays it).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from ...errors import InputError, ModelNotAvailable
from ...motion.library.labelled import Variation
from ..understanding import NearMotion, Understanding, kind_vocabulary

if TYPE_CHECKING:
    from ..compose import Plan

__all__ = [
    "SPEED_RANGE",
    "AMPLITUDE_RANGE",
    "LibraryChoice",
    "PromptReading",
    "read_prompt",
    "prompt_variation",
    "composed_plan",
    "plan_facts",
    "plan_frames",
    "library_understanding",
    "OTHER_KIND_MARGIN",
    "with_other_kind",
    "choose_library_motion",
]

SPEED_RANGE: tuple[float, float] = (0.8, 1.25)
"""The speeds (× the motion's base tempo) a prompt's words may choose: the range the library's
variations span (:func:`~akd_blender.core.motion.library.sample_variations`), which its motions
are made and judged over; a word's factor beyond it ("very slowly", "brisk, at a run") is held at its end."""

AMPLITUDE_RANGE: tuple[float, float] = (0.8, 1.2)
"""The amplitudes (× the motion's angles and travel) a prompt's words may choose: the library's range."""


@dataclass(frozen=True)
class LibraryChoice:
    """A prompt read as a library motion of the rig's kind: ``kind`` and ``label`` (e.g. "biped",
    "walk"), the ``variation`` it is played with and the prompt's ``words`` that chose it (e.g.
    ``("slowly",)``; empty: the library's default). ``plan``: the prompt composed of library motions
    (:func:`composed_plan`; its first part's label is ``label``), played by
    :func:`~akd_blender.core.prompt.compose.compose_clip` instead of one motion; None for one motion."""

    kind: str
    label: str
    variation: Variation
    words: tuple[str, ...] = ()
    plan: Plan | None = None

    @property
    def variation_text(self) -> str:
        """How a report names the variation: ``"default"``, e.g. ``"speed 0.8 (slowly)"``, or a composed
        prompt's plan (:meth:`~akd_blender.core.prompt.compose.Plan.describe`, e.g. ``"walk (slow) → sit"``)."""
        if self.plan is not None:
            return self.plan.describe()
        default, parts = Variation(), []
        for name in ("speed", "amplitude", "direction"):
            value = getattr(self.variation, name)
            if value != getattr(default, name):
                parts.append(f"{name} {value:g}")
        if not parts:
            return "default"
        return ", ".join(parts) + f" ({', '.join(self.words)})"

    @property
    def name(self) -> str:
        """E.g. ``"walk (library, speed 0.8 (slowly))"`` or ``"walk (library, default)"``."""
        return f"{self.label} (library, {self.variation_text})"

    def facts(self) -> dict[str, str]:
        """The report's fields: ``start`` "library", ``library_motion`` (the label),
        ``library_variation`` (:attr:`variation_text`) and ``search_start`` (:attr:`name`)."""
        return {
            "start": "library",
            "library_motion": self.label if self.plan is None else " → ".join(p.label for p in self.plan.parts),
            "library_variation": self.variation_text,
            "search_start": self.name,
        }


def composed_plan(prompt: str, kind: str, understand, whole: Understanding | None = None) -> Plan | None:
    """``prompt`` as a plan of library motions (:func:`~akd_blender.core.prompt.compose.plan_prompt`, each part
    read by ``understand``) when it asks for more than one motion played as it is: parts told one after
    another in so many words (:func:`~akd_blender.core.prompt.compose.sequence.is_sequenced`: "then", "after
    that", separate sentences), or one part with a side, repetitions, a duration, a heading, "backwards"
    or a hold, or "before" / "after" with a verb in -ing ("rears up after walking"), or parts played at
    the same time ("walks while waving"), or a gait's style ("sneaks forward"). None when the whole
    prompt is word for word a wording of one motion (``whole.exact``), or one motion with a speed, size or
    turning direction says it all (then :func:`prompt_variation` reads
    those) or the prompt does not read as a plan. Parts joined only by commas or "and" are read as one
    motion told in several clauses ("hops up and lands"), unless ``whole`` (the whole prompt's reading)
    is not understood and every part is, or every part reads better than the whole does ("jumps and claps"),
    or the whole reads as one part's motion and another part reads as a motion of its own ("waves goodbye
    and leaves", "walks, turns around and walks back"); so is one part whose motion the whole reading missed ("turns
    counterclockwise quickly"), or whose direction fits its own motion and not the whole reading's
    ("turns towards the right", read whole as a head shake). Raises
    :class:`~akd_blender.core.prompt.compose.plan.PartNotUnderstood` naming the part, when one of the parts
    said to play at the same time matches no motion (not for a motion verb in -ing said without a comma
    after a clause that is no motion: "greets us waving her hand" is read whole), or one of the parts told in sequence, unless its
    nearest motion is the one the whole prompt is understood as (then the prompt is that one motion told
    in steps)."""
    from ..compose import plan_prompt
    from ..compose.plan import HOLD, PartNotUnderstood, direction_said_for
    from ..compose.sequence import WITH, has_ordering_clause, is_sequenced, split_clauses

    if whole is not None and whole.exact:
        return None  # a wording the vocabulary holds word for word: that one motion
    sequenced = is_sequenced(prompt)
    said_together = any(clause.link == WITH for clause in split_clauses(prompt))
    # a motion verb in -ing said without a comma may follow a clause that is no motion ("greets us waving")
    told_together = any(clause.link == WITH for clause in split_clauses(prompt, participles=False))
    try:
        try:
            plan = plan_prompt(prompt, kind, understand=understand)
        except PartNotUnderstood:
            if told_together or not said_together:
                raise
            plan = plan_prompt(prompt, kind, understand=understand, participles=False)
            said_together = False
    except PartNotUnderstood as exc:
        if told_together or (sequenced and not _continues(exc.understanding, whole)):
            raise
        return None
    except InputError:
        return None
    whole_missed = whole is not None and not whole.understood  # the modifiers or the other parts hid the motion
    if len(plan.parts) > 1 or plan.parts[0].together:
        if sequenced or has_ordering_clause(prompt) or whole_missed or said_together:
            return plan
        # joined by "and" or commas alone: the motions told one after another or at once where each part reads
        # better than the whole prompt does ("jumps and claps") or the whole reading misses a part's motion
        # ("waves goodbye and leaves"); else one motion told in several clauses
        members = [p for part in plan.parts for p in (part, *part.together) if p.label != HOLD]
        return (
            plan
            if whole is None or min(p.similarity for p in members) > whole.similarity or _misses_a_part(members, whole)
            else None
        )
    part = plan.parts[0]
    special = part.label == HOLD or part.side or part.repetitions != 1 or part.duration is not None
    special = special or part.style is not None
    direction = whole is not None and whole.understood and direction_said_for(part, whole.motion)
    return plan if special or part.heading or part.backwards or whole_missed or direction else None


def _misses_a_part(members: list, whole: Understanding) -> bool:
    """Whether the whole prompt, understood as the motion of one of its parts, misses another part
    that reads as a motion of its own ("waves goodbye and leaves": the whole is a wave, "leaves" a
    walk). ``members``: the plan's parts and those played with them (each understood)."""
    labels = {p.label for p in members}
    return whole.understood and len(labels) > 1 and whole.motion.rsplit("/", 1)[-1] in labels


def _continues(part: Understanding, whole: Understanding | None) -> bool:
    """Whether a part read as no motion is a step of the one motion the whole prompt is understood as
    (its nearest motion is that motion: "folds forward at the waist, then stands back up" is a bow)."""
    return whole is not None and whole.understood and part.motion == whole.motion


def plan_facts(plan: Plan) -> dict[str, str | float | bool]:
    """A composed prompt's reading as the report's ``distill`` fields, like
    :meth:`~akd_blender.core.prompt.understanding.Understanding.facts`: ``understood_as`` the plan
    (e.g. ``"walk (slow) → sit"``), ``motion`` its parts' motions joined by arrows, ``similarity`` the
    lowest part's, ``understood`` True."""
    from ..compose.plan import HOLD

    moving = [p for p in plan.parts if p.label != HOLD] or list(plan.parts)
    return {
        "understood_as": plan.describe(),
        "motion": " → ".join(p.motion for p in plan.parts),
        "similarity": round(min(p.similarity for p in moving), 4),
        "understood": True,
    }


def plan_frames(plan: Plan, fps: float) -> int:
    """The frame count a plan's clip has at ``fps`` when the user sets none (its parts' natural
    lengths, repetitions and durations: :func:`~akd_blender.core.prompt.compose.clip.schedule`)."""
    from ..compose.clip import piece_frames, schedule

    return max(2, int(sum(piece_frames(schedule(plan), fps))))


def prompt_variation(prompt: str, kind: str, label: str) -> tuple[Variation, tuple[str, ...]]:
    """The variation of library motion ``label`` of ``kind`` that ``prompt`` asks for, and the modifier
    words that set it, read as a composed prompt's one part is read
    (:func:`~akd_blender.core.prompt.compose.plan_prompt` with the prompt taken as that motion; the words and
    factors are :mod:`akd_blender.core.prompt.compose.words`' data): speed ("slowly", "quickly" …),
    amplitude ("a small …", "a big …", "deep" …) and, for a turning motion, the direction (+1 "left",
    -1 "right"), speed and amplitude held within :data:`SPEED_RANGE` and :data:`AMPLITUDE_RANGE`;
    phase 0 and facing 0 (the rig's own facing). A prompt that reads as several parts
    (a sequence), or not as a plan at all, gets the library's default variation and no words."""
    from ..compose import plan_prompt
    from ..compose.plan import HOLD

    motion = Understanding(prompt, f"{kind}/{label}", label, 1.0, (), 0.0, 0)
    try:
        plan = plan_prompt(prompt, kind, understand=lambda core: motion)
    except InputError:
        return Variation(), ()
    parts = [part for part in plan.parts if part.label != HOLD]
    if len(parts) != 1:
        return Variation(), ()
    variation = parts[0].variation()
    speed = min(max(variation.speed, SPEED_RANGE[0]), SPEED_RANGE[1])
    amplitude = min(max(variation.amplitude, AMPLITUDE_RANGE[0]), AMPLITUDE_RANGE[1])
    return replace(variation, speed=speed, amplitude=amplitude), tuple(parts[0].words)


def _shared_encoder():
    """The offline sentence encoder with the shipped teacher's phrase table, shared with
    :mod:`akd_blender.core.prompt.compose` (:func:`~akd_blender.core.prompt.compose.plan.shared_encoder`)."""
    from ..compose.plan import shared_encoder

    return shared_encoder()


def library_understanding(prompt: str, kind: str, encoder=None, heldout: bool = True) -> Understanding:
    """``prompt`` read among the library motions of ``kind`` (:func:`library_vocabulary`, with its
    held-out phrasings when ``heldout``) with ``encoder`` (``encode(list[str]) -> [N,384]``; default:
    the offline sentence encoder with the teacher's phrase table), as the embedded teacher reads it
    for a character of that kind, then :func:`with_other_kind`. Never refuses (see
    :func:`~akd_blender.core.prompt.understanding.require_understood`); InputError for a kind without
    library motions, ModelNotAvailable when the encoder is not installed and the prompt is not in
    the phrase table."""
    return with_other_kind(_kind_reading(prompt, kind, encoder, heldout), kind, encoder, heldout)


def _kind_reading(prompt: str, kind: str, encoder, heldout: bool, character: str | None = None) -> Understanding:
    """``prompt`` read among ``kind``'s library motions, its subject said neutrally for a ``character``
    of that kind (default ``kind``; :func:`~akd_blender.core.prompt.compose.words.without_subject`: who the
    character is never decides)."""
    from ..compose.plan import neutral_reading

    encoder = encoder if encoder is not None else _shared_encoder()
    vocabulary = kind_vocabulary(kind, encoder, heldout)
    return neutral_reading(vocabulary.understand, prompt, character or kind)


OTHER_KIND_MARGIN: float = 0.11
"""How much higher than the prompt's reading for its own kind another kind's motion must score to be what
the prompt asks for (:func:`with_other_kind`). Each kind's scores are measured in its own whitened space,
so a motion both kinds have under other names (a quadruped's jump, a hexapod's hop) can score a little
higher. Chosen as the smallest multiple of 0.01 above every gap of a known wording on validation data:
the unseen-rig benchmark's validation prompts (62, read as it reads them, without held-out phrasings:
largest gap 0.107) and the known wordings of ``tools/understanding_prompts.json``'s validation set (74;
largest -0.22); its other-kind prompts (13) have gaps of 0.385 and more. On the test data: known 0.108
and -0.10 at most (none refused), other-kind 0.234 and more (13 of 13 refused); "a horse flaps its
wings" 0.15."""


def with_other_kind(reading: Understanding, kind: str, encoder=None, heldout: bool = True) -> Understanding:
    """``reading`` (its prompt read for a character of ``kind``) with
    :attr:`~akd_blender.core.prompt.understanding.Understanding.other_kind` set to the best of the other
    kinds' readings (each kind's library vocabulary, same ``encoder`` and ``heldout``) that names a motion
    ``kind`` has none of by that name, is understood, and scores more than :data:`OTHER_KIND_MARGIN` above
    ``reading``: "a horse flaps its wings" asks a quadruped for ``bird/flap_wings``. ``reading`` itself
    when there is none."""
    from ...motion.library import KINDS, motions_for

    labels = {spec.label for spec in motions_for(kind)}
    best: NearMotion | None = None
    for other in KINDS:
        if other == kind:
            continue
        r = _kind_reading(reading.prompt, other, encoder, heldout, character=kind)  # the subject said as for ``kind``
        if r.motion.rsplit("/", 1)[-1] in labels or not r.understood or r.similarity <= reading.similarity + OTHER_KIND_MARGIN:
            continue
        if best is None or r.similarity > best.similarity:
            best = NearMotion(r.motion, r.phrasing, r.similarity)
    return replace(reading, other_kind=best) if best is not None else reading


def choose_library_motion(
    prompt: str, kind: str | None, understanding: Understanding | None = None, prior=None, allow_nearest: bool = False
) -> tuple[LibraryChoice | None, Understanding | None]:
    """The library motion ``prompt`` asks of a character of ``kind`` and the reading that chose it.

    ``understanding``: the prior's own reading (the embedded teacher's ``text.extra["understanding"]``),
    used as it is when it names a library motion of ``kind`` (``"<kind>/<label>"``); otherwise the
    prompt is read by :func:`library_understanding` with the prior's sentence encoder where it has one
    (``prior.encoder``, the teacher's; its ``heldout_wordings`` setting) or the shared one. The choice
    is None when ``kind`` has no library motions (or is None), when the encoder is missing
    (ModelNotAvailable: a real video model's job goes on without the library) or when the reading
    is not understood and ``allow_nearest`` is off; the reading is returned either way (None only
    when there is none)."""
    from ...motion.library import KINDS, motions_for

    if kind is None or kind not in KINDS:
        return None, understanding
    labels = {spec.label for spec in motions_for(kind)}
    reading = understanding if isinstance(understanding, Understanding) else None
    encoder = getattr(prior, "encoder", None) if isinstance(understanding, Understanding) else None
    encoder = encoder if callable(getattr(encoder, "encode", None)) else None
    heldout = bool(getattr(prior, "heldout_wordings", True)) if encoder is not None else True
    try:
        if reading is None or reading.motion.rsplit("/", 1)[0] != kind or reading.motion.rsplit("/", 1)[-1] not in labels:
            reading = library_understanding(prompt, kind, encoder, heldout)
        else:  # the prior's own reading of this kind's motions
            reading = with_other_kind(reading, kind, encoder, heldout)
    except ModelNotAvailable:
        return None, understanding
    plan = _plan_of(prompt, kind, prior if isinstance(understanding, Understanding) else None, reading)
    if plan is not None:
        from ..compose.plan import HOLD

        first = next((p for p in plan.parts if p.label != HOLD), plan.parts[0])
        return LibraryChoice(kind, first.label, first.variation(), tuple(first.words), plan), reading
    if not (reading.understood or allow_nearest):
        return None, reading
    label = reading.motion.rsplit("/", 1)[-1]
    variation, words = prompt_variation(prompt, kind, label)
    return LibraryChoice(kind, label, variation, words), reading


def _plan_of(prompt: str, kind: str, prior, whole: Understanding) -> Plan | None:
    """:func:`composed_plan` with each part read as :func:`library_understanding` reads a prompt
    (``prior``'s sentence encoder and held-out setting where it has them); None without an encoder."""
    encoder = getattr(prior, "encoder", None)
    encoder = encoder if callable(getattr(encoder, "encode", None)) else None
    heldout = bool(getattr(prior, "heldout_wordings", True)) if encoder is not None else True
    try:
        return composed_plan(prompt, kind, lambda text: library_understanding(text, kind, encoder, heldout), whole)
    except ModelNotAvailable:
        return None


@dataclass(frozen=True)
class PromptReading:
    """A prompt read for a character of a kind (:func:`read_prompt`): ``choice`` the library motion or
    composed plan it asks for (None: not read as one), ``understanding`` the reading of the whole prompt
    among the kind's motions (None: there is none, e.g. a kind without library motions)."""

    choice: LibraryChoice | None
    understanding: Understanding | None

    @property
    def plan(self) -> Plan | None:
        """The composed plan (None for one motion or none)."""
        return None if self.choice is None else self.choice.plan

    def facts(self) -> dict[str, str | float | bool]:
        """The report's ``distill`` fields of the reading: a plan's (:func:`plan_facts`), else the whole
        prompt's understanding (:meth:`~.understanding.Understanding.facts`, scalars only); empty without either."""
        if self.plan is not None:
            return plan_facts(self.plan)
        if self.understanding is None:
            return {}
        return {k: v for k, v in self.understanding.facts().items() if isinstance(v, str | int | float)}

    def frames(self, fps: float) -> int | None:
        """A plan's natural frame count at ``fps`` (:func:`plan_frames`); None for one motion or none."""
        return None if self.plan is None else plan_frames(self.plan, fps)


def read_prompt(
    prompt: str, kind: str | None, understanding: Understanding | None = None, prior=None, allow_nearest: bool = False
) -> PromptReading:
    """``prompt`` read for a character of ``kind``: :func:`choose_library_motion` (the prior's own
    ``understanding`` used where it names a motion of ``kind``; the prior's sentence encoder where it
    has one) as a :class:`PromptReading`."""
    choice, reading = choose_library_motion(prompt, kind, understanding, prior, allow_nearest)
    return PromptReading(choice, reading)
