"""What a video prior can do, declared in one typed object: :class:`Capabilities`.

Each adapter of :mod:`akd_blender.core.video_models` (and :class:`~akd_blender.core.distillation.library_reader.LibraryReader`)
has a ``capabilities`` property that returns it, computed from the prior as it stands (a prior whose
``frames`` were lowered declares the lowered count). The distillation reads it through
:func:`capabilities_of` only; for an object without that property (a third-party prior, a test's
stand-in) :func:`capabilities_of` reads the same facts from its attributes, so such priors keep
working unchanged. ``tests/core/test_prior_capabilities.py`` checks every adapter's declaration
against what it really has.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from ..settings import SDSSettings

__all__ = ["Capabilities", "capabilities_of", "capabilities_from_attributes"]


def _count(value: Any) -> int | None:
    """A positive frame count or pixel size as an int; None for a missing or zero value."""
    return int(value) if value else None


@dataclass(frozen=True)
class Capabilities:
    """What a prior can do and the videos it knows.

    Attributes:
        draws: ``sample(text, first_frame=None, generator=None, guidance, steps, progress)`` draws a
            video [F,3,H,W] in [0,1] for a prompt (the "sample" start).
        redraws: ``redraw(video, text, t, generator, guidance, steps, progress)`` redraws a video
            [F,3,H,W] in [0,1] from noise level ``t`` in (0, 1] (the redraw rounds).
        ranks: ``prompt_scores(videos [S,F,3,H,W], text, ...)`` scores videos by the prompt, [S]
            (the ranked start).
        image_conditioned: draws and scores the character it is shown: ``encode_text`` takes the
            character's ``kind`` and the distillation sets ``text.first_frame`` [3,H,W] in [0,1]
            (its render in the start pose) before any query.
        reads_kind: ``encode_text(prompt, negative_prompt, kind=...)`` reads the prompt among the
            motions of the character's kind ("biped", "quadruped", ...).
        reads_motions: reads prompts as known motions: ``encode_text``'s ``extra["understanding"]`` is
            an :class:`~akd_blender.core.prompt.understanding.Understanding` (the embedded teacher and its
            library reader).
        takes_settings: ``sds_loss`` takes per-query :class:`~akd_blender.core.settings.SDSSettings`
            (``settings=``) and the prior holds its defaults in ``settings``; the distillation then
            passes ``DistillConfig.sds`` with every query.
        frames: the clip length the model draws, in frames (None: it states none).
        resamples_frames: its queries take a clip of any frame count and resample it linearly in time
            to ``frames`` (the image-to-video adapters); the SDS steps then render the motion at those
            ``frames`` times only (a render of ``frames`` frames serves the query unchanged).
        fps: the frame rate of its clips, frames per second (None: it states none; a clip of any
            rate is taken as it comes).
        height, width: the model's preferred video size in pixels (None: it states none).
        render_style: the scene look it learnt (a :class:`~akd_blender.core.render.SceneStyle`: ground,
            colours) that the distillation renders with; None: the renderer's default.
        camera_options: keyword arguments of :func:`~akd_blender.core.render.make_cameras` for the
            framing it learnt (e.g. ``fill``, a fraction of the frame; ``azimuth``/``elevation`` in
            degrees); empty: the default framing. Read-only.
    """

    draws: bool = False
    redraws: bool = False
    ranks: bool = False
    image_conditioned: bool = False
    reads_kind: bool = False
    reads_motions: bool = False
    takes_settings: bool = False
    frames: int | None = None
    resamples_frames: bool = False
    fps: float | None = None
    height: int | None = None
    width: int | None = None
    render_style: Any = None
    camera_options: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))

    def __post_init__(self) -> None:
        object.__setattr__(self, "frames", _count(self.frames))
        object.__setattr__(self, "height", _count(self.height))
        object.__setattr__(self, "width", _count(self.width))
        object.__setattr__(self, "fps", float(self.fps) if self.fps else None)
        object.__setattr__(self, "camera_options", MappingProxyType(dict(self.camera_options or {})))


def capabilities_from_attributes(prior: Any) -> Capabilities:
    """The capabilities of an object without a ``capabilities`` property, from its attributes: a
    callable ``sample`` / ``redraw`` / ``prompt_scores``, the flags ``image_conditioned`` /
    ``reads_kind`` / ``reads_motions`` / ``resamples_frames``, an :class:`SDSSettings` ``settings``, ``frames``, ``fps``,
    ``height``, ``width``, ``render_style`` and ``camera_options`` where it has them."""
    return Capabilities(
        draws=callable(getattr(prior, "sample", None)),
        redraws=callable(getattr(prior, "redraw", None)),
        ranks=callable(getattr(prior, "prompt_scores", None)),
        image_conditioned=bool(getattr(prior, "image_conditioned", False)),
        reads_kind=bool(getattr(prior, "reads_kind", False)),
        reads_motions=bool(getattr(prior, "reads_motions", False)),
        takes_settings=isinstance(getattr(prior, "settings", None), SDSSettings),
        frames=getattr(prior, "frames", None),
        resamples_frames=bool(getattr(prior, "resamples_frames", False)),
        fps=getattr(prior, "fps", None),
        height=getattr(prior, "height", None),
        width=getattr(prior, "width", None),
        render_style=getattr(prior, "render_style", None),
        camera_options=getattr(prior, "camera_options", None) or {},
    )


def capabilities_of(prior: Any) -> Capabilities:
    """What ``prior`` can do: its ``capabilities`` property where that is a :class:`Capabilities`,
    else the same facts read from its attributes (a third-party prior or a stand-in)."""
    declared = getattr(prior, "capabilities", None)
    return declared if isinstance(declared, Capabilities) else capabilities_from_attributes(prior)
