"""Shared machinery of the diffusers adapters: device/dtype placement, memory modes, text encoding.

A :class:`DiffusersPrior` wraps a diffusers pipeline object (``CogVideoXPipeline``, ``WanPipeline``)
only as a typed bag of components plus its helper methods (``encode_prompt``, rotary embeddings);
the denoising loop of the pipeline is never run. Explicit offload order with ``cpu_offload``:
text encoder (once per prompt) → VAE (encode) → transformer → VAE (decode, pixel target only).
"""

from __future__ import annotations

import contextlib
import gc
from abc import abstractmethod

import torch

from ..settings import SDSSettings
from .base import SDSPrior
from .protocol import MemoryOptions, TextEmbedding

__all__ = ["DiffusersPrior", "default_dtype", "ATTENTION_KERNELS", "attention_kernels"]

ATTENTION_KERNELS: tuple[str, ...] = ("default", "cudnn", "flash")
"""The choices of :attr:`~.protocol.MemoryOptions.attention`."""


@contextlib.contextmanager
def attention_kernels(name: str):
    """Inside the block, ``torch.nn.functional.scaled_dot_product_attention`` (what diffusers'
    attention processors call) tries the ``name`` kernel first: "cudnn" (cuDNN fused attention),
    "flash" (FlashAttention-2), the others after it in torch's order as fallbacks for shapes and
    dtypes it does not take; "default" leaves torch's choice alone. ValueError for another name."""
    if name not in ATTENTION_KERNELS:
        raise ValueError(f"attention must be one of {', '.join(ATTENTION_KERNELS)} (got {name!r})")
    if name == "default":
        yield
        return
    from torch.nn.attention import SDPBackend, sdpa_kernel

    first = SDPBackend.CUDNN_ATTENTION if name == "cudnn" else SDPBackend.FLASH_ATTENTION
    order = [first] + [b for b in (SDPBackend.FLASH_ATTENTION, SDPBackend.EFFICIENT_ATTENTION, SDPBackend.MATH) if b != first]
    with sdpa_kernel(order, set_priority=True):
        yield


def default_dtype(device: torch.device) -> torch.dtype:
    """bf16 on CUDA, fp32 elsewhere."""
    return torch.bfloat16 if device.type == "cuda" else torch.float32


