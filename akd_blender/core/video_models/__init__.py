"""Video priors: the VideoPrior protocol, diffusers adapters (CogVideoX, Wan), the embedded teacher.

``load_prior(spec, device, dtype)`` is the entry point; see :mod:`.registry`.
"""

from ..settings import SDSSettings
from .base import SDSPrior
from .protocol import MemoryOptions, TextEmbedding, VideoPrior
from .registry import ALIASES, load_prior

__all__ = ["ALIASES", "MemoryOptions", "SDSPrior", "SDSSettings", "TextEmbedding", "VideoPrior", "load_prior"]
