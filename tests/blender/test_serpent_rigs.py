"""Snakes as Blender users rig them (``rig_zoo.snake``: one chain of deform bones, parented from the tail
tip forward or from the head back) are read as serpents facing their heads, and every serpent motion of
the library does what it says on them (``tests/core/library_checks``); keyed into an action, Blender's
evaluation carries the snake forward with its body swinging side to side."""

from __future__ import annotations

import bpy
import numpy as np
import pytest

from akd_blender.blender.character.extract import rig_from_armature
from akd_blender.blender.keys.actions import write_action
from akd_blender.core.character.roles import find_roles
from akd_blender.core.motion.library import LIBRARY, make_role_clip, sample_variations
from tests.core.library_checks import Measured, checks_for

from . import rig_zoo

ORDERS = {"tail_first": False, "head_first": True}


def _snake(order: str):
    bpy.ops.wm.read_homefile(use_empty=True)
    arm, _ = rig_zoo.snake(head_first=ORDERS[order])
    rig = rig_from_armature(arm)
    return arm, rig, find_roles(rig)


@pytest.mark.parametrize("order", list(ORDERS))
def test_snake_is_a_serpent_facing_its_head_whichever_way_it_was_rigged(order):
    _, rig, roles = _snake(order)
    assert roles.kind == "serpent" and roles.legs == roles.arms == roles.wings == ()
    assert rig.bone_names[roles.head] == "head"
    np.testing.assert_allclose(roles.frame.forward, [0.0, -1.0, 0.0], atol=1e-6)
    named = {rig.bone_names[b] for b in (roles.root, *roles.spine, *roles.neck, roles.head, *roles.tail)}
    assert named == set(rig.bone_names)  # every bone of the chain takes part in the body


@pytest.mark.parametrize("order", list(ORDERS))
def test_every_serpent_motion_does_what_it_says_on_the_snake(order):
    _, rig, roles = _snake(order)
    for spec in LIBRARY["serpent"]:
        variation = sample_variations(spec.label, "heldout", 1, seed=1)[0]
        clip = make_role_clip(rig, roles, spec.label, variation, frames=24, fps=12.0)
        m = Measured(rig, roles, clip, variation.facing)
        assert np.isfinite(m.verts).all() and m.height().min() > -0.03 * m.H, spec.label
        assert np.linalg.norm(m.verts - m.verts[:1], axis=-1).mean(1).max() > 0.001 * roles.frame.length, spec.label
        for check in checks_for("serpent", spec.label):
            check(m)


def test_keyed_slither_carries_the_head_first_snake_forward_in_blender():
    arm, rig, roles = _snake("head_first")
    clip = make_role_clip(rig, roles, "walk", sample_variations("walk", "train", 1, seed=2)[0], frames=24, fps=12.0)
    write_action(arm, clip, "akd_slither")
    scene = bpy.context.scene
    head, middle = [], []
    for frame in range(clip.frame_start, clip.frame_start + clip.num_frames):
        scene.frame_set(frame)
        head.append(np.array(arm.matrix_world @ arm.pose.bones["head"].head))
        middle.append(np.array(arm.matrix_world @ arm.pose.bones["body.06"].head))
    head, middle = np.array(head), np.array(middle)
    length = roles.frame.length
    assert head[0, 1] - head[-1, 1] > 0.25 * length  # forward is -Y
    assert np.ptp(middle[:, 0]) > 0.1 * length  # the middle of the body swings side to side


def test_the_judge_reads_rigify_sharks_swim_and_rear_up_without_its_fins():
    """Rigify's shark is a serpent whose side fins its roles hold as arms; a serpent's limbs take no slot in
    the judge's body tracks (the judge's serpents have none), so its library swim, turn and rear-up are
    read as those motions (with the fins in the arm slots the swim and rear-up read "none")."""
    from akd_blender.blender.job.rig import job_rig
    from akd_blender.core.motion.judge import load_motion_judge

    arm, _ = rig_zoo.rigify_rig("shark")
    rig = job_rig(arm, None)
    roles = find_roles(rig)
    assert roles.kind == "serpent" and roles.arms
    judge = load_motion_judge()
    for motion in ("walk", "turn", "rear_up"):
        clip = make_role_clip(rig, roles, motion, frames=48, fps=24.0)
        assert judge.judge(rig, roles, clip)["label"] == motion, motion