class DiffusersPrior(SDSPrior):
    """Base of the CogVideoX and Wan adapters (see :class:`~.base.SDSPrior` for the hooks).

    Args:
        pipe: a diffusers pipeline holding ``tokenizer``, ``text_encoder``, ``vae``, ``transformer``,
            ``scheduler``.
        name: reported name (hub id or folder).
        device: where the model runs; dtype: the transformer/VAE dtype (default bf16 on CUDA).
        memory: :class:`MemoryOptions`; settings: :class:`SDSSettings`.
    """

    max_sequence_length = 226
    #: pixel targets are decoded only around the character: 2 latent cells (16 px) kept around its box,
    #: 4 more (32 px) decoded for context and dropped. CogVideoX-5B, 49×480×720 on an H200: the full
    #: decode takes 2.09 s, a 48×48-cell crop 0.90 s, 40×32 cells 0.52 s (``make bench-priors``, docs/benchmarks.md).
    crop_context = (2, 4)

    def __init__(
        self,
        pipe,
        name: str,
        device: torch.device | str | None = None,
        dtype: torch.dtype | None = None,
        memory: MemoryOptions | None = None,
        settings: SDSSettings | None = None,
    ) -> None:
        self.pipe = pipe
        self.name = name
        self.device = torch.device(device or ("cuda" if torch.cuda.is_available() else "cpu"))
        self.dtype = dtype or default_dtype(self.device)
        self.memory = memory or MemoryOptions()
        self.settings = settings or SDSSettings()
        self._text_cache: dict[tuple[str, str], TextEmbedding] = {}
        self.vae.requires_grad_(False)
        self.transformer.requires_grad_(False)
        if self.text_encoder is not None:
            self.text_encoder.requires_grad_(False)
            self.text_encoder.eval()
        for module in (self.vae, self.transformer):  # from_pretrained(torch_dtype=...) already did this
            if module.dtype != self.dtype:
                module.to(dtype=self.dtype)
        self.vae.eval()
        self.transformer.eval()
        self.set_memory(self.memory)

    def set_memory(self, memory: MemoryOptions) -> None:
        """Apply memory modes (can be changed between steps)."""
        if memory.attention not in ATTENTION_KERNELS:
            raise ValueError(f"{self.name}: attention must be one of {', '.join(ATTENTION_KERNELS)} (got {memory.attention!r})")
        self.memory = memory
        self.vae.enable_slicing() if memory.vae_slicing else self.vae.disable_slicing()
        self.vae.enable_tiling() if memory.vae_tiling else self.vae.disable_tiling()
        if getattr(self.vae, "_supports_gradient_checkpointing", False):
            if memory.vae_checkpointing:
                self.vae.enable_gradient_checkpointing()
            else:
                self.vae.disable_gradient_checkpointing()
        if self.device.type == "cuda":
            torch.backends.cudnn.benchmark = memory.cudnn_benchmark
        home = torch.device("cpu") if memory.cpu_offload else self.device
        self.vae.to(home)
        self.transformer.to(home)

    # Components ------------------------------------------------------------------------------
    @property
    def vae(self):
        return self.pipe.vae

    @property
    def transformer(self):
        return self.pipe.transformer

    @property
    def text_encoder(self):
        return getattr(self.pipe, "text_encoder", None)

    @contextlib.contextmanager
    def _on_device(self, module: torch.nn.Module):
        """Run ``module`` on the prior's device; with cpu_offload, move it there and back."""
        if not self.memory.cpu_offload or self.device.type == "cpu":
            yield module
            return
        module.to(self.device)
        try:
            yield module
        finally:
            module.to("cpu")

    # Text ------------------------------------------------------------------------------------
    def encode_text(self, prompt: str, negative_prompt: str = "") -> TextEmbedding:
        """Prompt and negative prompt → [1,L,D] embeddings (cached per pair); see VideoPrior."""
        key = (prompt, negative_prompt)
        if key in self._text_cache:
            return self._text_cache[key]
        encoder = self.text_encoder
        if encoder is None:
            raise RuntimeError(f"{self.name}: the text encoder was released; cannot encode a new prompt")
        # Weights that live on the CPU are copied to the device and, after encoding, dropped there: the
        # CPU tensors are kept, so freeing the encoder copies nothing back (its weights never change).
        kept = {} if self.device.type == "cpu" else {t: t.data for t in self._tensors(encoder) if t.device.type == "cpu"}
        encoder.to(self.device)
        try:
            with torch.no_grad():
                cond, uncond = self._encode_prompt(prompt, negative_prompt)
        finally:
            if self.memory.free_text_encoder and self.device.type != "cpu":
                for tensor in self._tensors(encoder):
                    tensor.data = kept[tensor] if tensor in kept else tensor.data.to("cpu")
                torch.cuda.empty_cache()
        text = TextEmbedding(prompt, negative_prompt, cond.to(self.device, self.dtype), uncond.to(self.device, self.dtype))
        self._text_cache[key] = text
        return text

    @staticmethod
    def _tensors(module: torch.nn.Module) -> list[torch.Tensor]:
        """The module's parameters and buffers (the objects ``module.to`` moves in place)."""
        return [*module.parameters(), *module.buffers()]

    def clear_text_cache(self) -> None:
        """Forget the cached prompt embeddings (the next :meth:`encode_text` runs the text encoder again)."""
        self._text_cache.clear()

    def _encode_prompt(self, prompt: str, negative_prompt: str) -> tuple[torch.Tensor, torch.Tensor]:
        """Adapter hook: (cond, uncond) [1,L,D] from the pipeline's own ``encode_prompt`` (text encoder on the device)."""
        return self.pipe.encode_prompt(
            prompt=prompt,
            negative_prompt=negative_prompt,
            do_classifier_free_guidance=True,
            num_videos_per_prompt=1,
            max_sequence_length=self.max_sequence_length,
            device=self.device,
            dtype=self.dtype,
        )

    # Model hooks shared by both adapters -------------------------------------------------------
    def _predict(self, noisy: torch.Tensor, timestep: torch.Tensor, text: TextEmbedding, cfg: bool) -> torch.Tensor:
        embeds = torch.cat([text.uncond, text.cond]) if cfg else text.cond
        batch = torch.cat([noisy] * embeds.shape[0]).to(self.dtype)
        steps = timestep.reshape(1).expand(embeds.shape[0]).to(self.device)
        condition = self._conditioning(noisy, text)
        with self._on_device(self.transformer), attention_kernels(self.memory.attention):
            return self._run_transformer(batch, steps, embeds, **condition)

    def _conditioning(self, noisy: torch.Tensor, text: TextEmbedding) -> dict:
        """Adapter hook: extra keyword arguments of :meth:`_run_transformer` for latents shaped like
        ``noisy`` (an image-to-video adapter's first-frame condition); none for text-to-video."""
        return {}

    @abstractmethod
    def _run_transformer(self, latents: torch.Tensor, timesteps: torch.Tensor, embeds: torch.Tensor) -> torch.Tensor:
        """Adapter hook: the transformer's prediction for a latent batch (CFG branches stacked)."""

    def free(self) -> None:
        """Drop the components and cached embeddings and release the CUDA cache."""
        for part in ("transformer", "vae", "text_encoder", "image_encoder"):
            module = getattr(self.pipe, part, None)
            if module is not None:
                module.to("cpu")
        self._text_cache.clear()
        self.pipe = None
        gc.collect()
        if torch.cuda.is_available():
            torch.cuda.empty_cache()
