"""Per-frame perspective cameras: fixed, following the character, or orbiting it.

World space is Blender's: Z up, metres or any unit (everything scales with the rig). Cameras use
OpenGL conventions: the camera looks down its -Z axis with +Y up and +X right; ``proj`` maps
camera space to clip space with NDC in [-1,1]³ (y up, z=-1 at the near plane).

Auto-framing: the camera distance is chosen from the character's rest-pose size so that its
bounding sphere fills ``fill`` of the frame, whatever the units (a 79-unit Fox and a 1.7 m
biped frame alike). That framing is the one the embedded teacher learnt, and a raised arm or a
jump can leave it; with ``contain`` (the posed vertices) the camera backs off, by one distance for
the whole clip, until every vertex of every frame lies inside the image with a ``margin``
(previews, and priors that learnt no framing). Azimuth 0 looks at the character's front (characters face -Y), 90° at its
left side (+X); elevation is above the horizontal.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace

import numpy as np
import torch

from ..character.rig import RigAsset
from ..errors import InputError
from ..settings import CAMERA_MODES

__all__ = [
    "Cameras",
    "concat_cameras",
    "make_cameras",
    "character_size",
    "look_at",
    "perspective",
    "CAMERA_MODES",
    "DEFAULT_VIEW",
    "frame_extent",
]

DEFAULT_VIEW: tuple[float, float] = (50.0, 15.0)
"""(azimuth, elevation) in degrees of :func:`make_cameras` by default: the distillation's camera."""


@dataclass(frozen=True, eq=False)
class Cameras:
    """N = frames × views perspective cameras, frame-major (camera ``f * views + v``).

    Attributes:
        view: float [N,4,4] world → camera (OpenGL: looks down -Z, +Y up).
        proj: float [N,4,4] camera → clip (OpenGL perspective).
        eye: float [N,3] camera positions (world). target: float [N,3] look-at points (world).
        height, width: image size in pixels. frames: F. views: cameras per frame.
        fov_y: vertical field of view (degrees). near, far: clip distances (world units).
        settings: the arguments that made these cameras (mode, angles, fill, ...) for the record.
    """

    view: torch.Tensor
    proj: torch.Tensor
    eye: torch.Tensor
    target: torch.Tensor
    height: int
    width: int
    frames: int
    views: int = 1
    fov_y: float = 35.0
    near: float = 0.01
    far: float = 100.0
    settings: dict = field(default_factory=dict)

    def __post_init__(self) -> None:
        n = self.frames * self.views
        for name in ("view", "proj"):
            if tuple(getattr(self, name).shape) != (n, 4, 4):
                raise InputError(f"Cameras.{name} has shape {tuple(getattr(self, name).shape)}, expected ({n}, 4, 4)")
        for name in ("eye", "target"):
            if tuple(getattr(self, name).shape) != (n, 3):
                raise InputError(f"Cameras.{name} has shape {tuple(getattr(self, name).shape)}, expected ({n}, 3)")

    def __len__(self) -> int:
        return self.frames * self.views

    @property
    def device(self) -> torch.device:
        return self.view.device

    @property
    def mvp(self) -> torch.Tensor:
        """[N,4,4] world → clip (``proj @ view``)."""
        return self.proj @ self.view

    @property
    def axes(self) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """World-space right, up and forward (viewing direction) unit vectors, each [N,3]."""
        return self.view[:, 0, :3], self.view[:, 1, :3], -self.view[:, 2, :3]

    @property
    def tan_half_fov(self) -> tuple[float, float]:
        """tan of half the horizontal and vertical fields of view."""
        ty = math.tan(math.radians(self.fov_y) / 2)
        return ty * self.width / self.height, ty

    def frame_index(self) -> torch.Tensor:
        """int64 [N], the frame each camera belongs to."""
        return torch.arange(len(self), device=self.device) // self.views

    def to(self, device: torch.device | str | None = None, dtype: torch.dtype | None = None) -> Cameras:
        """The same cameras with tensors on ``device`` (and ``dtype``)."""
        conv = {k: getattr(self, k).to(device=device, dtype=dtype) for k in ("view", "proj", "eye", "target")}
        return replace(self, **conv)

    def as_dict(self) -> dict:
        """Plain-Python record (lists of floats) that :meth:`from_dict` turns back into these cameras."""
        out = {k: getattr(self, k).detach().cpu().double().tolist() for k in ("view", "proj", "eye", "target")}
        out.update(
            height=self.height,
            width=self.width,
            frames=self.frames,
            views=self.views,
            fov_y=self.fov_y,
            near=self.near,
            far=self.far,
            settings=dict(self.settings),
        )
        return out

    @classmethod
    def from_dict(cls, data: dict, device: torch.device | str = "cpu") -> Cameras:
        tensors = {k: torch.tensor(data[k], dtype=torch.float32, device=device) for k in ("view", "proj", "eye", "target")}
        scalars = {k: data[k] for k in ("height", "width", "frames", "views", "fov_y", "near", "far")}
        return cls(**tensors, **scalars, settings=dict(data.get("settings", {})))


