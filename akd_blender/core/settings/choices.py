"""The choices a setting may take (modes, devices, the video models) and the error naming a bad setting."""

from __future__ import annotations

from dataclasses import dataclass

from ..errors import InputError

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
    "require_one_of",
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
"""The named models, text-to-video first; ``core.video_models.registry.ALIASES`` maps their aliases to hub ids."""


class SettingError(InputError):
    """A setting that cannot be used (exit 2). ``field``: its name in :class:`DistillConfig` (nested
    ones as ``"sds.cfg_scale"``); ``reason``: what is wrong, e.g. ``"must be at least 2 (got 1)"``.
    Front ends name the field their own way (``--frames``, the panel's label) before the reason."""

    def __init__(self, field_name: str, reason: str) -> None:
        super().__init__(f"distill: {field_name} {reason}")
        self.field, self.reason = field_name, reason


def require_one_of(name: str, value: object, choices: tuple[str, ...]) -> None:
    """Raise :class:`SettingError` for the setting ``name`` unless ``value`` is one of ``choices``."""
    if value not in choices:
        raise SettingError(name, f"must be one of {', '.join(choices)} (got {value!r})")
