"""Meshes, skin weights, colours and textures for the family (bpy-free, numpy only).

Mesh styles (all in the character frame, one mesh per character):

- ``"capsules"``: one closed capsule per deform bone (:func:`..characters.capsule_mesh`);
- ``"boxes"``: one closed box per deform bone, a little longer than the bone;
- ``"blended"``: one smooth tube per chain of connected deform bones (a limb, the spine and neck,
  a tail), its radius blending from bone to bone, so one skin spans several bones.

In every style, wing bones also get a flat "feather" box trailing behind them (towards +Y).

Every vertex has an owner bone (the bone it was made for); weights are smooth among the owner, its
parent and its children (:func:`..characters.skin_weights`) or rigid (owner only). Colours come from
a scheme (:data:`COLOR_SCHEMES`) or from a small procedural texture sampled through box-projected
UVs, the per-vertex colour then being the mean of its corners' nearest texels, as the extractor
computes it.
"""

from __future__ import annotations

import colorsys

import numpy as np

from akd_blender.core.character.procedural import LEFT, LEFT_END, RIGHT, RIGHT_END, capsule_mesh, rest_matrix

__all__ = [
    "MESH_STYLES",
    "COLOR_SCHEMES",
    "TEXTURE_PATTERNS",
    "build_mesh",
    "rigid_weights",
    "scheme_colors",
    "make_texture",
    "box_uvs",
]

MESH_STYLES = ("capsules", "boxes", "blended")
COLOR_SCHEMES = ("sided", "per_part", "uniform", "random_bones", "gradient")
TEXTURE_PATTERNS = ("stripes", "checker", "spots", "noise")


def _sweep(centers, xs, zs, sx, sz, segments: int, phase: float, start_pole, end_pole):
    """A closed tube: ring r has ``segments`` vertices ``centers[r] + sx·cosθ·xs[r] + sz·sinθ·zs[r]``
    (rings follow +y = cross(z, x)), closed by fans to the two poles. Returns vertices [N,3], triangles [T,3]."""
    angles = phase + np.linspace(0, 2 * np.pi, segments, endpoint=False)
    c, s = np.cos(angles), np.sin(angles)
    rings = (
        centers[:, None]
        + (sx[:, None, None] * c[None, :, None]) * xs[:, None]
        + (sz[:, None, None] * s[None, :, None]) * zs[:, None]
    )
    verts = np.concatenate([rings.reshape(-1, 3), [start_pole, end_pole]])
    n_rings = len(centers)
    tris = []
    for r in range(n_rings - 1):
        for k in range(segments):
            a, b = r * segments + k, r * segments + (k + 1) % segments
            tris += [(a, a + segments, b), (b, a + segments, b + segments)]
    bottom, top, last = n_rings * segments, n_rings * segments + 1, (n_rings - 1) * segments
    for k in range(segments):
        tris += [(bottom, k, (k + 1) % segments), (top, last + (k + 1) % segments, last + k)]
    return verts, np.array(tris, dtype=np.int64)


def _box(head, tail, radius, aspect, rings: int):
    m = rest_matrix(head, tail)
    x, y, z = m[:3, 0], m[:3, 1], m[:3, 2]
    length = float(np.linalg.norm(tail - head))
    margin = radius * 0.35
    ts = np.linspace(-margin, length + margin, rings)
    centers = head + ts[:, None] * y
    half = np.sqrt(2.0) * radius
    ones = np.ones(rings)
    return _sweep(
        centers,
        np.tile(x, (rings, 1)),
        np.tile(z, (rings, 1)),
        half * ones,
        half * aspect * ones,
        4,
        np.pi / 4,
        centers[0],
        centers[-1],
    )


def _chains(parents: np.ndarray, heads: np.ndarray, tails: np.ndarray, deform: np.ndarray) -> list[list[int]]:
    """Chains of deform bones: each bone continues into its best-aligned deform child starting at its tail."""
    direction = (tails - heads) / np.linalg.norm(tails - heads, axis=1, keepdims=True)
    follow: dict[int, int] = {}
    for b in np.flatnonzero(deform):
        kids = [c for c in np.flatnonzero(parents == b) if deform[c] and np.allclose(heads[c], tails[b], atol=1e-9)]
        if kids:
            follow[b] = max(kids, key=lambda c: float(direction[c] @ direction[b]))
    followers = set(follow.values())
    chains = []
    for b in np.flatnonzero(deform):
        if b in followers:
            continue
        chain = [int(b)]
        while chain[-1] in follow:
            chain.append(int(follow[chain[-1]]))
        chains.append(chain)
    return chains


