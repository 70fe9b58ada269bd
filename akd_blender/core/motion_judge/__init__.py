"""The motion judge: which library motion a clip of any rig shows, read from its body tracks
(role keypoints in the body's own frame), not from pixels."""

from .model import MotionJudge, MotionJudgeConfig, MotionJudgeNet
from .tracks import SLOTS, TRACK_CHANNELS, body_tracks, mirror_tracks, slot_chains, slot_points

__all__ = [
    "MotionJudge",
    "MotionJudgeConfig",
    "MotionJudgeNet",
    "SLOTS",
    "TRACK_CHANNELS",
    "body_tracks",
    "mirror_tracks",
    "slot_chains",
    "slot_points",
]
