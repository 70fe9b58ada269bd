"""The library start (``DistillConfig.start`` "library"): the motion the prompt is read as
(:func:`~akd_blender.core.prompt.reading.read_prompt`: a :class:`~akd_blender.core.prompt.reading.LibraryChoice`,
one motion with its variation or a composed plan), played from the role motion library
(:mod:`akd_blender.core.motion.library`) on the rig's own bone roles
(:func:`~akd_blender.core.character.roles.find_roles`).

The motion faces the rig's own facing (facing 0 in the body frame of its roles) and is started from the held starting pose
(:func:`library_motion`). :func:`write_library_start` writes it into a job's
:class:`~akd_blender.core.motion.clip.MotionParams`, from where SDS steps or redraw rounds may continue.

:class:`~akd_blender.core.distillation.library_reader.LibraryReader` stands in for the embedded teacher
when a job is the library clip alone (no steps, no redraw rounds).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import torch

from ..assets import ASSETS_DIR
from ..character.rig import RigAsset
from ..character.rotations import quat_multiply
from ..motion.clip import MotionClip, MotionParams
from .heading import held_heading, held_travel, held_yaw

if TYPE_CHECKING:
    from ..character.roles import BoneRoles
    from ..prompt.reading import LibraryChoice

__all__ = [
    "library_clip",
    "library_motion",
    "write_library_start",
    "TEACHER_DIR",
]

TEACHER_DIR = ASSETS_DIR / "teacher_image"
"""The shipped image-and-text teacher (prior "tiny"): its ``teacher.json`` (frames, fps, size) and
``phrases.npz`` (precomputed embeddings of its vocabulary)."""


def library_clip(
    rig: RigAsset, roles: BoneRoles, choice: LibraryChoice, frames: int, fps: float, held: MotionClip | None = None
) -> MotionClip:
    """The chosen motion on ``rig`` through ``roles``: ``frames`` frames at ``fps``
    (:func:`~akd_blender.core.motion.library.make_role_clip` with the choice's variation, or the
    choice's plan composed by :func:`~akd_blender.core.prompt.compose.compose_clip`). With ``held`` (a
    held pose, its first frame), as the turns to compose on it
    (:func:`~akd_blender.core.motion.library.from_pose.turns_from_held`): the bones the motion moves take
    its pose, the others keep the held one, the body its held heading."""
    from ..motion.library.from_pose import turns_from_held

    if choice.plan is not None:
        from ..prompt.compose import compose_clip

        clip = compose_clip(rig, roles, choice.plan, fps, frames)
    else:
        from ..motion.library import make_role_clip

        clip = make_role_clip(rig, roles, choice.label, choice.variation, frames, fps)
    if held is None:
        return clip
    up = np.asarray(roles.frame.up, dtype=np.float64)
    return turns_from_held(rig, int(roles.root), held.rotations[0], held_yaw(rig, roles, held), clip, up)


def library_motion(
    rig: RigAsset,
    roles: BoneRoles,
    choice: LibraryChoice,
    frames: int,
    fps: float,
    held: MotionClip | None = None,
    frame_start: int = 1,
) -> MotionClip:
    """The chosen motion as the job's clip: :func:`library_clip` started from ``held``'s first frame
    (None: the rest pose): each bone's rotation is the held one then the clip's turn from it, each
    location the held one plus the clip's (the library moves the body by its carrier bone's
    location, as it plays it directly), the travel turned the way the held body faces. Equal to the
    library clip for the rest pose."""
    clip = library_clip(rig, roles, choice, frames, fps, held)
    rotations, locations = clip.rotations, clip.locations
    if held is not None:
        base = np.repeat(held.rotations[:1], frames, axis=0)
        turned = quat_multiply(torch.as_tensor(base, dtype=torch.float64), torch.as_tensor(rotations, dtype=torch.float64))
        rotations, locations = turned.numpy(), held_travel(rig, roles, held, locations) + held.locations[:1]
    return MotionClip(rig.bone_names, float(fps), int(frame_start), rotations, locations).continuous()


@torch.no_grad()
def write_library_start(rig: RigAsset, roles: BoneRoles, choice: LibraryChoice, params: MotionParams) -> dict:
    """Write the chosen motion into ``params`` (in place): the library clip at the parameters' frames
    and rate, started from their held starting pose (:func:`library_clip`) and composed on it
    (:func:`~akd_blender.core.fitting.motion_starts.starts_as_channels`), as per-frame rotation offsets of the
    free bones and the root's path fitted to the keys (least squares; exact when there is a key per
    frame). The library's travel, carried by its carrier bone, is carried by the parameters' root
    bones (the same body motion; :func:`library_motion` keeps it on the carrier). Returns the report's facts (:meth:`LibraryChoice.facts`)."""
    from ..fitting.frame_paths import keys_from_frames
    from ..fitting.motion_starts import PriorStart, starts_as_channels
    from .ranked_start import offsets_of

    held = MotionClip(
        rig.bone_names,
        params.fps,
        1,
        params.base_rotations[:1].detach().cpu().double().numpy(),
        params.base_locations[:1].detach().cpu().double().numpy(),
    )
    clip = library_clip(rig, roles, choice, params.num_frames, params.fps, held)
    start = PriorStart(choice.label, choice.variation.speed, choice.variation.phase, choice.variation.direction, clip)
    base = params.base_rotations[:1].expand(params.num_frames, -1, -1)
    rotations, drift = starts_as_channels(rig, [start], base, held_heading(rig, params, roles))  # the way it faces
    device, keys = params.rotvec.device, params.rotvec.shape[0]
    interpolation = params.interpolation
    offsets = offsets_of(params, rotations[0].to(device))
    params.rotvec.copy_(keys_from_frames(offsets, keys, interpolation, smooth=0.0) * params.axis_mask)
    params.root_offset.copy_(keys_from_frames(drift[0].to(device), keys, interpolation, smooth=0.0))
    return choice.facts()
