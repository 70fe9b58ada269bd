"""Everything that touches Blender (``bpy``): reading rigs, writing keyframes, UI, CLI."""
