"""Fitting a rig to a video: the pose search, its motion starts and the drawn video's stabilisation."""
