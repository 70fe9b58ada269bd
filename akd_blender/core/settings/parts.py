"""The nested settings of a distillation: how a prior turns a video into an SDS loss (:class:`SDSSettings`), the drawn start's pose search (:class:`SearchSettings`), the redraw rounds (:class:`RedrawSettings`)."""

from __future__ import annotations

import math
from dataclasses import dataclass

from .choices import SDS_MODES, TARGET_SPACES, SettingError

__all__ = ["POSE_REDRAW_NOISE", "RedrawSettings", "SDSSettings", "SearchSettings", "parse_redraw", "redraw_text"]


@dataclass(frozen=True)
class SDSSettings:
    """How a prior turns a video into an SDS loss; the loop passes them with every query.

    Attributes:
        cfg_scale: classifier-free guidance scale; 1 → no unconditional pass (2.0).
        mode: "target" (regress the latents onto the model's detached predicted clean sample) or
            "score" (classic SDS gradient w(t)(eps_hat - eps)).
        t_min, t_max: timestep range as fractions of the schedule at the start of the run.
        t_max_end: upper bound at the end of the run (linear annealing from t_max); None = no annealing.
        grad_clip: elementwise clip of the latent gradient (None = off).
        target_space: "pixel" (target mode only: multi-scale image loss against the decoded target
            video, the VAE encoder run without gradient, the target decoded only around the
            character when the caller gives its box; the decoded target can be reused for render-only
            steps) or "latent" (loss on the latents, gradient through the VAE encoder).
        weighting: "sds" (w(t) = the noise variance of the forward process) or "uniform" (w = 1);
            score mode only.
    Raises ValueError on construction when mode, target space or timestep range are invalid.
    """

    cfg_scale: float = 2.0
    mode: str = "target"
    t_min: float = 0.02
    t_max: float = 0.98
    t_max_end: float | None = 0.5
    grad_clip: float | None = 1.0
    target_space: str = "pixel"
    weighting: str = "sds"

    def __post_init__(self) -> None:
        if self.mode not in SDS_MODES:
            raise SettingError("sds.mode", f"must be 'score' or 'target', not {self.mode!r}")
        if self.target_space not in TARGET_SPACES:
            raise SettingError("sds.target_space", f"must be 'latent' or 'pixel', not {self.target_space!r}")
        if not 0.0 <= self.t_min < self.t_max <= 1.0:
            raise SettingError(
                "sds.t_min", f"timestep range must satisfy 0 <= t_min < t_max <= 1, got {self.t_min}, {self.t_max}"
            )
        if self.weighting not in ("sds", "uniform"):
            raise SettingError("sds.weighting", f"must be 'sds' or 'uniform', not {self.weighting!r}")
        if not (self.cfg_scale > 0 and math.isfinite(self.cfg_scale)):
            raise SettingError("sds.cfg_scale", f"must be a positive number (got {self.cfg_scale})")


