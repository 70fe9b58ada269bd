"""The library start (``DistillConfig.start`` "library"): the motion the prompt is understood as,
played from the role motion library (:mod:`akd_blender.core.motion.library`) on the rig's own
bone roles (:func:`~akd_blender.core.character.roles.find_roles`).

A prompt is read as one motion of the rig's kind as the embedded teacher reads it
(:mod:`akd_blender.core.prompt.understanding`: the kind's :func:`~akd_blender.core.prompt.understanding.library_vocabulary`
and the offline sentence encoder), without the video model. Its variation comes from the prompt's
own words where it says one (:func:`prompt_variation`: speed, amplitude, turning direction), else
the library's default (speed 1, amplitude 1, phase 0, direction +1); the motion faces the rig's own
facing (facing 0 in the body frame of its roles) and is started from the held starting pose
(:func:`library_motion`). :func:`write_library_start` writes it into a job's
:class:`~akd_blender.core.motion.clip.MotionParams`, from where SDS steps or redraw rounds may continue.

:class:`~akd_blender.core.distillation.library_reader.LibraryReader` stands in for the embedded teacher
when a job is the library clip alone (no steps, no redraw rounds).
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

import numpy as np
import torch

from ..assets import ASSETS_DIR
from ..character.rig import RigAsset
from ..character.rotations import quat_multiply
from ..errors import InputError, ModelNotAvailable
from ..motion.clip import MotionClip, MotionParams
from ..motion.library.labelled import Variation
from ..prompt.understanding import (
    LIBRARY_THRESHOLD,
    MOTIONS_COMMAND,
    NearMotion,
    PromptVocabulary,
    Understanding,
    library_vocabulary,
)
from .heading import held_heading, held_travel, held_yaw

if TYPE_CHECKING:
    from ..character.roles import BoneRoles
    from ..prompt.compose import Plan

__all__ = [
    "SPEED_RANGE",
    "AMPLITUDE_RANGE",
    "LibraryChoice",
    "prompt_variation",
    "composed_plan",
    "plan_facts",
    "plan_frames",
    "library_understanding",
    "OTHER_KIND_MARGIN",
    "with_other_kind",
    "choose_library_motion",
    "library_clip",
    "library_motion",
    "write_library_start",
    "TEACHER_DIR",
]

SPEED_RANGE: tuple[float, float] = (0.8, 1.25)
"""The speeds (× the motion's base tempo) a prompt's words may choose: the range the library's
variations span (:func:`~akd_blender.core.motion.library.sample_variations`), which its motions
are made and judged over; a word's factor beyond it ("very slowly", "brisk, at a run") is held at its end."""

AMPLITUDE_RANGE: tuple[float, float] = (0.8, 1.2)
"""The amplitudes (× the motion's angles and travel) a prompt's words may choose: the library's range."""

TEACHER_DIR = ASSETS_DIR / "teacher_image"
"""The shipped image-and-text teacher (prior "tiny"): its ``teacher.json`` (frames, fps, size) and
``phrases.npz`` (precomputed embeddings of its vocabulary)."""


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
    from ..prompt.compose import plan_prompt
    from ..prompt.compose.plan import HOLD, PartNotUnderstood, direction_said_for
    from ..prompt.compose.sequence import WITH, has_ordering_clause, is_sequenced, split_clauses

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
    from ..prompt.compose.plan import HOLD

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
    from ..prompt.compose.clip import piece_frames, schedule

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
    from ..prompt.compose import plan_prompt
    from ..prompt.compose.plan import HOLD

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


_VOCABULARIES: dict[tuple[int, str, bool], PromptVocabulary] = {}
_VOCABULARIES_LOCK = threading.Lock()


def _shared_encoder():
    """The offline sentence encoder with the shipped teacher's phrase table, shared with
    :mod:`akd_blender.core.prompt.compose` (:func:`~akd_blender.core.prompt.compose.plan.shared_encoder`)."""
    from ..prompt.compose.plan import shared_encoder

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
    from ..prompt.compose.plan import neutral_reading

    encoder = encoder if encoder is not None else _shared_encoder()
    key = (id(encoder), kind, bool(heldout))
    with _VOCABULARIES_LOCK:
        vocabulary = _VOCABULARIES.get(key)
        if vocabulary is None or vocabulary.encoder is not encoder:
            rows = library_vocabulary(kind, heldout=heldout)
            vocabulary = _VOCABULARIES[key] = PromptVocabulary(
                rows, encoder, listing=f"{MOTIONS_COMMAND} --kind {kind}", threshold=LIBRARY_THRESHOLD
            )
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
    from ..motion.library import KINDS, motions_for

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
    from ..motion.library import KINDS, motions_for

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
        from ..prompt.compose.plan import HOLD

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


def library_clip(
    rig: RigAsset, roles: BoneRoles, choice: LibraryChoice, frames: int, fps: float, held: MotionClip | None = None
) -> MotionClip:
    """The chosen motion on ``rig`` through ``roles``: ``frames`` frames at ``fps``
    (:func:`~akd_blender.core.motion.library.make_role_clip` with the choice's variation, or the
    choice's plan composed by :func:`~akd_blender.core.prompt.compose.compose_clip`). With ``held`` (a
    held pose, its first frame), as the turns to compose on it
    (:func:`~akd_blender.core.motion.library.from_pose.turns_from_held`): the bones the motion moves take
    its pose, the others keep the held one, the body its held heading."""
    from ..motion.library.from_pose import turns_from_held

    if choice.plan is not None:
        from ..prompt.compose import compose_clip

        clip = compose_clip(rig, roles, choice.plan, fps, frames)
    else:
        from ..motion.library import make_role_clip

        clip = make_role_clip(rig, roles, choice.label, choice.variation, frames, fps)
    if held is None:
        return clip
    up = np.asarray(roles.frame.up, dtype=np.float64)
    return turns_from_held(rig, int(roles.root), held.rotations[0], held_yaw(rig, roles, held), clip, up)


def library_motion(
    rig: RigAsset,
    roles: BoneRoles,
    choice: LibraryChoice,
    frames: int,
    fps: float,
    held: MotionClip | None = None,
    frame_start: int = 1,
) -> MotionClip:
    """The chosen motion as the job's clip: :func:`library_clip` started from ``held``'s first frame
    (None: the rest pose): each bone's rotation is the held one then the clip's turn from it, each
    location the held one plus the clip's (the library moves the body by its carrier bone's
    location, as it plays it directly), the travel turned the way the held body faces. Equal to the
    library clip for the rest pose."""
    clip = library_clip(rig, roles, choice, frames, fps, held)
    rotations, locations = clip.rotations, clip.locations
    if held is not None:
        base = np.repeat(held.rotations[:1], frames, axis=0)
        turned = quat_multiply(torch.as_tensor(base, dtype=torch.float64), torch.as_tensor(rotations, dtype=torch.float64))
        rotations, locations = turned.numpy(), held_travel(rig, roles, held, locations) + held.locations[:1]
    return MotionClip(rig.bone_names, float(fps), int(frame_start), rotations, locations).continuous()


@torch.no_grad()
def write_library_start(rig: RigAsset, roles: BoneRoles, choice: LibraryChoice, params: MotionParams) -> dict:
    """Write the chosen motion into ``params`` (in place): the library clip at the parameters' frames
    and rate, started from their held starting pose (:func:`library_clip`) and composed on it
    (:func:`~akd_blender.core.fitting.motion_starts.starts_as_channels`), as per-frame rotation offsets of the
    free bones and the root's path fitted to the keys (least squares; exact when there is a key per
    frame). The library's travel, carried by its carrier bone, is carried by the parameters' root
    bones (the same body motion; :func:`library_motion` keeps it on the carrier). Returns the report's facts (:meth:`LibraryChoice.facts`)."""
    from ..fitting.frame_paths import keys_from_frames
    from ..fitting.motion_starts import PriorStart, starts_as_channels
    from .ranked_start import offsets_of

    held = MotionClip(
        rig.bone_names,
        params.fps,
        1,
        params.base_rotations[:1].detach().cpu().double().numpy(),
        params.base_locations[:1].detach().cpu().double().numpy(),
    )
    clip = library_clip(rig, roles, choice, params.num_frames, params.fps, held)
    start = PriorStart(choice.label, choice.variation.speed, choice.variation.phase, choice.variation.direction, clip)
    base = params.base_rotations[:1].expand(params.num_frames, -1, -1)
    rotations, drift = starts_as_channels(rig, [start], base, held_heading(rig, params, roles))  # the way it faces
    device, keys = params.rotvec.device, params.rotvec.shape[0]
    interpolation = params.interpolation
    offsets = offsets_of(params, rotations[0].to(device))
    params.rotvec.copy_(keys_from_frames(offsets, keys, interpolation, smooth=0.0) * params.axis_mask)
    params.root_offset.copy_(keys_from_frames(drift[0].to(device), keys, interpolation, smooth=0.0))
    return choice.facts()
