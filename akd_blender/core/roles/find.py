"""Bone roles from a rig's topology, rest geometry and skin weights (bone names are never read).

Method, in armature space with the world's up:
1. The plane of mirror symmetry (through ``up``) gives the left-right axis (:func:`.frame.mirror_axis`).
2. Contact bones own mesh that reaches the ground (within 5 % of the height). The root is their lowest
   common ancestor (moved up while its subtree holds under half the skin weight). Contacts group into
   feet (two contacts whose common ancestor is a contact, or lies in the lowest 30 % of the root's
   height, share a foot); a leg is the highest bone above a foot that carries no other foot, down to
   the foot and on through its single or dominant children.
3. From the root the trunk follows central children (mesh region on the mirror plane) with the most
   skin weight; lateral children of trunk bones that reach at least 20 % of the height are arms or
   wings (broad and flat mesh); the chest is the last trunk bone carrying legs or arms; the head is the
   trunk bone after it with the largest mesh region; the bones between are the neck.
4. A tail is the central non-trunk child chain of the root reaching furthest.
5. Forward is perpendicular to up and the mirror normal, its sign from the toes (foot mesh in front of
   the ankle), the head (face in front of the head joint, head in front of the root) and the tail
   (behind the root). left = cross(up, forward).
"""

from __future__ import annotations

import numpy as np

from ..rig import RigAsset
from .frame import fallback_forward, horizontal_basis, mirror_axis, unit, world_up
from .skeleton import BodyTree
from .types import BodyFrame, BoneRoles, Limb

__all__ = ["find_roles"]

GROUND_BAND = 0.05  # contact: mesh within this fraction of the height above the lowest vertex
FOOT_LOW = 0.3  # two contacts share a foot when their common ancestor is below this fraction of the root's height
LIMB_REACH = 0.2  # an arm / wing reaches at least this fraction of the height from its attachment
MIN_CONTRAST = 0.03  # below this the mirror plane is not trusted (rotationally symmetric bodies)


def find_roles(rig: RigAsset) -> BoneRoles:
    """Bone roles of ``rig`` from its topology, rest geometry and skin weights (never from bone names).

    Deterministic; the same roles for any renaming of the bones, any uniform scale and any placement of
    the armature in the world. Raises RigError when no bone carries skin weight.
    """
    return _Finder(rig).roles()


