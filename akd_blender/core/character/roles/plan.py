"""The body plan of a rig: feet on the ground, the root they meet at, legs, trunk, chest, upper-body
limbs and head, found from topology and rest geometry (see :mod:`.find` for the method)."""

from __future__ import annotations

import numpy as np

from .body import BodyGeometry

__all__ = ["BodyPlan"]

GROUND_BAND = 0.05  # contact: mesh within this fraction of the height above the feet's level
FOOT_LOW = 0.3  # two contacts share a foot when their common ancestor is below this fraction of the root's height
UPPER_LIMB_REACH = 0.5  # on a body with more than two legs, an arm or wing reaches this fraction of the shortest leg's reach
WING_REACH = 0.63  # a fingerless lateral chain reaching further than this fraction of the height is a wing


class BodyPlan(BodyGeometry):
    """The structural steps of role finding, on top of the rig's geometry."""

    def _contacts(self) -> list[int]:
        """Weighted body bones whose own mesh, or the bare chain hanging below them (a limb's last bones
        left without weights), reaches the feet's level: the lowest point of the mesh owned by lateral
        bones (so a tail or belly lying lower does not lift the level), or of the whole mesh when no lateral
        bone reaches within 25 % of the height of it; within 5 % of the height."""
        t = self.tree
        bones = [int(b) for b in np.flatnonzero(t.body & t.weighted) if len(t.own_vertices(int(b)))]
        lows = {b: float((np.concatenate([t.own_vertices(b), t.bare_points(b)]) @ self.up).min()) for b in bones}
        lateral = [lows[b] for b in bones if self._lateral_points(t.own_vertices(b))]
        level = min(lateral) if lateral and min(lateral) <= self.ground + 0.25 * self.height else self.ground
        self.feet_level = level + GROUND_BAND * self.height
        return [b for b in bones if lows[b] <= self.feet_level]

    def _own_low(self, b: int) -> float:
        """The lowest point of the mesh ``b`` owns along up (infinity when it owns none)."""
        own = self.tree.own_vertices(b)
        return float((own @ self.up).min()) if len(own) else np.inf

    def _root(self, contacts: list[int]) -> int:
        """The lowest common ancestor of the contacts and of every bone carrying 0.5 % of the skin weight or
        more: the bone that carries the whole body (the topmost body bone when that is not one bone)."""
        t = self.tree
        heavy = [int(b) for b in np.flatnonzero(t.body & (t.mass >= 0.005 * t.mass.sum()))]
        root = t.lca(contacts + heavy) if contacts + heavy else t.top
        return root if root >= 0 else t.top

    def _feet(self, contacts: list[int], root: int) -> list[list[int]]:
        """Contacts grouped into feet: two share a foot when their common ancestor (not the root) is itself
        a contact, lies below 30 % of the root's height, or is a bone whose subtree lies to one side of the
        mirror plane (one limb: a calf's twist bone that took the shin's mesh down to the ankle hangs beside
        the foot, both under the calf)."""
        t = self.tree
        group = {c: c for c in contacts}

        def find(c):
            while group[c] != c:
                c = group[c]
            return c

        hub = self._height_of(t.heads[root])
        for i, a in enumerate(contacts):
            for b in contacts[i + 1 :]:
                lca = t.lca([a, b])
                if lca != root and (lca in group or self._height_of(t.heads[lca]) < FOOT_LOW * hub or self._lateral(lca)):
                    ra, rb = find(a), find(b)
                    group[max(ra, rb)] = min(ra, rb)
        feet: dict[int, list[int]] = {}
        for c in contacts:
            feet.setdefault(find(c), []).append(c)
        return [feet[k] for k in sorted(feet)]

    def _legs(self, contacts: list[int], root: int) -> tuple[list[list[int]], list[int]]:
        """Leg chains and the tops of central ground-touching chains of the root (tail candidates). A leg
        whose weighted bones own no mesh at the feet's level runs on through its bare chain to its end. A
        lateral chain whose bones own a membrane (:meth:`~.body.BodyGeometry._membrane`) is a wing whatever
        it touches, not a leg."""
        t = self.tree
        total = t.subtree_mass[t.top]
        legs, central = [], []
        for foot in self._feet(contacts, root):
            low = t.lca(foot)
            if low == root:
                continue
            top = low
            while t.parents[top] != root and sum(t.is_ancestor(int(t.parents[top]), c) for c in contacts) == len(foot):
                top = int(t.parents[top])
            if t.subtree_mass[top] > 0.5 * total:  # half the body is no leg
                continue
            if not self._lateral(top):
                if t.parents[top] == root:
                    central.append(top)
                continue
            chain = t.path(top, low) + t.continue_chain(low)
            if self._membrane(chain):  # a wing resting on the ground (a dragon's lowered wings) is no leg
                continue
            if min(self._own_low(b) for b in chain) > self.feet_level:  # only its bare end reaches the floor
                chain += t.bare[chain[-1]]
            legs.append(chain)
        return legs, central

    def _trunk(self, root: int, leg_tops: set[int], skip: list[int]):
        """Trunk bones from the root's trunk child on, lateral limbs found on the way as (trunk position,
        top bone) with -1 for the root, and the root's other central children (``skip`` left out)."""
        t = self.tree
        limbs: list[tuple[int, int]] = []
        kids = [c for c in t.body_children[root] if c not in leg_tops and c not in skip]
        central = [c for c in kids if not self._lateral(c)]
        limbs += [(-1, c) for c in kids if self._lateral(c)]

        def limb_count(c):
            sub = t.subtree(c)
            return sum(1 for x in sub for y in t.body_children[x] if y in leg_tops or self._big_lateral(y))

        trunk: list[int] = []
        if central:
            # the trunk carries the most limbs; on a tie, it ends fatter (a head, not a tapering tail)
            start = max(central, key=lambda c: (limb_count(c), self._end_fatness(c), -c))
            others = [c for c in central if c != start]
            x = start
            while x is not None:
                trunk.append(x)
                kids = [c for c in t.body_children[x] if c not in leg_tops]
                limbs += [(len(trunk) - 1, c) for c in kids if self._lateral(c)]
                nxt = [c for c in kids if not self._lateral(c)]
                x = max(nxt, key=lambda c: (t.subtree_mass[c], -c)) if nxt else None
        else:
            others = []
        return trunk, limbs, others

    def _end_fatness(self, b: int) -> float:
        """Fatness of the far end of the central chain from ``b`` (its last bone that is not a thin appendage)."""
        chain, x = [], b
        while x is not None:
            chain.append(x)
            nxt = [c for c in self.tree.body_children[x] if not self._lateral(c)]
            x = max(nxt, key=lambda c: (self.tree.subtree_mass[c], -c)) if nxt else None
        end = self._head(chain)
        return 0.0 if end is None else self._fatness(end)

    def _chest(self, root: int, trunk: list[int], limb_tops, leg_tops: set[int], many_legs: bool) -> tuple[int, list[int]]:
        """The chest's trunk position (-1: the root) and the tops of the upper-body limbs (arms, wings).

        Upper-body limbs are lateral chains reaching at least 20 % of the height, not hanging below the
        root, whose mirrored partner (if any) does too. With more than two legs they attach no further out
        than the last leg attachment (so ears, antennae and horns on the neck or head are not limbs) and
        reach at least half as far as the shortest leg (so hip, shoulder-blade or breast bones are not limbs); otherwise at the first
        trunk bone carrying any. The chest is the last trunk bone carrying legs or upper-body limbs."""
        t = self.tree
        legs_at = [i for i, c in enumerate(trunk) if any(y in leg_tops for y in t.body_children[c])]
        root_h = self._height_of(t.heads[root])
        big = [
            (pos, top)
            for pos, top in limb_tops
            if self._big_lateral(top)
            and (pos >= 0 or self._height_of(self._region(top).mean(0)) >= root_h)
            and self._partner_big(pos, top, limb_tops)
        ]
        if many_legs:
            last = max(legs_at, default=-1)
            legs_reach = min((self._reach(top) for top in leg_tops), default=0.0)
            upper = [(p, c) for p, c in big if p <= last and self._reach(c) >= UPPER_LIMB_REACH * legs_reach]
        else:
            first = min((p for p, _ in big), default=None)
            upper = [(p, c) for p, c in big if p == first]
        chest = max([*legs_at, *(p for p, _ in upper)], default=-1)
        return chest, [c for _, c in upper]

    def _partner_big(self, pos: int, top: int, limb_tops) -> bool:
        """Whether the lateral chains on the other side at ``top``'s trunk position are big too, or there are
        none (a body's limbs come in mirrored pairs: a hip bone whose mesh took weight that bled from the leg
        reaches further than its partner, but is no arm)."""
        side = np.sign(float(self._region(top).mean(0) @ self.normal) - self.offset)
        partners = [
            c
            for p, c in limb_tops
            if p == pos and c != top and np.sign(float(self._region(c).mean(0) @ self.normal) - self.offset) == -side
        ]
        return not partners or any(self._big_lateral(c) for c in partners)

    def _is_wing(self, top: int, root: int, two_legs: bool) -> bool:
        """A wing rather than an arm: a broad, flat mesh, or bones most of which own one (a membrane bent
        or drooping with its bones); or, on a two-legged body, a chain that does not
        end in a hand (three or more child chains), that spreads sideways (its far end lies more to the
        side than up, down, forward or back of its attachment) and that either attaches to a body that is
        not upright (a bird's wings attach in front of its hips) or reaches further than 63 % of the height
        (a span wider than the body is tall; human arms reach about half the height)."""
        chain = [top] + self.tree.continue_chain(top)
        if self._wing_like(top) or self._membrane(chain):
            return True
        if not two_legs:
            return False
        if len(self.tree.body_children[chain[-1]]) >= 3:
            return False
        region = self._region(top) - self.tree.heads[top]
        far = region[int(np.argmax(np.linalg.norm(region, axis=1)))]
        if abs(float(far @ self.normal)) < 0.5 * float(np.linalg.norm(far)):
            return False
        return not self._upright(root, top) or self._reach(top) > WING_REACH * self.height

    def _head(self, candidates: list[int]) -> int | None:
        """The head among the trunk bones after the chest: the first face (:meth:`_hub` counting lateral
        children too: eyes, ears, jaw and skull fanning out of one bone), however thin next to the bones
        before it (automatic weights can give a neck's base much of the chest); else the last one that is
        not an appendage. Passed over: a bone under 60 % as fat as the last accepted one before it (a beak,
        tongue, mandible; also a thin neck before a fatter head), or thinner than it with under half its
        skin weight (a jaw), and every bone past an accepted hub of central parts (:meth:`_hub`). Bones
        owning fewer than 4 vertices are not judged."""
        head, last_fat, last_mass = None, 0.0, 0.0
        for b in candidates:
            fat, mass = self._fatness(b), float(self.tree.mass[b])
            if fat == 0.0:
                continue
            if self._hub(b, lateral=True):  # a face: the head, however thin next to a neck base
                return b
            if head is not None and (fat < 0.6 * last_fat or (fat < last_fat and mass < 0.5 * last_mass)):
                continue
            head, last_fat, last_mass = b, fat, mass
            if self._hub(b):
                break
        return head if head is not None else (candidates[-1] if candidates else None)

    def _hub(self, b: int, lateral: bool = False) -> bool:
        """Whether ``b`` fans out into parts (a face): three or more central body children (any body
        children with ``lateral``), none of which carries half of the skin weight below ``b`` (a neck bone
        carrying the head and mane bones has one that does). The bones past a face hub are its parts,
        never the head, whatever skin weight they took."""
        t = self.tree
        kids = [c for c in t.body_children[b] if lateral or not self._lateral(c)]
        below = float(t.subtree_mass[b] - t.mass[b])
        return len(kids) >= 3 and all(t.subtree_mass[c] < 0.5 * below for c in kids)
