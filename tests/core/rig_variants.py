"""The same character, re-expressed: renamed bones, scaled, placed elsewhere in the world, or with its
armature space turned (e.g. Y up) while the world stays the same. Used to check invariances."""

from __future__ import annotations

import dataclasses

import numpy as np

from akd_blender.core.character.rig import RigAsset, transform_points


def rotation(axis, angle: float) -> np.ndarray:
    """A 3×3 rotation about ``axis`` by ``angle`` radians."""
    axis = np.asarray(axis, dtype=np.float64) / np.linalg.norm(axis)
    k = np.array([[0, -axis[2], axis[1]], [axis[2], 0, -axis[0]], [-axis[1], axis[0], 0]])
    return np.eye(3) + np.sin(angle) * k + (1 - np.cos(angle)) * k @ k


def affine(linear: np.ndarray, translation=(0.0, 0.0, 0.0)) -> np.ndarray:
    m = np.eye(4)
    m[:3, :3], m[:3, 3] = linear, translation
    return m


def renamed(rig: RigAsset, seed: int) -> RigAsset:
    """Every bone renamed to a random string (same order)."""
    rng = np.random.default_rng(seed)
    letters = np.array(list("abcdefghijklmnopqrstuvwxyz0123456789"))
    names = tuple("".join(rng.choice(letters, 8)) + f"_{i}" for i in range(rig.num_bones))
    return dataclasses.replace(rig, bone_names=names)


def reexpressed(rig: RigAsset, g: np.ndarray) -> RigAsset:
    """Armature-space data mapped by the affine ``g`` [4,4] (rotation × uniform scale + translation) and
    ``armature_world`` composed with its inverse, so the world sees the same character."""
    scale = float(np.cbrt(abs(np.linalg.det(g[:3, :3]))))
    world = rig.armature_world @ np.linalg.inv(g)
    return dataclasses.replace(
        rig,
        heads=transform_points(g, rig.heads),
        tails=transform_points(g, rig.tails),
        lengths=rig.lengths * scale,
        rest_matrices=np.einsum("ij,bjk->bik", g, rig.rest_matrices),
        vertices=transform_points(g, rig.vertices),
        armature_world=world,
    )


def scaled(rig: RigAsset, factor: float) -> RigAsset:
    """The character ``factor`` times bigger in its armature space and in the world."""
    g = affine(np.eye(3) * factor)
    out = reexpressed(rig, g)
    return dataclasses.replace(
        out,
        armature_world=g @ out.armature_world,
        ground_height=rig.ground_height * factor,
        height=rig.height * factor,
    )


def placed(rig: RigAsset, world: np.ndarray) -> RigAsset:
    """The armature object moved by ``world`` [4,4] (a rigid motion applied in world space)."""
    return dataclasses.replace(rig, armature_world=world @ rig.armature_world)


def world_forward(rig: RigAsset, forward: np.ndarray) -> np.ndarray:
    """An armature-space direction [3] as a unit world direction."""
    v = rig.armature_world[:3, :3] @ forward
    return v / np.linalg.norm(v)
