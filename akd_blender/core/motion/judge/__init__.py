"""The motion judge: which library motion a clip of any rig shows, read from its body tracks
(role keypoints in the body's own frame), not from pixels."""

from .model import ASSET_DIR, MotionJudge, MotionJudgeConfig, MotionJudgeNet, load_motion_judge
from .tracks import SLOTS, TRACK_CHANNELS, body_tracks, mirror_tracks, slot_chains, slot_points
from .window import JUDGE_SECONDS, cycle_period, is_cyclic, judge_window

__all__ = [
    "JUDGE_SECONDS",
    "cycle_period",
    "is_cyclic",
    "judge_window",
    "ASSET_DIR",
    "load_motion_judge",
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
