"""The video prior kept between jobs: at most one model in memory, freed on request.

Imports no torch at module level.
"""

from __future__ import annotations

import threading
from typing import Any

__all__ = ["resolve_device", "get_prior", "cached_priors", "free_gpu_memory"]

_PRIORS: dict[tuple[str, str], Any] = {}
_PRIORS_LOCK = threading.Lock()


def resolve_device(device: str) -> str:
    """``"auto"`` → ``"cuda"`` when torch sees a CUDA GPU, else ``"cpu"``; others pass through."""
    if device != "auto":
        return device
    import torch

    return "cuda" if torch.cuda.is_available() else "cpu"


def get_prior(model: str, device: str) -> Any:
    """The video prior for ``model`` on ``device``, loaded once and kept for the next job.

    Raises ``ModelNotAvailable`` (exit 3) when it cannot be found. Only one prior is kept: loading
    another frees the previous one first, so GPU memory holds at most one model.
    """
    key = (model, device)
    with _PRIORS_LOCK:
        if key in _PRIORS:
            return _PRIORS[key]
    free_gpu_memory()
    from ..video_models import load_prior

    prior = load_prior(model, device=device)
    with _PRIORS_LOCK:
        _PRIORS[key] = prior
    return prior


def cached_priors() -> list[tuple[str, str]]:
    """(model, device) of the priors held in memory."""
    with _PRIORS_LOCK:
        return list(_PRIORS)


def free_gpu_memory() -> int:
    """Drop every cached prior (``prior.free()``) and empty torch's CUDA cache. Returns how many."""
    with _PRIORS_LOCK:
        priors = list(_PRIORS.values())
        _PRIORS.clear()
    for prior in priors:
        free = getattr(prior, "free", None)
        if callable(free):
            free()
    import gc
    import sys

    gc.collect()
    torch = sys.modules.get("torch")
    if torch is not None and torch.cuda.is_available():
        torch.cuda.empty_cache()
    return len(priors)
