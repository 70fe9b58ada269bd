"""The embedded teacher as a library-only job needs it, without its weights.

:func:`library_only` tells whether a job is the library clip alone (no steps, no redraw rounds);
:class:`LibraryReader` then stands in for the teacher: it knows the teacher's frame count, rate and size
from its ``teacher.json`` and reads prompts as the teacher does
(:func:`~akd_blender.core.prompt.reading.library_understanding`), so the teacher's weights are
never loaded.
"""

from __future__ import annotations

import json
from pathlib import Path

import torch

from ..errors import InputError
from ..prompt.compose.plan import shared_encoder
from ..prompt.reading import library_understanding
from ..video_models.capabilities import Capabilities
from .library_start import TEACHER_DIR

__all__ = ["library_only", "LibraryReader"]


def library_only(config, kind: str | None) -> bool:
    """Whether a job of the embedded teacher with ``config`` (a
    :class:`~akd_blender.core.settings.DistillConfig`) for a character of ``kind`` is the library clip
    alone, so that the teacher's weights are not needed: start "auto" or "library", no steps, no
    redraw rounds, no ranked start, and a kind the library has motions for. (A prompt the teacher
    would refuse is refused all the same: :class:`LibraryReader` reads it as the teacher does.)"""
    from ..motion.library import KINDS

    return (
        config.start in ("auto", "library")
        and not config.steps
        and not config.redraw.noise
        and not config.ranked_start
        and kind in KINDS
    )


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
        self.encoder = shared_encoder()

    @property
    def capabilities(self) -> Capabilities:
        """The teacher's clip (``frames`` at ``fps``, ``height`` × ``width``); it reads the character's
        kind and prompts as known motions, and cannot draw, redraw, rank or take SDS settings
        (a :class:`~akd_blender.core.video_models.capabilities.Capabilities`)."""
        return Capabilities(
            reads_kind=self.reads_kind,
            reads_motions=True,
            frames=self.frames,
            fps=self.fps,
            height=self.height,
            width=self.width,
        )

    def encode_text(self, prompt: str, negative_prompt: str = "", kind: str | None = None):
        """A :class:`~akd_blender.core.video_models.base.TextEmbedding` without embeddings (``cond`` empty)
        whose ``extra`` holds the reading of ``prompt`` among ``kind``'s library motions
        (:meth:`~akd_blender.core.prompt.understanding.Understanding.facts` and the Understanding under
        ``"understanding"``), as :meth:`~akd_blender.core.video_models.tiny.TinyPrior.encode_text` gives it.
        InputError for a kind without library motions."""
        from ..motion.library import KINDS
        from ..video_models.base import TextEmbedding

        if kind not in KINDS:
            raise InputError(f"the motion library has no motions for a {kind!r} character (known: {', '.join(KINDS)})")
        reading = library_understanding(prompt, kind, self.encoder, self.heldout_wordings)
        extra = {**reading.facts(), "understanding": reading}
        return TextEmbedding(prompt, negative_prompt, torch.zeros(1, 1, 0), None, extra)