class _Finder:
    def __init__(self, rig: RigAsset):
        self.rig = rig
        self.tree = t = BodyTree(rig)
        self.up = world_up(rig.armature_world)
        verts = t.skinned_vertices
        heights = verts @ self.up
        self.ground = float(heights.min())
        self.height = float(np.ptp(heights))
        e1, e2 = horizontal_basis(self.up)
        centre = verts.mean(0)
        radius = float(np.sqrt(((verts - centre) @ e1) ** 2 + ((verts - centre) @ e2) ** 2).max())
        self.size = max(self.height, 2.0 * radius, 1e-12)
        self.height = max(self.height, 1e-3 * self.size)
        body = np.flatnonzero(t.body)
        normal, offset, contrast = mirror_axis(self.up, t.heads[body], verts, self.size)
        self.symmetric = contrast >= MIN_CONTRAST
        if not self.symmetric:
            forward = fallback_forward(rig.armature_world, self.up)
            normal = unit(np.cross(self.up, forward))
            offset = float(centre @ normal)
        self.normal, self.offset = normal, offset
        self.forward0 = unit(np.cross(normal, self.up))
        self.assigned: set[int] = set()

    # -- geometry of a subtree ------------------------------------------------------------------
    def _region(self, b: int) -> np.ndarray:
        region = self.tree.region(self.tree.subtree(b))
        return region if len(region) >= 3 else self.tree.heads[self.tree.subtree(b)]

    def _lateral(self, b: int) -> bool:
        x = self._region(b) @ self.normal - self.offset
        mean = abs(float(x.mean()))
        return mean > 0.75 * float(x.std()) and mean > 0.02 * self.size

    def _reach(self, b: int) -> float:
        return float(np.linalg.norm(self._region(b) - self.tree.heads[b], axis=1).max())

    def _height_of(self, p: np.ndarray) -> float:
        return float(p @ self.up) - self.ground

    def _volume(self, b: int) -> float:
        own = self.tree.own_vertices(b)
        if len(own) < 4:
            return 0.0
        axes = np.stack([self.normal, self.forward0, self.up])
        return float(np.prod((own @ axes.T).std(0)))

    def _wing_like(self, b: int) -> bool:
        region = self._region(b)
        if len(region) < 6:
            return False
        ev = np.sqrt(np.maximum(np.linalg.eigvalsh(np.cov(region.T)), 0.0))[::-1]
        return ev[1] > 0.25 * ev[0] and ev[2] < 0.45 * ev[1]

    # -- steps ------------------------------------------------------------------------------------
    def _contacts(self) -> list[int]:
        t = self.tree
        out = []
        for b in np.flatnonzero(t.body & t.weighted):
            own = t.own_vertices(int(b))
            if len(own) and float((own @ self.up).min()) <= self.ground + GROUND_BAND * self.height:
                out.append(int(b))
        return out

    def _root(self, contacts: list[int]) -> int:
        t = self.tree
        root = t.lca(contacts) if contacts else t.top
        total = t.subtree_mass[t.top]
        while root != t.top and t.subtree_mass[root] < 0.5 * total:
            root = int(t.parents[root])
        return root

    def _feet(self, contacts: list[int], root: int) -> list[list[int]]:
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
                if lca != root and (lca in group or self._height_of(t.heads[lca]) < FOOT_LOW * hub):
                    ra, rb = find(a), find(b)
                    group[max(ra, rb)] = min(ra, rb)
        feet: dict[int, list[int]] = {}
        for c in contacts:
            feet.setdefault(find(c), []).append(c)
        return [feet[k] for k in sorted(feet)]

    def _legs(self, contacts: list[int], root: int) -> tuple[list[list[int]], list[int]]:
        """Leg chains and the tops of central ground-touching chains of the root (tail candidates)."""
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
            if t.subtree_mass[top] > 0.35 * total:
                continue
            if not self._lateral(top):
                if t.parents[top] == root:
                    central.append(top)
                continue
            legs.append(t.path(top, low) + t.continue_chain(low))
        return legs, central

    def _trunk(self, root: int, leg_tops: set[int], tail_candidates: list[int]):
        """Trunk bones from the root's trunk child on, lateral limbs found on the way as
        (trunk position, top bone) with -1 for the root, and the root's other central children."""
        t = self.tree
        limbs: list[tuple[int, int]] = []
        kids = [c for c in t.body_children[root] if c not in leg_tops and c not in tail_candidates]
        central = [c for c in kids if not self._lateral(c)]
        limbs += [(-1, c) for c in kids if self._lateral(c)]

        def limb_count(c):
            sub = t.subtree(c)
            return sum(1 for x in sub for y in t.body_children[x] if y in leg_tops or self._big_lateral(y))

        trunk: list[int] = []
        if central:
            start = max(central, key=lambda c: (limb_count(c), t.subtree_mass[c], -c))
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

    def _big_lateral(self, b: int) -> bool:
        return self._lateral(b) and self._reach(b) >= LIMB_REACH * self.height

    def roles(self) -> BoneRoles:
        t = self.tree
        contacts = self._contacts()
        root = self._root(contacts)
        leg_chains, central_contacts = self._legs(contacts, root)
        leg_tops = {c[0] for c in leg_chains}
        trunk, limb_tops, other_central = self._trunk(root, leg_tops, central_contacts)
        attach = [i for i, c in enumerate(trunk) if any(y in leg_tops for y in t.body_children[c])]
        root_h = self._height_of(t.heads[root])
        arm_tops = []
        for pos, top in limb_tops:
            if not self._big_lateral(top):
                continue
            if pos < 0 and self._height_of(self._region(top).mean(0)) < root_h:
                continue
            arm_tops.append(top)
            attach.append(pos)
        chest = max(attach) if attach else -1
        after = trunk[chest + 1 :]
        head = max(after, key=lambda b: (self._volume(b), -b)) if after else None

        tail_candidates = [c for c in other_central + central_contacts if self._reach(c) >= 0.15 * self.size]
        tail_top = max(tail_candidates, key=lambda c: (self._reach(c), -c)) if tail_candidates else None

        forward = self._facing(leg_chains, head, root, tail_top)
        left = np.cross(self.up, forward)
        self.left_offset = float(t.skinned_vertices.mean(0) @ left)
        if self.normal @ left < 0:
            self.normal, self.offset = -self.normal, -self.offset
        self.forward0 = forward

        tail: list[int] = []
        if tail_top is not None:
            direction = self._region(tail_top).mean(0) - t.heads[root]
            if direction @ forward < 0.25 * np.linalg.norm(direction):
                tail = [tail_top] + t.continue_chain(tail_top)

        wings = [c for c in arm_tops if self._wing_like(c)]
        arms = [c for c in arm_tops if c not in wings]
        legs = self._limbs(leg_chains, many=len(leg_chains) > 2, forward=forward)
        arm_limbs = self._limbs([[c] + t.continue_chain(c) for c in arms], many=False, forward=forward)
        wing_limbs = self._limbs([[c] + t.continue_chain(c) for c in wings], many=False, forward=forward)

        kind = self._kind(len(legs), bool(wing_limbs), len(trunk))
        if head is not None:
            spine, neck = trunk[: chest + 1], trunk[chest + 1 : trunk.index(head)]
            if chest < 0:
                spine, neck = neck, []
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

    def _facing(self, legs: list[list[int]], head: int | None, root: int, tail_top: int | None) -> np.ndarray:
        """Forward [3]: the mirror plane's in-plane horizontal axis, signed by toes, head and tail (the
        world's -Y when no mirror plane stands out)."""
        t, f0 = self.tree, self.forward0
        if not self.symmetric:
            return f0
        band = GROUND_BAND * self.height
        score = 0.0
        for chain in legs:
            region = self._region(chain[0])
            sole = region[(region @ self.up) <= self.ground + band]
            joints = [t.heads[b] for b in chain if self._height_of(t.heads[b]) > band]
            if len(sole) and joints:
                ankle = min(joints, key=lambda p: float(p @ self.up))
                score += float((sole.mean(0) - ankle) @ f0)
        if head is not None:
            face = t.own_vertices(head).mean(0)
            score += float((face - t.heads[head]) @ f0) + float((face - t.heads[root]) @ f0)
        if tail_top is not None:
            score -= float((self._region(tail_top).mean(0) - t.heads[root]) @ f0)
        if abs(score) < 1e-3 * self.height:
            score = float(fallback_forward(self.rig.armature_world, self.up) @ f0)
        return f0 if score >= 0 else -f0

    def _limbs(self, chains: list[list[int]], many: bool, forward: np.ndarray) -> list[Limb]:
        left = np.cross(self.up, forward)
        placed = []
        for chain in chains:
            x = float(self._region(chain[0]).mean(0) @ left) - self.left_offset
            side = "center" if abs(x) < 0.02 * self.size else ("left" if x > 0 else "right")
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

    def _kind(self, legs: int, wings: bool, trunk: int) -> str:
        if legs == 2:
            return "bird" if wings else "biped"
        if legs == 4:
            return "quadruped"
        if legs == 6:
            return "hexapod"
        if legs == 0 and trunk >= 3:
            verts = self.tree.skinned_vertices
            _, s, _ = np.linalg.svd(verts - verts.mean(0), full_matrices=False)
            if s[0] > 3.0 * s[1] and self.height < 0.35 * self.size:
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
