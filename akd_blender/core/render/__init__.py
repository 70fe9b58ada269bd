"""Differentiable video rendering: posed vertices → RGBA video of the character on a checkerboard.

Two backends behind one API: nvdiffrast on CUDA (``"nvdiffrast"``) and a pure-torch rasteriser
anywhere (``"torch"``); ``"auto"`` picks nvdiffrast when CUDA and the package are usable.
Output images are float32 [F,4,H,W] in [0,1] (RGB composite + character alpha), row 0 at the top.
"""

from .camera import CAMERA_MODES, DEFAULT_VIEW, Cameras, character_size, concat_cameras, make_cameras
from .renderer import BACKENDS, Renderer, render_clip, resolve_backend, root_path
from .scene import SceneStyle

__all__ = [
    "BACKENDS",
    "CAMERA_MODES",
    "DEFAULT_VIEW",
    "Cameras",
    "Renderer",
    "SceneStyle",
    "character_size",
    "concat_cameras",
    "make_cameras",
    "render_clip",
    "resolve_backend",
    "root_path",
]
