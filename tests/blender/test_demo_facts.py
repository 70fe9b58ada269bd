"""`make demo`'s jobs do what their prompts say, read from the result as Blender evaluates it: each job
runs through the CLI exactly as the demo runs it (the demo's own characters: the procedural biped in
its standing pose, the artist's Fox), and the facts are measured on Blender's deformed mesh, per
frame, on the bone roles of the rig (world Z up, the floor the rig stands on)."""

from __future__ import annotations

import functools
import json
import os
import tempfile
from dataclasses import dataclass

import numpy as np
import pytest

from akd_blender.blender import demo
from akd_blender.blender.cli import distill
from tests.blender.helpers import evaluated_world_vertices

HELD_OUT = {
    "jump": "a figure springs into the air with both feet",
    "wave": "a figure waving the right hand",
}
"""Wordings of the demo biped's kind that the demo does not run, read as jump and wave."""


@dataclass
class Evaluated:
    """One job's result as Blender evaluates it: ``verts`` [F,V,3] world positions of the deformed
    meshes, ``owner`` [V] each vertex's dominant bone, the rig's ``roles``, ``floor`` (world Z) and
    ``height`` (Blender units), and the report."""

    verts: np.ndarray
    owner: np.ndarray
    roles: object
    floor: float
    height: float
    report: dict

    def of(self, bones) -> np.ndarray:
        """The vertices [F,n,3] whose dominant bone is one of ``bones``."""
        mask = np.isin(self.owner, list(bones))
        assert mask.any(), bones
        return self.verts[:, mask]

    def limb_end(self, group: str, side: str) -> np.ndarray:
        """[F,n,3] the vertices of the last bone of the ``side`` limb of ``group`` ("arms", "legs")."""
        return self.of(self.roles.limb(group, side).bones[-1:])


def evaluate(path: str, report: dict) -> Evaluated:
    """Open the job's ``.blend`` and read its new action as Blender deforms the character, frame by frame."""
    import bpy

    from akd_blender.blender.character.extract import rig_from_armature
    from akd_blender.blender.character.io import find_armature, load_scene
    from akd_blender.core.character.roles import find_roles

    load_scene(path)
    armature = find_armature(None)
    rig = rig_from_armature(armature)
    roles = find_roles(rig)
    action = armature.animation_data.action
    assert action.name in report["action_names"], (action.name, report["action_names"])
    first, last = (int(round(f)) for f in action.frame_range)
    scene = bpy.context.scene
    verts = []
    for frame in range(first, last + 1):
        scene.frame_set(frame)
        verts.append(evaluated_world_vertices(rig.mesh_names))
    owner = np.where(rig.weights.max(1) > 0, rig.weights.argmax(1), -1)
    return Evaluated(np.stack(verts), owner, roles, float(rig.ground_height), float(rig.height), report)


@functools.cache
def job(name: str, prompt: str) -> Evaluated:
    """Run the demo's CLI job for ``prompt`` on demo character ``name`` ("biped", "fox") once per session."""
    out = tempfile.mkdtemp(prefix=f"akd-demo-{name}-")
    source = demo.fox_path() if name == "fox" else os.path.join(out, "biped.blend")
    if name == "biped":
        demo.write_character("biped", source)
    stem = os.path.join(out, "job")
    assert distill.main(demo.job_flags(source, prompt, stem, preview=False)) == 0
    with open(f"{stem}.json", encoding="utf-8") as fh:
        report = json.load(fh)
    return evaluate(f"{stem}.blend", report)


def fox_or_skip() -> None:
    if demo.fox_path() is None:
        pytest.skip("the shared assets (AKD_SHARED) are not here")


def test_arms_up_to_the_sky_ends_with_both_hands_above_the_head():
    result = job("biped", demo.JOBS["biped"])
    head = result.of([result.roles.head])[:, :, 2].max(1)  # [F] the head's top
    for side in ("left", "right"):
        hand = result.limb_end("arms", side)[:, :, 2].min(1)  # [F] the hand's lowest point
        assert hand[-1] > head[-1], (side, hand[-1], head[-1])
        assert hand[0] < head[0] - 0.3 * result.height  # from arms down at the sides


def test_the_fox_walks_forward():
    fox_or_skip()
    result = job("fox", demo.JOBS["fox"])
    centre = result.verts.mean(1)
    moved = np.linalg.norm(centre[-1, :2] - centre[0, :2])
    assert moved > 0.5 * result.height, (moved, result.height)
    lowest = result.verts[:, :, 2].min(1) - result.floor
    assert np.abs(lowest).max() < 0.05 * result.height  # it walks on the floor


def test_a_held_out_jump_leaves_the_ground_with_both_feet():
    result = job("biped", HELD_OUT["jump"])
    assert result.report["distill"]["library_motion"] == "jump"
    feet = [result.limb_end("legs", side)[:, :, 2].min(1) - result.floor for side in ("left", "right")]
    both = np.minimum(*feet)  # [F] the lower foot's clearance
    assert both.max() > 0.05 * result.height, both
    assert both.min() < 0.02 * result.height  # and it stands on the ground before and after


def test_a_held_out_wave_raises_the_right_hand_above_the_shoulder_and_swings_it():
    result = job("biped", HELD_OUT["wave"])
    assert result.report["distill"]["library_motion"] == "wave"
    arm = result.roles.limb("arms", "right")
    shoulder = result.of(arm.bones[:1])[:, :, 2].max(1)  # [F] the upper arm's top
    hand = result.limb_end("arms", "right")
    raised = hand[:, :, 2].min(1) > shoulder
    assert raised.mean() > 0.5, raised
    across = hand.mean(1)[raised, 0]  # the hand's centre from side to side (world X: the biped faces -Y)
    assert np.ptp(across) > 0.05 * result.height, np.ptp(across)
    turns = np.sum(np.diff(np.sign(np.diff(across))) != 0)
    assert turns >= 2, across  # there and back, at least once
    left = result.limb_end("arms", "left")[:, :, 2].max(1)
    assert left.max() < shoulder.min()  # the other hand hangs
