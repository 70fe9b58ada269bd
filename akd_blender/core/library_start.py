"""The library start (``DistillConfig.start`` "library"): the motion the prompt is understood as,
played from the role motion library (:mod:`akd_blender.core.procedural.library`) on the rig's own
bone roles (:func:`~akd_blender.core.roles.find_roles`).

A prompt is read as one motion of the rig's kind as the embedded teacher reads it
(:mod:`akd_blender.core.understanding`: the kind's :func:`~akd_blender.core.understanding.library_vocabulary`
and the offline sentence encoder), without the video model. Its variation comes from the prompt's
own words where it says one (:func:`prompt_variation`: speed, amplitude, turning direction), else
the library's default (speed 1, amplitude 1, phase 0, direction +1); the motion faces the rig's own
facing (facing 0 in the body frame of its roles) and is played on top of the held starting pose
(:func:`~akd_blender.core.motion_prior.starts_as_channels`). :func:`write_library_start` writes it
into a job's :class:`~akd_blender.core.motion.MotionParams`, from where SDS steps or redraw rounds
may continue.

:class:`LibraryReader` stands in for the embedded teacher when a job is the library clip alone
(no steps, no redraw rounds): it knows the teacher's frame count, rate and size from its
``teacher.json`` and reads prompts as the teacher does, so the teacher's weights are never loaded.
"""

from __future__ import annotations

import json
import re
import threading
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

import torch

from .errors import InputError, ModelNotAvailable
from .motion import MotionClip, MotionParams
from .procedural.motions import Variation
from .rig import RigAsset
from .understanding import PromptVocabulary, Understanding, library_vocabulary

if TYPE_CHECKING:
    from .roles import BoneRoles

__all__ = [
    "SLOW",
    "FAST",
    "SMALL",
    "BIG",
    "TURNING_LABELS",
    "LibraryChoice",
    "prompt_variation",
    "library_understanding",
    "choose_library_motion",
    "library_clip",
    "write_library_start",
    "LibraryReader",
    "TEACHER_DIR",
]

SLOW: float = 0.8
"""The speed (× the motion's base tempo) of a prompt that asks for a slow motion: the low end of the
library's variation range (0.8–1.25, :func:`~akd_blender.core.procedural.library.sample_variations`)."""

FAST: float = 1.25
"""The speed of a prompt that asks for a quick motion: the high end of the library's range."""

SMALL: float = 0.8
"""The amplitude (× the motion's angles and travel) of a prompt that asks for a small motion (0.8–1.2 range)."""

BIG: float = 1.2
"""The amplitude of a prompt that asks for a big one."""

_SPEED_WORDS: dict[str, float] = {
    **dict.fromkeys(("slow", "slowly", "leisurely", "unhurried", "sluggishly", "lazily"), SLOW),
    **dict.fromkeys(("fast", "quick", "quickly", "rapid", "rapidly", "brisk", "briskly", "swift", "swiftly", "speedily"), FAST),
}
_AMPLITUDE_WORDS: dict[str, float] = {
    **dict.fromkeys(("small", "little", "slight", "slightly", "tiny", "gentle", "gently"), SMALL),
    **dict.fromkeys(("big", "large", "huge", "deep", "deeply", "high", "wide", "vigorous", "vigorously"), BIG),
}
_DIRECTION_WORDS: dict[str, int] = {
    **dict.fromkeys(("left", "counterclockwise", "anticlockwise"), 1),
    **dict.fromkeys(("right", "clockwise"), -1),
}

TURNING_LABELS: tuple[str, ...] = ("turn",)
"""Library motions whose ``direction`` is the way the body turns (+1 left, -1 right); for the others
it only flips where a swing starts, which no prompt word chooses."""

TEACHER_DIR = Path(__file__).resolve().parents[1] / "assets" / "teacher_image"
"""The shipped image-and-text teacher (prior "tiny"): its ``teacher.json`` (frames, fps, size) and
``phrases.npz`` (precomputed embeddings of its vocabulary)."""