def _tube(chain: list[int], heads, tails, radii, segments: int, per_bone: int):
    """One tube along a chain: rings along every bone, frames carried by projection, capped beyond the ends."""
    centers, tangents, rads, owner = [], [], [], []
    for i, b in enumerate(chain):
        d = (tails[b] - heads[b]) / np.linalg.norm(tails[b] - heads[b])
        for t in np.linspace(0, 1, per_bone, endpoint=False):
            r = radii[b]
            if t == 0 and i > 0:  # a joint: bisect the directions, average the radii
                prev = chain[i - 1]
                pd = (tails[prev] - heads[prev]) / np.linalg.norm(tails[prev] - heads[prev])
                tangents.append((pd + d) / max(np.linalg.norm(pd + d), 1e-9))
                r = 0.5 * (radii[prev] + r)
            else:
                tangents.append(d)
            centers.append(heads[b] + t * (tails[b] - heads[b]))
            rads.append(r)
            owner.append(b)
    last = chain[-1]
    centers.append(tails[last])
    tangents.append(tangents[-1] if len(chain) == 1 else (tails[last] - heads[last]) / np.linalg.norm(tails[last] - heads[last]))
    rads.append(radii[last] * 0.9)
    owner.append(last)
    centers, tangents, rads = np.array(centers), np.array(tangents), np.array(rads)
    xs = np.empty_like(centers)
    x = rest_matrix(centers[0], centers[0] + tangents[0])[:3, 0]
    for r, t in enumerate(tangents):
        x = x - (x @ t) * t
        x /= np.linalg.norm(x)
        xs[r] = x
    zs = np.cross(xs, tangents)
    start = centers[0] - tangents[0] * rads[0] * 0.8
    end = centers[-1] + tangents[-1] * rads[-1] * 0.8
    verts, tris = _sweep(centers, xs, zs, rads, rads, segments, 0.0, start, end)
    ring_owner = np.repeat(np.array(owner), segments)
    return verts, tris, np.concatenate([ring_owner, [chain[0], last]])


def _feather(head, tail, radius):
    """A thin flat box trailing behind head→tail (towards +Y, the character's back): a wing's feathers."""
    d = (tail - head) / np.linalg.norm(tail - head)
    back = np.array([0.0, 1.0, 0.0]) - d[1] * d
    back = back / np.linalg.norm(back) if np.linalg.norm(back) > 1e-6 else rest_matrix(head, tail)[:3, 2]
    width = 1.2 * float(np.linalg.norm(tail - head)) + 2 * radius
    z = np.cross(back, d)
    centers = head + np.linspace(0, 1, 3)[:, None] * (tail - head) + back * (radius + width / 2)
    half = np.sqrt(2.0) * np.ones(3)
    return _sweep(
        centers,
        np.tile(back, (3, 1)),
        np.tile(z, (3, 1)),
        half * width / 2,
        half * radius * 0.3,
        4,
        np.pi / 4,
        centers[0],
        centers[-1],
    )


def build_mesh(style: str, heads, tails, radii, parents, deform, rng: np.random.Generator, feathered=None):
    """Vertices float64 [V,3], triangles int64 [T,3] and the owner bone int64 [V] of each vertex, in mesh ``style``;
    bones flagged in ``feathered`` (bool [J], e.g. wings) also get a flat feather box trailing behind them."""
    verts, faces, owner = [], [], []

    def add(v, f, o) -> None:
        faces.append(f + sum(len(x) for x in verts))
        verts.append(v)
        owner.append(np.broadcast_to(o, (len(v),)))

    if style == "capsules":
        segments, rings = int(rng.integers(8, 15)), int(rng.integers(4, 8))
        for b in np.flatnonzero(deform):
            add(*capsule_mesh(heads[b], tails[b], radii[b], segments, rings), b)
    elif style == "boxes":
        aspect, rings = rng.uniform(0.6, 1.2), int(rng.integers(3, 7))
        for b in np.flatnonzero(deform):
            add(*_box(heads[b], tails[b], radii[b], aspect, rings), b)
    elif style == "blended":
        segments, per_bone = int(rng.integers(10, 16)), int(rng.integers(3, 6))
        for chain in _chains(parents, heads, tails, deform):
            add(*_tube(chain, heads, tails, radii, segments, per_bone))
    else:
        raise ValueError(f"mesh style {style!r} is not one of {MESH_STYLES}")
    for b in np.flatnonzero(deform & (False if feathered is None else np.asarray(feathered))):
        add(*_feather(heads[b], tails[b], radii[b]), b)
    return np.concatenate(verts), np.concatenate(faces), np.concatenate(owner).astype(np.int64)


def rigid_weights(owner: np.ndarray, num_bones: int) -> np.ndarray:
    """float32 [V,J], weight 1 on each vertex's owner bone."""
    w = np.zeros((len(owner), num_bones), dtype=np.float32)
    w[np.arange(len(owner)), owner] = 1.0
    return w


