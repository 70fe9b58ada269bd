"""A limb whose last bones carry no weights (Blender's automatic weights often fail on thin parts, and users
live with it) is still read to its end: Rigify's horse with its front legs left bare below the knee reads as a
quadruped whose front legs reach the floor, and walks on its controls in Blender's evaluation."""

from __future__ import annotations

import bpy
import numpy as np

from akd_blender.blender.job.rig import job_rig
from akd_blender.blender.keys.actions import write_action
from akd_blender.blender.keys.on_controls import result_of
from akd_blender.core.character.roles import describe_roles, find_roles
from akd_blender.core.motion.library import make_role_clip
from akd_blender.core.motion.library.labelled import Variation

from . import rig_zoo


def test_a_horse_with_bare_front_leg_ends_is_a_quadruped_and_walks():
    arm, body = rig_zoo.rigify_rig("horse", bare=rig_zoo.HORSE_FRONT_ENDS)
    assert not any(g.name.startswith("DEF-f_hoof") for g in body.vertex_groups)
    rig = job_rig(arm, None)
    roles = find_roles(rig)
    assert roles.kind == "quadruped", describe_roles(roles, rig)
    front = {rig.bone_names[leg.bones[-1]] for leg in roles.legs if leg.position == "front"}
    assert front == {"DEF-f_hoof.L", "DEF-f_hoof.R"}  # read to the hoof, past the bones without weights
    assert {rig.bone_names[leg.bones[-1]] for leg in roles.legs if leg.position == "hind"} == {"DEF-r_hoof.L", "DEF-r_hoof.R"}
    sides = {(leg.position, leg.side): rig.bone_names[leg.bones[0]] for leg in roles.legs}
    assert sides[("front", "left")] == "DEF-shoulder.L" and sides[("hind", "right")] == "DEF-pelvis.R"

    clip = make_role_clip(rig, roles, "walk", Variation(), 24, 12.0)
    action = write_action(arm, clip, "a horse walks forward")
    result = result_of(action)
    assert result is not None and result.position_error <= 0.02, result.undriven
    hoof = []
    for f in (clip.frame_start, clip.frame_start + clip.num_frames - 1):
        bpy.context.scene.frame_set(f)
        hoof.append(np.array(arm.matrix_world @ arm.pose.bones["DEF-f_hoof.L"].head))
    step = hoof[1] - hoof[0]
    assert step[1] < -0.2 * rig.height and abs(step[0]) < 0.1 * abs(step[1]), step  # the bare hoof walks forward