def concat_cameras(cameras: list[Cameras]) -> Cameras:
    """Several clips' cameras back to back (same size and views): frames add up, frame-major."""
    tensors = {k: torch.cat([getattr(c, k) for c in cameras]) for k in ("view", "proj", "eye", "target")}
    return replace(cameras[0], **tensors, frames=sum(c.frames for c in cameras))


def character_size(rig: RigAsset) -> float:
    """The rest pose's largest world extent (height, length or width), in Blender units."""
    w = rig.world_vertices()
    if len(w) == 0:
        return float(rig.height) or 1.0
    return float(max(np.ptp(w, axis=0).max(), rig.height, 1e-6))


def look_at(eye: torch.Tensor, target: torch.Tensor, up: tuple[float, float, float] = (0.0, 0.0, 1.0)) -> torch.Tensor:
    """OpenGL view matrices [N,4,4] for eyes [N,3] looking at targets [N,3] (world Z up)."""
    fwd = torch.nn.functional.normalize(target - eye, dim=-1)
    upv = torch.tensor(up, dtype=eye.dtype, device=eye.device).expand_as(fwd)
    right = torch.linalg.cross(fwd, upv, dim=-1)
    degenerate = right.norm(dim=-1, keepdim=True) < 1e-6  # looking straight down: use +Y as up
    right = torch.where(degenerate, torch.linalg.cross(fwd, torch.tensor([0.0, 1.0, 0.0]).to(eye).expand_as(fwd), dim=-1), right)
    right = torch.nn.functional.normalize(right, dim=-1)
    true_up = torch.linalg.cross(right, fwd, dim=-1)
    view = torch.zeros(*eye.shape[:-1], 4, 4, dtype=eye.dtype, device=eye.device)
    view[..., 0, :3], view[..., 1, :3], view[..., 2, :3] = right, true_up, -fwd
    view[..., 0, 3] = -(right * eye).sum(-1)
    view[..., 1, 3] = -(true_up * eye).sum(-1)
    view[..., 2, 3] = (fwd * eye).sum(-1)
    view[..., 3, 3] = 1.0
    return view


def perspective(fov_y: float, aspect: float, near: float, far: float) -> torch.Tensor:
    """OpenGL perspective matrix [4,4] (``fov_y`` degrees, ``aspect`` = width / height)."""
    f = 1.0 / math.tan(math.radians(fov_y) / 2)
    return torch.tensor(
        [
            [f / aspect, 0, 0, 0],
            [0, f, 0, 0],
            [0, 0, (far + near) / (near - far), 2 * far * near / (near - far)],
            [0, 0, -1, 0],
        ],
        dtype=torch.float64,
    )


