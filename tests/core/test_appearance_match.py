"""The pose search's "matched" comparison: a drawing recoloured into the render's colours through its
first frame, and a ground the render does not have found and ignored but for the character's coverage."""

from __future__ import annotations

import pytest
import torch

from akd_blender.core.character.kinematics import Skeleton
from akd_blender.core.character.procedural import biped
from akd_blender.core.character.rotations import quat_multiply, rotvec_to_quat
from akd_blender.core.fitting.pose_search import search_poses
from akd_blender.core.fitting.search_config import SearchConfig
from akd_blender.core.motion.clip import MotionClip
from akd_blender.core.motion.library.labelled import neutral_clip
from akd_blender.core.render import Renderer, make_cameras, root_path
from akd_blender.core.render.image_losses import calibrate_to_first_frame, colour_map, match_first_frame
from akd_blender.core.settings import DistillConfig, SearchSettings

SIZE, FRAMES = 32, 6
GAIN, OFFSET = torch.tensor([1.3, 0.9, 0.7]).view(1, 3, 1, 1), torch.tensor([0.0, 0.05, 0.1]).view(1, 3, 1, 1)


@pytest.fixture(scope="module")
def rig():
    return biped()


@pytest.fixture(scope="module")
def renderer(rig):
    return Renderer(rig, SIZE, SIZE, backend="torch", device="cpu")


def _rgba(rig, renderer, clip: MotionClip) -> torch.Tensor:
    with torch.no_grad():
        vertices = Skeleton(rig)(clip)
        return renderer.render(vertices, make_cameras(rig, root_path(vertices), SIZE, SIZE))


def _arm_rising(rig, frames: int = FRAMES, angle: float = 1.6) -> MotionClip:
    """Standing at frame 0, the right upper arm swinging up to ``angle`` radians by the last frame."""
    clip = neutral_clip(rig, frames)
    rotations = clip.rotations.copy()
    b = rig.bone_index("upper_arm.R")
    for f in range(frames):
        turn = rotvec_to_quat(torch.tensor([angle * f / (frames - 1), 0.0, 0.0], dtype=torch.float64))
        rotations[f, b] = quat_multiply(torch.as_tensor(rotations[f, b]), turn).numpy()
    return MotionClip(clip.bone_names, clip.fps, 1, rotations, clip.locations.copy())


