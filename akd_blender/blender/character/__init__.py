"""The character as Blender holds it: the scene file read and written, the armature mirrored into a bpy-free RigAsset (deform skeleton, game rigs, pose channels, constraint-driven bones)."""
