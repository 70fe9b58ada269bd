"""One distillation's working set (:class:`RunContext`), passed whole to its starts and its loop, and
rendering as the distillation renders."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import torch

from ..character.kinematics import Skeleton
from ..character.rig import RigAsset
from ..motion.clip import MotionParams
from ..progress import Callbacks
from ..settings import DistillConfig

if TYPE_CHECKING:
    from ..render import Renderer

__all__ = ["RunContext", "first_frame", "render_as_distilled"]


@dataclass
class RunContext:
    """What a start and the SDS loop share in one distillation.

    ``rig``: the character; ``prior``: the video model (or the teacher's library reader); ``text``: the
    prompt's embedding as the prior encoded it (its ``extra`` holds what it read the prompt as);
    ``config``: the settings, start and sizes resolved; ``params``: the motion being optimised (its
    keys are written in place by the starts); ``skeleton``: FK/LBS of ``rig`` on the run's device;
    ``renderer``: renders at the supersampled size; ``camera_options``: the prior's framing
    (:attr:`~akd_blender.core.video_models.capabilities.Capabilities.camera_options`); ``generator``:
    the seeded generator of the start's drawing and SDS draw 0; ``callbacks``: progress, preview and
    cancel."""

    rig: RigAsset
    prior: Any
    text: Any
    config: DistillConfig
    params: MotionParams
    skeleton: Skeleton
    renderer: Renderer
    camera_options: dict
    generator: torch.Generator | None
    callbacks: Callbacks

    def render(self, vertices: torch.Tensor, views: int = 1) -> torch.Tensor:
        """Skinned vertices [F,V,3] (world) → RGBA [F·views,4,H,W] in [0,1] (:func:`render_as_distilled`)."""
        return render_as_distilled(self.rig, vertices, self.renderer, self.config, self.camera_options, views)


def render_as_distilled(
    rig: RigAsset, vertices: torch.Tensor, renderer, config: DistillConfig, camera_options: dict, views: int = 1
) -> torch.Tensor:
    """Skinned vertices [F,V,3] (world) rendered as the distillation renders them: the loop's camera
    rule (``config.camera``, ``views`` per frame) at ``renderer``'s supersampled size, area-downsampled
    to ``config``'s size. Returns RGBA [F·views,4,H,W] in [0,1]."""
    from ..render import make_cameras, root_path

    cameras = make_cameras(
        rig, root_path(vertices), renderer.height, renderer.width, mode=config.camera, views=views, **camera_options
    )
    rgba = renderer.render(vertices, cameras)
    ss = renderer.height // config.height
    if ss > 1:
        rgba = torch.nn.functional.avg_pool2d(rgba, ss)
    return rgba


@torch.no_grad()
def first_frame(
    rig: RigAsset, params: MotionParams, skeleton, renderer, config: DistillConfig, camera_options: dict
) -> torch.Tensor:
    """The character in its start pose (``params``' first frame, offsets as they stand) as the
    distillation renders it: [3,H,W] in [0,1] at ``config``'s size (``renderer`` renders at the
    supersampled size), from the camera of a one-frame clip of that pose (what an image prior is
    asked to animate)."""
    rotations, locations = params.pose_channels()
    vertices = skeleton((rotations[:1], locations[:1]))  # [1,V,3]
    return render_as_distilled(rig, vertices, renderer, config, camera_options)[0, :3]
