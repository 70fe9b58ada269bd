"""Procedural characters and a labelled motion library (teacher data, tests, the demo)."""

from .characters import CHARACTERS, biped, quadruped

__all__ = ["CHARACTERS", "biped", "quadruped"]
