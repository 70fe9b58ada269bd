"""Procedural characters as RigAssets: a biped and a quadruped with a tail, built from bone specs.

Each bone gets a capsule of its own radius; vertices are weighted smoothly to the nearest bones.
Left limbs are warm-coloured, right limbs cool-coloured, so a video can tell them apart.
Characters stand on z = 0 (Blender's Z up), face -Y (Blender's front view), metres.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .rig import RigAsset

__all__ = [
    "BoneSpec",
    "build_character",
    "biped",
    "quadruped",
    "CHARACTERS",
    "rest_matrix",
    "capsule_mesh",
    "segment_distance",
    "skin_weights",
    "depth_first",
]

TORSO, HEAD = (0.62, 0.62, 0.60), (0.95, 0.85, 0.55)
LEFT, LEFT_END = (0.85, 0.25, 0.20), (0.95, 0.55, 0.15)
RIGHT, RIGHT_END = (0.20, 0.35, 0.85), (0.15, 0.70, 0.80)
TAIL = (0.35, 0.70, 0.30)


@dataclass(frozen=True)
class BoneSpec:
    """One bone: name, parent name (None for the root), head and tail (metres), capsule radius,
    display colour (sRGB in [0,1]), whether it deforms, whether it is connected to its parent."""

    name: str
    parent: str | None
    head: tuple[float, float, float]
    tail: tuple[float, float, float]
    radius: float
    color: tuple[float, float, float]
    deform: bool = True
    connect: bool = False


def rest_matrix(head: np.ndarray, tail: np.ndarray, roll: float = 0.0) -> np.ndarray:
    """A rest matrix [4,4] with Y along head→tail (Blender's bone axis) and the origin at head.

    With ``roll == 0`` X is horizontal (perpendicular to Y and world Z; for a near-vertical bone,
    perpendicular to Y and -Y world); ``roll`` (radians) turns X and Z about the bone's Y axis."""
    y = tail - head
    y = y / np.linalg.norm(y)
    ref = np.array([0.0, 0.0, 1.0]) if abs(y[2]) < 0.9 else np.array([0.0, -1.0, 0.0])
    x = np.cross(y, ref)
    x /= np.linalg.norm(x)
    z = np.cross(x, y)
    if roll:
        c, s = np.cos(roll), np.sin(roll)
        x, z = c * x - s * z, s * x + c * z
    m = np.eye(4)
    m[:3, 0], m[:3, 1], m[:3, 2], m[:3, 3] = x, y, z, head
    return m


def capsule_mesh(head: np.ndarray, tail: np.ndarray, radius: float, segments: int = 10, rings: int = 6):
    """Vertices float64 [N,3] and triangles int64 [T,3] of a closed capsule around head→tail
    (``rings`` circles of ``segments`` vertices along the bone, a narrower circle and a pole beyond
    each end), N = (rings + 2) · segments + 2."""
    m = rest_matrix(head, tail)
    length = float(np.linalg.norm(tail - head))
    angles = np.linspace(0, 2 * np.pi, segments, endpoint=False)
    ys = np.concatenate([[-radius * 0.6], np.linspace(0, length, rings), [length + radius * 0.6]])
    scale = np.concatenate([[0.55], np.ones(rings), [0.55]])
    circle = np.stack([np.cos(angles), np.zeros_like(angles), np.sin(angles)], 1) * radius
    local = np.concatenate([circle * s + [0, y, 0] for y, s in zip(ys, scale)])
    local = np.concatenate([local, [[0, ys[0] - radius * 0.2, 0], [0, ys[-1] + radius * 0.2, 0]]])
    verts = local @ m[:3, :3].T + head
    tris = []
    n_rings = len(ys)
    for r in range(n_rings - 1):
        for s in range(segments):
            a, b = r * segments + s, r * segments + (s + 1) % segments
            c, d = a + segments, b + segments
            tris += [(a, c, b), (b, c, d)]
    bottom, top = n_rings * segments, n_rings * segments + 1
    for s in range(segments):
        tris.append((bottom, s, (s + 1) % segments))
        last = (n_rings - 1) * segments
        tris.append((top, last + (s + 1) % segments, last + s))
    return verts, np.array(tris, dtype=np.int64)


def segment_distance(points: np.ndarray, heads: np.ndarray, tails: np.ndarray) -> np.ndarray:
    """Distances [N,J] from points [N,3] to bone segments [J,3]→[J,3]."""
    seg = tails - heads
    t = np.clip(((points[:, None] - heads[None]) * seg[None]).sum(-1) / (seg * seg).sum(-1)[None], 0, 1)
    closest = heads[None] + t[..., None] * seg[None]
    return np.linalg.norm(points[:, None] - closest, axis=-1)


def build_character(name: str, specs: list[BoneSpec], falloff: float = 0.35) -> RigAsset:
    """Build a RigAsset from bone specs: one capsule per deform bone, smooth weights (up to 3
    bones per vertex, the bone's own capsule dominant), per-vertex colours from the bone colours.
    Bones are put in Blender's order (depth-first, children in spec order)."""
    specs = depth_first(specs)
    names = tuple(s.name for s in specs)
    index = {n: i for i, n in enumerate(names)}
    parents = np.array([index[s.parent] if s.parent else -1 for s in specs], dtype=np.int64)
    heads = np.array([s.head for s in specs], dtype=np.float64)
    tails = np.array([s.tail for s in specs], dtype=np.float64)
    rest = np.stack([rest_matrix(h, t) for h, t in zip(heads, tails)])
    deform = np.array([s.deform for s in specs])
    verts, faces, owner = [], [], []
    for b, spec in enumerate(specs):
        if not spec.deform:
            continue
        v, f = capsule_mesh(heads[b], tails[b], spec.radius)
        faces.append(f + sum(len(x) for x in verts))
        verts.append(v)
        owner.append(np.full(len(v), b))
    vertices, faces, owner = np.concatenate(verts), np.concatenate(faces), np.concatenate(owner)
    radii = np.array([s.radius for s in specs])
    weights = skin_weights(vertices, owner, heads, tails, radii, parents, deform, falloff)
    colors = np.array([s.color for s in specs], dtype=np.float32)[owner]
    z = vertices[:, 2]
    return RigAsset(
        name=name,
        bone_names=names,
        parents=parents,
        rest_matrices=rest,
        heads=heads,
        tails=tails,
        lengths=np.linalg.norm(tails - heads, axis=1),
        use_deform=deform,
        use_connect=np.array([s.connect for s in specs]),
        inherit_rotation=np.ones(len(specs), dtype=bool),
        use_local_location=np.ones(len(specs), dtype=bool),
        rotation_modes=("QUATERNION",) * len(specs),
        rotation_locks=np.zeros((len(specs), 3), dtype=bool),
        location_locks=np.zeros((len(specs), 3), dtype=bool),
        rotation_limits=np.full((len(specs), 3, 2), np.nan),
        mesh_names=(f"{name}_mesh",),
        mesh_offsets=np.array([0, len(vertices)], dtype=np.int64),
        vertices=vertices,
        faces=faces,
        weights=weights,
        vertex_colors=colors,
        ground_height=float(z.min()),
        height=float(np.ptp(z)),
    )


def skin_weights(
    vertices: np.ndarray,
    owner: np.ndarray,
    heads: np.ndarray,
    tails: np.ndarray,
    radii: np.ndarray,
    parents: np.ndarray,
    deform: np.ndarray,
    falloff: float = 0.35,
) -> np.ndarray:
    """Smooth skin weights float32 [V,J] for vertices [V,3] each made for bone ``owner`` [V].

    A vertex is weighted among its owner, the owner's parent and the owner's children (deform bones
    only) by ``exp(-distance / radius / falloff)`` to each bone's segment, the owner boosted by e¹;
    the 3 largest are kept and the row normalised to 1. ``radii`` [J] are the bones' mesh radii."""
    n = len(heads)
    dist = segment_distance(vertices, heads, tails) / (radii[None] + 1e-6)
    logits = -dist / falloff
    logits[:, ~deform] = -np.inf
    related = (parents[owner][:, None] == np.arange(n)[None]) | (parents[None, :] == owner[:, None])
    logits[~(related | (np.arange(n)[None] == owner[:, None]))] = -np.inf
    logits[np.arange(len(owner)), owner] += 1.0  # the capsule's own bone dominates
    weights = np.exp(logits - logits.max(1, keepdims=True))
    weights[weights < np.sort(weights, axis=1)[:, -3:-2]] = 0.0  # keep the 3 largest
    weights /= weights.sum(1, keepdims=True)
    return weights.astype(np.float32)


def depth_first(specs: list[BoneSpec]) -> list[BoneSpec]:
    """Specs in Blender's bone order: depth-first from the roots, children in the given order."""
    children: dict[str | None, list[BoneSpec]] = {}
    for spec in specs:
        children.setdefault(spec.parent, []).append(spec)
    ordered: list[BoneSpec] = []

    def visit(parent: str | None) -> None:
        for spec in children.get(parent, []):
            ordered.append(spec)
            visit(spec.name)

    visit(None)
    return ordered


def _mirror(x: float, side: str) -> float:
    return x if side == "L" else -x


def biped() -> RigAsset:
    """A 1.7 m biped with 19 bones (hips root, spine, chest, neck, head, arms, legs, feet)."""
    s = [
        BoneSpec("hips", None, (0, 0, 0.95), (0, 0, 1.10), 0.14, TORSO),
        BoneSpec("spine", "hips", (0, 0, 1.10), (0, 0, 1.28), 0.13, TORSO, connect=True),
        BoneSpec("chest", "spine", (0, 0, 1.28), (0, 0, 1.45), 0.15, TORSO, connect=True),
        BoneSpec("neck", "chest", (0, 0, 1.45), (0, 0, 1.55), 0.05, HEAD, connect=True),
        BoneSpec("head", "neck", (0, 0, 1.55), (0, 0, 1.72), 0.10, HEAD, connect=True),
    ]
    for side in "LR":
        main, end = (LEFT, LEFT_END) if side == "L" else (RIGHT, RIGHT_END)
        x = lambda v, side=side: _mirror(v, side)
        s += [
            BoneSpec(f"shoulder.{side}", "chest", (x(0.04), 0, 1.42), (x(0.18), 0, 1.42), 0.05, main),
            BoneSpec(f"upper_arm.{side}", f"shoulder.{side}", (x(0.18), 0, 1.42), (x(0.45), 0, 1.42), 0.05, main, connect=True),
            BoneSpec(f"forearm.{side}", f"upper_arm.{side}", (x(0.45), 0, 1.42), (x(0.70), 0, 1.42), 0.045, main, connect=True),
            BoneSpec(f"hand.{side}", f"forearm.{side}", (x(0.70), 0, 1.42), (x(0.80), 0, 1.42), 0.04, end, connect=True),
            BoneSpec(f"thigh.{side}", "hips", (x(0.10), 0, 0.95), (x(0.10), 0, 0.52), 0.07, main),
            BoneSpec(f"shin.{side}", f"thigh.{side}", (x(0.10), 0, 0.52), (x(0.10), 0, 0.10), 0.055, main, connect=True),
            BoneSpec(f"foot.{side}", f"shin.{side}", (x(0.10), 0, 0.10), (x(0.10), -0.17, 0.04), 0.045, end, connect=True),
        ]
    return build_character("Biped", s)


def quadruped() -> RigAsset:
    """A 1.5 m long quadruped with a 3-bone tail: 20 bones, facing -Y."""
    s = [
        BoneSpec("pelvis", None, (0, 0.35, 0.80), (0, 0.10, 0.82), 0.15, TORSO),
        BoneSpec("spine", "pelvis", (0, 0.10, 0.82), (0, -0.20, 0.84), 0.16, TORSO, connect=True),
        BoneSpec("chest", "spine", (0, -0.20, 0.84), (0, -0.42, 0.86), 0.17, TORSO, connect=True),
        BoneSpec("neck", "chest", (0, -0.42, 0.86), (0, -0.58, 1.02), 0.08, HEAD, connect=True),
        BoneSpec("head", "neck", (0, -0.58, 1.02), (0, -0.80, 1.00), 0.10, HEAD, connect=True),
        BoneSpec("tail.1", "pelvis", (0, 0.42, 0.84), (0, 0.60, 0.88), 0.05, TAIL),
        BoneSpec("tail.2", "tail.1", (0, 0.60, 0.88), (0, 0.78, 0.90), 0.04, TAIL, connect=True),
        BoneSpec("tail.3", "tail.2", (0, 0.78, 0.90), (0, 0.95, 0.90), 0.03, TAIL, connect=True),
    ]
    for side in "LR":
        main, end = (LEFT, LEFT_END) if side == "L" else (RIGHT, RIGHT_END)
        x = lambda v, side=side: _mirror(v, side)
        for leg, parent, y in (("front", "chest", -0.36), ("back", "pelvis", 0.28)):
            s += [
                BoneSpec(f"{leg}_upper.{side}", parent, (x(0.12), y, 0.78), (x(0.12), y, 0.45), 0.06, main),
                BoneSpec(
                    f"{leg}_lower.{side}",
                    f"{leg}_upper.{side}",
                    (x(0.12), y, 0.45),
                    (x(0.12), y, 0.08),
                    0.045,
                    main,
                    connect=True,
                ),
                BoneSpec(
                    f"{leg}_foot.{side}",
                    f"{leg}_lower.{side}",
                    (x(0.12), y, 0.08),
                    (x(0.12), y - 0.10, 0.03),
                    0.04,
                    end,
                    connect=True,
                ),
            ]
    return build_character("Quadruped", s)


CHARACTERS = {"biped": biped, "quadruped": quadruped}
