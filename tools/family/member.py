"""One family member: a seeded draft turned into a RigAsset with its style and true bone roles.

Steps of :func:`make_member` (every choice drawn from the member's own seed):
    1. draft the skeleton of the kind in the character frame (:mod:`.skeletons`);
    2. mesh the deform bones in a style (:mod:`.meshes`), then scale everything so the rest mesh is
       ``height_m`` tall and stands on z = 0;
    3. add non-deforming helpers sometimes (an armature root under everything, IK-target-like leaf bones
       at the feet), shuffle children's order sometimes, roll the bones;
    4. skin (smooth or rigid), colour (a scheme, or a texture through UVs), name the bones (:mod:`.naming`);
    5. place it: units (metres, or ~40–60 units per metre like the 79-unit Fox), the armature space
       Z-up or Y-up (``armature_world`` turns it to Blender's Z-up as a glTF import does), the armature
       object at the origin or moved and turned (the bones counter-placed), the character turned to a
       facing in the world. In the world every member stands on z = 0.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from akd_blender.core.character.procedural import rest_matrix, skin_weights
from akd_blender.core.character.rig import RigAsset, transform_points
from akd_blender.core.character.vertex_colors import corner_mean, sample_nearest
from akd_blender.core.errors import InputError
from tools.family.drafts import Draft, Part
from tools.family.meshes import (
    COLOR_SCHEMES,
    MESH_STYLES,
    TEXTURE_PATTERNS,
    box_uvs,
    build_mesh,
    make_texture,
    rigid_weights,
    scheme_colors,
)
from tools.family.naming import SCHEMES, bone_names
from tools.family.skeletons import draft

__all__ = ["KINDS", "TRAIN_SEEDS", "HELDOUT_SEEDS", "SIZE_RANGES", "MemberStyle", "FamilyMember", "make_member", "members"]

KINDS = ("biped", "quadruped", "bird", "hexapod", "serpent")
TRAIN_SEEDS = range(0, 10000)
HELDOUT_SEEDS = range(10000, 11000)
SIZE_RANGES = {"biped": (1.0, 2.0), "quadruped": (0.6, 2.0), "bird": (0.4, 1.5), "hexapod": (0.25, 1.0), "serpent": (0.06, 0.3)}
"""Rest-mesh height range per kind, metres (before the unit scale)."""
LARGE_UNITS = (40.0, 60.0)
"""Units per metre of the large-unit members (a 1.5 m character is then 60–90 units tall)."""


@dataclass(frozen=True)
class MemberStyle:
    """What was drawn for a member.

    build: the kind's variant (``"human"``, ``"robot"``, ``"stocky"``, ``"long_limbed"``, ``"big_headed"``;
    ``"dog"``, ``"deer"``, ``"low_long"``; ``"songbird"``, ``"heron"``, ``"penguin"``; ``"beetle"``, ``"ant"``, ``"stick"``; ``"viper"``, ``"python"``, ``"cobra"``).
    rest_pose: ``"T"``, ``"A"``, ``"down"`` (bipeds' arms), ``"wings_spread"``/``"wings_drooping"`` (birds), else ``"-"``.
    height_m: rest height in metres; units_per_metre: 1, or 40–60 for large-unit members; height: in armature units.
    up_axis: ``"Z"`` or ``"Y"``, the armature space's up. placement: ``"origin"`` or ``"moved"`` (armature object
    moved and turned). facing: world-space unit vector the character faces (Blender's -Y most often).
    mesh_style (:data:`.meshes.MESH_STYLES`), skinning (``"smooth"``/``"rigid"``), colors (:data:`.meshes.COLOR_SCHEMES`
    or ``"texture"``), texture (a :data:`.meshes.TEXTURE_PATTERNS` entry or ``""``), naming (:data:`.naming.SCHEMES`),
    roll (``"zero"``, ``"quarter"``, ``"random"``), shuffled (children order shuffled), helpers (non-deforming bones
    added: ``"armature_root"``, ``"ik_targets"``), counts (bones drawn per part), proportions (the drawn ratios).
    """

    build: str
    rest_pose: str
    height_m: float
    units_per_metre: float
    height: float
    up_axis: str
    placement: str
    facing: tuple[float, float, float]
    mesh_style: str
    skinning: str
    colors: str
    texture: str
    naming: str
    roll: str
    shuffled: bool
    helpers: tuple[str, ...]
    counts: dict[str, int] = field(default_factory=dict)
    proportions: dict[str, float] = field(default_factory=dict)


@dataclass(frozen=True, eq=False)
class FamilyMember:
    """A member: its ``rig``, ``kind``, ``seed``, drawn ``style`` and ``truth`` (bone index → role name
    as :meth:`akd_blender.core.character.roles.BoneRoles.role_of` names it; bones with no role are absent)."""

    rig: RigAsset
    kind: str
    seed: int
    style: MemberStyle
    truth: dict[int, str]


def _rot_z(angle: float) -> np.ndarray:
    m = np.eye(4)
    c, s = np.cos(angle), np.sin(angle)
    m[:2, :2] = [[c, -s], [s, c]]
    return m


Y_UP_TO_Z_UP = np.array([[1.0, 0, 0, 0], [0, 0, -1, 0], [0, 1, 0, 0], [0, 0, 0, 1]])
"""+90° about X: a Y-up armature space (facing +Z) seen in Blender's Z-up world (facing -Y), as glTF imports do."""


def _order(parts: list[Part], rng: np.random.Generator, shuffle: bool) -> list[Part]:
    """Blender's bone order: depth-first, children in draft order or shuffled."""
    children: dict[str | None, list[Part]] = {}
    for p in parts:
        children.setdefault(p.parent, []).append(p)
    out: list[Part] = []

    def visit(key: str | None) -> None:
        kids = children.get(key, [])
        if shuffle:
            kids = [kids[i] for i in rng.permutation(len(kids))]
        for p in kids:
            out.append(p)
            visit(p.key)

    visit(None)
    return out


def _add_helpers(d: Draft, rng: np.random.Generator, height: float) -> tuple[str, ...]:
    """Non-deforming helpers: an armature root on the ground under the root part, IK-target-like leaves at the feet."""
    added = []
    root = next(p for p in d.parts if p.parent is None)
    if rng.random() < 0.3:
        tip = (0, 0, 0.12 * height) if rng.random() < 0.5 else (0, 0.12 * height, 0)
        d.parts.insert(
            0, Part("armature_root", None, np.zeros(3), np.array(tip, float), 0.0, ("root",), deform=False, group="extra")
        )
        root.parent = "armature_root"
        added.append("armature_root")
    if rng.random() < 0.25:
        parent = "armature_root" if added else root.key
        ends: dict[str, Part] = {}
        for p in d.parts:
            if p.role and p.role.startswith("leg."):
                ends[p.role] = p  # the last bone of each leg (parts are parents first)
        for role, p in ends.items():
            d.parts.append(
                Part(
                    f"ik.{role}",
                    parent,
                    p.tail.copy(),
                    p.tail + [0, 0.08 * height, 0],
                    0.0,
                    ("ik", "target"),
                    p.side,
                    deform=False,
                    group="extra",
                )
            )
        if ends:
            added.append("ik_targets")
    return tuple(added)


def _arrays(parts: list[Part]):
    """heads [J,3], tails [J,3], radii [J], parents int64 [J], deform bool [J] of parts in order."""
    index = {p.key: i for i, p in enumerate(parts)}
    return (
        np.stack([p.head for p in parts]),
        np.stack([p.tail for p in parts]),
        np.array([p.radius for p in parts]),
        np.array([index[p.parent] if p.parent else -1 for p in parts], dtype=np.int64),
        np.array([p.deform for p in parts]),
    )


def _mesh_on_ground(d: Draft, kind: str, rng: np.random.Generator):
    """Mesh the deform parts, then scale parts and mesh to the drawn height on z = 0.
    Returns (mesh style, rigid?, vertices [V,3], faces [T,3], owner part keys [V], height in metres)."""
    mesh_style = "boxes" if d.build == "robot" and rng.random() < 0.8 else str(rng.choice(MESH_STYLES))
    rigid = mesh_style == "boxes" and rng.random() < (0.7 if d.build == "robot" else 0.4)
    wings = np.array([p.group == "wing" for p in d.parts])
    vertices, faces, owner = build_mesh(mesh_style, *_arrays(d.parts), rng, feathered=wings)
    height_m = float(rng.uniform(*SIZE_RANGES[kind]))
    scale = height_m / float(np.ptp(vertices[:, 2]))
    lift = np.array([0.0, 0.0, -vertices[:, 2].min()])
    for p in d.parts:
        p.head, p.tail, p.radius = (p.head + lift) * scale, (p.tail + lift) * scale, p.radius * scale
    return mesh_style, rigid, (vertices + lift) * scale, faces, [d.parts[o].key for o in owner], height_m


def _colors(parts: list[Part], vertices: np.ndarray, faces: np.ndarray, owner: np.ndarray, rng: np.random.Generator):
    """(scheme, texture pattern, vertex colours [V,3], uvs [T,3,2] or None, texture [64,64,3] or None)."""
    if rng.random() < 0.25:
        pattern = str(rng.choice(TEXTURE_PATTERNS))
        texture = make_texture(pattern, rng, 64)
        uvs = box_uvs(vertices, faces)
        return "texture", pattern, corner_mean(len(vertices), faces, sample_nearest(texture, uvs)), uvs, texture
    scheme = str(rng.choice(COLOR_SCHEMES))
    return scheme, "", scheme_colors(scheme, [p.group for p in parts], [p.side for p in parts], owner, vertices, rng), None, None


def _placement(rng: np.random.Generator):
    """(units per metre, up axis, moved?, facing yaw, character → world [4,4], armature_world [4,4])."""
    units = 1.0 if rng.random() < 0.8 else float(rng.uniform(*LARGE_UNITS))
    up_axis = "Y" if rng.random() < 0.3 else "Z"
    moved = bool(rng.random() < 0.3)
    yaw = 0.0 if rng.random() < 0.8 else float(rng.choice([np.pi / 2, np.pi, -np.pi / 2, rng.uniform(-np.pi, np.pi)]))
    world = _rot_z(yaw) @ np.diag([units, units, units, 1.0])
    armature_world = Y_UP_TO_Z_UP.copy() if up_axis == "Y" else np.eye(4)
    if moved:
        world[:2, 3] = rng.uniform(-2, 2, 2) * units
        shift = np.eye(4)
        shift[:3, 3] = rng.uniform(-1, 1, 3) * units
        armature_world = shift @ _rot_z(float(rng.uniform(-np.pi, np.pi))) @ armature_world
    return units, up_axis, moved, yaw, world, armature_world


def make_member(kind: str, seed: int) -> FamilyMember:
    """The member ``seed`` of ``kind`` (one of :data:`KINDS`); the same (kind, seed) always gives the same member."""
    if kind not in KINDS:
        raise InputError(f"unknown character kind {kind!r}; the family has {', '.join(KINDS)}")
    if not isinstance(seed, (int, np.integer)) or seed < 0:
        raise InputError(f"member seed must be a non-negative integer, not {seed!r}")
    rng = np.random.default_rng([int(seed), KINDS.index(kind), 0xFA])
    d = draft(kind, rng)
    # 1. mesh in the draft frame, scaled to the drawn height on the ground; helpers
    mesh_style, rigid, vertices, faces, owner_keys, height_m = _mesh_on_ground(d, kind, rng)
    helpers = _add_helpers(d, rng, height_m)
    # 2. bone order, connections, rolls
    shuffled = bool(rng.random() < 0.5)
    parts = _order(d.parts, rng, shuffled)
    index = {p.key: i for i, p in enumerate(parts)}
    owner = np.array([index[k] for k in owner_keys], dtype=np.int64)
    heads, tails, radii, parents, deform = _arrays(parts)
    connect = np.array([p.parent is not None and np.allclose(p.head, tails[index[p.parent]], atol=1e-9) for p in parts])
    roll_style = str(rng.choice(["zero", "quarter", "random"]))
    rolls = {
        "zero": np.zeros(len(parts)),
        "quarter": rng.integers(0, 4, len(parts)) * (np.pi / 2),
        "random": rng.uniform(-np.pi, np.pi, len(parts)),
    }
    rest = np.stack([rest_matrix(h, t, r) for h, t, r in zip(heads, tails, rolls[roll_style])])
    # 3. skin, colour and names (character frame)
    if rigid:
        weights = rigid_weights(owner, len(parts))
    else:
        weights = skin_weights(vertices, owner, heads, tails, radii + 1e-9, parents, deform, float(rng.uniform(0.25, 0.45)))
    scheme, pattern, colors, uvs, texture = _colors(parts, vertices, faces, owner, rng)
    naming = str(rng.choice(SCHEMES))
    names = tuple(bone_names([(p.words, p.side, p.index) for p in parts], naming, rng))
    # 4. units and placement: world = facing turn (+ offset); armature space = armature_world⁻¹ · world
    units, up_axis, moved, yaw, world, armature_world = _placement(rng)
    to_arm = np.linalg.inv(armature_world) @ world
    rest_arm = to_arm @ rest
    rest_arm[:, :3, :3] /= units  # rotations stay orthonormal: the unit scale applies to positions only
    verts_arm = transform_points(to_arm, vertices)
    world_verts = transform_points(armature_world, verts_arm)
    j, name = len(parts), f"{kind.capitalize()}{seed:05d}"
    rig = RigAsset(
        name=name,
        bone_names=names,
        parents=parents,
        rest_matrices=rest_arm,
        heads=transform_points(to_arm, heads),
        tails=transform_points(to_arm, tails),
        lengths=np.linalg.norm(tails - heads, axis=1) * units,
        use_deform=deform,
        use_connect=connect,
        inherit_rotation=np.ones(j, dtype=bool),
        use_local_location=np.ones(j, dtype=bool),
        rotation_modes=("QUATERNION",) * j,
        rotation_locks=np.zeros((j, 3), dtype=bool),
        location_locks=np.zeros((j, 3), dtype=bool),
        rotation_limits=np.full((j, 3, 2), np.nan),
        mesh_names=(f"{name}_mesh",),
        mesh_offsets=np.array([0, len(vertices)], dtype=np.int64),
        vertices=verts_arm,
        faces=faces,
        weights=weights,
        vertex_colors=colors,
        uvs=uvs,
        texture=texture,
        armature_world=armature_world,
        ground_height=float(world_verts[:, 2].min()),
        height=float(np.ptp(world_verts[:, 2])),
    )
    style = MemberStyle(
        build=d.build,
        rest_pose=d.rest_pose,
        height_m=height_m,
        units_per_metre=units,
        height=rig.height,
        up_axis=up_axis,
        placement="moved" if moved else "origin",
        facing=tuple(float(x) for x in np.round(_rot_z(yaw)[:3, :3] @ [0.0, -1.0, 0.0], 12)),
        mesh_style=mesh_style,
        skinning="rigid" if rigid else "smooth",
        colors=scheme,
        texture=pattern,
        naming=naming,
        roll=roll_style,
        shuffled=shuffled,
        helpers=helpers,
        counts=dict(d.counts),
        proportions={k: float(v) for k, v in d.proportions.items()},
    )
    truth = {i: p.role for i, p in enumerate(parts) if p.role}
    return FamilyMember(rig=rig, kind=kind, seed=int(seed), style=style, truth=truth)


def members(kind: str, split: str = "train", n: int = 8, start: int = 0) -> list[FamilyMember]:
    """``n`` members of ``kind`` from the ``split`` (``"train"``: :data:`TRAIN_SEEDS`, ``"heldout"``:
    :data:`HELDOUT_SEEDS`), the split's seeds ``start`` … ``start + n - 1`` in order."""
    seeds = {"train": TRAIN_SEEDS, "heldout": HELDOUT_SEEDS}.get(split)
    if seeds is None:
        raise InputError(f"split must be 'train' or 'heldout', not {split!r}")
    if n < 0 or start < 0 or start + n > len(seeds):
        raise InputError(f"members {start}..{start + n - 1} are outside the {split} split's {len(seeds)} seeds")
    return [make_member(kind, seeds[start + i]) for i in range(n)]
