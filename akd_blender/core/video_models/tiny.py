"""The embedded teacher ("tiny"): a small text-to-video diffusion model trained on the motion library.

Pixel space, 16 frames × 64 × 64, v-prediction, a diffusers ``UNet2DConditionModel`` over
frame-stacked channels (see :mod:`.tiny_network`), text from the offline all-MiniLM-L6-v2
encoder. Weights, configs and seeds ship in ``akd_blender/assets/teacher/``.

As a :class:`~.base.VideoPrior` it plugs the shared SDS step (:class:`~.base.SDSPrior`): the
"latents" are the frame-stacked pixels in [-1, 1], so there is no VAE and target space "latent"
is already pixel space. ``sample(text, generator)`` draws a video ("sample then fit" mode).

The teacher only knows the phrasings it was trained on: a prompt is understood as one of them (its
embedding is replaced by that phrasing's), and the match is reported
(``TextEmbedding.extra["understood_as"]``, ``["motion"]``, ``["similarity"]``). The matcher also
knows extra wordings of each motion (:mod:`~akd_blender.core.motion.library.wordings`, never trained
on): the motion whose three best-matching wordings match the prompt best on average wins, and its
trained phrasing nearest the prompt conditions the model (:func:`~akd_blender.core.prompt.sentence_encoder.understand`). A
new wording of a known motion then conditions the model exactly as in training instead of
somewhere between motions. The reading is :mod:`akd_blender.core.prompt.understanding`'s; a prompt it does
not understand (score below ``UNDERSTOOD_THRESHOLD``) is refused by the distillation unless
``DistillConfig.allow_nearest``.

Command line::

    python -m akd_blender.core.video_models.tiny judge  --input FILE.blend --action NAME [--armature NAME] [--json]
    python -m akd_blender.core.video_models.tiny sample --prompt TEXT --out sample.mp4

``judge`` runs the Blender-side :mod:`akd_blender.blender.cli.judge` in a subprocess of the same
Python (``sys.executable -m akd_blender.blender.cli.judge``, which needs the bpy module) and passes
its output and exit code through: the recognised label and its probability, then the runners-up.
The teacher and the judge are trained by ``python -m tools.teacher`` (not shipped).
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import torch
import torch.nn.functional as F

from ..assets import ASSETS_DIR, PACKAGE_DIR
from ..errors import InputError, ModelNotAvailable
from ..prompt.sentence_encoder import PhraseTable, TextEncoder
from ..prompt.understanding import PromptVocabulary
from ..settings import SDSSettings
from .base import SDSPrior
from .capabilities import Capabilities
from .frames import resample_frames
from .protocol import TextEmbedding
from .tiny_network import (
    TeacherConfig,
    build_scheduler,
    build_unet,
    load_weights,
    model_input,
    pack,
    sample_videos,
    text_condition,
    unpack,
)

__all__ = ["TinyPrior", "load_tiny_prior", "load_teacher_config", "ASSET_DIR", "IMAGE_ASSET_DIR", "main"]

ASSET_DIR = ASSETS_DIR / "teacher"
"""The text-only teacher (prior ``"tiny-text"``) and the judge of its two characters."""
IMAGE_ASSET_DIR = ASSETS_DIR / "teacher_image"
"""The image-and-text teacher (prior ``"tiny"``, the default), trained on the character family."""


class TinyPrior(SDSPrior):
    """The embedded teacher as a VideoPrior.

    Args:
        unet: the trained denoiser; cfg: its :class:`TeacherConfig`.
        encoder: text encoder (``TextEncoder``); device, dtype: where/how the UNet runs.
        settings: default SDS settings of queries that pass none (target mode, CFG 2).
        vocabulary: what prompts are matched against: (wording, motion, trained) triples (default:
            the motion library's :func:`~akd_blender.core.motion.library.labelled.prompt_vocabulary`;
            for an image teacher the role library's, per kind: :func:`library_vocabulary`);
            prompts condition the model with trained wordings only; empty → the prompt's own embedding.

    An image teacher (``cfg.condition == "image"``, ``image_conditioned`` True) draws the character of
    ``text.first_frame`` and scores renders against it; :meth:`encode_text` then takes the character's
    ``kind`` (a :class:`~akd_blender.core.character.roles.BoneRoles` kind) and matches the prompt among that
    kind's motions only.
    """

    def __init__(
        self,
        unet,
        cfg: TeacherConfig,
        encoder: TextEncoder,
        device: torch.device | str | None = None,
        dtype: torch.dtype | None = None,
        settings: SDSSettings | None = None,
        name: str = "tiny",
        vocabulary: list[tuple[str, str, bool]] | None = None,
    ) -> None:
        self.device = torch.device(device or ("cuda" if torch.cuda.is_available() else "cpu"))
        self.dtype = dtype or torch.float32
        self.unet = unet.to(self.device, self.dtype).eval().requires_grad_(False)
        self.cfg, self.encoder, self.name = cfg, encoder, name
        self.frames, self.height, self.width = cfg.frames, cfg.height, cfg.width
        self.fps = cfg.fps
        self.render_style, self.camera_options = cfg.scene_style(), cfg.camera_options()  # the look it learnt
        self.settings = settings or SDSSettings(cfg_scale=2.0, mode="target")
        self.alphas = build_scheduler(cfg).alphas_cumprod.double()
        self.image_conditioned = cfg.condition == "image"
        if vocabulary is None and not self.image_conditioned:
            from ..motion.library.labelled import prompt_vocabulary

            vocabulary = prompt_vocabulary()
        self.vocabulary = None if vocabulary is None else list(vocabulary)
        #: an image teacher's vocabulary holds the library's held-out phrasings too (False: benchmarks
        #: that prompt with them read them as new wordings)
        self.heldout_wordings = True
        self._matchers: dict[str, PromptVocabulary] = {}  # per kind, encoded on first use (it loads the encoder)

    @property
    def capabilities(self) -> Capabilities:
        """An SDS prior's (:attr:`SDSPrior.capabilities`) that also draws (:meth:`sample`), with the
        look it learnt (``render_style``, ``camera_options``) and its clip's ``fps``; an image teacher
        is image-conditioned, and without a fixed vocabulary it reads the character's kind; it reads
        prompts as known motions whenever it has phrasings to match them against."""
        return replace(
            super().capabilities,
            draws=True,
            image_conditioned=self.image_conditioned,
            reads_kind=self.vocabulary is None,
            reads_motions=self.vocabulary is None or bool(self.vocabulary),
            render_style=self.render_style,
            camera_options=self.camera_options,
        )

    def _vocabulary(self, kind: str | None) -> list[tuple[str, str, bool]]:
        """The fixed vocabulary, or (an image teacher) the role library's for ``kind`` (all kinds for
        None or a kind without motions)."""
        if self.vocabulary is not None:
            return self.vocabulary
        from ..motion.library import KINDS
        from ..prompt.understanding import library_vocabulary

        kinds = (kind,) if kind in KINDS else KINDS
        return [row for k in kinds for row in library_vocabulary(k, heldout=self.heldout_wordings)]

    # Text ------------------------------------------------------------------------------------
    def encode_text(self, prompt: str, negative_prompt: str = "", kind: str | None = None) -> TextEmbedding:
        """Prompt → cond [1,1,384], the embedding of the trained phrasing it is understood as (see the
        module docstring; ``extra`` holds :meth:`~akd_blender.core.prompt.understanding.Understanding.facts`
        and the :class:`~akd_blender.core.prompt.understanding.Understanding` itself under ``"understanding"``;
        the caller refuses a prompt not understood); negative prompt (default empty → zeros, the
        trained null) → uncond. ``kind``: the character's kind (an image teacher reads the prompt
        among that kind's motions; None or a kind without motions: every kind's)."""
        emb = self.encoder.encode([prompt, negative_prompt])
        extra = {}
        vocabulary = self._vocabulary(kind)
        if vocabulary and prompt.strip():
            key = f"{kind or ''}:{self.heldout_wordings}"
            if key not in self._matchers:
                self._matchers[key] = PromptVocabulary(vocabulary, self.encoder)
            matcher = self._matchers[key]
            understanding = matcher.understand(prompt, emb[0])
            emb[0] = matcher.vectors[understanding.index]
            extra = {**understanding.facts(), "understanding": understanding}
        emb = emb.to(self.device, self.dtype)
        return TextEmbedding(prompt, negative_prompt, emb[:1, None], emb[1:, None], extra)

    # SDSPrior hooks (latents = frame-stacked pixels [1, F·3, H, W] in [-1,1]) ----------------
    def _prepare_video(self, video: torch.Tensor) -> torch.Tensor:
        self._input_frames = video.shape[0]
        video = resample_frames(video, self.frames)
        if video.shape[-2:] != (self.height, self.width):
            video = F.interpolate(video, size=(self.height, self.width), mode="bilinear", align_corners=False, antialias=True)
        return video

    def _encode(self, video: torch.Tensor) -> torch.Tensor:
        return pack(video.to(self.device, torch.float32))

    def _decode(self, latents: torch.Tensor) -> torch.Tensor:
        """Latents → video [F_in,3,H,W] in [0,1] at the frame count the caller rendered."""
        video = unpack(latents.float(), self.frames)[0]
        return resample_frames(video, getattr(self, "_input_frames", self.frames))

    def _step(self, t: float) -> int:
        return int(round(t * (self.cfg.train_timesteps - 1)))

    def _noise(self, latents: torch.Tensor, noise: torch.Tensor, t: float) -> tuple[torch.Tensor, torch.Tensor]:
        k = self._step(t)
        a, s = float(self.alphas[k].sqrt()), float((1 - self.alphas[k]).sqrt())
        return a * latents + s * noise, torch.tensor(k, device=self.device)

    def _first_frame(self, text: TextEmbedding, first_frame: torch.Tensor | None = None) -> torch.Tensor | None:
        """The first frame an image teacher draws from, at its size ([3,H,W] on its device); None for a text teacher."""
        if not self.image_conditioned:
            return None
        frame = first_frame if first_frame is not None else text.first_frame
        if frame is None:
            raise InputError(f"the {self.name} teacher draws a given character: it needs the first frame (text.first_frame)")
        frame = frame.to(self.device, torch.float32)
        if frame.shape[-2:] != (self.height, self.width):
            frame = F.interpolate(frame[None], size=(self.height, self.width), mode="area")[0]
        return frame

    def _predict(self, noisy: torch.Tensor, timestep: torch.Tensor, text: TextEmbedding, cfg: bool) -> torch.Tensor:
        emb = torch.cat([text.uncond, text.cond]) if cfg else text.cond
        x = model_input(noisy.expand(emb.shape[0], -1, -1, -1).to(self.dtype), self._first_frame(text))
        return self.unet(x, timestep.expand(emb.shape[0]), **text_condition(emb[:, 0], self.dtype)).sample.float()

    def _predict_pair(
        self, noisy: torch.Tensor, timestep: torch.Tensor, text: TextEmbedding
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """Both branches for a batch ``noisy`` [B,F·3,H,W] in one UNet call (2B samples, one first frame)."""
        b = noisy.shape[0]
        emb = torch.cat([text.uncond[:, 0].expand(b, -1), text.cond[:, 0].expand(b, -1)])  # [2B,384]
        x = model_input(torch.cat([noisy, noisy]).to(self.dtype), self._first_frame(text))
        pred = self.unet(x, timestep.expand(2 * b), **text_condition(emb, self.dtype)).sample.float()
        return pred[:b], pred[b:]

    def _clean_and_noise(self, noisy: torch.Tensor, pred: torch.Tensor, t: float) -> tuple[torch.Tensor, torch.Tensor]:
        k = self._step(t)
        a, s = float(self.alphas[k].sqrt()), float((1 - self.alphas[k]).sqrt())
        return a * noisy - s * pred, s * noisy + a * pred

    def _noise_variance(self, t: float) -> float:
        return float(1 - self.alphas[self._step(t)])

    # Sample-then-fit -------------------------------------------------------------------------
    @torch.no_grad()
    def sample(
        self,
        text: TextEmbedding,
        first_frame: torch.Tensor | None = None,
        generator: torch.Generator | None = None,
        guidance: float = 3.0,
        steps: int = 30,
        progress: Callable[[int, int], None] | None = None,
    ) -> torch.Tensor:
        """A video the teacher draws for ``text``: [F,3,H,W] in [0,1] (DDIM, CFG ``guidance``). An image
        teacher draws the character of ``first_frame`` [3,H,W] in [0,1] (default ``text.first_frame``).
        ``progress(done, total)`` after each DDIM step (an exception it raises stops the drawing)."""
        first = self._first_frame(text, first_frame)
        return sample_videos(
            self.unet, self.cfg, text.cond[:, 0], text.uncond[:, 0], guidance, steps, generator, first, progress=progress
        )[0]

    def free(self) -> None:
        self.unet.to("cpu")
        if torch.cuda.is_available():
            torch.cuda.empty_cache()


def _require(folder: Path, name: str) -> Path:
    path = folder / name
    if not path.is_file():
        raise ModelNotAvailable(
            f"the embedded teacher file {path} is missing; reinstall the extension or retrain it with "
            f"`python -m tools.teacher train --out {folder}` from the source tree (see {folder}/README.md)"
        )
    return path


def load_tiny_prior(
    device: torch.device | str | None = None,
    dtype: torch.dtype | None = None,
    folder: str | Path | None = None,
    settings: SDSSettings | None = None,
    name: str = "tiny",
) -> TinyPrior:
    """A shipped teacher as a :class:`TinyPrior` (fp32 by default): ``folder`` (default :data:`ASSET_DIR`,
    the text-only teacher; :data:`IMAGE_ASSET_DIR` holds the image teacher)."""
    folder = Path(folder or ASSET_DIR)
    record = json.loads(_require(folder, "teacher.json").read_text())
    cfg = TeacherConfig.from_dict(record["config"])
    unet = build_unet(cfg)
    shards = record.get("weights", ["teacher.safetensors"])
    for shard in shards:
        _require(folder, shard)
    unet.load_state_dict(load_weights(folder, shards))
    table = PhraseTable.load(folder / "phrases.npz") if (folder / "phrases.npz").is_file() else None
    device = torch.device(device or ("cuda" if torch.cuda.is_available() else "cpu"))
    return TinyPrior(unet, cfg, TextEncoder(table), device, dtype if dtype is not None else torch.float32, settings, name=name)


def load_teacher_config(folder: str | Path | None = None) -> TeacherConfig:
    """The shipped teacher's :class:`TeacherConfig` (size, fps, ground and framing of its videos)."""
    folder = Path(folder or ASSET_DIR)
    return TeacherConfig.from_dict(json.loads(_require(folder, "teacher.json").read_text())["config"])


