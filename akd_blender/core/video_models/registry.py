"""``load_prior(spec)``: the embedded teacher, a local diffusers folder, a hub id or the HF cache.

Resolution order for ``spec``:
1. ``"tiny"`` → the embedded image-and-text teacher (:mod:`.tiny`, it draws the user's character);
   ``"tiny-text"`` → the embedded text-only teacher (two procedural characters; for comparison).
2. an alias (``"cogvideox-5b"`` …, see :data:`ALIASES`) → its hub id.
3. an existing local folder → its ``model_index.json`` decides the adapter.
4. a hub id → the HF cache only (diffusers' conventions: ``HF_HOME``, ``HF_HUB_CACHE`` …), read
   as the local snapshot folder it holds. Nothing is ever downloaded and no network connection is opened:
   an id whose ``model_index.json`` is not in the cache fails at once.
Anything missing raises :class:`~akd_blender.core.errors.ModelNotAvailable` with one line naming
what was looked for (the id and the cache folder) and how to get it.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import torch

from ..errors import InputError, ModelNotAvailable
from ..settings import MODEL_CHOICES, SDSSettings
from .protocol import MemoryOptions, VideoPrior

__all__ = ["ALIASES", "EMBEDDED", "hub_cache_dir", "load_prior", "resolve_spec"]

EMBEDDED = ("tiny", "tiny-text")
"""The embedded teachers: ``"tiny"`` (image and text, the default) and ``"tiny-text"`` (text only)."""

ALIASES = {choice.alias: choice.hub_id for choice in MODEL_CHOICES}
"""Short names of the supported hub models (:data:`~akd_blender.core.settings.MODEL_CHOICES`). Text-to-video
(SDS from a pose): CogVideoX-2B/5B, Wan2.1 T2V 1.3B/14B. Image-to-video (shown the character's render,
they draw it moving: draw then fit, or SDS conditioned on the first frame): CogVideoX-5B-I2V,
Wan2.1-I2V-14B-480P, Wan2.2-TI2V-5B."""


_HUB_ID = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]*/[A-Za-z0-9_][A-Za-z0-9_.-]*")  # owner/name (dots allowed: Wan2.1)
_FILE_SUFFIXES = {".safetensors", ".ckpt", ".bin", ".pt", ".pth", ".json", ".gguf"}  # a path to one file, not an id


def hub_cache_dir() -> str:
    """The Hugging Face hub cache folder that hub ids are looked up in (``HF_HUB_CACHE`` / ``HF_HOME``)."""
    from huggingface_hub import constants

    return str(constants.HF_HUB_CACHE)


def resolve_spec(spec: str) -> str:
    """Expand an alias (case-insensitive); other specs are returned unchanged."""
    return ALIASES.get(spec.strip().lower(), spec.strip())


def _adapter_for(index: dict, where: str):
    """(diffusers pipeline class, adapter class) for a pipeline's ``model_index.json`` contents: its
    ``_class_name`` decides; a ``WanPipeline`` with ``expand_timesteps`` is Wan2.2-TI2V (image-to-video)."""
    class_name = str(index.get("_class_name", ""))
    if class_name.startswith("CogVideoX"):
        import diffusers

        if class_name == "CogVideoXImageToVideoPipeline":
            from .cogvideox_i2v import CogVideoXImageToVideoPrior

            return diffusers.CogVideoXImageToVideoPipeline, CogVideoXImageToVideoPrior
        from .cogvideox import CogVideoXPrior

        return diffusers.CogVideoXPipeline, CogVideoXPrior
    if class_name.startswith("Wan"):
        import diffusers

        if class_name == "WanImageToVideoPipeline":
            from .wan_i2v import WanImageToVideoPrior

            return diffusers.WanImageToVideoPipeline, WanImageToVideoPrior
        if index.get("expand_timesteps"):
            from .wan_i2v import WanImageToVideoPrior

            return diffusers.WanPipeline, WanImageToVideoPrior
        from .wan import WanPrior

        return diffusers.WanPipeline, WanPrior
    raise InputError(f"{where} holds a {class_name or 'unknown'} pipeline; supported video priors are CogVideoX and Wan")


def _cached_index(repo_id: str) -> str | None:
    from huggingface_hub import try_to_load_from_cache

    try:
        found = try_to_load_from_cache(repo_id, "model_index.json")
    except Exception:  # invalid repo id and the like
        return None
    return found if isinstance(found, str) else None


def load_prior(
    spec: str,
    device: torch.device | str | None = None,
    dtype: torch.dtype | None = None,
    memory: MemoryOptions | None = None,
    settings: SDSSettings | None = None,
) -> VideoPrior:
    """A :class:`~.base.VideoPrior` for ``spec`` ("tiny", alias, local diffusers folder or hub id).

    ``device`` defaults to CUDA when available; ``dtype`` to bf16 on CUDA and fp32 on CPU.
    Raises ModelNotAvailable (exit 3) when the model is not on this machine (a hub id not in the HF
    cache fails before any network access).
    """
    if spec is None or not str(spec).strip():
        raise InputError("no video prior given: use 'tiny', a diffusers folder, or a hub id such as THUDM/CogVideoX-5b")
    if spec.strip().lower() in EMBEDDED:
        name = spec.strip().lower()
        try:
            from .tiny import ASSET_DIR, IMAGE_ASSET_DIR, load_tiny_prior
        except ImportError:
            raise ModelNotAvailable(
                f"the embedded teacher {name!r} (akd_blender/core/video_models/tiny.py) is not part of this build; "
                "pass --model with a diffusers folder or hub id instead"
            ) from None
        return load_tiny_prior(device, dtype, IMAGE_ASSET_DIR if name == "tiny" else ASSET_DIR, name=name)
    repo = resolve_spec(spec)
    device = torch.device(device or ("cuda" if torch.cuda.is_available() else "cpu"))
    local = Path(repo).expanduser()
    if local.is_dir():
        index = local / "model_index.json"
        if not index.is_file():
            raise ModelNotAvailable(f"'{local}' is not a diffusers pipeline folder (no model_index.json)")
        source, where = str(local), f"folder '{local}'"
    else:
        if not _HUB_ID.fullmatch(repo) or local.suffix.lower() in _FILE_SUFFIXES:
            raise ModelNotAvailable(
                f"video prior '{spec}' not found: no such folder, and it is not a hub id (owner/name) or one of "
                f"{', '.join(sorted(ALIASES))}"
            )
        cached = _cached_index(repo)
        if cached is None:
            raise ModelNotAvailable(
                f"video prior '{repo}' is not in the Hugging Face cache (looked for its model_index.json in "
                f"{hub_cache_dir()}); nothing is downloaded at run time: get it with `huggingface-cli download {repo}` "
                f"(set HF_HOME or HF_HUB_CACHE if your cache lives elsewhere), or pass a local diffusers folder"
            )
        index = Path(cached)
        # The cached snapshot is loaded as a local folder: given the hub id, even with local_files_only,
        # huggingface_hub's request headers fetch an agent registry over the network.
        source, where = str(index.parent), f"hub model '{repo}' (Hugging Face cache {hub_cache_dir()})"
    try:
        contents = json.loads(index.read_text())
    except (OSError, ValueError) as exc:
        raise ModelNotAvailable(f"{where}: cannot read model_index.json ({exc})") from None
    pipeline_cls, adapter = _adapter_for(contents if isinstance(contents, dict) else {}, where)
    load_dtype = dtype or (torch.bfloat16 if device.type == "cuda" else torch.float32)
    try:
        pipe = pipeline_cls.from_pretrained(source, dtype=load_dtype)
    except (OSError, ValueError) as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        hint = "" if local.is_dir() else f"; complete it with `huggingface-cli download {repo}`"
        raise ModelNotAvailable(f"{where} could not be loaded: {first}{hint}") from None
    return adapter(pipe, name=repo, device=device, dtype=load_dtype, memory=memory, settings=settings)
