"""A control rig's controls: which bones are animatable (rig), which controls move which deform bones (probe, map, fingerprint), posing them through Blender (pose) and checking the result (check)."""
