"""The settings of one distillation as plain dataclasses, their choices and their validation.

Imports no torch (nor bpy): the command line parses its flags and the panel lists its choices from
here before torch is loaded. :class:`DistillConfig` nests :class:`SDSSettings` (how a prior turns a
video into an SDS loss; handed to the prior with every query) and :class:`SearchSettings` (the
sample-then-fit start). :meth:`DistillConfig.validate` is the one place a setting is checked.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field, fields, replace

from .errors import InputError

__all__ = [
    "ModelChoice",
    "MODEL_CHOICES",
    "CAMERA_MODES",
    "START_MODES",
    "DEVICES",
    "SDS_MODES",
    "SEARCH_APPEARANCES",
    "TARGET_SPACES",
    "INTERPOLATIONS",
    "KEY_MODES",
    "KEYS_DEFAULT",
    "SettingError",
    "SDSSettings",
    "SearchSettings",
    "RedrawSettings",
    "POSE_REDRAW_NOISE",
    "parse_redraw",
    "redraw_text",
    "DistillConfig",
    "config_from_dict",
    "Tunable",
    "TUNABLES",
    "setting_name",
    "with_tunables",
]

CAMERA_MODES: tuple[str, ...] = ("follow", "fixed", "orbit")
START_MODES: tuple[str, ...] = ("auto", "library", "pose", "sample")
DEVICES: tuple[str, ...] = ("auto", "cpu", "cuda")
SDS_MODES: tuple[str, ...] = ("target", "score")
SEARCH_APPEARANCES: tuple[str, ...] = ("rgb", "normalised", "matched", "calibrated", "auto")
TARGET_SPACES: tuple[str, ...] = ("pixel", "latent")
INTERPOLATIONS: tuple[str, ...] = ("cubic", "linear")
# How a job keys its new action: "sparse" (key reduction within an error bound) or "dense" (every frame)
KEY_MODES: tuple[str, ...] = ("sparse", "dense")
KEYS_DEFAULT: str = "sparse"


@dataclass(frozen=True)
class ModelChoice:
    """A published video model the command line and the panel offer by name.

    Attributes:
        alias: the short name ``--model`` takes (case-insensitive), e.g. ``"cogvideox-5b-i2v"``.
        ident: the panel's enum identifier (stable: saved .blend files store it).
        label: the panel's name for it.
        hub_id: the Hugging Face repository it is loaded from (the local cache only).
        task: "text-to-video" (scores renders of the pose: SDS from the current pose) or
            "image-to-video" (shown the character's render, draws it moving: draw then fit by default).
        gpu: which GPU it needs (memory of the default path, what was measured or how it was estimated).
    """

    alias: str
    ident: str
    label: str
    hub_id: str
    task: str
    gpu: str


MODEL_CHOICES: tuple[ModelChoice, ...] = (
    ModelChoice(
        "cogvideox-2b", "COGVIDEOX_2B", "CogVideoX-2B", "THUDM/CogVideoX-2b", "text-to-video", "about 13 GB of GPU memory"
    ),
    ModelChoice(
        "cogvideox-5b",
        "COGVIDEOX_5B",
        "CogVideoX-5B",
        "THUDM/CogVideoX-5b",
        "text-to-video",
        "the paper's prior; 20 GB at its SDS query (a 24 GB GPU)",
    ),
    ModelChoice(
        "wan2.1-1.3b",
        "WAN_1_3B",
        "Wan2.1-1.3B",
        "Wan-AI/Wan2.1-T2V-1.3B-Diffusers",
        "text-to-video",
        "fits small GPUs: 7.2 GB at its SDS query",
    ),
    ModelChoice(
        "wan2.1-14b",
        "WAN_14B",
        "Wan2.1-14B",
        "Wan-AI/Wan2.1-T2V-14B-Diffusers",
        "text-to-video",
        "an 80 GB GPU (28 GB of bf16 weights; not measured)",
    ),
    ModelChoice(
        "cogvideox-5b-i2v",
        "COGVIDEOX_5B_I2V",
        "CogVideoX-5B-I2V",
        "THUDM/CogVideoX-5b-I2V",
        "image-to-video",
        "draws your character; aim: a 40 GB GPU (A100-40GB, L40S)",
    ),
    ModelChoice(
        "wan2.1-i2v-14b-480p",
        "WAN_I2V_14B",
        "Wan2.1-I2V-14B-480P",
        "Wan-AI/Wan2.1-I2V-14B-480P-Diffusers",
        "image-to-video",
        "draws your character; an 80 GB GPU (29 GB of bf16 weights with its CLIP image encoder; not measured)",
    ),
    ModelChoice(
        "wan2.2-ti2v-5b",
        "WAN_TI2V_5B",
        "Wan2.2-TI2V-5B",
        "Wan-AI/Wan2.2-TI2V-5B-Diffusers",
        "image-to-video",
        "draws your character; aim: a 24 GB GPU (RTX 4090) in the lowest-memory mode",
    ),
)
"""The named models, text-to-video first; ``core.priors.registry.ALIASES`` maps their aliases to hub ids."""


class SettingError(InputError):
    """A setting that cannot be used (exit 2). ``field``: its name in :class:`DistillConfig` (nested
    ones as ``"sds.cfg_scale"``); ``reason``: what is wrong, e.g. ``"must be at least 2 (got 1)"``.
    Front ends name the field their own way (``--frames``, the panel's label) before the reason."""

    def __init__(self, field_name: str, reason: str) -> None:
        super().__init__(f"distill: {field_name} {reason}")
        self.field, self.reason = field_name, reason


def _one_of(name: str, value, choices: tuple[str, ...]) -> None:
    if value not in choices:
        raise SettingError(name, f"must be one of {', '.join(choices)} (got {value!r})")


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
            "rgb"; :class:`~akd_blender.core.fitting.pose_search.SearchConfig`).
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
        _one_of("search.appearance", self.search.appearance, SEARCH_APPEARANCES)
        if self.search.max_side < 8:
            raise SettingError("search.max_side", f"must be at least 8 pixels (got {self.search.max_side})")
        if not 0.0 <= self.search.prompt_prior <= 1.0:
            raise SettingError("search.prompt_prior", f"must be between 0 and 1 (got {self.search.prompt_prior})")
        if self.device not in DEVICES and not self.device.startswith("cuda:"):
            raise SettingError("device", f"must be auto, cpu or cuda (got {self.device!r})")
        _one_of("start", self.start, START_MODES)
        _one_of("camera", self.camera, CAMERA_MODES)
        _one_of("interpolation", self.interpolation, INTERPOLATIONS)
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


@dataclass(frozen=True)
class Tunable:
    """A distillation setting a user may change: the command line's ``--name`` flag (``_`` → ``-``), the
    ``--jobs`` file's key and the panel's Advanced property of the same ``name``, all derived from
    :data:`TUNABLES`.

    Attributes:
        name: flag, jobs-file key and panel property name. field: its place in :class:`DistillConfig`
            (nested ones as ``"sds.cfg_scale"``). label: the panel's label. description: what it does.
        minimum, maximum: the accepted range (inclusive). kind: ``float`` or ``int``.
    """

    name: str
    field: str
    label: str
    description: str
    minimum: float
    maximum: float
    kind: type = float

    def default(self) -> float | int:
        """The value :class:`DistillConfig` has when the user leaves the setting alone."""
        value = DistillConfig()
        for part in self.field.split("."):
            value = getattr(value, part)
        return value


TUNABLES: tuple[Tunable, ...] = (
    Tunable(
        "cfg_scale",
        "sds.cfg_scale",
        "Guidance",
        "classifier-free guidance scale of the SDS steps (1: no negative pass)",
        1.0,
        100.0,
    ),
    # t_min < t_max (SDSSettings, which names t_min): a Noise Max of 0 leaves no level to draw
    Tunable("t_min", "sds.t_min", "Noise Min", "lowest noise level an SDS step draws, as a fraction of the schedule", 0.0, 1.0),
    Tunable(
        "t_max",
        "sds.t_max",
        "Noise Max",
        "highest noise level an SDS step draws at the start, a fraction of the schedule",
        0.001,
        1.0,
    ),
    Tunable("lr", "lr", "Learning Rate", "Adam learning rate of the joint rotations per SDS step (radians)", 1e-5, 1.0),
    Tunable(
        "root_lr", "root_lr", "Root Learning Rate", "Adam learning rate of the root path per step (character heights)", 1e-5, 1.0
    ),
    Tunable(
        "draw_guidance", "search.guidance", "Drawing Guidance", "classifier-free guidance scale of the drawn video", 1.0, 100.0
    ),
    Tunable("draw_steps", "search.steps", "Drawing Steps", "denoising steps of the drawn video", 1, 1000, int),
    Tunable(
        "search_supersample",
        "search.supersample",
        "Search Supersampling",
        "supersampling of the pose search's renders (1: fastest; at most the render's own)",
        1,
        8,
        int,
    ),
    Tunable(
        "prompt_prior",
        "search.prompt_prior",
        "Prompt Prior",
        "how much the pose search favours starting from the library motion the prompt was understood as (0: the drawing alone decides)",
        0.0,
        1.0,
    ),
)
"""The settings the command line and the panel's Advanced section offer besides steps, frames, seed …"""


def setting_name(field_name: str) -> str:
    """The user's name of a :class:`DistillConfig` field (the tunable's name for ``"sds.cfg_scale"``,
    else the field itself): front ends build their flag or label from it."""
    return next((t.name for t in TUNABLES if t.field == field_name), field_name)


def with_tunables(config: DistillConfig, values: dict[str, float | int | None]) -> DistillConfig:
    """``config`` with the :data:`TUNABLES` in ``values`` set (a value of None leaves it as it is).

    A ``t_max`` below the annealing's end (``sds.t_max_end``) lowers that end to it.
    Raises :class:`SettingError` naming the field (e.g. ``"sds.t_min"``) for a value outside its
    tunable's range or not a number, and for a name that is not a tunable."""
    known = {t.name: t for t in TUNABLES}
    for name in values:
        if name not in known:
            raise SettingError(name, f"is not a setting (known: {', '.join(known)})")
    nested: dict[str, dict] = {}
    top: dict = {}
    for name, value in values.items():
        if value is None:
            continue
        t = known[name]
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
            raise SettingError(t.field, f"must be a number (got {value!r})")
        if t.kind is int and int(value) != value:
            raise SettingError(t.field, f"must be a whole number (got {value})")
        if not t.minimum <= value <= t.maximum:
            raise SettingError(t.field, f"must be between {t.minimum:g} and {t.maximum:g} (got {value:g})")
        value = t.kind(value)
        if "." in t.field:
            group, attr = t.field.split(".")
            nested.setdefault(group, {})[attr] = value
        else:
            top[t.field] = value
    sds = nested.get("sds", {})
    if "t_max" in sds and config.sds.t_max_end is not None:  # the annealing runs down from t_max, never up
        sds["t_max_end"] = min(config.sds.t_max_end, sds["t_max"])
    for group, changes in nested.items():
        top[group] = replace(getattr(config, group), **changes)  # SDSSettings checks its timestep range
    return replace(config, **top)
