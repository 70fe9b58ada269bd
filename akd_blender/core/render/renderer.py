"""The differentiable video renderer: posed vertices [F,V,3] → RGBA video [F,4,H,W].

Pipeline per camera (nvdiffrast's modular primitives, same code for both backends):
    1. vertices → clip space with the camera's ``proj @ view``;
    2. rasterize (triangle id, perspective-correct barycentrics, depth);
    3. the analytic ground (checkerboard, contact shadow, fog) and sky behind, occluding the
       character where it is below the ground;
    4. interpolate normals and colours (vertex colours, or UVs sampled in the texture), Lambert +
       ambient;
    5. antialias the composite: silhouette edges blend neighbouring pixels, which is where the
       gradient w.r.t. vertex positions at the character's outline comes from.

Output: float32 [N,4,H,W] in [0,1], row 0 at the top; RGB is the composite (character on the
ground under the sky), A is the character's (antialiased) coverage.
"""

from __future__ import annotations

import copy
import logging

import torch

from ..character.kinematics import PoseSource, Skeleton
from ..character.rig import RigAsset
from ..errors import InputError
from ..motion.clip import MotionClip
from .camera import Cameras, character_size, make_cameras
from .raster_nvdiffrast import NvdiffrastRasterizer, nvdiffrast_available
from .raster_torch import TorchRasterizer
from .scene import ContactShadow, SceneStyle, ground_layer, lambert, vertex_normals

__all__ = ["Renderer", "render_clip", "resolve_backend", "root_path", "BACKENDS"]

BACKENDS = ("auto", "torch", "nvdiffrast")
log = logging.getLogger(__name__)


def resolve_backend(backend: str = "auto", device: torch.device | str | None = None) -> str:
    """``"auto"`` → ``"nvdiffrast"`` when CUDA is usable (and ``device`` is CUDA or unset) and
    nvdiffrast is installed, else ``"torch"``; explicit names are checked and returned."""
    if backend not in BACKENDS:
        raise InputError(f"render backend must be one of {', '.join(BACKENDS)}, not {backend!r}")
    if backend != "auto":
        return backend
    on_cuda = device is None or torch.device(device).type == "cuda"
    return "nvdiffrast" if on_cuda and nvdiffrast_available() else "torch"


def root_path(vertices: torch.Tensor) -> torch.Tensor:
    """The path a following camera tracks: the vertex centroid per frame, [F,V,3] → [F,3] (detached)."""
    return vertices.detach().mean(1)


