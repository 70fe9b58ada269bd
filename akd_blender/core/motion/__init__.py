"""The motion: clips of Blender pose channels, the role-based motion library, metrics, physics and the motion judge."""
