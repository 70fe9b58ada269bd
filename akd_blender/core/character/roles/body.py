"""The rest geometry a rig's bone roles are read from: the world's up, the ground, the mirror plane and
the mesh each bone and subtree owns."""

from __future__ import annotations

import numpy as np

from ..rig import RigAsset
from .frame import fallback_forward, horizontal_basis, mirror_axis, unit, world_up
from .skeleton import BodyTree

__all__ = ["BodyGeometry", "MIN_CONTRAST", "MAX_MIRROR_ERROR", "LIMB_REACH"]

MIN_CONTRAST = 0.03  # below this the mirror plane is not trusted (rotationally symmetric bodies)
MAX_MIRROR_ERROR = 0.12  # a body mirrors left to right when its plane's error is below this fraction of its height
LIMB_REACH = 0.2  # an arm / wing reaches at least this fraction of the height from its attachment


class BodyGeometry:
    """A rig's bone tree with its body axes (armature space) and geometric questions about its bones.

    up: the world's up; ground: lowest point of the skinned mesh or of a bare chain (a limb's unweighted
    last bones, :attr:`.skeleton.BodyTree.bare`) along it; height: extent of the skinned mesh; size: the
    larger of the height and the horizontal diameter; body_size: the larger of the height and the mesh's
    extent along the mirror plane, at most ``size`` (the body's size leaving out wings or arms spread
    sideways wider than it is long); normal / offset: the mirror plane {x : x·normal = offset}; breadth:
    the larger of the height and the width across the mirror plane, the width taken no larger than the
    extent along the plane (the scale of side offsets: an eagle's wing span does not make its legs, a few
    centimetres either side of the plane, central); symmetric: whether a mirror plane stands out (else the plane is taken through the world's
    -Y, Blender's front view); bilateral: whether the body also mirrors well through it (a snake lying in
    an S-curve does not): only then does anything count as lying to one side.
    """

    def __init__(self, rig: RigAsset):
        self.rig = rig
        self.tree = t = BodyTree(rig)
        self.up = world_up(rig.armature_world)
        verts = t.skinned_vertices
        heights = verts @ self.up
        bare = np.concatenate([t.bare_points(int(b)) for b in np.flatnonzero(t.body)] + [np.zeros((0, 3))])
        self.ground = float(min(heights.min(), (bare @ self.up).min(initial=np.inf)))  # the mesh's and the bare chains' floor
        self.height = float(np.ptp(heights))
        e1, e2 = horizontal_basis(self.up)
        centre = verts.mean(0)
        radius = float(np.sqrt(((verts - centre) @ e1) ** 2 + ((verts - centre) @ e2) ** 2).max())
        self.size = max(self.height, 2.0 * radius, 1e-12)
        self.height = max(self.height, 1e-3 * self.size)
        body = np.flatnonzero(t.body)
        normal, offset, contrast, error = mirror_axis(self.up, t.heads[body], verts, self.size, t.sibling_differences())
        self.symmetric = contrast >= MIN_CONTRAST
        self.bilateral = self.symmetric and error <= MAX_MIRROR_ERROR * self.height
        if not self.symmetric:
            forward = fallback_forward(rig.armature_world, self.up)
            normal = unit(np.cross(self.up, forward))
            offset = float(centre @ normal)
        self.normal, self.offset = normal, offset
        self.forward0 = unit(np.cross(normal, self.up))
        length = float(np.ptp(verts @ self.forward0))  # along the mirror plane
        self.breadth = max(self.height, min(float(np.ptp(verts @ normal)), length))  # scale of side offsets
        self.body_size = min(self.size, max(self.height, length))  # the size leaving out a sideways spread
        self._regions: dict[int, np.ndarray] = {}

    def _region(self, b: int) -> np.ndarray:
        """float64 [N,3], the mesh of the subtree of ``b`` (its joints when it owns under 3 vertices)."""
        if b not in self._regions:
            region = self.tree.region(self.tree.subtree(b))
            self._regions[b] = region if len(region) >= 3 else self.tree.heads[self.tree.subtree(b)]
        return self._regions[b]

    def _lateral(self, b: int) -> bool:
        """Whether the subtree of ``b`` lies to one side of the mirror plane (a limb, not the trunk)."""
        return self._lateral_points(self._region(b))

    def _lateral_points(self, points: np.ndarray) -> bool:
        if len(points) == 0 or not self.bilateral:
            return False
        x = points @ self.normal - self.offset
        mean = abs(float(x.mean()))
        return mean > 0.75 * float(x.std()) and mean > 0.02 * self.breadth

    def _reach(self, b: int) -> float:
        """How far the subtree's mesh reaches from the head of ``b``."""
        return float(np.linalg.norm(self._region(b) - self.tree.heads[b], axis=1).max())

    def _height_of(self, p: np.ndarray) -> float:
        return float(p @ self.up) - self.ground

    def _membrane(self, chain: list[int]) -> bool:
        """Whether most bones of ``chain`` own a broad, flat mesh (:meth:`_flat`): a wing's membrane, which
        follows its bones wherever the wing bends or droops (a leg's bones own round meshes)."""
        return sum(self._flat(self.tree.own_vertices(b)) for b in chain) > 0.5 * len(chain)

    def _wing_like(self, b: int) -> bool:
        """Whether the subtree's mesh is broad and flat (second spread > 25 % of the first, third < 45 % of the second)."""
        return self._flat(self._region(b))

    @staticmethod
    def _flat(region: np.ndarray) -> bool:
        """Whether the points [N,3] spread broad and flat (second spread > 25 % of the first, third < 45 %
        of the second; False below 6 points)."""
        if len(region) < 6:
            return False
        ev = np.sqrt(np.maximum(np.linalg.eigvalsh(np.cov(region.T)), 0.0))[::-1]
        return ev[1] > 0.25 * ev[0] and ev[2] < 0.45 * ev[1]

    def _upright(self, root: int, top: int) -> bool:
        """Whether the limb ``top`` attaches above the root at least 60° up from the horizontal, seen in the
        mirror plane (an upright body; a bird's wings attach in front of its hips instead)."""
        v = self.tree.heads[top] - self.tree.heads[root]
        v = v - (v @ self.normal) * self.normal
        rise = float(v @ self.up)
        return rise >= np.tan(np.deg2rad(60.0)) * float(np.linalg.norm(v - rise * self.up))

    def _fatness(self, b: int) -> float:
        """Geometric mean of the two smaller principal spreads of the bone's own mesh (0 below 4 vertices)."""
        own = self.tree.own_vertices(b)
        if len(own) < 4:
            return 0.0
        spread = np.sqrt(np.maximum(np.linalg.eigvalsh(np.cov(own.T)), 0.0))
        return float(np.sqrt(spread[0] * spread[1]))

    def _big_lateral(self, b: int) -> bool:
        return self._lateral(b) and self._reach(b) >= LIMB_REACH * self.height