class Renderer:
    """Renders one rig's posed vertices from given cameras; built once per rig and image size.

    Holds the faces, colours / texture, topology and ground settings on ``device``; the backend
    context (nvdiffrast) is created once here.

    Args:
        rig: the character (faces, ``texture`` + ``uvs`` or ``vertex_colors``, ground height, size).
        height, width: image size in pixels.
        backend: ``"auto"``, ``"torch"`` or ``"nvdiffrast"`` (CUDA only).
        device: where to render; default CUDA for nvdiffrast, else CPU.
        style: scene look (:class:`SceneStyle`), default ``SceneStyle()``.
    """

    def __init__(
        self,
        rig: RigAsset,
        height: int,
        width: int,
        backend: str = "auto",
        device: torch.device | str | None = None,
        style: SceneStyle | None = None,
    ) -> None:
        if height < 1 or width < 1:
            raise InputError(f"render size must be positive, got {height}x{width}")
        if len(rig.faces) == 0:
            raise InputError(f"rig '{rig.name}' has no triangles to render")
        name = resolve_backend(backend, device)
        if name == "nvdiffrast":
            device = torch.device(device or "cuda")
            if device.type != "cuda":
                raise InputError(f"the nvdiffrast backend needs a CUDA device, not {device}")
            try:
                self.raster = NvdiffrastRasterizer(device)
            except ImportError as exc:
                if backend != "auto":
                    raise
                log.warning("nvdiffrast unusable (%s); rendering with the torch backend", exc)
                name = "torch"
        if name == "torch":
            device = torch.device(device or "cpu")
            self.raster = TorchRasterizer()
        self.backend, self.device = name, torch.device(device)
        self.rig, self.height, self.width = rig, height, width
        self.style = style or SceneStyle()
        self.size = character_size(rig)
        self.ground_z = float(rig.ground_height)
        dev = self.device
        self.faces = torch.as_tensor(rig.faces, dtype=torch.int32 if name == "nvdiffrast" else torch.int64, device=dev)
        self.topology = self.raster.topology(self.faces)
        self.textured = rig.texture is not None and rig.uvs is not None
        if self.textured:
            self.texture = torch.as_tensor(rig.texture, dtype=torch.float32, device=dev).permute(2, 0, 1)[None].contiguous()
            self.uvs = torch.as_tensor(rig.uvs, dtype=torch.float32, device=dev).reshape(-1, 2).contiguous()
            self.uv_faces = torch.arange(self.uvs.shape[0], device=dev, dtype=self.faces.dtype).view(-1, 3)
        self.colors = torch.as_tensor(rig.vertex_colors, dtype=torch.float32, device=dev)
        self.shadow = None
        if self.style.contact_shadow:
            self.shadow = ContactShadow(self.ground_z, self.size, self.style)
            self.shadow.calibrate(torch.as_tensor(rig.world_vertices(), dtype=torch.float32, device=dev))

    def resized(self, height: int, width: int) -> Renderer:
        """This renderer at another image size, sharing its meshes, textures and backend context."""
        if height < 1 or width < 1:
            raise InputError(f"render size must be positive, got {height}x{width}")
        if (height, width) == (self.height, self.width):
            return self
        other = copy.copy(self)
        other.height, other.width = height, width
        return other

    def _at_pixels(self, attr: torch.Tensor, rast: torch.Tensor, faces: torch.Tensor, pixels: torch.Tensor) -> torch.Tensor:
        """Attributes [V,C] or [N,V,C] interpolated at the covered pixels ``pixels`` (flat indices into
        N·H·W) → [M,C]; the backend's own per-pixel path where it has one."""
        if hasattr(self.raster, "interpolate_pixels"):
            return self.raster.interpolate_pixels(attr, rast, faces, pixels)
        full = self.raster.interpolate(attr, rast, faces)
        return full.reshape(-1, full.shape[-1])[pixels]

    def _colors(self, rast: torch.Tensor, pixels: torch.Tensor) -> torch.Tensor:
        """Base colour at the covered pixels ``pixels`` (flat indices into N·H·W) → [M,3]."""
        if not self.textured:
            return self._at_pixels(self.colors, rast, self.faces, pixels)
        uv = self._at_pixels(self.uvs, rast, self.uv_faces, pixels)  # [M,2]
        uv = uv - torch.floor(uv.detach())
        grid = torch.stack([uv[..., 0] * 2 - 1, 1 - uv[..., 1] * 2], -1).reshape(1, -1, 1, 2)
        col = torch.nn.functional.grid_sample(self.texture, grid, mode="bilinear", padding_mode="border", align_corners=False)
        return col[0, :, :, 0].T  # [M,3]

    def render(self, vertices: torch.Tensor, cameras: Cameras) -> torch.Tensor:
        """World-space vertices [F,V,3] seen by ``cameras`` (F frames × views) → RGBA [F·views,4,H,W].

        Camera ``f * views + v`` sees frame ``f``. Differentiable w.r.t. ``vertices``; values in [0,1].
        """
        if vertices.ndim != 3 or vertices.shape[1:] != (self.rig.num_vertices, 3):
            raise InputError(f"vertices must be [F,{self.rig.num_vertices},3], got {tuple(vertices.shape)}")
        if vertices.shape[0] != cameras.frames:
            raise InputError(f"{vertices.shape[0]} frames of vertices but cameras for {cameras.frames} frames")
        if (cameras.height, cameras.width) != (self.height, self.width):
            raise InputError(f"cameras are {cameras.height}x{cameras.width}, renderer is {self.height}x{self.width}")
        cams = cameras.to(self.device)
        verts = vertices.to(self.device, torch.float32)
        normals = vertex_normals(verts, self.faces)
        shadow = None
        if self.shadow is not None:
            maps = self.shadow.maps(verts, cams.target[:: cams.views])
            shadow = (self.shadow, maps.repeat_interleave(cams.views, 0))
        if cams.views > 1:
            verts = verts.repeat_interleave(cams.views, 0)
            normals = normals.repeat_interleave(cams.views, 0)
        # 1-2. Clip space, rasterize.
        clip = torch.cat([verts, torch.ones_like(verts[..., :1])], -1) @ cams.mvp.transpose(1, 2)
        rast = self.raster.rasterize(clip, self.faces, (self.height, self.width))
        # 3. Ground and sky; the ground hides whatever is below it.
        ground, ground_depth, _ = ground_layer(cams, self.ground_z, self.size, self.style, shadow)
        hidden = (rast[..., 3] > 0) & (rast[..., 2] > ground_depth)
        rast = torch.where(hidden[..., None], torch.zeros_like(rast), rast)
        mask = rast[..., 3:4] > 0
        # 4. Shade the character, at the pixels it covers only.
        pixels = torch.nonzero(mask.flatten()).squeeze(1)  # [M] flat indices into N·H·W
        normal = self._at_pixels(normals, rast, self.faces, pixels)
        forward = cams.axes[2][torch.div(pixels, self.height * self.width, rounding_mode="floor")]
        shaded = lambert(self._colors(rast, pixels), normal, forward, self.style)
        rgb = ground.reshape(-1, 3).index_copy(0, pixels, shaded.to(ground.dtype)).view_as(ground)
        rgba = torch.cat([rgb, mask.to(rgb.dtype)], -1)
        # 5. Antialias silhouettes; rows top-first, channels first.
        out = self.raster.antialias(rgba, rast, clip, self.faces, self.topology)
        return out.flip(1).permute(0, 3, 1, 2).clamp(0.0, 1.0)


def render_clip(
    rig: RigAsset,
    clip: MotionClip | PoseSource,
    height: int,
    width: int,
    camera: str | Cameras = "follow",
    backend: str = "auto",
    *,
    device: torch.device | str | None = None,
    style: SceneStyle | None = None,
    camera_options: dict | None = None,
    contain: bool = False,
) -> torch.Tensor:
    """Render a motion of ``rig`` as the distillation sees it: RGBA [F,4,H,W] in [0,1] (row 0 top).

    ``camera`` is a mode of :func:`make_cameras` (``"follow"``, ``"fixed"``, ``"orbit"``; framed from
    the rig's size, following the vertex centroid; ``camera_options`` are further
    :func:`make_cameras` arguments such as ``fill``) or ready-made :class:`Cameras` (one view per
    frame). With ``contain`` the camera backs off until the whole character is in every frame
    (:func:`make_cameras`' ``contain``; previews) instead of keeping the framing the teacher learnt.
    The result is on the renderer's device.
    """
    renderer = Renderer(rig, height, width, backend, device, style)
    skeleton = Skeleton(rig).to(renderer.device)
    vertices = skeleton(clip)
    if isinstance(camera, Cameras):
        cams = camera
    else:
        options = {**(camera_options or {}), **({"contain": vertices} if contain else {})}
        cams = make_cameras(rig, root_path(vertices), height, width, mode=camera, **options)
    return renderer.render(vertices, cams)
