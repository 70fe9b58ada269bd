"""Bone roles from a rig's topology, rest geometry and skin weights (bone names are never read).

Method, in armature space with the world's up (:class:`.body.BodyGeometry`, :class:`.plan.BodyPlan`):
1. Mirror plane: the vertical plane that best maps joints onto joints and the mesh onto itself; its
   normal is the left-right axis (:func:`.frame.mirror_axis`).
2. Feet: bones whose own mesh reaches the feet's level (the lowest point of mesh lying to one side of
   the plane). The root is the lowest common ancestor of them and of every bone with 0.5 % of the skin
   weight (the topmost body bone when no legs are found). Contacts whose common ancestor is a contact or
   lies low share a foot; a leg runs from the highest bone carrying only that foot (below the root or a
   trunk bone) down through the foot's single or dominant children, and lies to one side of the plane.
   Two such limbs that reach out from their joint at least 3/4 as far as down are fins, not legs; a limb
   whose bones mostly own a broad, flat mesh is a wing resting on the ground, not a leg.
3. Trunk: from the root, central children (mesh on the plane) with the most skin weight. Upper-body
   limbs are lateral chains off the trunk reaching 20 % of the height; arms, or wings (flat and broad,
   or spread sideways on a body that is not upright or spanning more than it is tall). The chest is the
   last trunk bone carrying legs or upper-body limbs; the head is the last bone after it that is not a
   thin appendage (jaw, beak); the bones between are the neck.
4. Tail: the central chain without legs reaching furthest from the root or from a rear hub (a central
   non-trunk child of the root carrying legs), when it does not go forward and reaches 15 % of the body's
   size leaving out what spreads sideways (an eagle's wing span does not make its tail too short).
5. Forward: perpendicular to up and the mirror normal, signed by what the body shows: each foot's footprint
   reaches further ahead of its ankle than behind it (toes are longer than heels), a two-legged body's
   knees bend forward, the face lies in front of the head joint (and the head in front of the root on a
   long body), a tail lies behind the root; so hips thrust ahead of the ankles or a head leaning back over
   the heels do not turn the body round. left = cross(up, forward). Kind from the number of legs (and
   wings): 2 biped or bird, 4 quadruped (wings or not), any even number from 6 on the many-legged
   "hexapod" (spiders, crabs); a legless body at least twice as long as tall is a serpent. A serpent's
   single chain whose root end is fatter than its far end runs from its head back: the root is its head
   and the rest of the chain its tail.
"""

from __future__ import annotations

import numpy as np

from ..rig import RigAsset
from .frame import fallback_forward
from .plan import GROUND_BAND, BodyPlan
from .types import BodyFrame, BoneRoles, Limb

__all__ = ["find_roles"]

LONG_BODY_LEAD = 0.25  # the head leads a body whose head lies this fraction of the height or more ahead of the root


def find_roles(rig: RigAsset) -> BoneRoles:
    """Bone roles of ``rig`` from its topology, rest geometry and skin weights (never from bone names).

    Deterministic; the same roles for any renaming of the bones, any uniform scale and any placement of
    the armature in the world. Raises RigError when no bone carries skin weight.
    """
    return _Finder(rig).roles()


