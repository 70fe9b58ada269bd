"""Body axes from rest geometry: the world's up in armature space and the plane of mirror symmetry."""

from __future__ import annotations

import numpy as np

__all__ = ["world_up", "horizontal_basis", "mirror_axis", "fallback_forward", "unit"]

_PROBES = 200  # mesh vertices reflected per candidate plane
_TARGETS = 1000  # mesh vertices they are matched against


def unit(v: np.ndarray) -> np.ndarray:
    """``v`` [3] scaled to length 1."""
    return v / np.linalg.norm(v)


def world_up(armature_world: np.ndarray) -> np.ndarray:
    """float64 [3], unit: the world's +Z expressed in armature space (any rotation, scale or shear)."""
    return unit(np.linalg.solve(np.asarray(armature_world, dtype=np.float64)[:3, :3], np.array([0.0, 0.0, 1.0])))


def fallback_forward(armature_world: np.ndarray, up: np.ndarray) -> np.ndarray:
    """float64 [3], unit: the world's -Y (Blender's front view looks along +Y at a character facing -Y)
    in armature space, made perpendicular to ``up``; the facing of a rig whose geometry does not tell."""
    v = np.linalg.solve(np.asarray(armature_world, dtype=np.float64)[:3, :3], np.array([0.0, -1.0, 0.0]))
    return unit(v - (v @ up) * up)


