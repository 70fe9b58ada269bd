"""The bone tree of a rig with the mesh region each bone owns (from skin weights, less those that bleed
far from their bone), for role finding."""

from __future__ import annotations

import numpy as np

from ..kinematics import nearest_body_bone
from ..rig import RigAsset, RigError

__all__ = ["BodyTree"]

OWN_WEIGHT = 0.25  # a vertex belongs to a bone's own region from this weight on (or where the bone dominates)
WEIGHTED = 0.05  # a bone is weighted when some vertex has at least this weight on it
FAR_FACTOR = 3.0  # a weight is far when its bone is this many times as far as the vertex's nearest weighted bone …
FAR_SLACK = 0.01  # … plus this share of the mesh's largest extent


class BodyTree:
    """Hierarchy, weights and regions of a rig, in armature space.

    Bones are "weighted" when they carry skin weight; "body" bones are the weighted ones and those on
    the paths between them (below the lowest common ancestor of all weighted bones, ``top``). Helper
    bones above ``top`` (e.g. glTF ``_rootJoint``) and unweighted end bones are not body bones; the
    unweighted deform bones hanging below a body bone are its ``bare`` chain (a limb read to its end).
    Weighted bones beside the body's hierarchy (another root's tree: the IK target bones an artist's
    glTF animal weights its paws or hooves to) are ``hung`` on the body bone whose rest segment comes
    nearest their head: the mesh they own counts as that bone's.
    """

    def __init__(self, rig: RigAsset):
        self.rig = rig
        self.parents = np.asarray(rig.parents, dtype=np.int64)
        self.heads = np.asarray(rig.heads, dtype=np.float64)
        self.tails = np.asarray(rig.tails, dtype=np.float64)
        self.vertices = np.asarray(rig.vertices, dtype=np.float64)
        weights = np.asarray(rig.weights, dtype=np.float64)
        j = rig.num_bones
        self.children: list[list[int]] = [[] for _ in range(j)]
        for b, p in enumerate(self.parents):
            if p >= 0:
                self.children[p].append(b)
        self.depth = np.zeros(j, dtype=np.int64)
        for b, p in enumerate(self.parents):
            self.depth[b] = self.depth[p] + 1 if p >= 0 else 0
        self.mass = weights.sum(0)
        self.weighted = (weights >= WEIGHTED).any(0) if weights.size else np.zeros(j, dtype=bool)
        if not self.weighted.any():
            raise RigError(f"armature '{rig.name}': no bone carries skin weights, so bone roles cannot be found")
        self.subtree_mass = self.mass.copy()
        has_weighted = self.weighted.copy()
        for b in range(j - 1, -1, -1):  # parents precede children
            p = self.parents[b]
            if p >= 0:
                self.subtree_mass[p] += self.subtree_mass[b]
                has_weighted[p] |= has_weighted[b]
        weighted_bones = np.flatnonzero(self.weighted)
        self.top = self._top_of(weighted_bones)
        self.body = has_weighted & np.array([self.is_ancestor(self.top, b) for b in range(j)])
        self.body_children = [[c for c in self.children[b] if self.body[c]] for b in range(j)]
        self.bare = self._bare_chains(np.asarray(rig.use_deform, dtype=bool), has_weighted)
        skinned = weights.max(1) > 0
        self.skinned_vertices = self.vertices[skinned]
        near = weights * ~self._far_weights(rig, weights)
        self.hung = self._hung_beside()
        carrier = np.arange(j)
        for bone, on in self.hung.items():
            carrier[bone] = on
        near_carried = np.zeros_like(near)
        np.add.at(near_carried.T, carrier, near.T)  # a hung bone's weights count as its carrier's
        self.owner = np.where(skinned, carrier[near.argmax(1)], -1)
        self._own = [np.flatnonzero((near_carried[:, b] >= OWN_WEIGHT) | (self.owner == b)) for b in range(j)]

    def _hung_beside(self) -> dict[int, int]:
        """{weighted bone beside the body's hierarchy: the body bone it is hung on} (see the class docstring)."""
        body = np.flatnonzero(self.body)
        beside = np.flatnonzero(self.weighted & ~self.body)
        return {int(b): nearest_body_bone(self.rig, body, int(b)) for b in beside} if len(body) else {}

    def _bare_chains(self, deform: np.ndarray, has_weighted: np.ndarray) -> list[list[int]]:
        """Per bone, the deform bones that carry no skin weight hanging below it to a chain's end: from a
        body bone, its only unweighted deform child (or the one with the longest such chain below it), and
        so on down (a limb's last bones that automatic weights left bare: a horse's cannon, pastern and
        hoof). Empty for other bones and where none hangs."""
        j = len(self.parents)
        bare: list[list[int]] = [[] for _ in range(j)]
        for b in range(j - 1, -1, -1):  # children after parents: a child's chain is known before its parent's
            kids = [c for c in self.children[b] if deform[c] and not has_weighted[c]]
            if kids and (self.body[b] or (deform[b] and not has_weighted[b])):
                best = max(kids, key=lambda c: (len(bare[c]), -c))
                bare[b] = [best, *bare[best]]
        return [chain if self.body[b] else [] for b, chain in enumerate(bare)]

    def bare_points(self, b: int) -> np.ndarray:
        """float64 [N,3], the joints (heads and tails) of the bare chain below ``b`` (:attr:`bare`)."""
        chain = self.bare[b]
        return np.concatenate([self.heads[chain], self.tails[chain]]) if chain else np.zeros((0, 3))

    def _far_weights(self, rig: RigAsset, weights: np.ndarray) -> np.ndarray:
        """bool [V,J], the weights that lie far from their vertex: the bone (its rest segment) is more than
        :data:`FAR_FACTOR` times as far from the vertex as the nearest bone weighting it, plus
        :data:`FAR_SLACK` of the mesh's extent. Such weights bleed across the body (automatic weights give a
        leg's vertices weight on the other leg's bones) and own no mesh."""
        far = np.zeros(weights.shape, dtype=bool)
        vi, bi = np.nonzero(weights > 0)
        if not len(vi):
            return far
        heads, tails = np.asarray(rig.heads, dtype=np.float64), np.asarray(rig.tails, dtype=np.float64)
        seg = tails[bi] - heads[bi]
        rel = self.vertices[vi] - heads[bi]
        along = np.clip((rel * seg).sum(1) / np.maximum((seg * seg).sum(1), 1e-24), 0.0, 1.0)
        dist = np.linalg.norm(rel - along[:, None] * seg, axis=1)
        nearest = np.full(len(self.vertices), np.inf)
        np.minimum.at(nearest, vi, dist)
        extent = float(np.ptp(self.skinned_vertices, axis=0).max())
        far[vi, bi] = dist > FAR_FACTOR * nearest[vi] + FAR_SLACK * extent
        return far

    def _top_of(self, bones: np.ndarray) -> int:
        """The lowest common ancestor of ``bones``; where they lie in several hierarchies, that of the
        hierarchy with the most skin weight."""
        roots = {}
        for b in bones:
            r = int(b)
            while self.parents[r] >= 0:
                r = int(self.parents[r])
            roots.setdefault(r, []).append(int(b))
        best = max(sorted(roots), key=lambda r: self.subtree_mass[r])
        return self.lca(roots[best])

    def sibling_differences(self) -> np.ndarray:
        """float64 [K,3], head(c1) - head(c2) for every pair of body siblings whose subtrees hold the same
        number of body bones (the candidates for left/right mirror images)."""
        sizes = {b: len(self.subtree(b)) for b in np.flatnonzero(self.body)}
        out = []
        for b in np.flatnonzero(self.body):
            kids = self.body_children[b]
            for i, c1 in enumerate(kids):
                out += [self.heads[c1] - self.heads[c2] for c2 in kids[i + 1 :] if sizes[c1] == sizes[c2]]
        return np.array(out, dtype=np.float64).reshape(-1, 3)

    def is_ancestor(self, a: int, b: int) -> bool:
        """True when ``a`` is ``b`` or one of its ancestors."""
        while b >= 0 and self.depth[b] >= self.depth[a]:
            if b == a:
                return True
            b = int(self.parents[b])
        return False

    def lca(self, bones) -> int:
        """The lowest common ancestor of the given bones (-1 when they share none)."""
        bones = [int(b) for b in bones]
        a = bones[0]
        for b in bones[1:]:
            while a != b and a >= 0 and b >= 0:
                if self.depth[a] >= self.depth[b]:
                    a = int(self.parents[a])
                else:
                    b = int(self.parents[b])
            if a < 0 or b < 0:
                return -1
        return a

    def subtree(self, b: int) -> list[int]:
        """``b`` and its body descendants, depth first."""
        out, stack = [], [b]
        while stack:
            x = stack.pop()
            out.append(x)
            stack.extend(reversed(self.body_children[x]))
        return out

    def own_vertices(self, b: int) -> np.ndarray:
        """float64 [N,3], the vertices bone ``b`` owns (weight ≥ 0.25 or its dominant bone)."""
        return self.vertices[self._own[b]]

    def region(self, bones) -> np.ndarray:
        """float64 [N,3], the vertices whose dominant bone is one of ``bones``."""
        return self.vertices[np.isin(self.owner, np.asarray(list(bones), dtype=np.int64))]

    def path(self, top: int, bottom: int) -> list[int]:
        """Bones from ``top`` down to ``bottom`` inclusive (``top`` must be an ancestor of ``bottom``)."""
        out = [bottom]
        while out[-1] != top:
            out.append(int(self.parents[out[-1]]))
        return out[::-1]

    def continue_chain(self, b: int, skip=()) -> list[int]:
        """The chain below ``b`` (``b`` excluded): follow the only body child, or the child carrying at
        least 60 % of the children's skin weight, or the only child with children of its own (past twist
        and helper leaves); stop where the chain splits evenly (fingers, toes)."""
        out = []
        while True:
            kids = [c for c in self.body_children[b] if c not in skip]
            if not kids:
                return out
            masses = np.array([self.subtree_mass[c] for c in kids])
            best = int(np.argmax(masses))
            if len(kids) > 1 and masses[best] < 0.6 * masses.sum():
                inner = [c for c in kids if self.body_children[c]]
                if len(inner) != 1:
                    return out
                best = kids.index(inner[0])
            b = kids[best]
            out.append(b)
