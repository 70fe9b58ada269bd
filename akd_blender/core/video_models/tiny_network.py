"""The embedded teacher's network: a diffusers ``UNet2DConditionModel`` over frame-stacked pixels.

A video [F,3,H,W] in [0,1] is mapped to [-1,1] and its frames are stacked along channels
([1, F·3, H, W], channel ``3f + c``), so every convolution sees the whole 16-frame clip at once
(the temporal receptive field is the full clip from the first layer on). The text embedding
(384-d, all-MiniLM-L6-v2, L2-normalised; zeros = unconditional) enters through diffusers'
``class_embed_type="projection"`` (added to the timestep embedding). Noise schedule: diffusers'
``DDPMScheduler`` (cosine, 1000 steps), v-prediction.

A teacher with ``condition="image"`` also sees a first frame: the character in its start pose
[3,H,W] in [0,1], mapped to [-1,1] and appended as 3 more input channels ([1, F·3 + 3, H, W]), so
the video it draws shows that character's body (text dropout for CFG leaves the image in place).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass, field

import torch
from diffusers import DDIMScheduler, DDPMScheduler, UNet2DConditionModel

from ..render.camera import DEFAULT_VIEW
from ..render.scene import SceneStyle

__all__ = [
    "TeacherConfig",
    "build_unet",
    "build_scheduler",
    "pack",
    "unpack",
    "model_input",
    "text_condition",
    "sample_videos",
    "save_weights",
    "load_weights",
]


@dataclass
class TeacherConfig:
    """Architecture and data layout of the teacher (saved next to its weights).

    Attributes:
        frames, height, width: the video the model generates (pixels).
        channels: UNet block widths (one down/up level each); layers_per_block: resnets per level.
        text_dim: text embedding width (all-MiniLM-L6-v2: 384).
        train_timesteps, beta_schedule, prediction_type: the DDPM schedule.
        text_dropout: fraction of training samples with the text replaced by zeros (for CFG).
        fps: the frame rate the library clips were made at (motions span frames/fps seconds).
        ground: ``"checker"`` (the default scene) or ``"plain"`` (one ground colour, so the model
            spends its capacity on the character, not on a checkerboard scrolling under the camera).
        fill: fraction of the image height the character fills (the follow camera's framing).
        views: the training clips' views — ``"varied"`` (azimuth 50° ± 45°, elevation 8–28°,
            facing ± 60°) or ``"canonical"`` (the distillation's default camera, azimuth 50° and
            elevation 15°, the character facing -Y; see ``tools.teacher.dataset.make_items``).
        condition: ``"text"`` (text-to-video) or ``"image"`` (text and the character's first frame,
            :func:`model_input`).
    The distillation renders with the same ground and framing (:meth:`scene_style`,
    :meth:`camera_options`), so the teacher is asked about videos like the ones it learnt.
    """

    frames: int = 16
    height: int = 64
    width: int = 64
    channels: tuple[int, ...] = (128, 128, 160, 192)
    layers_per_block: int = 1
    text_dim: int = 384
    train_timesteps: int = 1000
    beta_schedule: str = "squaredcos_cap_v2"
    prediction_type: str = "v_prediction"
    text_dropout: float = 0.15
    fps: float = 8.0
    ground: str = "checker"
    fill: float = 0.7
    views: str = "varied"
    condition: str = "text"
    extra: dict = field(default_factory=dict)

    def scene_style(self) -> SceneStyle:
        """The scene the teacher's videos are rendered in."""
        if self.ground == "plain":
            grey = (0.62, 0.63, 0.64)
            return SceneStyle(checker_colors=(grey, grey))
        return SceneStyle()

    def camera_options(self) -> dict:
        """Keyword arguments of :func:`~akd_blender.core.render.make_cameras` for its framing (and, for a
        teacher of canonical views, that view)."""
        if self.views == "canonical":
            return {"fill": self.fill, "azimuth": DEFAULT_VIEW[0], "elevation": DEFAULT_VIEW[1]}
        return {"fill": self.fill}

    def to_dict(self) -> dict:
        out = asdict(self)
        out["channels"] = list(self.channels)
        return out

    @classmethod
    def from_dict(cls, data: dict) -> TeacherConfig:
        known = {k: v for k, v in data.items() if k in cls.__dataclass_fields__}
        known["channels"] = tuple(known.get("channels", cls.channels))
        return cls(**known)