def _random_color(rng: np.random.Generator, saturation=(0.35, 0.85), value=(0.45, 0.95)) -> np.ndarray:
    return np.array(colorsys.hsv_to_rgb(rng.uniform(), rng.uniform(*saturation), rng.uniform(*value)))


def scheme_colors(
    scheme: str, groups: list[str], sides: list[str], owner: np.ndarray, vertices: np.ndarray, rng: np.random.Generator
) -> np.ndarray:
    """float32 [V,3] display colours: bones described by colour ``groups`` and ``sides`` [J], vertices by ``owner`` [V].

    ``"sided"``: left limbs warm, right limbs cool, torso/head/tail each a colour; ``"per_part"``: one
    colour per group, the same on both sides; ``"uniform"``: one body colour; ``"random_bones"``:
    a random colour per bone; ``"gradient"``: a blend of two colours from the lowest to the highest vertex.
    """
    j = len(groups)
    if scheme == "gradient":
        low, high = _random_color(rng), _random_color(rng)
        z = vertices[:, 2]
        t = ((z - z.min()) / max(np.ptp(z), 1e-9))[:, None]
        return ((1 - t) * low + t * high).astype(np.float32)
    if scheme == "uniform":
        per_bone = np.tile(_random_color(rng), (j, 1))
    elif scheme == "random_bones":
        per_bone = np.stack([_random_color(rng) for _ in range(j)])
    elif scheme in ("sided", "per_part"):
        palette = {g: _random_color(rng) for g in ("torso", "head", "limb", "limb_end", "tail", "wing", "extra")}
        per_bone = np.stack([palette[g] for g in groups])
        if scheme == "sided":
            warm = {"limb": LEFT, "limb_end": LEFT_END, "wing": LEFT}
            cool = {"limb": RIGHT, "limb_end": RIGHT_END, "wing": RIGHT}
            for b, (g, s) in enumerate(zip(groups, sides)):
                if g in warm and s:
                    per_bone[b] = (warm if s == "L" else cool)[g]
    else:
        raise ValueError(f"colour scheme {scheme!r} is not one of {COLOR_SCHEMES}")
    return per_bone[owner].astype(np.float32)


def make_texture(pattern: str, rng: np.random.Generator, size: int = 64) -> np.ndarray:
    """float32 [size,size,3] procedural texture in ``pattern`` (:data:`TEXTURE_PATTERNS`), values k/255 (8-bit exact)."""
    a, b = _random_color(rng), _random_color(rng)
    yy, xx = np.mgrid[0:size, 0:size] / size
    if pattern == "stripes":
        period = rng.uniform(0.05, 0.2)
        mask = (np.floor((yy + xx * rng.uniform(-0.5, 0.5)) / period) % 2).astype(bool)
    elif pattern == "checker":
        cells = int(rng.integers(4, 12))
        mask = ((np.floor(xx * cells) + np.floor(yy * cells)) % 2).astype(bool)
    elif pattern == "spots":
        centers = rng.uniform(0, 1, (int(rng.integers(8, 30)), 2))
        r = rng.uniform(0.03, 0.08)
        d = np.min(np.hypot(xx[..., None] - centers[:, 0], yy[..., None] - centers[:, 1]), axis=-1)
        mask = d < r
    elif pattern == "noise":
        coarse = rng.uniform(0, 1, (8, 8))
        fine = np.kron(coarse, np.ones((size // 8, size // 8)))
        k = np.ones(5) / 5
        fine = np.apply_along_axis(lambda r: np.convolve(r, k, "same"), 1, fine)
        fine = np.apply_along_axis(lambda r: np.convolve(r, k, "same"), 0, fine)
        t = fine[..., None]
        img = (1 - t) * a + t * b
        return (np.round(img * 255) / 255).astype(np.float32)
    else:
        raise ValueError(f"texture pattern {pattern!r} is not one of {TEXTURE_PATTERNS}")
    img = np.where(mask[..., None], a, b)
    return (np.round(img * 255) / 255).astype(np.float32)


def box_uvs(vertices: np.ndarray, faces: np.ndarray) -> np.ndarray:
    """float32 [T,3,2] UVs in [0.02, 0.98]: each triangle projected along its normal's dominant axis,
    scaled by the mesh's largest extent (one texel size everywhere)."""
    tri = vertices[faces]
    normal = np.cross(tri[:, 1] - tri[:, 0], tri[:, 2] - tri[:, 0])
    axis = np.abs(normal).argmax(1)
    lo, extent = vertices.min(0), max(np.ptp(vertices, axis=0).max(), 1e-9)
    rel = (tri - lo) / extent
    keep = np.array([[1, 2], [0, 2], [0, 1]])[axis]  # the two axes across the dominant one
    uv = np.take_along_axis(rel, np.broadcast_to(keep[:, None, :], (len(faces), 3, 2)), axis=2)
    return (0.02 + 0.96 * uv).astype(np.float32)