def _smooth(path: torch.Tensor, sigma: float) -> torch.Tensor:
    """Gaussian smoothing [F,3] along frames (edge-replicated), ``sigma`` in frames."""
    if sigma <= 0 or path.shape[0] < 2:
        return path
    radius = max(1, int(math.ceil(3 * sigma)))
    k = torch.exp(-0.5 * (torch.arange(-radius, radius + 1, dtype=path.dtype) / sigma) ** 2)
    k = (k / k.sum()).to(path.device)
    padded = torch.nn.functional.pad(path.T[None], (radius, radius), mode="replicate")  # [1,3,F+2r]
    return torch.nn.functional.conv1d(padded.transpose(0, 1), k.view(1, 1, -1))[:, 0].T


def make_cameras(
    rig: RigAsset,
    root_path: torch.Tensor,
    height: int,
    width: int,
    mode: str = "follow",
    views: int = 1,
    *,
    fov_y: float = 35.0,
    elevation: float = DEFAULT_VIEW[1],
    azimuth: float = DEFAULT_VIEW[0],
    fill: float = 0.7,
    smoothing: float = 3.0,
    orbit_degrees: float = 360.0,
    distance: float | None = None,
    contain: torch.Tensor | None = None,
    margin: float = 0.05,
) -> Cameras:
    """Cameras for F frames (× ``views`` around the character), auto-framed from the rig's size.

    Args:
        rig: the character (its rest-pose size, ``ground_height`` and ``height`` set the framing).
        root_path: [F,3] world positions the camera follows (e.g. the character's centroid or root
            bone); detached — the camera carries no gradient.
        height, width: image size in pixels.
        mode: ``"follow"`` (look-at point = root path smoothed over ``smoothing`` frames, constant
            height), ``"fixed"`` (one camera for all frames, framing the whole path) or ``"orbit"``
            (follow, turning ``orbit_degrees`` about the character over the clip).
        views: cameras per frame, spread evenly in azimuth (360°/views apart).
        fov_y: vertical field of view, degrees. elevation, azimuth: degrees (see module docstring).
        fill: fraction of the frame's smaller extent the character's bounding sphere covers.
        distance: override the auto-framed camera distance (Blender units).
        contain: posed world vertices [F,V,3] to keep in frame: the distance grows (one for all frames,
            never shrinks) until every vertex projects inside the image, ``margin`` (a fraction of the
            half-width / half-height) from its edges; ``distance`` then is where the search starts.
    Returns:
        :class:`Cameras` with N = F × views, float32, on ``root_path``'s device.
    """
    options = dict(mode=mode, views=views, fov_y=fov_y, elevation=elevation, azimuth=azimuth, fill=fill)
    options.update(smoothing=smoothing, orbit_degrees=orbit_degrees)
    cams = _cameras(rig, root_path, height, width, distance=distance, **options)
    if contain is None:
        return cams
    points = torch.as_tensor(contain).detach().to(torch.float64).cpu()
    if points.ndim != 3 or points.shape[0] != cams.frames or points.shape[-1] != 3:
        raise InputError(f"contain must be [F,V,3] with F = {cams.frames}, got {tuple(points.shape)}")
    limit = 1.0 - margin
    if frame_extent(cams, points) <= limit:
        return cams
    low = high = float(cams.settings["distance"])
    for _ in range(40):  # back off geometrically until it fits ...
        high *= 1.5
        fitted = _cameras(rig, root_path, height, width, distance=high, **options)
        if frame_extent(fitted, points) <= limit:
            break
        low = high
    for _ in range(20):  # ... then halve the gap: the nearest distance that fits, within 1e-6 of it
        mid = 0.5 * (low + high)
        trial = _cameras(rig, root_path, height, width, distance=mid, **options)
        if frame_extent(trial, points) <= limit:
            high, fitted = mid, trial
        else:
            low = mid
    return fitted