def _sample(argv: list[str]) -> int:
    import argparse

    import imageio.v3 as iio

    ap = argparse.ArgumentParser(prog="python -m akd_blender.core.video_models.tiny sample")
    ap.add_argument("--prompt", required=True)
    ap.add_argument("--out", required=True, help=".mp4 or .png (frames side by side)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--guidance", type=float, default=3.0)
    args = ap.parse_args(argv)
    prior = load_tiny_prior("cpu")
    video = prior.sample(
        prior.encode_text(args.prompt), generator=torch.Generator().manual_seed(args.seed), guidance=args.guidance
    )
    frames = (video.permute(0, 2, 3, 1) * 255).round().byte().numpy()
    if args.out.endswith(".png"):
        iio.imwrite(args.out, frames.transpose(1, 0, 2, 3).reshape(frames.shape[1], -1, 3))
    else:
        iio.imwrite(args.out, frames, fps=prior.fps, codec="libx264", macro_block_size=16)
    print(args.out)
    return 0


def _judge(argv: list[str]) -> int:
    """``python -m akd_blender.blender.cli.judge`` in a subprocess (the judge's Blender side needs bpy)."""
    import os
    import subprocess

    root = str(PACKAGE_DIR.parent)  # the folder holding the akd_blender package
    env = dict(os.environ)
    env["PYTHONPATH"] = root + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    return subprocess.run([sys.executable, "-m", "akd_blender.blender.cli.judge", *argv], env=env).returncode


def main(argv: list[str] | None = None) -> int:
    """``python -m akd_blender.core.video_models.tiny {judge,sample} …``; returns the exit code."""
    argv = list(sys.argv[1:] if argv is None else argv)
    commands = ("judge", "sample")
    if not argv or argv[0] not in commands:
        print(
            f"usage: python -m akd_blender.core.video_models.tiny {{{','.join(commands)}}} [options] (-h for help)",
            file=sys.stderr,
        )
        return 2
    command, rest = argv[0], argv[1:]
    if command == "sample":
        return _sample(rest)
    return _judge(rest)


if __name__ == "__main__":
    sys.exit(main())