@dataclass(frozen=True)
class LibraryChoice:
    """A prompt read as a library motion of the rig's kind: ``kind`` and ``label`` (e.g. "biped",
    "walk"), the ``variation`` it is played with and the prompt's ``words`` that chose it (e.g.
    ``("slowly",)``; empty: the library's default)."""

    kind: str
    label: str
    variation: Variation
    words: tuple[str, ...] = ()

    @property
    def variation_text(self) -> str:
        """How a report names the variation: ``"default"`` or e.g. ``"speed 0.8 (slowly)"``."""
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
            "library_motion": self.label,
            "library_variation": self.variation_text,
            "search_start": self.name,
        }


def prompt_variation(prompt: str, label: str) -> tuple[Variation, tuple[str, ...]]:
    """The variation of library motion ``label`` that ``prompt`` asks for, and the words that chose
    it: speed :data:`SLOW` / :data:`FAST` ("slowly", "quickly", "fast" …), amplitude :data:`SMALL` /
    :data:`BIG` ("small", "little", "big", "deep", "high" …) and, for :data:`TURNING_LABELS`, the
    direction (+1 "left", -1 "right"). A property whose words disagree ("left and right") keeps the
    default; phase 0 and facing 0 (the rig's own facing) always."""
    words = re.findall(r"[a-z]+", prompt.lower())
    chosen: dict[str, float] = {}
    used: list[str] = []
    tables = [("speed", _SPEED_WORDS), ("amplitude", _AMPLITUDE_WORDS)]
    if label in TURNING_LABELS:
        tables.append(("direction", _DIRECTION_WORDS))
    for name, table in tables:
        hits = [w for w in words if w in table]
        values = {table[w] for w in hits}
        if len(values) == 1:
            chosen[name] = values.pop()
            used += list(dict.fromkeys(hits))
    if "direction" in chosen:
        chosen["direction"] = int(chosen["direction"])
    return replace(Variation(), **chosen), tuple(used)


_VOCABULARIES: dict[tuple[int, str, bool], PromptVocabulary] = {}
_VOCABULARIES_LOCK = threading.Lock()
_ENCODER = None


def _shared_encoder():
    """The offline sentence encoder with the shipped teacher's phrase table (one per process)."""
    global _ENCODER
    if _ENCODER is None:
        from .priors.tiny_model.text import PhraseTable, TextEncoder

        table = TEACHER_DIR / "phrases.npz"
        _ENCODER = TextEncoder(PhraseTable.load(table) if table.is_file() else None)
    return _ENCODER


def library_understanding(prompt: str, kind: str, encoder=None, heldout: bool = True) -> Understanding:
    """``prompt`` read among the library motions of ``kind`` (:func:`library_vocabulary`, with its
    held-out phrasings when ``heldout``) with ``encoder`` (``encode(list[str]) -> [N,384]``; default:
    the offline sentence encoder with the teacher's phrase table), as the embedded teacher reads it
    for a character of that kind. Never refuses (see
    :func:`~akd_blender.core.understanding.require_understood`); InputError for a kind without
    library motions, ModelNotAvailable when the encoder is not installed and the prompt is not in
    the phrase table."""
    encoder = encoder if encoder is not None else _shared_encoder()
    key = (id(encoder), kind, bool(heldout))
    with _VOCABULARIES_LOCK:
        vocabulary = _VOCABULARIES.get(key)
        if vocabulary is None or vocabulary.encoder is not encoder:
            vocabulary = _VOCABULARIES[key] = PromptVocabulary(library_vocabulary(kind, heldout=heldout), encoder)
    return vocabulary.understand(prompt)


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
    from .procedural.library import KINDS, motions_for

    if kind is None or kind not in KINDS:
        return None, understanding
    labels = {spec.label for spec in motions_for(kind)}
    reading = understanding if isinstance(understanding, Understanding) else None
    if reading is None or reading.motion.rsplit("/", 1)[0] != kind or reading.motion.rsplit("/", 1)[-1] not in labels:
        encoder = getattr(prior, "encoder", None) if isinstance(understanding, Understanding) else None
        heldout = bool(getattr(prior, "heldout_wordings", True)) if encoder is not None else True
        try:
            reading = library_understanding(
                prompt, kind, encoder if callable(getattr(encoder, "encode", None)) else None, heldout
            )
        except ModelNotAvailable:
            return None, understanding
    if not (reading.understood or allow_nearest):
        return None, reading
    label = reading.motion.rsplit("/", 1)[-1]
    variation, words = prompt_variation(prompt, label)
    return LibraryChoice(kind, label, variation, words), reading


