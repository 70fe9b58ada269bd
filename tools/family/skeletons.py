"""The family's skeleton drafters by kind (see :mod:`.drafts` for the character frame and the parts)."""

from __future__ import annotations

import numpy as np

from tools.family.bipeds import biped
from tools.family.creatures import bird, hexapod, serpent
from tools.family.drafts import Draft
from tools.family.quadrupeds import quadruped

__all__ = ["DRAFTERS", "draft"]

DRAFTERS = {"biped": biped, "quadruped": quadruped, "bird": bird, "hexapod": hexapod, "serpent": serpent}


def draft(kind: str, rng: np.random.Generator) -> Draft:
    """The draft of one member of ``kind`` (a key of :data:`DRAFTERS`), drawn from ``rng``."""
    return DRAFTERS[kind](rng)