class _Finder(BodyPlan):
    """The steps of :func:`find_roles` over the geometry of one rig."""

    def roles(self) -> BoneRoles:
        t = self.tree
        contacts = self._contacts()
        root = self._root(contacts)
        leg_chains, central_contacts = self._legs(contacts, root)
        if len(leg_chains) == 2 and all(self._splayed(chain[0]) for chain in leg_chains):
            leg_chains = []  # two limbs reaching out more than down hold no body up: a fish's fins
        if not leg_chains:  # no legs meet at a hub (a snake, a bust): the topmost body bone carries it all
            root, central_contacts = t.top, []
        leg_tops = {c[0] for c in leg_chains}
        trunk, limb_tops, other_central = self._trunk(root, leg_tops, central_contacts)
        chest, upper = self._chest(root, trunk, limb_tops, leg_tops, many_legs=len(leg_chains) > 2)
        head = self._head(trunk[chest + 1 :])
        reversed_chain: list[int] = []
        if (
            not (leg_chains or upper or other_central)
            and head is not None
            and self._long_and_low()
            and self._head_at_root(root, trunk)
        ):
            reversed_chain, trunk, head, chest = trunk, [], root, -1  # a legless chain rigged from its head back

        def carries_legs(c: int) -> bool:
            return any(t.is_ancestor(c, top) for top in leg_tops)

        # central chains of the root, or of a rear hub (a central child of the root carrying legs)
        hubs = [c for c in other_central if carries_legs(c)]
        pool = other_central + central_contacts + [k for h in hubs for k in t.body_children[h] if k not in leg_tops]
        tail_candidates = [
            c for c in pool if not carries_legs(c) and not self._lateral(c) and self._reach(c) >= 0.15 * self.body_size
        ]
        tail_top = max(tail_candidates, key=lambda c: (self._reach(c), -c)) if tail_candidates else None
        if reversed_chain:
            tail_top = reversed_chain[0]

        forward = self._facing(leg_chains, head, root, tail_top)
        left = np.cross(self.up, forward)
        if self.normal @ left < 0:
            self.normal, self.offset = -self.normal, -self.offset
        self.forward0 = forward

        tail: list[int] = list(reversed_chain)
        if tail_top is not None and not reversed_chain:
            direction = self._region(tail_top).mean(0) - t.heads[root]
            if direction @ forward < 0.25 * np.linalg.norm(direction):
                tail = [tail_top] + t.continue_chain(tail_top)

        wings = [c for c in upper if self._is_wing(c, root, two_legs=len(leg_chains) == 2)]
        arms = [c for c in upper if c not in wings]
        legs = self._limbs(leg_chains, many=len(leg_chains) > 2, forward=forward)
        arm_limbs = self._limbs([[c] + t.continue_chain(c) for c in arms], many=False, forward=forward)
        wing_limbs = self._limbs([[c] + t.continue_chain(c) for c in wings], many=False, forward=forward)

        kind = self._kind(len(legs), bool(wing_limbs), len(trunk) + len(reversed_chain))
        if reversed_chain:
            spine, neck = [], []
        elif head is not None:
            spine, neck = trunk[: chest + 1], trunk[chest + 1 : trunk.index(head)]
            if chest < 0 and not (upper or len(leg_chains) > 2):  # nothing hangs from the root but legs: no chest
                spine, neck = self._split_neck(neck) if not leg_chains else (neck, [])
        else:
            spine, neck = trunk, []
        if kind == "other" and not (legs or arm_limbs or wing_limbs):
            spine, neck, head = trunk, [], None
        frame = self._frame(forward)
        used = {root, *spine, *neck, *tail, *(b for limb in legs + arm_limbs + wing_limbs for b in limb.bones)}
        if head is not None:
            used.add(head)
        return BoneRoles(
            kind=kind,
            frame=frame,
            root=int(root),
            spine=tuple(int(b) for b in spine),
            neck=tuple(int(b) for b in neck),
            head=None if head is None else int(head),
            tail=tuple(int(b) for b in tail),
            legs=tuple(legs),
            arms=tuple(arm_limbs),
            wings=tuple(wing_limbs),
            extras=self._extras(used),
        )

    def _long_and_low(self) -> bool:
        """Whether the body spans at least twice its height (a serpent's or a fish's build)."""
        return self.size >= 2.0 * self.height

    def _head_at_root(self, root: int, trunk: list[int]) -> bool:
        """Whether a legless body's single chain runs from its head back: the root ends the chain (one central
        child) and the fifth of the chain at the root is over 1.2 times as fat as the fifth at the far end (a
        tail tapers)."""
        if len(trunk) < 4 or sum(not self._lateral(c) for c in self.tree.body_children[root]) != 1:
            return False
        chain = [root, *trunk]
        n = max(1, len(chain) // 5)
        near = float(np.mean([self._fatness(b) for b in chain[:n]]))
        far = float(np.mean([self._fatness(b) for b in chain[-n:]]))
        return near > 1.2 * far

    def _split_neck(self, before_head: list[int]) -> tuple[list[int], list[int]]:
        """A legless trunk before its head as (spine, neck): the neck is the run of bones just behind the
        head that are slimmer than 95 % of the trunk's median fatness."""
        fats = [self._fatness(b) for b in before_head]
        if len(before_head) < 3:
            return before_head, []
        limit = 0.95 * float(np.median(fats))
        cut = len(before_head)
        while cut > 1 and 0.0 < fats[cut - 1] < limit:
            cut -= 1
        return before_head[:cut], before_head[cut:]

    def _facing(self, legs: list[list[int]], head: int | None, root: int, tail_top: int | None) -> np.ndarray:
        """Forward [3]: the mirror plane's in-plane horizontal axis, signed by what the body shows (the
        world's -Y when no mirror plane stands out, or when nothing tells): feet reach further forward of
        their ankle than back (toes are longer than heels), a two-legged body's knees bend forward, the
        face lies in front of the head's joint, and the head in front of the root on a long body; a tail
        lies behind the root. Each in armature units, summed. Where the legs' joints stand over the feet
        (a pelvis thrust forward, a crouch) or the head leans back over the hips on an upright body does
        not change which way the body faces."""
        t, f0 = self.tree, self.forward0
        if not self.bilateral:  # no mirror plane: from the root towards the head, else the world's -Y
            fallback = fallback_forward(self.rig.armature_world, self.up)
            if head is None or not self.symmetric or not len(t.own_vertices(head)):
                return fallback
            v = t.own_vertices(head).mean(0) - t.heads[root]
            v = v - (v @ self.up) * self.up
            return v / np.linalg.norm(v) if np.linalg.norm(v) > 0.05 * self.size else fallback
        score = sum(self._toes_ahead(chain) for chain in legs) @ f0 if legs else 0.0
        if len(legs) == 2:
            score += sum(self._knee_ahead(chain) for chain in legs) @ f0
        if head is not None and len(t.own_vertices(head)):
            face = t.own_vertices(head).mean(0)
            score += float((face - t.heads[head]) @ f0)
            lead = face - t.heads[root]
            lead = lead - (lead @ self.up) * self.up
            if np.linalg.norm(lead) >= LONG_BODY_LEAD * self.height:  # a long body: the head leads
                score += float(lead @ f0)
        if tail_top is not None:
            score -= float((self._region(tail_top).mean(0) - t.heads[root]) @ f0)
        if abs(score) < 1e-3 * self.height:
            score = float(fallback_forward(self.rig.armature_world, self.up) @ f0)
        return f0 if score >= 0 else -f0

    def _ankle(self, chain: list[int]) -> int:
        """The leg's joint above its foot: the first bone of ``chain`` running on to the next joint more
        sideways than down (a foot: ankle to toe base), else the last bone whose head stands at least half
        the ground band above the ground (a hoof's pastern), else the chain's top."""
        heads = self.tree.heads
        for b, nxt in zip(chain[:-1], chain[1:], strict=True):
            d = heads[nxt] - heads[b]
            down = abs(float(d @ self.up))
            if np.linalg.norm(d - (d @ self.up) * self.up) > down and self._height_of(heads[b]) < 0.5 * self._height_of(
                heads[chain[0]]
            ):
                return b
        high = [b for b in chain if self._height_of(heads[b]) >= 0.5 * GROUND_BAND * self.height]
        return high[-1] if high else chain[0]

    def _toes_ahead(self, chain: list[int]) -> np.ndarray:
        """[3], the middle of the leg's footprint (its mesh within the ground band) less its ankle
        (:meth:`_ankle`), horizontal: toes reach further from the ankle than the heel does, forward."""
        region = self._region(chain[0])
        sole = region[(region @ self.up) <= self.ground + GROUND_BAND * self.height]
        if not len(sole):
            return np.zeros(3)
        d = sole - self.tree.heads[self._ankle(chain)]
        d = d - np.outer(d @ self.up, self.up)
        return 0.5 * (d[np.argmax(d @ self.forward0)] + d[np.argmin(d @ self.forward0)])

    def _knee_ahead(self, chain: list[int]) -> np.ndarray:
        """[3], how far the knee stands out of the line from the leg's top to its ankle, horizontal, on a
        leg with one joint between them (a thigh and a shin: a knee bends forward); zero otherwise (a
        bird's or a digitigrade leg has a backward-bending joint too)."""
        ankle = self._ankle(chain)
        between = chain[1 : chain.index(ankle)] if ankle in chain else []
        if len(between) != 1:
            return np.zeros(3)
        top, knee, low = (self.tree.heads[b] for b in (chain[0], between[0], ankle))
        axis = low - top
        off = knee - top - axis * float((knee - top) @ axis) / max(float(axis @ axis), 1e-24)
        return off - (off @ self.up) * self.up

    def _limbs(self, chains: list[list[int]], many: bool, forward: np.ndarray) -> list[Limb]:
        placed = []
        for chain in chains:
            x = float(self._region(chain[0]).mean(0) @ self.normal) - self.offset  # the normal points left by now
            side = "center" if abs(x) < 0.02 * self.breadth else ("left" if x > 0 else "right")
            along = float(self.tree.heads[chain[0]] @ forward)
            placed.append((side, along, chain))
        out = []
        for side in ("left", "right", "center"):
            group = sorted((p for p in placed if p[0] == side), key=lambda p: (-p[1], p[2][0]))
            for rank, (_, _, chain) in enumerate(group):
                position = ""
                if many and len(group) > 1:
                    position = "front" if rank == 0 else ("hind" if rank == len(group) - 1 else "middle")
                out.append(Limb(side=side, position=position, bones=tuple(int(b) for b in chain)))
        return out

    def _splayed(self, top: int) -> bool:
        """Whether the limb from ``top`` reaches out from its joint at least 3/4 as far as it reaches down
        (legs of bipeds, birds and quadrupeds reach down at least 2.4 times as far; an insect's legs splay)."""
        reach = self._region(top) - self.tree.heads[top]
        down = float(-(reach @ self.up).min())
        out = float(np.linalg.norm(reach - np.outer(reach @ self.up, self.up), axis=1).max())
        return out >= 0.75 * down

    def _kind(self, legs: int, wings: bool, trunk: int) -> str:
        """The kind from the number of legs: 2 a biped (a bird with wings), 4 a quadruped (with or without
        wings: a dragon, a griffin), any even number from 6 on the many-legged kind "hexapod" (insects,
        spiders, crabs: the name is kept, phrase tables and wordings are keyed by it); no legs on a body at
        least twice as long as tall with a trunk of 3 or more, a serpent; anything else "other"."""
        if legs == 2:
            return "bird" if wings else "biped"
        if legs == 4:
            return "quadruped"
        if legs >= 6 and legs % 2 == 0:
            return "hexapod"
        if legs == 0 and trunk >= 3 and self._long_and_low():
            return "serpent"
        return "other"

    def _frame(self, forward: np.ndarray) -> BodyFrame:
        along = self.tree.skinned_vertices @ forward
        return BodyFrame(
            up=self.up.copy(),
            forward=forward.copy(),
            left=np.cross(self.up, forward),
            height=float(np.ptp(self.tree.skinned_vertices @ self.up)),
            length=float(np.ptp(along)),
            ground=self.ground,
        )

    def _extras(self, used: set[int]) -> tuple[tuple[int, ...], ...]:
        t = self.tree
        seen, chains = set(used), []
        for b in map(int, np.flatnonzero(t.body)):
            if b in seen:
                continue
            chain = [b]
            seen.add(b)
            while True:
                kids = [c for c in t.body_children[chain[-1]] if c not in seen]
                if len(kids) != 1:
                    break
                chain.append(kids[0])
                seen.add(kids[0])
            chains.append(tuple(chain))
        return tuple(chains)
