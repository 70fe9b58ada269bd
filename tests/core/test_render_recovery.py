"""Inverse rendering: recover a root translation and a joint rotation from a rendered target video."""

from __future__ import annotations

import math

import pytest
import torch

from akd_blender.core.character.kinematics import Skeleton
from akd_blender.core.character.procedural import biped
from akd_blender.core.character.rotations import rotvec_to_quat
from akd_blender.core.render import Renderer, make_cameras

BACKENDS = [
    pytest.param("torch", "cpu", id="torch"),
    pytest.param("nvdiffrast", "cuda", id="nvdiffrast", marks=pytest.mark.gpu),
]


def pyramid_loss(image: torch.Tensor, target: torch.Tensor, levels: int = 4) -> torch.Tensor:
    """MSE at 1, 1/2, 1/4, 1/8 resolution (coarse levels see past non-overlapping silhouettes)."""
    pool = torch.nn.functional.avg_pool2d
    return sum((pool(image, 2**k) - pool(target, 2**k)).square().mean() for k in range(levels))


def recover(backend: str, device: str, steps: int = 100, size: int = 64) -> tuple[float, float]:
    """Returns (root translation error / height, rotation error in degrees) after optimising."""
    rig = biped()
    skeleton = Skeleton(rig).to(device)
    bone, root = rig.bone_index("chest"), int(rig.root_indices[0])
    # The root's location channel is in its rest frame: armature delta → channel is R_restᵀ · delta.
    to_local = torch.as_tensor(rig.rest_matrices[root, :3, :3], dtype=torch.float32, device=device).T
    index_bone, index_root = torch.tensor([bone], device=device), torch.tensor([root], device=device)

    def vertices(rotvec: torch.Tensor, shift: torch.Tensor) -> torch.Tensor:
        rot = torch.zeros(1, rig.num_bones, 4, device=device)
        rot[..., 0] = 1.0
        rot = rot.index_copy(1, index_bone, rotvec_to_quat(rotvec)[None, None])
        loc = torch.zeros(1, rig.num_bones, 3, device=device).index_copy(1, index_root, (to_local @ shift)[None, None])
        return skeleton.deform(rot, loc)

    renderer = Renderer(rig, size, size, backend=backend, device=device)
    centre = torch.as_tensor(rig.world_vertices().mean(0), dtype=torch.float32, device=device)[None]
    cams = make_cameras(rig, centre, size, size, mode="fixed", views=3, azimuth=20.0, fill=0.5)
    true_rot = torch.tensor([0.12, -0.15, 0.10], device=device)  # ≈ 12° about a tilted axis
    true_shift = torch.tensor([0.06, -0.04, 0.02], device=device)  # ≈ 4 % of the height
    with torch.no_grad():
        target = renderer.render(vertices(true_rot, true_shift), cams)
    rotvec = torch.zeros(3, device=device, requires_grad=True)
    shift = torch.zeros(3, device=device, requires_grad=True)
    opt = torch.optim.Adam([rotvec, shift], lr=0.02)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, steps, eta_min=1e-4)
    for _ in range(steps):
        opt.zero_grad()
        pyramid_loss(renderer.render(vertices(rotvec, shift), cams), target).backward()
        opt.step()
        sched.step()
    with torch.no_grad():
        dot = (rotvec_to_quat(rotvec) * rotvec_to_quat(true_rot)).sum().abs().clamp(max=1.0)
        angle = math.degrees(2 * math.acos(float(dot)))
        return float((shift - true_shift).norm()) / rig.height, angle


@pytest.mark.parametrize("backend,device", BACKENDS)
def test_recovers_root_translation_and_joint_rotation(backend, device):
    if device == "cuda" and not torch.cuda.is_available():
        pytest.skip("needs CUDA")
    shift_error, angle_error = recover(backend, device)
    assert shift_error < 0.01, f"root translation off by {shift_error:.2%} of the height"
    assert angle_error < 1.0, f"chest rotation off by {angle_error:.2f}°"