@dataclass(frozen=True)
class SearchSettings:
    """The sample-then-fit start: the prior draws a video, the pose search fits each of its frames.

    Attributes:
        guidance: CFG scale of the drawing (6.0); steps: its DDIM steps (30).
        scales: the search's candidate angles per sweep, radians, coarse to fine.
        supersample: supersampling of the search's renders (2; capped at the loop's own).
        smooth: Gaussian smoothing of the searched poses over the drawn video's frames, in frames
            (0.75; 0 = none): calms the frame-to-frame jitter of the search's discrete choices.
        max_side: the longest side, in pixels, of the video the search compares against (256): a
            larger drawing (a diffusers model's 480 × 720) is area-downsampled to it, keeping its aspect,
            before the search renders its candidates (at that size × ``supersample``).
        appearance: how the search compares renders with the drawing: "rgb" (default), "normalised"
            (each image's colour channels standardised first: a drawing whose colours or brightness
            drifted from the render) or "matched" (the drawing recoloured into the render's colours
            through its first frame, a ground the render lacks ignored but for the character's
            coverage) or "calibrated" (the drawing's colours through the per-channel gain and offset
            that give its first frame the render's: a colour cast or brightness change undone) or "auto"
            ("calibrated" where that map explains the first frame's difference from the render, else
            "rgb"; :class:`~akd_blender.core.fitting.search_config.SearchConfig`).
        motion_prior: the search may begin from a motion of the character's kind (the motion library
            played on its bone roles, :mod:`~akd_blender.core.fitting.motion_starts`) when one matches the
            drawing better than the standing pose (True); False: always from the standing pose.
        prior_scales: the sweeps' angles after such a start (radians; None: ``scales``).
        prompt_prior: how much a start of the motion the prompt was understood as is favoured: its
            total image error is scaled by ``1 - prompt_prior`` before the starts compete with each
            other and with the standing pose (0: the drawing alone decides; 1: such a start is always
            taken). Where the drawing shows a small motion faintly (a tail wag, a peck) the standing
            pose otherwise matches it about as well.
        stabilise: take the drawing's camera shake out before the fit (True): consecutive frames are
            registered and each frame's offset from the camera's smoothed path, when it is more than
            :data:`~akd_blender.core.fitting.stabilise.SHAKE_THRESHOLD` pixels, is undone
            (:func:`~akd_blender.core.fitting.stabilise.stabilised`).
    """

    guidance: float = 6.0
    steps: int = 30
    scales: tuple[float, ...] = (2.4, 1.6, 1.0, 0.6, 0.3, 0.15)
    supersample: int = 2
    smooth: float = 0.75
    max_side: int = 256
    appearance: str = "rgb"
    motion_prior: bool = True
    prior_scales: tuple[float, ...] | None = (1.0, 0.6, 0.3, 0.15)
    prompt_prior: float = 0.5
    stabilise: bool = True


POSE_REDRAW_NOISE: tuple[float, ...] = (0.9, 0.7, 0.5)
"""The redraw rounds' noise levels from a held pose (:attr:`RedrawSettings.noise` None, start "pose")."""


@dataclass(frozen=True)
class RedrawSettings:
    """Iterated targets (SDEdit): rounds of "render the motion as it stands → noise it to ``t`` → the
    prior denoises it for the prompt (:meth:`~akd_blender.core.video_models.base.SDSPrior.redraw`) → the
    pose search fits the rig to that redrawn video", one round per noise level, in order.

    Attributes:
        noise: each round's noise level, a fraction of the schedule in (0, 1] (1: a new drawing of
            the scene; low: the motion's details only), high to low; None: :data:`POSE_REDRAW_NOISE`
            from a held pose (start "pose", with a prior that can redraw) and none after a drawn
            video; (): no rounds. The denoising uses the drawing's guidance and, from ``t``, that
            fraction of its steps (:class:`SearchSettings`).
        scales: the search's sweep angles (radians) in a round that begins from the motion as it
            stands (the standing pose and the library motions compete with it as in the drawn start;
            a round they win sweeps as that start does).
    """

    noise: tuple[float, ...] | None = None
    scales: tuple[float, ...] = (0.6, 0.3, 0.15)


def parse_redraw(text: str) -> tuple[float, ...] | None:
    """The user's redraw rounds (``--redraw``, the panel's "Redraw"): "auto" → None (the default of
    :class:`RedrawSettings`), "none" → (), else comma-separated noise levels in (0, 1], e.g.
    "0.9, 0.7, 0.5" → (0.9, 0.7, 0.5). Raises :class:`SettingError` ("redraw") naming what is wrong."""
    words = text.strip().lower()
    if words in ("", "auto"):
        return None
    if words in ("none", "0", "off"):
        return ()
    try:
        levels = tuple(float(part) for part in words.replace(" ", "").split(",") if part)
    except ValueError:
        raise SettingError("redraw", f"must be auto, none or noise levels like 0.9,0.7,0.5 (got {text!r})") from None
    if not levels or any(not (0.0 < t <= 1.0) for t in levels):
        raise SettingError("redraw", f"levels must be in (0, 1] (got {text!r})")
    return levels


def redraw_text(noise: tuple[float, ...] | None) -> str:
    """:func:`parse_redraw`'s inverse: None → "auto", () → "none", levels → "0.9,0.7,0.5"."""
    if noise is None:
        return "auto"
    return ",".join(f"{t:g}" for t in noise) if noise else "none"
