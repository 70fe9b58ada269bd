"""One distillation's settings (:class:`DistillConfig`) and where they are checked (:meth:`DistillConfig.validate`)."""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field, fields, replace

from .choices import CAMERA_MODES, DEVICES, INTERPOLATIONS, SEARCH_APPEARANCES, START_MODES, SettingError, require_one_of
from .parts import RedrawSettings, SDSSettings, SearchSettings

__all__ = ["DistillConfig", "config_from_dict"]


@dataclass
class DistillConfig:
    """Settings of one distillation (defaults suit the embedded teacher on a CPU).

    Video and schedule:
        steps: optimiser steps (None → 0 after a drawn video, i.e. the fitted drawing as it is, and 200
            from a pose; 0 needs start "sample" or "auto" with a prior that can draw).
        frames: clip length in frames (None → the prior's clip duration at ``fps``: the embedded
            teacher's 16 frames at 8 fps become 48 frames at 24 fps; a prior that states no fps gives
            its own frame count); fps: frames per second (24.0); frame_start: first Blender frame (1).
        height, width: render size in pixels (None → the prior's own size: 32 × 32 for the embedded
            teacher, 480 × 720 for CogVideoX, 480 × 832 for Wan; priors pad/round what they get).
        seed: random seed (0). device: "auto" (CUDA when available), "cpu", "cuda" or "cuda:N".
    Start (how the motion is first decided):
        start: "auto" ("library" when the prompt is understood as a library motion of the rig's
            kind, else "sample" when the prior can draw, i.e. has ``sample(text, generator=,
            guidance=, steps=, progress=)``, else "pose"; the embedded teacher refuses a prompt it
            does not understand), "library" (the understood motion's library clip played on the
            rig's bone roles from the held pose, its speed, amplitude and turning direction read
            from the prompt, :mod:`~akd_blender.core.distillation.library_start`; steps None → 0 for the
            embedded teacher, whose weights :func:`~akd_blender.core.distillation.sds_loop.distill` without a
            prior then never loads, and 200 SDS steps for a video model that knows any prompt;
            with no steps and no redraw rounds the clip is the motion exactly), "pose" (hold the starting pose and let SDS move it) or "sample"
            (the prior draws a video for the prompt, the pose search fits the rig's pose to each of its
            frames without gradients, and SDS steps, if any, refine from there).
        search: :class:`SearchSettings` of that start.
        redraw: :class:`RedrawSettings`: rounds of redrawn targets after the start, each fitted by
            the pose search (by default three from a held pose, none after a drawn video).
        ranked_start: with start "pose", begin the steps from the best of the character's kind's
            library motions (:mod:`~akd_blender.core.fitting.motion_starts`, and the held pose itself) as the
            prior ranks their renders by the prompt (:mod:`~akd_blender.core.distillation.ranked_start`, a
            diffusion classifier: needs a prior with ``prompt_scores``) instead of the held pose
            (False). Ignored by start "sample", whose drawing chooses among the same motions.
    Motion parameters:
        keys: temporal keys interpolated over the frames (None → every other frame, at least 2);
            fewer keys = smoother, lower-dimensional motion. interpolation: "cubic" or "linear".
        lr: Adam learning rate of the rotation offsets, radians (0.03).
        root_lr: Adam learning rate of the root path, in character heights (0.01).
    SDS:
        sds: :class:`SDSSettings`, handed to the prior with every query (the prior is never changed).
        negative_prompt: text for the unconditional branch ("").
        draws: SDS draws per step (each its own noise and timestep; the step's SDS loss is their mean):
            None → one per process (1, or the world size of a ``torch.distributed`` job, whose ranks share
            the draws: :mod:`akd_blender.core.distillation.parallel`); at least the number of processes.
        target_reuse: with mode "target" and target space "pixel", query the prior every N steps
            and regress the render onto the same decoded target video in between (1 = every step; 4;
            priors that return no decoded target are queried every step).
    Rendering:
        camera: "follow" (default), "fixed" or "orbit"; views: cameras per frame (1);
        render_backend: "auto", "torch" or "nvdiffrast".
        supersample: render at this multiple of height × width and area-downsample what the prior
            sees (None → 4 for videos of at most 64 pixels, else 1). Small renders alias: without it
            the image loss is so rough in the joint angles that a step along its gradient raises it.
    Regulariser weights (lengths in character heights, angles in radians; 0 disables):
        w_sds (1.0), w_smooth (1.0, joint acceleration), w_ground (10.0, penetration depth²),
        w_skate (1.0, planted-foot sliding), w_limits (1.0, Limit Rotation excess²),
        loop (False) with w_loop (1.0): first frame = last frame.
    Prompt:
        allow_nearest: go ahead with the nearest known motion when a prior that reads prompts as
            known motions (the embedded teacher, :mod:`akd_blender.core.prompt.understanding`) matches none
            well enough (False: such a prompt stops the job with
            :class:`~akd_blender.core.prompt.understanding.PromptNotUnderstood`, before anything is drawn).
    Reporting:
        preview_every: call the preview callback every N steps (25; 0 = never) and at the end.
    """

    steps: int | None = None
    frames: int | None = None
    fps: float = 24.0
    frame_start: int = 1
    height: int | None = None
    width: int | None = None
    seed: int = 0
    device: str = "auto"
    start: str = "auto"
    search: SearchSettings = field(default_factory=SearchSettings)
    redraw: RedrawSettings = field(default_factory=RedrawSettings)
    ranked_start: bool = False
    keys: int | None = None
    interpolation: str = "cubic"
    lr: float = 0.03
    root_lr: float = 0.01
    sds: SDSSettings = field(default_factory=SDSSettings)
    negative_prompt: str = ""
    target_reuse: int = 4
    camera: str = "follow"
    views: int = 1
    render_backend: str = "auto"
    supersample: int | None = None
    draws: int | None = None
    w_sds: float = 1.0
    w_smooth: float = 1.0
    w_ground: float = 10.0
    w_skate: float = 1.0
    w_limits: float = 1.0
    loop: bool = False
    w_loop: float = 1.0
    allow_nearest: bool = False
    preview_every: int = 25

    def validate(self) -> None:
        """Raise :class:`SettingError` naming the first bad field (the CUDA check imports torch)."""
        if self.steps is not None and not self.steps >= 0:
            raise SettingError("steps", f"must be at least 0 (got {self.steps})")
        if self.steps == 0 and self.start == "pose" and self.redraw.noise == ():
            raise SettingError(
                "steps",
                "must be at least 1, or 0 with start 'sample' or 'auto' or with redraw rounds (without them only the steps move a pose)",
            )
        for t in self.redraw.noise or ():
            if not (0.0 < t <= 1.0):
                raise SettingError("redraw", f"levels must be in (0, 1] (got {t})")
        if not self.redraw.scales or any(not (a > 0 and math.isfinite(a)) for a in self.redraw.scales):
            raise SettingError("redraw", f"scales must be positive angles (got {self.redraw.scales})")
        if self.frames is not None and not self.frames >= 2:  # "not >=": NaN fails too
            raise SettingError("frames", f"must be at least 2 (got {self.frames})")
        if not (self.fps > 0 and math.isfinite(self.fps)):
            raise SettingError("fps", f"must be positive (got {self.fps})")
        if not (0 <= self.seed < 2**64 and int(self.seed) == self.seed):
            raise SettingError("seed", f"must be a whole number from 0 to 2^64 - 1 (got {self.seed})")
        for name in ("height", "width"):
            value = getattr(self, name)
            if value is not None and not value >= 8:
                raise SettingError(name, f"must be at least 8 pixels (got {value})")
        if not self.preview_every >= 0:
            raise SettingError("preview_every", f"must be at least 0 (got {self.preview_every})")
        require_one_of("search.appearance", self.search.appearance, SEARCH_APPEARANCES)
        if self.search.max_side < 8:
            raise SettingError("search.max_side", f"must be at least 8 pixels (got {self.search.max_side})")
        if not 0.0 <= self.search.prompt_prior <= 1.0:
            raise SettingError("search.prompt_prior", f"must be between 0 and 1 (got {self.search.prompt_prior})")
        if self.device not in DEVICES and not self.device.startswith("cuda:"):
            raise SettingError("device", f"must be auto, cpu or cuda (got {self.device!r})")
        require_one_of("start", self.start, START_MODES)
        require_one_of("camera", self.camera, CAMERA_MODES)
        require_one_of("interpolation", self.interpolation, INTERPOLATIONS)
        if self.draws is not None and not self.draws >= 1:
            raise SettingError("draws", f"must be at least 1 (got {self.draws})")
        if not (self.lr > 0 and math.isfinite(self.lr)):
            raise SettingError("lr", f"must be a positive number (got {self.lr})")
        if self.device.startswith("cuda"):
            import torch

            if not torch.cuda.is_available():
                raise SettingError("device", "'cuda' requested but no CUDA device is available")

    def resolved_device(self):
        """The torch.device this config runs on ("auto" → CUDA when available)."""
        import torch

        if self.device == "auto":
            return torch.device("cuda" if torch.cuda.is_available() else "cpu")
        return torch.device(self.device)

    def as_dict(self) -> dict:
        """Plain data (nested settings as dicts, tuples as lists-or-tuples): JSON-ready."""
        return asdict(self)


def config_from_dict(data: dict) -> DistillConfig:
    """A DistillConfig from :meth:`DistillConfig.as_dict` output (e.g. a report's "config"); unknown
    keys are ignored, ``"sds"``, ``"search"`` and ``"redraw"`` may be dicts."""
    names = {f.name for f in fields(DistillConfig)}
    values = {k: v for k, v in data.items() if k in names}
    for key, cls in (("sds", SDSSettings), ("search", SearchSettings), ("redraw", RedrawSettings)):
        if isinstance(values.get(key), dict):
            known = {f.name for f in fields(cls)}
            nested = {k: v for k, v in values[key].items() if k in known}
            for name in ("scales", "prior_scales", "noise"):  # JSON lists back to the tuples the dataclass holds
                if nested.get(name) is not None:
                    nested[name] = tuple(nested[name])
            values[key] = cls(**nested)
    return replace(DistillConfig(), **values)
