"""Physics grounding with MuJoCo: a rig → an articulated body (``build_model``) that tracks a
MotionClip under gravity and ground contact (``ground_clip``), giving a new MotionClip.

    from akd_blender.core.motion.physics import PhysicsConfig, build_model, ground_clip
    result = ground_clip(rig, clip, PhysicsConfig(), callbacks)
    result.clip, result.metrics_before, result.metrics_after, result.seconds
"""

from __future__ import annotations

from .config import PhysicsConfig
from .model import PhysicsModel, build_model
from .tracking import GroundingResult, ground_clip

__all__ = ["PhysicsConfig", "PhysicsModel", "build_model", "GroundingResult", "ground_clip"]