def build_unet(cfg: TeacherConfig) -> UNet2DConditionModel:
    """The denoiser (random weights): [B, F·3 (+3 for an image teacher), H, W] noisy pixels (and the
    first frame) + timestep + text → v [B, F·3, H, W]."""
    n = len(cfg.channels)
    if cfg.condition not in ("text", "image"):
        raise ValueError(f"condition must be 'text' or 'image', not {cfg.condition!r}")
    return UNet2DConditionModel(
        sample_size=(cfg.height, cfg.width),
        in_channels=3 * cfg.frames + (3 if cfg.condition == "image" else 0),
        out_channels=3 * cfg.frames,
        down_block_types=("DownBlock2D",) * n,
        up_block_types=("UpBlock2D",) * n,
        mid_block_type="UNetMidBlock2D",
        block_out_channels=tuple(cfg.channels),
        layers_per_block=cfg.layers_per_block,
        norm_num_groups=32,
        cross_attention_dim=cfg.text_dim,
        attention_head_dim=32,
        class_embed_type="projection",
        projection_class_embeddings_input_dim=cfg.text_dim,
    )


SCALE_SUFFIX = ".int8_scale"
"""Key suffix of the per-output-channel scales of an int8-stored weight (see :func:`save_weights`)."""


def _int8(weight: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """A float weight [O,...] → (int8 [O,...], fp16 scales [O,1,...]): symmetric per output channel."""
    w = weight.detach().float().cpu()
    scale = w.flatten(1).abs().amax(1).clamp(min=1e-12).view(-1, *([1] * (w.ndim - 1))) / 127.0
    scale = scale.to(torch.float16)
    return (w / scale.float()).round().clamp(-127, 127).to(torch.int8), scale


def save_weights(
    module: torch.nn.Module, folder, stem: str = "teacher", max_bytes: int = 15 * 2**20, int8: bool = False
) -> list[str]:
    """Save the weights as ``{stem}-0000k-of-0000n.safetensors`` shards below ``max_bytes`` each: fp16,
    or with ``int8`` every weight of 2+ dimensions and ≥ 4096 values as int8 with per-output-channel
    fp16 scales (key + :data:`SCALE_SUFFIX`), the rest fp16."""
    from pathlib import Path

    from safetensors.torch import save_file

    state = {}
    for k, v in module.state_dict().items():
        if int8 and v.ndim >= 2 and v.numel() >= 4096 and v.is_floating_point():
            state[k], state[k + SCALE_SUFFIX] = _int8(v)
        else:
            state[k] = v.detach().to(torch.float16).cpu().contiguous()
    shards, cur, size = [], {}, 0
    for k, v in state.items():
        nbytes = v.numel() * v.element_size()
        if cur and size + nbytes > max_bytes and not k.endswith(SCALE_SUFFIX):
            shards.append(cur)
            cur, size = {}, 0
        cur[k], size = v, size + nbytes
    shards.append(cur)
    names = []
    for i, shard in enumerate(shards):
        name = f"{stem}-{i + 1:05d}-of-{len(shards):05d}.safetensors"
        save_file(shard, str(Path(folder) / name))
        names.append(name)
    return names


def load_weights(folder, names: list[str]) -> dict[str, torch.Tensor]:
    """The shards ``names`` (as :func:`save_weights` returned them) in ``folder`` merged into one float32
    state dict (int8 weights times their scales). Only the listed files are read, so stale shards of
    an earlier run are never mixed in."""
    from pathlib import Path

    from safetensors.torch import load_file

    raw = {}
    for name in names:
        raw.update(load_file(str(Path(folder) / name)))
    state = {}
    for k, v in raw.items():
        if k.endswith(SCALE_SUFFIX):
            continue
        state[k] = v.float() * raw[k + SCALE_SUFFIX].float() if v.dtype == torch.int8 else v.float()
    return state


def build_scheduler(cfg: TeacherConfig, kind: str = "ddpm"):
    """The training (``"ddpm"``) or sampling (``"ddim"``) scheduler of the teacher's schedule."""
    common = dict(
        num_train_timesteps=cfg.train_timesteps,
        beta_schedule=cfg.beta_schedule,
        prediction_type=cfg.prediction_type,
        clip_sample=False,
    )
    if kind == "ddim":
        return DDIMScheduler(**common, set_alpha_to_one=True, timestep_spacing="trailing", rescale_betas_zero_snr=False)
    return DDPMScheduler(**common)


def pack(video: torch.Tensor) -> torch.Tensor:
    """Videos [B,F,3,H,W] (or [F,3,H,W]) in [0,1] → model samples [B,F·3,H,W] in [-1,1]."""
    if video.ndim == 4:
        video = video[None]
    b, f, c, h, w = video.shape
    return (video * 2 - 1).reshape(b, f * c, h, w)


def unpack(sample: torch.Tensor, frames: int) -> torch.Tensor:
    """Model samples [B,F·3,H,W] in [-1,1] → videos [B,F,3,H,W] in [0,1] (not clamped)."""
    b, fc, h, w = sample.shape
    return (sample.reshape(b, frames, fc // frames, h, w) + 1) / 2


def model_input(noisy: torch.Tensor, first_frame: torch.Tensor | None) -> torch.Tensor:
    """The UNet's input: noisy samples [B,F·3,H,W], with a first frame [3,H,W] or [B,3,H,W] in [0,1]
    appended as 3 channels in [-1,1] → [B,F·3+3,H,W]; ``first_frame`` None → ``noisy`` unchanged."""
    if first_frame is None:
        return noisy
    first = first_frame[None] if first_frame.ndim == 3 else first_frame
    first = (first.to(noisy.device, noisy.dtype) * 2 - 1).expand(noisy.shape[0], -1, -1, -1)
    return torch.cat([noisy, first], dim=1)


def text_condition(embedding: torch.Tensor, dtype: torch.dtype) -> dict:
    """UNet keyword arguments for text embeddings [B,D]: ``class_labels`` and a dummy ``encoder_hidden_states``."""
    return {"class_labels": embedding.to(dtype), "encoder_hidden_states": embedding[:, None].to(dtype)}


@torch.no_grad()
def sample_videos(
    unet: UNet2DConditionModel,
    cfg: TeacherConfig,
    text: torch.Tensor,
    uncond: torch.Tensor | None = None,
    guidance: float = 3.0,
    steps: int = 30,
    generator: torch.Generator | None = None,
    first_frame: torch.Tensor | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> torch.Tensor:
    """DDIM sampling with classifier-free guidance: text embeddings [B,384] → videos [B,F,3,H,W] in [0,1].
    ``first_frame`` [3,H,W] or [B,3,H,W] in [0,1]: the character an image teacher draws (required then);
    ``progress(done, total)`` is called after each DDIM step."""
    from .protocol import cfg_combine

    device, dtype = text.device, next(unet.parameters()).dtype
    b = text.shape[0]
    if (cfg.condition == "image") != (first_frame is not None):
        raise ValueError(
            f"a {cfg.condition!r} teacher " + ("needs a first frame" if first_frame is None else "takes no first frame")
        )
    if first_frame is not None:
        first_frame = first_frame.to(device)
        first_frame = torch.cat([first_frame.expand(b, -1, -1, -1)] * 2) if first_frame.ndim == 4 else first_frame
    uncond = torch.zeros_like(text) if uncond is None else uncond.expand_as(text)
    sched = build_scheduler(cfg, "ddim")
    sched.set_timesteps(steps, device=device)
    shape = (b, 3 * cfg.frames, cfg.height, cfg.width)
    x = torch.randn(shape, generator=generator, device=generator.device if generator else "cpu").to(device, torch.float32)
    for done, t in enumerate(sched.timesteps, 1):
        ts = t.expand(2 * b).to(device)
        emb = torch.cat([uncond, text])
        pred = unet(model_input(torch.cat([x, x]).to(dtype), first_frame), ts, **text_condition(emb, dtype)).sample.float()
        # cfg_combine takes [2,...] (uncond, cond) → [1,...]; apply per batch element.
        pred = torch.cat([cfg_combine(pred[i::b], guidance) for i in range(b)])
        x = sched.step(pred, t, x).prev_sample
        if progress is not None:
            progress(done, len(sched.timesteps))
    return unpack(x, cfg.frames).clamp(0, 1)
