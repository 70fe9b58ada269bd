"""The scene around the character: checkerboard ground, lights, contact shadow, background.

The ground is the plane z = ``rig.ground_height`` (world Z up), rendered analytically per pixel
(a ray-plane hit, no triangles): a box-filtered checkerboard whose square side is
``style.checker_size`` × the character's size, lit by the same Lambert + ambient light as the
character, darkened by an optional soft contact shadow and fading into the background colour with
distance. Colours are display (sRGB) values in [0,1]; lighting is applied to them directly.

All image buffers here follow the raster convention of :mod:`.raster_torch`: [N,H,W,C], row 0 at
the bottom of the image.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass

import torch

from .camera import Cameras

__all__ = ["SceneStyle", "vertex_normals", "ground_layer", "ContactShadow", "lambert"]


@dataclass(frozen=True)
class SceneStyle:
    """How the scene looks (all sizes relative to the character's size, colours sRGB in [0,1]).

    Attributes:
        checker_size: side of one ground square / character size.
        checker_colors: the two square colours.
        background: colour where no ground is seen (sky).
        light_dir: world direction *towards* the (directional) light; normalised when used.
        ambient, diffuse: Lambert terms, colour × (ambient + diffuse · max(n·l, 0)).
        contact_shadow: draw a soft shadow where the character is close to the ground.
        shadow_strength: darkening at full contact (0..1).
        shadow_blur: shadow softness (Gaussian sigma) / character size.
        shadow_height: vertices closer than this (× character size) to the ground cast the shadow.
        fog_distance: the ground fades into the background at this distance (× character size)
            from the look-at point.
    """

    checker_size: float = 0.25
    checker_colors: tuple[tuple[float, float, float], tuple[float, float, float]] = ((0.82, 0.82, 0.80), (0.42, 0.44, 0.47))
    background: tuple[float, float, float] = (0.72, 0.80, 0.90)
    light_dir: tuple[float, float, float] = (0.35, -0.55, 0.75)
    ambient: float = 0.45
    diffuse: float = 0.6
    contact_shadow: bool = True
    shadow_strength: float = 0.5
    shadow_blur: float = 0.03
    shadow_height: float = 0.08
    fog_distance: float = 12.0

    def as_dict(self) -> dict:
        return asdict(self)

    def light(self, device: torch.device, dtype: torch.dtype = torch.float32) -> torch.Tensor:
        """Unit light direction [3]."""
        return torch.nn.functional.normalize(torch.tensor(self.light_dir, dtype=dtype, device=device), dim=0)


def vertex_normals(vertices: torch.Tensor, faces: torch.Tensor) -> torch.Tensor:
    """Area-weighted unit vertex normals [F,V,3] of posed vertices [F,V,3] (faces [T,3], CCW = outside).

    Computed vertex-major ([V,F,3]: each corner gather and scatter moves whole rows of F·3 floats)
    and returned as a [F,V,3] view of that buffer."""
    faces = faces.long()
    by_vertex = vertices.transpose(0, 1).contiguous()  # [V,F,3]
    a = by_vertex[faces[:, 0]]
    e1, e2 = by_vertex[faces[:, 1]] - a, by_vertex[faces[:, 2]] - a  # [T,F,3]
    fn = torch.empty_like(e1)  # e1 × e2: twice the face area, outwards
    for k, (i, j) in enumerate(((1, 2), (2, 0), (0, 1))):
        fn[..., k] = e1[..., i] * e2[..., j] - e1[..., j] * e2[..., i]
    normals = torch.zeros_like(by_vertex)
    for k in range(3):
        normals = normals.index_add(0, faces[:, k], fn)
    return torch.nn.functional.normalize(normals, dim=-1, eps=1e-12).transpose(0, 1)


def lambert(color: torch.Tensor, normal: torch.Tensor, forward: torch.Tensor, style: SceneStyle) -> torch.Tensor:
    """Two-sided Lambert + ambient: colours [...,3], unit-ish normals [...,3] and view directions
    broadcastable to them (e.g. [M,3] per pixel; normals facing away from the camera are flipped)
    → shaded colours [...,3]."""
    light = style.light(color.device, color.dtype)
    facing = (normal * forward).sum(-1, keepdim=True)
    normal = torch.where(facing > 0, -normal, normal)
    ndotl = (torch.nn.functional.normalize(normal, dim=-1, eps=1e-12) * light).sum(-1, keepdim=True).clamp_min(0.0)
    return color * (style.ambient + style.diffuse * ndotl)


def _filtered_checker(p: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    """Box-filtered checkerboard in [0,1] at ground coordinates p [...,2] (units of one square),
    filter width w [...,1] (same units). 1 on even squares, 0 on odd ones."""
    w = w.clamp_min(1e-4)

    def tri(x: torch.Tensor) -> torch.Tensor:  # integral of the square wave
        h = x / 2
        return 2 * (h - torch.floor(h) - 0.5).abs()

    i = (tri(p - 0.5 * w) - tri(p + 0.5 * w)) / w  # in [-1,1]: the square wave averaged over w
    return 0.5 + 0.5 * i[..., 0] * i[..., 1]


class ContactShadow:
    """Soft contact shadow: near-ground vertices splatted into a small ground-aligned map per frame.

    A vertex at height h above the ground weighs ``(1 - h / (shadow_height · size))²`` (zero above);
    weights are splatted bilinearly into a G×G map centred on each frame's look-at point, blurred,
    and normalised by the rest pose's peak, so shadows look alike at any mesh density or unit.
    Differentiable w.r.t. the vertices.
    """

    def __init__(self, ground_z: float, size: float, style: SceneStyle, grid: int = 64) -> None:
        self.ground_z, self.size, self.style, self.grid = ground_z, size, style, grid
        self.half = 0.75 * size  # the map covers ±half around the look-at point
        self.reference = 1.0

    def calibrate(self, rest_vertices: torch.Tensor) -> None:
        """Set the normalisation from the rest pose (vertices [V,3] world)."""
        centre = rest_vertices.mean(0, keepdim=True).detach()
        peak = self.maps(rest_vertices[None].detach(), centre).amax()
        self.reference = float(peak) if float(peak) > 0 else 1.0

    def maps(self, vertices: torch.Tensor, centres: torch.Tensor) -> torch.Tensor:
        """Vertices [F,V,3], map centres [F,3] → shadow maps [F,1,G,G] (row = +y, col = +x)."""
        g, st = self.grid, self.style
        f = vertices.shape[0]
        h = (vertices[..., 2] - self.ground_z) / (st.shadow_height * self.size)
        weight = (1.0 - h).clamp(0.0, 1.0) ** 2  # [F,V]
        near = torch.nonzero((weight > 0).any(0).detach()).squeeze(1)  # vertices that cast a shadow in some frame
        if near.numel() < weight.shape[1]:  # the rest would only add zeros
            vertices, weight = vertices[:, near], weight[:, near]
        rel = (vertices[..., :2] - centres[:, None, :2]) / (2 * self.half) * g + (g - 1) / 2  # cell coords
        base = torch.floor(rel.detach())
        frac = rel - base
        base = base.long()
        maps = vertices.new_zeros(f, g * g)
        for dx in (0, 1):
            for dy in (0, 1):
                cx, cy = base[..., 0] + dx, base[..., 1] + dy
                wx = frac[..., 0] if dx else 1 - frac[..., 0]
                wy = frac[..., 1] if dy else 1 - frac[..., 1]
                ok = (cx >= 0) & (cx < g) & (cy >= 0) & (cy < g)
                idx = torch.where(ok, cy * g + cx, torch.zeros_like(cx))
                maps = maps.scatter_add(1, idx, weight * wx * wy * ok)
        k = self.blur_kernel(maps.device, maps.dtype)
        if not torch.is_grad_enabled():  # the same blur as a matrix product, many times faster on the CPU
            blur = self.blur_matrix(k)
            return (blur @ maps.view(f, g, g) @ blur.T).view(f, 1, g, g)
        radius = k.shape[0] // 2
        maps = torch.nn.functional.conv2d(maps.view(f, 1, g, g), k.view(1, 1, 1, -1), padding=(0, radius))
        return torch.nn.functional.conv2d(maps, k.view(1, 1, -1, 1), padding=(radius, 0))

    def blur_kernel(self, device: torch.device, dtype: torch.dtype) -> torch.Tensor:
        """The maps' Gaussian blur along one axis [2r+1] (σ = ``shadow_blur`` × size, truncated at 2.5 σ)."""
        g, st = self.grid, self.style
        sigma = max(st.shadow_blur * self.size / (2 * self.half / g), 0.5)
        radius = int(math.ceil(2.5 * sigma))
        k = torch.exp(-0.5 * (torch.arange(-radius, radius + 1, device=device, dtype=dtype) / sigma) ** 2)
        return k / k.sum()

    def blur_matrix(self, kernel: torch.Tensor) -> torch.Tensor:
        """[G,G] the blur ``kernel`` [2r+1] along one axis as a matrix, zero beyond the map's edges like
        the convolution's padding: ``B @ map @ Bᵀ`` blurs a map [G,G] along both axes."""
        g, radius = self.grid, kernel.shape[0] // 2
        offset = torch.arange(g)[None, :] - torch.arange(g)[:, None] + radius  # [G,G]: row r's tap for column c
        offset = offset.to(kernel.device)
        inside = (offset >= 0) & (offset <= 2 * radius)
        return torch.where(inside, kernel[offset.clamp(0, 2 * radius)], torch.zeros((), dtype=kernel.dtype, device=kernel.device))

    def sample(self, maps: torch.Tensor, centres: torch.Tensor, points: torch.Tensor) -> torch.Tensor:
        """Shadow amount in [0,1] at ground points [N,H,W,2] (maps/centres per camera, [N,1,G,G] / [N,3])."""
        g = self.grid
        # grid_sample's align_corners=True maps -1/+1 to cell centres 0 / G-1.
        rel = (points - centres[:, None, None, :2]) / (2 * self.half) * g / (g - 1) * 2
        val = torch.nn.functional.grid_sample(maps, rel, mode="bilinear", padding_mode="zeros", align_corners=True)
        return (val[:, 0] / self.reference).clamp(0.0, 1.0)


def ground_layer(
    cameras: Cameras,
    ground_z: float,
    size: float,
    style: SceneStyle,
    shadow: tuple[ContactShadow, torch.Tensor] | None = None,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """The ground and sky behind the character, per pixel (rows bottom-up).

    Args:
        cameras: N cameras. ground_z: world Z of the plane. size: character size (Blender units).
        shadow: optional (ContactShadow, maps [N,1,G,G]) to darken the ground.
    Returns:
        rgb [N,H,W,3], NDC depth z/w of the ground [N,H,W] (+inf where the sky is seen), and the
        ground hit mask [N,H,W] (bool).
    """
    h, w, dev = cameras.height, cameras.width, cameras.device
    right, up, fwd = cameras.axes
    tx, ty = cameras.tan_half_fov
    xs = ((torch.arange(w, device=dev, dtype=torch.float32) + 0.5) / (0.5 * w) - 1.0) * tx
    ys = ((torch.arange(h, device=dev, dtype=torch.float32) + 0.5) / (0.5 * h) - 1.0) * ty
    # 1. Ray through each pixel centre (camera-space depth 1 along fwd), hit with z = ground_z; its
    # components fwd + x·right + y·up built from a row [N,1,W] and a column [N,H,1] each.
    dx, dy, dz = (
        (fwd[:, c, None, None] + xs[None, None, :] * right[:, c, None, None]) + ys[None, :, None] * up[:, c, None, None]
        for c in range(3)
    )  # [N,H,W] each
    eye = cameras.eye
    t = (ground_z - eye[:, 2, None, None]) / torch.where(dz.abs() > 1e-9, dz, torch.full_like(dz, -1e-9))
    hit = (t > 0) & (dz < 0)
    t = torch.where(hit, t, torch.ones_like(t))
    point = torch.stack([eye[:, 0, None, None] + t * dx, eye[:, 1, None, None] + t * dy], -1)  # [N,H,W,2]
    # 2. Depth in NDC (t is camera-space depth because dirs have unit component along fwd).
    n, f = cameras.near, cameras.far
    z_ndc = (f + n) / (f - n) - 2 * f * n / ((f - n) * t)
    z_ndc = torch.where(hit, z_ndc, torch.full_like(z_ndc, float("inf")))
    # 3. Checkerboard, box-filtered over the pixel footprint (wider at grazing angles).
    square = style.checker_size * size
    ray_len = torch.sqrt(dx * dx + dy * dy + dz * dz)
    across = t * ray_len * (2 * ty / h)
    grazing = (dz.abs() / ray_len).clamp_min(0.02)
    footprint = (across * torch.sqrt(1.0 / grazing))[..., None] / square
    check = _filtered_checker(point / square, footprint)[..., None]
    c0 = torch.tensor(style.checker_colors[0], device=dev)
    c1 = torch.tensor(style.checker_colors[1], device=dev)
    rgb = c1 + (c0 - c1) * check
    light = style.light(dev)
    rgb = rgb * (style.ambient + style.diffuse * light[2].clamp_min(0.0))
    if shadow is not None:
        sh, maps = shadow
        rgb = rgb * (1.0 - style.shadow_strength * sh.sample(maps, cameras.target, point))[..., None]
    # 4. Fade into the background with distance from the look-at point.
    dist = (point - cameras.target[:, None, None, :2]).norm(dim=-1) / (style.fog_distance * size)
    fog = torch.exp(-(dist**2))[..., None]
    bg = torch.tensor(style.background, device=dev)
    rgb = torch.where(hit[..., None], bg + (rgb - bg) * fog, bg.expand_as(rgb))
    return rgb, z_ndc, hit