def horizontal_basis(up: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Two unit vectors [3] spanning the plane perpendicular to ``up``."""
    a = np.eye(3)[int(np.argmin(np.abs(up)))]
    e1 = unit(np.cross(up, a))
    return e1, np.cross(up, e1)


def _spread(n: int, count: int) -> np.ndarray:
    """``count`` indices spread evenly over range(n) (all of them when n ≤ count)."""
    return np.arange(n) if n <= count else np.linspace(0, n - 1, count).round().astype(np.int64)


def _nearest_distance(queries: np.ndarray, points: np.ndarray) -> np.ndarray:
    """Distances [Q] from each query [Q,3] to its nearest point [P,3]."""
    d2 = (queries**2).sum(1)[:, None] + (points**2).sum(1)[None] - 2.0 * (queries @ points.T)
    return np.sqrt(np.maximum(d2.min(1), 0.0))


def _mirror_error(n: np.ndarray, joints: np.ndarray, probes: np.ndarray, targets: np.ndarray, offset: float) -> float:
    """Mean distance from mirrored joints / mesh probes to the nearest joint / mesh vertex, for the
    plane {x : x·n = offset}."""

    def reflect(p):
        return p - 2.0 * ((p @ n) - offset)[:, None] * n

    err = _nearest_distance(reflect(probes), targets).mean()
    if len(joints) > 1:
        err += _nearest_distance(reflect(joints), joints).mean()
    return float(err)


def mirror_axis(
    up: np.ndarray, joints: np.ndarray, vertices: np.ndarray, size: float, candidates: np.ndarray | None = None
) -> tuple[np.ndarray, float, float, float]:
    """The normal of the character's plane of mirror symmetry, the plane's offset along it, how clearly
    the plane stands out and how well it mirrors.

    The plane contains ``up``; it is the one that best maps the joints [J,3] onto joints and the mesh
    vertices [V,3] onto the mesh when reflected through it. Searched every 3°, the three best local
    minima refined to 0.5°, also tried: the horizontal parts of ``candidates`` [K,3] (e.g. differences
    of joints that may mirror each other; one per 0.5°), then made exact from the joints the plane pairs up where that
    matches better; the offset is found from the joint pairs too (:func:`_plane_offset`). Returns
    (normal [3], offset, contrast, error): error is the plane's mean distance from mirrored points to the
    nearest joint / vertex (joints and mesh added, armature units), contrast is (worst - best error) /
    ``size``; a contrast near 0 means no plane stands out (e.g. a cylinder).
    """
    e1, e2 = horizontal_basis(up)
    probes = vertices[_spread(len(vertices), _PROBES)]
    targets = vertices[_spread(len(vertices), _TARGETS)]
    mean = vertices.mean(0)

    def error(n: np.ndarray) -> float:
        return _mirror_error(n, joints, probes, targets, float(mean @ n))

    def at(theta: float) -> np.ndarray:
        return np.cos(theta) * e1 + np.sin(theta) * e2

    coarse = np.deg2rad(np.arange(0.0, 180.0, 3.0))
    errors = np.array([error(at(t)) for t in coarse])
    is_min = (errors <= np.roll(errors, 1)) & (errors <= np.roll(errors, -1))
    tried = [(errors[i], at(coarse[i])) for i in range(len(coarse))]
    for i in sorted(np.flatnonzero(is_min), key=lambda i: errors[i])[:3]:
        tried += [(error(at(t)), at(t)) for t in coarse[i] + np.deg2rad(np.arange(-2.5, 2.51, 0.5))]
    for c in _distinct_directions(candidates, up, size):
        tried.append((error(c), c))
    best_error, normal = min(tried, key=lambda item: item[0])
    contrast = float((errors.max() - best_error) / size)
    refined = _refine_from_pairs(normal, up, joints, float(mean @ normal), size)
    refined_error = error(refined)
    if refined_error < best_error:
        normal, best_error = refined, refined_error
    return normal, _plane_offset(normal, joints, float(mean @ normal)), contrast, float(best_error)


def _distinct_directions(candidates: np.ndarray | None, up: np.ndarray, size: float) -> list[np.ndarray]:
    """The horizontal unit directions of ``candidates`` [K,3], one per 0.5° of plane angle (the first
    met; the search's own step), in their order: a head with dozens of face bones gives thousands of
    sibling pairs, most of them along a few directions."""
    out, seen = [], set()
    e1, e2 = horizontal_basis(up)
    for c in [] if candidates is None else candidates:
        c = c - (c @ up) * up
        if np.linalg.norm(c) <= 1e-9 * size:
            continue
        c = unit(c)
        angle = np.degrees(np.arctan2(c @ e2, c @ e1)) % 180.0  # a plane's normal and its negation agree
        key = int(np.round(angle / 0.5)) % 360
        if key not in seen:
            seen.add(key)
            out.append(c)
    return out


def _plane_offset(normal: np.ndarray, joints: np.ndarray, offset: float) -> float:
    """The mirror plane's offset along ``normal`` from the joints: the median of the midpoints of joints
    that mirror each other (mutual nearest after the reflection about ``offset``, a joint on the plane
    pairing with itself), so that mesh a character holds on one side does not shift it."""
    if len(joints) < 2:
        return offset
    x = joints @ normal
    mirrored = joints - 2.0 * (x - offset)[:, None] * normal
    partner = ((mirrored[:, None] - joints[None]) ** 2).sum(-1).argmin(1)
    mids = [(x[i] + x[p]) / 2 for i, p in enumerate(partner) if partner[p] == i]
    return float(np.median(mids)) if mids else offset


def _refine_from_pairs(normal: np.ndarray, up: np.ndarray, joints: np.ndarray, offset: float, size: float) -> np.ndarray:
    """The plane normal made exact from joint pairs that mirror each other (mutual nearest after the
    reflection, apart by more than 2 % of ``size``, their difference within 5° of ``normal``): the main
    horizontal direction of their differences, kept only when within 10° of ``normal``."""
    if len(joints) < 2:
        return normal
    mirrored = joints - 2.0 * ((joints @ normal) - offset)[:, None] * normal
    d = ((mirrored[:, None] - joints[None]) ** 2).sum(-1)
    partner = d.argmin(1)
    pairs = [(i, int(p)) for i, p in enumerate(partner) if partner[p] == i and i < p]
    diffs = np.array([joints[i] - joints[p] for i, p in pairs]).reshape(-1, 3)
    diffs = diffs - (diffs @ up)[:, None] * up
    lengths = np.linalg.norm(diffs, axis=1)
    keep = lengths > 0.02 * size
    keep &= np.abs(diffs @ normal) > np.cos(np.deg2rad(5.0)) * lengths  # pairs that are not mirror images are left out
    diffs = diffs[keep]
    if not len(diffs):
        return normal
    _, vecs = np.linalg.eigh(diffs.T @ diffs)
    refined = unit(vecs[:, -1] - (vecs[:, -1] @ up) * up)
    refined = refined if refined @ normal >= 0 else -refined
    return refined if refined @ normal > np.cos(np.deg2rad(10.0)) else normal
