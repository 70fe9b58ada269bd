"""Procedural characters and a labelled motion library (teacher data, tests, the demo).

``characters``: the biped and quadruped the embedded teacher was trained on. ``family``: seeded
generators of many distinct rigged characters per kind (bipeds, quadrupeds, birds, hexapods,
serpents) with their true bone roles and a held-out split of seeds.
"""

from .characters import CHARACTERS, biped, quadruped

__all__ = ["CHARACTERS", "biped", "quadruped"]
