"""The character: its rig as plain arrays, forward kinematics and skinning, rotations, bone roles and the procedural characters."""