def library_clip(rig: RigAsset, roles: BoneRoles, choice: LibraryChoice, frames: int, fps: float) -> MotionClip:
    """The chosen motion on ``rig`` through ``roles``: ``frames`` frames at ``fps``
    (:func:`~akd_blender.core.procedural.library.make_role_clip` with the choice's variation)."""
    from .procedural.library import make_role_clip

    return make_role_clip(rig, roles, choice.label, choice.variation, frames, fps)


@torch.no_grad()
def write_library_start(rig: RigAsset, roles: BoneRoles, choice: LibraryChoice, params: MotionParams) -> dict:
    """Write the chosen motion into ``params`` (in place): the library clip at the parameters' frames
    and rate, played on top of their held starting pose
    (:func:`~akd_blender.core.motion_prior.starts_as_channels`), as per-frame rotation offsets of the
    free bones and the root's path fitted to the keys (least squares; exact when there is a key per
    frame). Returns the report's facts (:meth:`LibraryChoice.facts`)."""
    from .motion_prior import PriorStart, starts_as_channels
    from .pose_search import keys_from_frames
    from .ranked_start import offsets_of

    clip = library_clip(rig, roles, choice, params.num_frames, params.fps)
    start = PriorStart(choice.label, choice.variation.speed, choice.variation.phase, choice.variation.direction, clip)
    rotations, drift = starts_as_channels(rig, [start], params.base_rotations[:1].expand(params.num_frames, -1, -1))
    device, keys = params.rotvec.device, params.rotvec.shape[0]
    interpolation = params.interpolation
    offsets = offsets_of(params, rotations[0].to(device))
    params.rotvec.copy_(keys_from_frames(offsets, keys, interpolation, smooth=0.0) * params.axis_mask)
    params.root_offset.copy_(keys_from_frames(drift[0].to(device), keys, interpolation, smooth=0.0))
    return choice.facts()


class LibraryReader:
    """The embedded teacher as a library-only job needs it, without its weights: ``name`` "tiny",
    its ``frames``, ``fps``, ``height`` and ``width`` (from ``teacher.json`` in ``folder``) and
    :meth:`encode_text`, which reads a prompt as the teacher does for a character of a kind. It cannot
    draw, redraw or score: a job that needs those loads the teacher."""

    reads_kind = True  # encode_text takes the character's kind, as the image teacher's does

    def __init__(self, folder: str | Path = TEACHER_DIR, name: str = "tiny") -> None:
        record = json.loads((Path(folder) / "teacher.json").read_text())["config"]
        self.name = name
        self.frames, self.fps = int(record["frames"]), float(record["fps"])
        self.height, self.width = int(record["height"]), int(record["width"])
        self.heldout_wordings = True
        self.encoder = _shared_encoder()

    def encode_text(self, prompt: str, negative_prompt: str = "", kind: str | None = None):
        """A :class:`~akd_blender.core.priors.base.TextEmbedding` without embeddings (``cond`` empty)
        whose ``extra`` holds the reading of ``prompt`` among ``kind``'s library motions
        (:meth:`~akd_blender.core.understanding.Understanding.facts` and the Understanding under
        ``"understanding"``), as :meth:`~akd_blender.core.priors.tiny.TinyPrior.encode_text` gives it.
        InputError for a kind without library motions."""
        from .priors.base import TextEmbedding
        from .procedural.library import KINDS

        if kind not in KINDS:
            raise InputError(f"the motion library has no motions for a {kind!r} character (known: {', '.join(KINDS)})")
        reading = library_understanding(prompt, kind, self.encoder, self.heldout_wordings)
        extra = {**reading.facts(), "understanding": reading}
        return TextEmbedding(prompt, negative_prompt, torch.zeros(1, 1, 0), None, extra)
