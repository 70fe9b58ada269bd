"""Training of the motion judge (:mod:`akd_blender.core.motion.judge`): ``python -m tools.motion_judge --out DIR``."""
