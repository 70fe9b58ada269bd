"""Pose search: grounded by default, travel only for motions that travel, progress and cancel (CPU)."""

from __future__ import annotations

import re
from dataclasses import replace

import numpy as np
import pytest
import torch

from akd_blender.core.character.kinematics import Skeleton
from akd_blender.core.character.procedural import biped
from akd_blender.core.character.rotations import quat_multiply, rotvec_to_quat
from akd_blender.core.errors import Cancelled
from akd_blender.core.fitting.pose_search import search_poses
from akd_blender.core.fitting.search_config import SearchConfig, search_config_for
from akd_blender.core.motion.library.labelled import make_clip, neutral_clip
from akd_blender.core.progress import Callbacks, Progress
from akd_blender.core.render import Renderer, make_cameras, root_path

SIZE = 32
SCALES = (2.4, 1.0, 0.3)


@pytest.fixture(scope="module")
def rig():
    return biped()


def _render(rig, clip) -> torch.Tensor:
    renderer = Renderer(rig, SIZE, SIZE, backend="torch", device="cpu")
    with torch.no_grad():
        vertices = Skeleton(rig)(clip)
        return renderer.render(vertices, make_cameras(rig, root_path(vertices), SIZE, SIZE))[:, :3]


def _search(rig, target, start, config=None, **kwargs):
    renderer = Renderer(rig, SIZE, SIZE, backend="torch", device="cpu")
    cameras = lambda path: make_cameras(rig, path, SIZE, SIZE)  # noqa: E731
    config = config or SearchConfig(scales=SCALES)
    return search_poses(rig, target, *start.pose_channels(), renderer, cameras, config=config, **kwargs)


def _white(rig):
    """The same character in another look (white, as a textured glTF figure shows against the teacher's colours)."""
    return replace(rig, vertex_colors=np.ones_like(rig.vertex_colors), uvs=None, texture=None)


def test_a_character_that_looks_unlike_the_video_stays_on_the_ground(rig):
    """The target is the biped walking in its own colours; the searched character is white (as a
    textured glTF figure looks against the teacher's colours): it walks on the ground it stood on."""
    h = float(rig.height)
    target = _render(rig, make_clip(rig, "biped", "walk", frames=6, fps=8.0))
    white = _white(rig)
    grounded = _search(white, target, neutral_clip(white, 6))
    assert float(grounded.lift[0].norm()) == 0.0  # the first frame keeps the height it stood at
    assert float(grounded.lift[:, 2].max()) / h < 0.05, grounded.lift[:, 2] / h


def test_a_jump_still_leaves_the_ground(rig):
    h = float(rig.height)
    jump = make_clip(rig, "biped", "jump", frames=8, fps=8.0)
    with torch.no_grad():
        lowest = Skeleton(rig)(jump)[..., 2].amin(-1) - rig.ground_height
    airborne = int(lowest.argmax())
    assert float(lowest[airborne]) / h > 0.1  # the library's jump leaves the ground
    result = _search(rig, _render(rig, jump), neutral_clip(rig, 8), SearchConfig(scales=(2.4, 1.0, 0.6, 0.3)))
    assert float(result.lift[airborne, 2]) / h > 0.5 * float(lowest[airborne]) / h, result.lift[:, 2] / h
    assert float(result.lift[0].norm()) == 0.0


def _where(p: Progress) -> tuple[int, int, str]:
    """(sweep, sweeps, stage) read from a search progress detail "sweep 2/3 · hips"."""
    match = re.fullmatch(r"sweep (\d+)/(\d+) · (.+)", p.detail)
    assert match, p.detail
    return int(match[1]) - 1, int(match[2]), match[3]


def test_progress_counts_to_the_total_and_changes_nothing(rig):
    target = _render(rig, make_clip(rig, "biped", "raise_arms", frames=4, fps=8.0))
    start = neutral_clip(rig, 4)
    seen: list[Progress] = []
    quiet = _search(rig, target, start)
    told = _search(rig, target, start, callbacks=Callbacks(progress=seen.append, should_cancel=lambda: False))
    assert (
        torch.equal(quiet.rotvec, told.rotvec) and torch.equal(quiet.lift, told.lift) and torch.equal(quiet.errors, told.errors)
    )
    assert len(seen) > 20 and seen[-1].step == seen[-1].total and all(p.phase == "search" for p in seen)
    assert all(a.step <= b.step for a, b in zip(seen, seen[1:])) and {_where(p)[0] for p in seen} == set(range(len(SCALES)))
    assert {"travel", "height", "hips"} <= {_where(p)[2] for p in seen} and all(_where(p)[1] == len(SCALES) for p in seen)
    assert seen[-1].eta_seconds == 0