def _repainted(rgba: torch.Tensor) -> torch.Tensor:
    """The RGB with everything but the character painted as a purple checkerboard sliding 3 px per frame."""
    rows, cols = torch.meshgrid(torch.arange(SIZE), torch.arange(SIZE), indexing="ij")
    out = rgba[:, :3].clone()
    for f in range(rgba.shape[0]):
        checker = (((cols + 3 * f) // 4 + rows // 4) % 2).float()
        ground = torch.stack([0.55 + 0.4 * checker, 0.05 + 0 * checker, 0.55 + 0.4 * checker])
        out[f] = rgba[f, 3:] * out[f] + (1 - rgba[f, 3:]) * ground
    return out


def _cast(video: torch.Tensor) -> torch.Tensor:
    return (video * GAIN + OFFSET).clamp(0, 1)


def test_colour_map_recovers_an_affine_cast():
    colours = 0.7 * torch.rand(200, 3)  # the gain of 1.3 does not clip
    cast = _cast(colours.T[None, :, :, None])[0, :, :, 0].T
    back = torch.cat([cast, torch.ones(200, 1)], 1) @ colour_map(cast, colours, ridge=1e-6)
    assert (back - colours).abs().max() < 1e-3
    assert torch.allclose(colour_map(colours, colours), torch.eye(4, 3), atol=1e-4)  # no cast: the identity


def test_an_unchanged_drawing_comes_back_as_itself_with_no_foreign_ground(rig, renderer):
    rgba = _rgba(rig, renderer, _arm_rising(rig))
    recoloured, foreign = match_first_frame(rgba[:, :3], rgba[:1])
    assert recoloured.shape == (FRAMES, 3, SIZE, SIZE) and foreign.shape == (FRAMES, 1, SIZE, SIZE)
    assert float((recoloured - rgba[:, :3]).pow(2).mean()) < 1e-3
    assert float(foreign.max()) < 0.05


def test_a_cast_and_repainted_drawing_maps_back_and_its_ground_is_foreign(rig, renderer):
    rgba = _rgba(rig, renderer, _arm_rising(rig))
    drawing = _cast(_repainted(rgba))
    recoloured, foreign = match_first_frame(drawing, rgba[:1])
    body, ground = rgba[:, 3:] > 0.98, rgba[:, 3:] < 0.02
    raw = float((drawing - rgba[:, :3]).pow(2).mean(1, keepdim=True)[body].mean())
    assert float((recoloured - rgba[:, :3]).pow(2).mean(1, keepdim=True)[body].mean()) < 0.1 * raw  # the cast undone
    assert float(foreign[ground].mean()) > 0.9 and float(foreign[body].mean()) < 0.1
    with pytest.raises(ValueError, match="render must be"):
        match_first_frame(drawing, rgba[:1, :3])


def test_matched_search_fits_a_drawing_whose_ground_was_repainted(rig, renderer):
    """The plain comparison chases the purple ground and leaves the arm where it was (hand error 1.00 ×
    the standing pose's, measured); the matched one raises it (0.53 ×, measured)."""
    truth, standing = _arm_rising(rig), neutral_clip(rig, FRAMES)
    drawing = _repainted(_rgba(rig, renderer, truth))
    skeleton, hand = Skeleton(rig), rig.bone_index("hand.R")
    want = skeleton.joint_positions(*truth.pose_channels())[1:, hand]
    rotations, locations = standing.pose_channels()
    still = (skeleton.joint_positions(rotations, locations)[1:, hand] - want).norm(dim=-1).mean()

    def hand_error(appearance: str) -> float:
        config = SearchConfig(scales=(2.4, 1.6, 1.0, 0.6, 0.3), appearance=appearance)
        result = search_poses(
            rig, drawing, rotations, locations, renderer, lambda p: make_cameras(rig, p, SIZE, SIZE), config=config
        )
        found = quat_multiply(rotations, rotvec_to_quat(result.rotvec))
        return float((skeleton.joint_positions(found, locations)[1:, hand] - want).norm(dim=-1).mean() / still)

    assert hand_error("rgb") > 0.8
    assert hand_error("matched") < 0.7
    DistillConfig(search=SearchSettings(appearance="matched")).validate()


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")
def test_the_recolouring_runs_on_cuda_as_on_the_cpu(rig, renderer):
    rgba = _rgba(rig, renderer, _arm_rising(rig))
    drawing = _cast(_repainted(rgba))
    on_cpu = match_first_frame(drawing, rgba[:1])
    on_gpu = match_first_frame(drawing.cuda(), rgba[:1].cuda())
    for a, b in zip(on_cpu, on_gpu):
        assert torch.allclose(a, b.cpu(), atol=1e-3)


def _brightened(video: torch.Tensor) -> torch.Tensor:
    return (0.8 * video + 0.2).clamp(0, 1)


def test_calibration_undoes_a_brightness_change_of_the_whole_drawing(rig, renderer):
    rgba = _rgba(rig, renderer, _arm_rising(rig))
    for drawing in (_brightened(rgba[:, :3]), _cast(rgba[:, :3])):
        back = calibrate_to_first_frame(drawing, rgba[:1])
        assert back.shape == drawing.shape
        raw = float((drawing - rgba[:, :3]).pow(2).mean())
        assert float((back - rgba[:, :3]).pow(2).mean()) < 0.05 * raw
    same = calibrate_to_first_frame(rgba[:, :3], rgba[:1])  # an unchanged drawing stays as it is
    assert float((same - rgba[:, :3]).abs().max()) < 0.02
    moved = torch.roll(_brightened(rgba[:, :3]), 2, dims=-1)  # drawn 2 px off the render's pixels
    by_moments, by_pairs = (calibrate_to_first_frame(moved, rgba[:1], by=by) for by in ("moments", "pairs"))
    contrast = float(torch.roll(rgba[:, :3], 2, dims=-1).std())
    assert abs(float(by_moments.std()) - contrast) < 0.05 * contrast  # the spread the render has
    assert float(by_pairs.std()) < 0.9 * contrast  # paired pixels that do not line up shrink it
    with pytest.raises(ValueError, match="by must be"):
        calibrate_to_first_frame(rgba[:, :3], rgba[:1], by="histogram")
    with pytest.raises(ValueError, match="render must be"):
        calibrate_to_first_frame(rgba[:, :3], rgba[:1, :3])


def test_calibrated_search_fits_a_brightened_drawing_as_the_pose_it_shows(rig, renderer):
    """The plain comparison lifts the arm the wrong way (hand error 1.22 × the standing pose's,
    measured); the calibrated one finds what it finds in the unchanged drawing (0.63 ×, both measured)."""
    truth, standing = _arm_rising(rig), neutral_clip(rig, FRAMES)
    drawing = _brightened(_rgba(rig, renderer, truth)[:, :3])
    skeleton, hand = Skeleton(rig), rig.bone_index("hand.R")
    want = skeleton.joint_positions(*truth.pose_channels())[1:, hand]
    rotations, locations = standing.pose_channels()
    still = (skeleton.joint_positions(rotations, locations)[1:, hand] - want).norm(dim=-1).mean()

    def hand_error(appearance: str) -> float:
        config = SearchConfig(scales=(2.4, 1.6, 1.0, 0.6, 0.3), appearance=appearance)
        result = search_poses(
            rig, drawing, rotations, locations, renderer, lambda p: make_cameras(rig, p, SIZE, SIZE), config=config
        )
        found = quat_multiply(rotations, rotvec_to_quat(result.rotvec))
        return float((skeleton.joint_positions(found, locations)[1:, hand] - want).norm(dim=-1).mean() / still)

    assert hand_error("rgb") > 1.0
    assert hand_error("calibrated") < 0.7
    DistillConfig(search=SearchSettings(appearance="calibrated")).validate()


def test_auto_calibrates_only_where_one_colour_map_explains_the_first_frame(rig, renderer):
    """ "auto" maps a brightened or colour-cast drawing as "calibrated" does, and leaves an unchanged
    drawing or one whose ground was redrawn (which one map cannot explain) as it is ("rgb")."""
    rgba = _rgba(rig, renderer, _arm_rising(rig))
    for drawing in (_brightened(rgba[:, :3]), _cast(rgba[:, :3])):
        assert torch.equal(
            calibrate_to_first_frame(drawing, rgba[:1], explained_only=True), calibrate_to_first_frame(drawing, rgba[:1])
        )
    for drawing in (rgba[:, :3], _repainted(rgba)):
        assert calibrate_to_first_frame(drawing, rgba[:1], explained_only=True) is drawing
    repainted = _repainted(rgba)  # "calibrated" maps it all the same
    assert float((calibrate_to_first_frame(repainted, rgba[:1]) - repainted).abs().mean()) > 0.02
    rotations, locations = neutral_clip(rig, FRAMES).pose_channels()

    def found(drawing: torch.Tensor, appearance: str) -> torch.Tensor:
        config = SearchConfig(scales=(0.6,), appearance=appearance)
        cameras = lambda p: make_cameras(rig, p, SIZE, SIZE)  # noqa: E731
        return search_poses(rig, drawing, rotations, locations, renderer, cameras, config=config).rotvec

    bright = _brightened(rgba[:, :3])  # the search takes the mapped drawing: "auto" finds what "calibrated" finds
    assert torch.equal(found(bright, "auto"), found(bright, "calibrated"))
    assert not torch.equal(found(bright, "rgb"), found(bright, "calibrated"))
