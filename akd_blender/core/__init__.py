"""The bpy-free core: rig snapshot, kinematics, motion, rendering, priors, distillation, physics.

Nothing under this package imports ``bpy`` or ``mathutils``; it runs in a plain Python process or
on a worker thread inside Blender.
"""
