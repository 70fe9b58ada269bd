"""A procedural character family: seeded generators of many distinct rigged characters per kind.

``make_member(kind, seed)`` gives a :class:`FamilyMember` (a RigAsset, what was drawn, the true bone
roles); kinds are :data:`KINDS` (biped, quadruped, bird, hexapod, serpent). Seeds in :data:`HELDOUT_SEEDS`
are kept out of training; ``members(kind, split, n)`` lists a split's first members.
"""

from tools.family.member import HELDOUT_SEEDS, KINDS, SIZE_RANGES, TRAIN_SEEDS, FamilyMember, MemberStyle, make_member, members

__all__ = ["HELDOUT_SEEDS", "KINDS", "SIZE_RANGES", "TRAIN_SEEDS", "FamilyMember", "MemberStyle", "make_member", "members"]