def test_cancel_stops_the_search_in_the_sweep_it_is_in(rig):
    target = _render(rig, neutral_clip(rig, 4))
    seen: list[Progress] = []
    cancel = Callbacks(progress=seen.append, should_cancel=lambda: bool(seen) and _where(seen[-1])[0] == 1)
    with pytest.raises(Cancelled, match=r"sweep 2 of 3"):
        _search(rig, target, neutral_clip(rig, 4), callbacks=cancel)
    assert seen[-1].step < seen[-1].total


def test_travel_is_searched_only_for_motions_that_travel():
    assert search_config_for("biped/walk").root_travel == SearchConfig().root_travel > 0
    assert search_config_for("quadruped/run").root_travel > 0 and search_config_for(None).root_travel > 0
    for motion in ("biped/wave", "biped/raise_arms", "quadruped/sit", "biped/jump", "quadruped/wag_tail"):
        assert search_config_for(motion).root_travel == 0.0, motion
    assert search_config_for("quadruped/sit", scales=(1.0,)).scales == (1.0,)


def _lifted(rig, clip, heights):
    """``clip`` with the root raised by ``heights[f]`` (Blender units, world up) in frame f."""
    root = int(rig.root_indices[0])
    axes = rig.rest_matrices[root, :3, :3] if rig.use_local_location[root] else np.eye(3)
    up = np.linalg.solve(rig.armature_world[:3, :3], [0.0, 0.0, 1.0])
    locations = clip.locations.copy()
    locations[:, root] += np.outer(heights, up / np.linalg.norm(up)) @ axes
    return type(clip)(clip.bone_names, clip.fps, clip.frame_start, clip.rotations.copy(), locations)


def _lowest(rig, result, start) -> torch.Tensor:
    """The lowest skinned vertex's height above the ground per frame [F], in heights, of a search result."""
    rotations, locations = start.pose_channels()
    skeleton = Skeleton(rig)
    root = int(rig.root_indices[0])
    axes = torch.as_tensor(rig.rest_matrices[root, :3, :3] if rig.use_local_location[root] else np.eye(3), dtype=torch.float32)
    free = np.flatnonzero(~rig.rotation_locks.all(axis=1))
    posed = rotations.clone().float()
    posed[:, free] = quat_multiply(posed[:, free], rotvec_to_quat(result.rotvec.double()).float())
    moved = locations.clone().float()
    moved[:, root] += result.root @ axes
    with torch.no_grad():
        z = skeleton.deform(posed, moved)[..., 2].amin(-1)
    return (z - float(rig.ground_height)) / float(rig.height)


@pytest.mark.parametrize("leaves_ground", [False, True])
def test_a_figure_drawn_sunk_into_the_ground_stays_on_it(rig, leaves_ground):
    """The drawn figure sinks a fifth of its height into the ground from the second frame on (the ground
    hides its feet); without the penetration term the search follows it down; with it (for motions that
    stay on the ground and for those that leave it alike) the feet stay at the ground."""
    h = float(rig.height)
    start = neutral_clip(rig, 6)
    target = _render(rig, _lifted(rig, start, [0.0] + [-0.2 * h] * 5))
    config = SearchConfig(scales=SCALES, leaves_ground=leaves_ground)
    sunk = _lowest(rig, _search(rig, target, start, replace(config, penetration_weight=0.0)), start)
    assert float(sunk[1:].max()) < -0.08, sunk  # the image alone pulls the figure down
    grounded = _lowest(rig, _search(rig, target, start, config), start)
    assert float(grounded.min()) > -0.02, grounded


def test_floating_is_penalised_only_for_motions_that_stay_on_the_ground(rig):
    """The drawn figure (the searched one itself, so the image asks clearly) hovers a fifth of its height
    above the ground. The default floating weight is soft: a clearly drawn lift still wins (a jump that
    the label misses can still leave the ground); a firm one keeps a motion that stays on the ground
    down, and leaves one that leaves it (``leaves_ground``) free to follow the drawing up in between
    its first and last frames (where it takes off and lands)."""
    h = float(rig.height)
    start = neutral_clip(rig, 6)
    target = _render(rig, _lifted(rig, start, [0.0] + [0.2 * h] * 5))
    firm = SearchConfig(scales=SCALES, ground_weight=4.0)
    floating = _lowest(rig, _search(rig, target, start, replace(firm, leaves_ground=True)), start)
    grounded = _lowest(rig, _search(rig, target, start, firm), start)
    assert float(floating[1:-1].min()) > 0.1 and float(floating[[0, -1]].max()) < 0.05, floating
    assert float(grounded.max()) < 0.05 and float(grounded.min()) > -0.02, grounded


def test_search_config_for_keeps_grounded_motions_down_and_lets_airborne_ones_float():
    for motion in ("biped/walk", "biped/wave", "quadruped/sit", "quadruped/wag_tail", None):
        assert not search_config_for(motion).leaves_ground, motion
    for motion in ("biped/jump", "quadruped/jump", "biped/run", "quadruped/run"):
        config = search_config_for(motion)
        assert config.leaves_ground and config.penetration_weight > 0 and config.ground_weight > 0, motion
