"""Motion-prior starts: the kind's library motions as the pose search's candidate starting motions,
chosen by the drawing (CPU)."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
import torch

from akd_blender.core.character.kinematics import Skeleton
from akd_blender.core.character.procedural import biped
from akd_blender.core.character.rig import RigAsset
from akd_blender.core.character.rotations import quat_to_rotvec, rotvec_to_quat
from akd_blender.core.fitting.motion_starts import prior_starts, prompt_start_weights, starts_as_channels
from akd_blender.core.fitting.pose_search import search_poses
from akd_blender.core.fitting.search_config import SearchConfig
from akd_blender.core.motion.clip import MotionClip
from akd_blender.core.motion.library import motions_for
from akd_blender.core.render import Renderer, make_cameras, root_path
from tools.family import make_member

SIZE, FRAMES, FPS = 32, 8, 8.0


@pytest.fixture(scope="module")
def rig() -> RigAsset:
    return biped()


@pytest.fixture(scope="module")
def starts(rig):
    return prior_starts(rig, FRAMES, FPS, speeds=(1.0,), phases=2)


def _render(rig: RigAsset, clip: MotionClip) -> torch.Tensor:
    renderer = Renderer(rig, SIZE, SIZE, backend="torch", device="cpu")
    with torch.no_grad():
        vertices = Skeleton(rig)(clip)
        return renderer.render(vertices, make_cameras(rig, root_path(vertices), SIZE, SIZE))[:, :3]


def _search(rig: RigAsset, target: torch.Tensor, starts, weights: torch.Tensor | None = None) -> object:
    rest = MotionClip.rest(rig, FRAMES, FPS)
    rotations, locations = rest.pose_channels()
    channels = starts_as_channels(rig, starts, rotations)
    renderer = Renderer(rig, SIZE, SIZE, backend="torch", device="cpu")
    config = SearchConfig(scales=(0.3,), prior_scales=(), root_travel=0.0, leaves_ground=True)
    return search_poses(
        rig,
        target,
        rotations,
        locations,
        renderer,
        lambda p: make_cameras(rig, p, SIZE, SIZE),
        1,
        config,
        starts=channels,
        start_weights=weights,
    )


def test_starts_are_the_kinds_library_motions_without_duplicates(rig, starts):
    labels = {s.label for s in starts}
    assert labels == {spec.label for spec in motions_for("biped")}
    assert all(s.clip.rotations.shape == (FRAMES, rig.num_bones, 4) for s in starts)
    keys = {(np.round(s.clip.rotations, 5).tobytes(), np.round(s.clip.locations, 5).tobytes()) for s in starts}
    assert len(keys) == len(starts)  # identical clips (a phase an acyclic motion ignores) are tried once
    assert len(starts) < len(labels) * 2 * 2  # some were dropped as duplicates
    walks = [s for s in starts if s.label == "walk"]
    assert {(s.phase, s.direction) for s in walks} >= {(0.0, 1), (0.5, 1)}  # a gait keeps each phase


def test_a_body_without_readable_roles_gets_no_starts():
    rig = biped()
    no_skin = replace(rig, weights=np.zeros_like(rig.weights))
    assert prior_starts(no_skin, FRAMES, FPS) == []


def test_a_second_call_for_the_same_rig_reuses_its_starts_and_another_rig_gets_its_own(rig):
    from akd_blender.core.fitting import motion_starts as motion_prior

    first = prior_starts(rig, FRAMES, FPS, speeds=(1.0,), phases=2)
    again = prior_starts(biped(), FRAMES, FPS, speeds=(1.0,), phases=2)  # another object, same content
    assert [s.name for s in again] == [s.name for s in first]
    assert all(a.clip is b.clip for a, b in zip(again, first))  # kept, not played again
    coloured = replace(rig, vertex_colors=np.zeros_like(rig.vertex_colors), name="Recoloured")
    assert prior_starts(coloured, FRAMES, FPS, speeds=(1.0,), phases=2)[0].clip is first[0].clip
    rest = rig.rest_matrices.copy()
    rest[:, 2, 3] *= 1.5  # the bones' rest heads raised: another body
    other = prior_starts(replace(rig, rest_matrices=rest), FRAMES, FPS, speeds=(1.0,), phases=2)
    assert other[0].clip is not first[0].clip
    assert len(motion_prior._STARTS) <= motion_prior.STARTS_KEPT


def test_channels_reproduce_each_start_as_the_search_poses_it(rig, starts):
    rest = MotionClip.rest(rig, FRAMES, FPS)
    base_rotations, base_locations = rest.pose_channels()
    root = int(rig.root_indices[0])
    rotations, offsets = starts_as_channels(rig, starts, base_rotations)
    assert rotations.shape == (len(starts), FRAMES, rig.num_bones, 4) and offsets.shape == (len(starts), FRAMES, 3)
    skeleton = Skeleton(rig)
    axes = torch.as_tensor(rig.rest_matrices[root, :3, :3] if rig.use_local_location[root] else np.eye(3), dtype=torch.float32)
    for k in (0, len(starts) // 2, len(starts) - 1):
        locations = base_locations.clone()
        locations[:, root] = base_locations[:, root] + offsets[k] @ axes  # how the search places its root
        posed = skeleton.deform(rotations[k], locations)
        assert torch.allclose(posed, skeleton(starts[k].clip), atol=1e-4)


def test_the_drawing_chooses_the_start(rig, starts):
    for label in ("walk", "raise_arms"):
        truth = next(s for s in starts if s.label == label)
        result = _search(rig, _render(rig, truth.clip), starts)
        assert starts[result.start].label == label
        assert float(result.errors.mean()) < 0.2 * float(result.start_errors.mean())


def test_a_drawing_of_standing_keeps_the_standing_start(rig, starts):
    result = _search(rig, _render(rig, MotionClip.rest(rig, FRAMES, FPS)), starts)
    assert result.start == -1
    assert float(result.rotvec.abs().max()) < 1e-6


def test_prompt_weights_favour_the_understood_motions_starts_only(starts):
    weights = prompt_start_weights(starts, "biped/wave", 0.25)
    assert weights.shape == (len(starts),)
    for start, weight in zip(starts, weights.tolist()):
        assert weight == pytest.approx(0.75 if start.label == "wave" else 1.0)
    assert prompt_start_weights(starts, "biped/wave", 0.0) is None
    assert prompt_start_weights(starts, None, 0.5) is None
    assert prompt_start_weights(starts, "biped/moonwalk", 0.5) is None


def test_a_faint_drawing_of_the_understood_motion_starts_from_it(rig, starts):
    # The head-only motions (look around, nod, shake head) and the idle (standing, breathing) are the standing
    # pose but for a turn of the head or a breath, so a faint drawing matches them as well as the standing pose:
    # this is between the pose and the arm motions.
    starts = [s for s in starts if s.label not in ("look_around", "nod", "shake_head", "idle")]
    wave = next(s for s in starts if s.label == "wave")
    rotvec = quat_to_rotvec(torch.as_tensor(wave.clip.rotations, dtype=torch.float64))
    faint = replace(wave.clip, rotations=rotvec_to_quat(0.3 * rotvec).numpy().astype(wave.clip.rotations.dtype))
    target = _render(rig, faint)  # the wave drawn at a third of its swing
    assert _search(rig, target, starts).start == -1
    favoured = _search(rig, target, starts, prompt_start_weights(starts, "biped/wave", 0.5))
    assert favoured.start >= 0 and starts[favoured.start].label == "wave"


def test_a_clear_drawing_outweighs_the_prompt(rig, starts):
    walk = next(s for s in starts if s.label == "walk")
    result = _search(rig, _render(rig, walk.clip), starts, prompt_start_weights(starts, "biped/raise_arms", 0.5))
    assert result.start >= 0 and starts[result.start].label == "walk"


def test_starts_play_on_an_unseen_family_member():
    member = make_member("quadruped", 10501)
    starts = prior_starts(member.rig, FRAMES, FPS, speeds=(1.0,), phases=1)
    assert {s.label for s in starts} == {spec.label for spec in motions_for("quadruped")}


def test_starts_play_on_top_of_a_start_pose_that_is_not_rest(rig, starts):
    base, _ = MotionClip.rest(rig, FRAMES, FPS).pose_channels()
    base[:] = torch.tensor([0.96, 0.28, 0.0, 0.0])  # every bone bent by 33 degrees in the user's pose
    rotations, _ = starts_as_channels(rig, starts, base)
    clips = torch.as_tensor(np.stack([s.clip.rotations for s in starts]), dtype=torch.float32)
    left_alone = (clips - torch.tensor([1.0, 0, 0, 0])).abs().amax(-1) < 1e-6  # [S,F,J] bones a motion does not turn
    assert left_alone.any() and not left_alone.all()
    assert torch.allclose(rotations[left_alone], base[None].expand_as(rotations)[left_alone], atol=1e-6)
    assert not torch.allclose(rotations[~left_alone], base[None].expand_as(rotations)[~left_alone], atol=1e-3)
