"""Prompts that compose: a prompt read as library motions in order (:mod:`.plan`), played as one clip
with blended transitions on a continuous root path (:mod:`.clip`), and checks read from the motion
itself (:mod:`.checks`). The modifier words are data (``words.json``, :mod:`.words`)."""

from .plan import Part, PartNotUnderstood, Plan, motion_reader, plan_prompt

__all__ = ["Part", "PartNotUnderstood", "Plan", "motion_reader", "plan_prompt"]