def frame_extent(cameras: Cameras, vertices: torch.Tensor) -> float:
    """The largest |x| or |y| in normalised device coordinates of ``vertices`` [F,V,3] (world) seen by
    ``cameras`` (F frames × views): ≤ 1 means every vertex is inside the image; a vertex behind a camera
    counts as infinitely far out."""
    points = torch.as_tensor(vertices).detach().to(torch.float64).cpu()
    points = points.repeat_interleave(cameras.views, 0)  # [F·views,V,3], frame-major like the cameras
    mvp = cameras.mvp.detach().to(torch.float64).cpu()
    clip = torch.cat([points, torch.ones_like(points[..., :1])], -1) @ mvp.transpose(-1, -2)
    w = clip[..., 3]
    if (w <= 1e-9).any():
        return float("inf")
    return float((clip[..., :2] / w[..., None]).abs().max())


def _cameras(
    rig: RigAsset,
    root_path: torch.Tensor,
    height: int,
    width: int,
    mode: str,
    views: int,
    *,
    fov_y: float,
    elevation: float,
    azimuth: float,
    fill: float,
    smoothing: float,
    orbit_degrees: float,
    distance: float | None,
) -> Cameras:
    """:func:`make_cameras` without ``contain``."""
    if mode not in CAMERA_MODES:
        raise InputError(f"camera mode must be one of {', '.join(CAMERA_MODES)}, not {mode!r}")
    if height < 1 or width < 1 or views < 1:
        raise InputError(f"bad camera size {height}x{width} or views={views}")
    path = torch.as_tensor(root_path).detach().to(torch.float64).cpu()
    if path.ndim != 2 or path.shape[1] != 3 or path.shape[0] < 1:
        raise InputError(f"root_path must be [F,3], got {tuple(path.shape)}")
    frames = path.shape[0]
    size = character_size(rig)
    aim_z = rig.ground_height + 0.45 * rig.height
    tan_y = math.tan(math.radians(fov_y) / 2)
    tan_min = min(tan_y, tan_y * width / height)
    dist = distance if distance is not None else 0.5 * size / (fill * tan_min)
    if mode == "fixed":
        centre = 0.5 * (path.amin(0) + path.amax(0))
        span = float((path.amax(0) - path.amin(0))[:2].norm())
        if distance is None:
            dist = 0.5 * (size + span) / (fill * tan_min)
        target = centre.expand(frames, 3).clone()
    else:
        target = _smooth(path, smoothing)
    target[:, 2] = aim_z
    turn = torch.zeros(frames, dtype=torch.float64)
    if mode == "orbit":
        turn = torch.linspace(0.0, orbit_degrees * (frames - 1) / max(frames, 1), frames, dtype=torch.float64)
    az = torch.deg2rad(azimuth + turn[:, None] + torch.arange(views, dtype=torch.float64)[None] * 360.0 / views)  # [F,V]
    el = math.radians(elevation)
    offset = torch.stack([torch.sin(az) * math.cos(el), -torch.cos(az) * math.cos(el), torch.full_like(az, math.sin(el))], -1)
    target_n = target[:, None].expand(frames, views, 3).reshape(-1, 3)
    eye = target_n + dist * offset.reshape(-1, 3)
    near, far = 0.05 * dist, 50.0 * dist + 10.0 * size
    view = look_at(eye, target_n)
    proj = perspective(fov_y, width / height, near, far).expand(frames * views, 4, 4)
    settings = dict(
        mode=mode,
        fov_y=fov_y,
        elevation=elevation,
        azimuth=azimuth,
        fill=fill,
        smoothing=smoothing,
        orbit_degrees=orbit_degrees,
        distance=float(dist),
        character_size=size,
    )
    dev = torch.as_tensor(root_path).device
    f32 = dict(dtype=torch.float32, device=dev)
    return Cameras(
        view.to(**f32),
        proj.to(**f32).contiguous(),
        eye.to(**f32),
        target_n.to(**f32),
        height,
        width,
        frames,
        views,
        fov_y,
        near,
        far,
        settings,
    )
