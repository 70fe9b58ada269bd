"""Prompts that compose: a prompt read as library motions in order (:mod:`.plan`), played as one clip
with blended transitions on a continuous root path (:mod:`.clip`), and checks read from the motion
itself (:mod:`.checks`). The modifier words are data (``words.json``, :mod:`.words`).

    plan = plan_prompt("walks slowly, then sits down", roles.kind)   # plan.describe(): "walk (slow) → sit"
    clip = compose_clip(rig, roles, plan, fps=24.0)                   # frames=N to fit a set length
"""

from .checks import MotionFacts, motion_facts, raised_hand
from .clip import compose_clip, schedule
from .plan import Part, PartNotUnderstood, Plan, motion_reader, plan_prompt

__all__ = [
    "MotionFacts",
    "Part",
    "PartNotUnderstood",
    "Plan",
    "compose_clip",
    "motion_facts",
    "motion_reader",
    "plan_prompt",
    "raised_hand",
    "schedule",
]
