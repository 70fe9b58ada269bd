"""Renderer: analytic cases (coverage, depth, checkerboard), cameras, gradients vs finite differences."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from akd_blender.core.character.kinematics import Skeleton
from akd_blender.core.character.procedural import biped, quadruped
from akd_blender.core.character.rig import RigAsset
from akd_blender.core.errors import InputError
from akd_blender.core.motion.clip import MotionClip
from akd_blender.core.render import Cameras, Renderer, SceneStyle, make_cameras, render_clip, root_path
from akd_blender.core.render.camera import look_at, perspective
from akd_blender.core.render.raster_torch import TorchRasterizer, opposite_vertices
from akd_blender.core.render.scene import ground_layer

PLAIN = SceneStyle(contact_shadow=False, fog_distance=1e6)


def mesh_rig(vertices, faces, colors=None, name="mesh") -> RigAsset:
    """A one-bone RigAsset around a static mesh (world = armature space)."""
    v = np.asarray(vertices, dtype=np.float64)
    f = np.asarray(faces, dtype=np.int64)
    rest = np.eye(4)[None]
    z = v[:, 2]
    return RigAsset(
        name=name,
        bone_names=("root",),
        parents=np.array([-1]),
        rest_matrices=rest,
        heads=np.zeros((1, 3)),
        tails=np.array([[0.0, 1.0, 0.0]]),
        lengths=np.ones(1),
        use_deform=np.ones(1, dtype=bool),
        use_connect=np.zeros(1, dtype=bool),
        inherit_rotation=np.ones(1, dtype=bool),
        use_local_location=np.ones(1, dtype=bool),
        rotation_modes=("QUATERNION",),
        rotation_locks=np.zeros((1, 3), dtype=bool),
        location_locks=np.zeros((1, 3), dtype=bool),
        rotation_limits=np.full((1, 3, 2), np.nan),
        mesh_names=(name,),
        mesh_offsets=np.array([0, len(v)]),
        vertices=v,
        faces=f,
        weights=np.ones((len(v), 1), dtype=np.float32),
        vertex_colors=np.asarray(colors if colors is not None else np.full((len(v), 3), 0.5), dtype=np.float32),
        ground_height=float(z.min()),
        height=float(np.ptp(z)) or 1.0,
    )


def camera_at(eye, target, height, width, fov_y=90.0, near=0.1, far=100.0) -> Cameras:
    eye_t = torch.tensor([eye], dtype=torch.float32)
    target_t = torch.tensor([target], dtype=torch.float32)
    view = look_at(eye_t, target_t)
    proj = perspective(fov_y, width / height, near, far).float()[None]
    return Cameras(view, proj, eye_t, target_t, height, width, 1, 1, fov_y, near, far)


def quad(x0, x1, z0, z1, y):
    """Vertical quad facing -Y at depth y (vertices, faces)."""
    return [[x0, y, z0], [x1, y, z0], [x1, y, z1], [x0, y, z1]], [[0, 1, 2], [0, 2, 3]]


def test_quad_at_known_depth_covers_expected_pixels():
    # Camera at the origin looking +Y, fov 90°: a quad at depth 2 spanning ±1 covers NDC ±0.5.
    verts, faces = quad(-1.0, 1.0, -1.0, 1.0, 2.0)
    cams = camera_at((0, 0, 0), (0, 1, 0), 32, 32)
    clip = torch.cat([torch.tensor(verts, dtype=torch.float32), torch.ones(4, 1)], 1) @ cams.mvp[0].T
    rast = TorchRasterizer().rasterize(clip[None], torch.tensor(faces), (32, 32))
    covered = rast[0, ..., 3] > 0
    expect = torch.zeros(32, 32, dtype=torch.bool)
    expect[8:24, 8:24] = True  # pixel centres (i + .5) / 16 - 1 within [-0.5, 0.5]
    assert torch.equal(covered, expect)
    n, f = cams.near, cams.far
    z_ndc = (f + n) / (f - n) - 2 * f * n / ((f - n) * 2.0)
    assert torch.allclose(rast[0, ..., 2][covered], torch.tensor(z_ndc), atol=1e-5)
    # Barycentrics reproduce the positions they interpolate.
    world = TorchRasterizer().interpolate(torch.tensor(verts, dtype=torch.float32), rast, torch.tensor(faces))[0]
    xs = (torch.arange(32) + 0.5) / 16 - 1  # NDC → world x at depth 2 is 2·ndc
    assert torch.allclose(world[8, 8:24, 0], 2 * xs[8:24], atol=1e-5)
    assert torch.allclose(world[covered][:, 1], torch.tensor(2.0), atol=1e-5)


def test_renderer_alpha_and_colour_of_a_quad():
    verts, faces = quad(-1.0, 1.0, 1.0, 3.0, 2.0)  # floats above the ground at z=-1 (extra point below)
    verts = verts + [[0.0, 50.0, -1.0]]
    rig = mesh_rig(verts, faces + [[4, 4, 4]], colors=[[1, 0, 0]] * 5)
    cams = camera_at((0, 0, 2), (0, 1, 2), 32, 32)
    img = Renderer(rig, 32, 32, backend="torch", style=PLAIN).render(torch.tensor(rig.vertices, dtype=torch.float32)[None], cams)
    alpha = img[0, 3]
    assert alpha.shape == (32, 32)
    assert torch.all(alpha[9:23, 9:23] == 1) and alpha[:7].abs().max() == 0 and alpha[:, 25:].abs().max() == 0
    red = img[0, :3, 12:20, 12:20]
    assert torch.all(red[0] > 0.4) and torch.all(red[1:] == 0)  # lit red, nothing else


def test_depth_order_is_independent_of_triangle_order():
    near, nf = quad(-1.0, 0.5, -1.0, 0.5, 2.0)
    far, ff = quad(-0.5, 1.0, -0.5, 1.0, 3.0)
    verts = torch.tensor(near + far, dtype=torch.float32)
    cams = camera_at((0, 0, 0), (0, 1, 0), 32, 32)
    clip = torch.cat([verts, torch.ones(8, 1)], 1) @ cams.mvp[0].T
    colour = torch.tensor([[1.0, 0, 0]] * 4 + [[0, 0, 1.0]] * 4)
    r = TorchRasterizer()
    for faces in ([*nf, *(np.array(ff) + 4).tolist()], [*(np.array(ff) + 4).tolist(), *nf]):
        faces = torch.tensor(faces)
        img = r.interpolate(colour, r.rasterize(clip[None], faces, (32, 32)), faces)[0]
        assert torch.allclose(img[14, 14], torch.tensor([1.0, 0, 0]))  # overlap: the near quad
        assert torch.allclose(img[20, 20], torch.tensor([0, 0, 1.0]))  # far quad only


def test_checkerboard_period_seen_from_above():
    # Straight down from 1 unit, fov 90°, 64 px: 1/32 unit per pixel; squares of 0.25 → 8 pixels.
    style = SceneStyle(checker_size=0.25, contact_shadow=False, fog_distance=1e6)
    cams = camera_at((0, 0, 1), (0, 0, 0), 64, 64)
    rgb, depth, hit = ground_layer(cams, 0.0, 1.0, style)
    assert hit.all() and torch.isfinite(depth).all()
    row = rgb[0, 20, :, 0]
    light = row > row.mean()
    runs = torch.nonzero(light[1:] != light[:-1]).squeeze(1) + 1
    assert torch.equal(runs, torch.arange(8, 64, 8))
    col = rgb[0, :, 20, 0] > row.mean()
    assert torch.equal(torch.nonzero(col[1:] != col[:-1]).squeeze(1) + 1, torch.arange(8, 64, 8))
    assert not torch.equal(light[:8], light[8:16])  # alternating


def test_opposite_vertices_of_a_closed_tetrahedron():
    faces = np.array([[0, 1, 2], [0, 3, 1], [1, 3, 2], [2, 3, 0]])
    opp = opposite_vertices(faces)
    assert (opp >= 0).all()
    for t, (a, b, c) in enumerate(faces):  # the vertex across edge (b, c) is not in this triangle
        assert opp[t, 0] not in (a, b, c) or False
    assert (opposite_vertices(faces[:1]) == -1).all()


def _cube(centre, half):
    corners = np.array([[x, y, z] for x in (-1, 1) for y in (-1, 1) for z in (-1, 1)], dtype=np.float64) * half + centre
    faces = [[0, 1, 3], [0, 3, 2], [4, 6, 7], [4, 7, 5], [0, 4, 5], [0, 5, 1], [2, 3, 7], [2, 7, 6], [0, 2, 6], [0, 6, 4]]
    faces += [[1, 5, 7], [1, 7, 3]]
    colors = (corners - corners.min(0)) / np.ptp(corners, axis=0)
    return corners, np.array(faces), colors


def test_gradient_matches_finite_differences():
    torch.manual_seed(0)
    corners, faces, colors = _cube(np.array([0.0, 0.0, 1.0]), 0.5)
    ground_pt = np.array([[0.0, 0.0, 0.0]])  # sets ground_height 0 below the floating cube
    rig = mesh_rig(np.concatenate([corners, ground_pt]), np.concatenate([faces, [[8, 8, 8]]]), np.r_[colors, [[0, 0, 0]]])
    v0 = torch.tensor(rig.vertices, dtype=torch.float64).float()[None]
    cams = make_cameras(rig, v0.mean(1), 40, 40, mode="fixed", fill=0.35, elevation=25.0, azimuth=35.0)
    renderer = Renderer(rig, 40, 40, backend="torch")
    weight = torch.nn.functional.avg_pool2d(torch.rand(1, 4, 40, 40), 5, 1, 2)

    def loss(v):
        return (renderer.render(v, cams) * weight).sum()

    # Rasterised images are only piecewise smooth (a pixel centre crossing an edge is a small jump
    # that antialiasing does not remove entirely), so each direction is checked at two small steps
    # (≈ 0.05 and 0.025 pixel) and must agree at one of them.
    for _ in range(5):
        direction = torch.randn_like(v0) * 0.2
        direction[:, 8] = 0
        v = v0.clone().requires_grad_(True)
        analytic = float((torch.autograd.grad(loss(v), v)[0] * direction).sum())
        with torch.no_grad():
            numeric = [float((loss(v0 + h * direction) - loss(v0 - h * direction)) / (2 * h)) for h in (0.005, 0.0025)]
        assert any(n == pytest.approx(analytic, rel=0.05, abs=0.05) for n in numeric), (analytic, numeric)
        assert abs(analytic) > 0.2  # the check is not vacuous


def test_render_clip_shapes_ranges_and_camera_record():
    rig = quadruped()
    img = render_clip(rig, MotionClip.rest(rig, 3), 24, 40, camera="orbit", backend="torch")
    assert img.shape == (3, 4, 24, 40) and img.dtype == torch.float32
    assert img.min() >= 0 and img.max() <= 1
    assert 0.02 < img[:, 3].mean() < 0.6  # the character is in view and does not fill it
    cams = make_cameras(rig, torch.zeros(5, 3), 16, 16, mode="follow", views=2)
    again = Cameras.from_dict(cams.as_dict())
    assert len(again) == 10 and torch.allclose(again.view, cams.view) and again.settings["mode"] == "follow"
    with pytest.raises(InputError):
        make_cameras(rig, torch.zeros(5, 3), 16, 16, mode="dolly")
    with pytest.raises(InputError):
        render_clip(rig, MotionClip.rest(rig, 1), 8, 8, backend="opengl")


def test_auto_framing_is_scale_invariant_and_follow_tracks_the_root():
    small = biped()
    big = mesh_rig(small.vertices * 50.0, small.faces, small.vertex_colors)
    a = Renderer(small, 32, 32, backend="torch")
    b = Renderer(big, 32, 32, backend="torch")
    va = torch.tensor(small.vertices, dtype=torch.float32)[None]
    vb = va * 50.0
    ia = a.render(va, make_cameras(small, va.mean(1), 32, 32))
    ib = b.render(vb, make_cameras(big, vb.mean(1), 32, 32))
    assert (ia[:, 3] - ib[:, 3]).abs().mean() < 0.01
    path = torch.tensor([[float(i), 0.0, 0.0] for i in range(10)])
    cams = make_cameras(small, path, 32, 32, mode="follow", smoothing=0.0)
    assert torch.allclose(cams.target[:, 0], path[:, 0])
    offsets = cams.eye - cams.target
    assert torch.allclose(offsets, offsets[:1].expand_as(offsets), atol=1e-5)
    fixed = make_cameras(small, path, 32, 32, mode="fixed")
    assert torch.allclose(fixed.eye, fixed.eye[:1].expand_as(fixed.eye))
    orbit = make_cameras(small, path, 32, 32, mode="orbit", views=3)
    dirs = torch.nn.functional.normalize((orbit.eye - orbit.target)[:3, :2], dim=1)
    angles = sorted(math.degrees(math.acos(float(dirs[i] @ dirs[(i + 1) % 3]))) for i in range(3))
    assert angles == pytest.approx([120.0] * 3, abs=1e-3)


def test_a_resized_renderer_draws_what_a_new_one_of_that_size_draws():
    rig = quadruped()
    vertices = Skeleton(rig)(MotionClip.rest(rig, 2))
    big = Renderer(rig, 48, 64, backend="torch", device="cpu")
    small = big.resized(24, 32)
    assert big.resized(48, 64) is big and (big.height, big.width) == (48, 64) and small.raster is big.raster
    cams = make_cameras(rig, root_path(vertices), 24, 32)
    fresh = Renderer(rig, 24, 32, backend="torch", device="cpu").render(vertices, cams)
    assert torch.equal(small.render(vertices, cams), fresh)
    with pytest.raises(InputError, match="renderer is 48x64"):
        big.render(vertices, cams)


def test_shadow_maps_blur_by_matrix_outside_autograd_as_the_convolution_does():
    """Without autograd the contact shadow's blur is a matrix product (fast on the CPU); it must equal
    the convolution used when gradients flow, edges (zero padding) included."""
    from akd_blender.core.render.scene import ContactShadow

    rig = quadruped()
    shadow = Renderer(rig, 16, 16, backend="torch", device="cpu").shadow
    assert isinstance(shadow, ContactShadow)
    vertices = torch.as_tensor(rig.world_vertices(), dtype=torch.float32)[None].repeat(3, 1, 1)
    centres = vertices.mean(1)
    vertices[1, :, 0] += shadow.half  # a frame whose shadow reaches the map's edge
    with torch.no_grad():
        fast = shadow.maps(vertices, centres)
    exact = shadow.maps(vertices.clone().requires_grad_(True), centres).detach()
    assert fast.shape == exact.shape == (3, 1, shadow.grid, shadow.grid) and float(exact.amax()) > 0
    assert float(exact[1, 0, :, -1].abs().amax()) > 0  # the blur reaches the edge in that frame
    assert torch.allclose(fast, exact, atol=1e-6 * float(exact.amax()))
    blur = shadow.blur_matrix(shadow.blur_kernel(torch.device("cpu"), torch.float32))
    assert torch.allclose(blur, blur.T) and torch.allclose(blur[shadow.grid // 2].sum(), torch.tensor(1.0))


def test_the_rasteriser_skips_triangles_that_hold_no_pixel_centre_without_changing_the_image():
    """Tiny triangles between pixel centres draw nothing; one that holds a centre draws it, nearest first."""
    raster = TorchRasterizer()
    faces = torch.tensor([[0, 1, 2], [3, 4, 5], [6, 7, 8]])
    # NDC of an 8×8 image: pixel centres at ±(k + 0.5)/4. Triangle 0 lies between centres, 1 covers
    # the centre of pixel (4, 4) at depth 0.5, 2 covers it too, nearer (depth 0.2).
    xy = [(0.01, 0.01), (0.05, 0.01), (0.01, 0.05), (0.0, 0.0), (0.3, 0.0), (0.0, 0.3), (0.0, 0.0), (0.3, 0.0), (0.0, 0.3)]
    z = [0.0] * 3 + [0.5] * 3 + [0.2] * 3
    pos = torch.tensor([[x, y, d, 1.0] for (x, y), d in zip(xy, z)])[None]
    rast = raster.rasterize(pos, faces, (8, 8))
    assert int((rast[0, ..., 3] > 0).sum()) == 1 and int(rast[0, 4, 4, 3]) == 3 and abs(float(rast[0, 4, 4, 2]) - 0.2) < 1e-6
