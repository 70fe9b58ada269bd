"""Pose search: the gradient-free, coarse-to-fine fit of per-frame poses to a target video (CPU)."""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import pytest
import torch

from akd_blender.core.character.kinematics import Skeleton
from akd_blender.core.character.procedural import biped
from akd_blender.core.character.rotations import quat_multiply, rotvec_to_quat
from akd_blender.core.distillation.sds_loop import DistillConfig, SearchSettings, distill, resolve_start
from akd_blender.core.errors import InputError
from akd_blender.core.fitting.frame_paths import (
    candidate_rotations,
    continuous_rotvecs,
    keys_from_frames,
    searched_bones,
    smooth_frames,
    viterbi_path,
)
from akd_blender.core.fitting.pose_search import search_poses
from akd_blender.core.fitting.search_config import SearchConfig
from akd_blender.core.motion.clip import MotionClip
from akd_blender.core.motion.library.labelled import neutral_clip
from akd_blender.core.progress import Callbacks
from akd_blender.core.render import Renderer, make_cameras, root_path
from akd_blender.core.render.image_losses import multiscale_mse
from akd_blender.core.settings import RedrawSettings
from akd_blender.core.video_models.tiny_network import TeacherConfig

SIZE, FRAMES = 32, 4


@pytest.fixture(scope="module")
def rig():
    return biped()


def raised_arm(rig, frames: int, angle: float) -> MotionClip:
    """The standing pose with the right upper arm swung forward/up by ``angle`` radians (more each frame)."""
    clip = neutral_clip(rig, frames)
    rotations = clip.rotations.copy()
    b = rig.bone_index("upper_arm.R")
    for f in range(frames):
        turn = rotvec_to_quat(torch.tensor([angle * (0.7 + 0.3 * f / max(frames - 1, 1)), 0.0, 0.0], dtype=torch.float64))
        rotations[f, b] = quat_multiply(torch.as_tensor(rotations[f, b]), turn).numpy()
    return MotionClip(clip.bone_names, clip.fps, 1, rotations, clip.locations.copy())


def _render(rig, renderer, clip: MotionClip) -> torch.Tensor:
    with torch.no_grad():
        vertices = Skeleton(rig)(clip)
        return renderer.render(vertices, make_cameras(rig, root_path(vertices), SIZE, SIZE))[:, :3]


def test_candidates_start_with_the_identity_and_respect_locks():
    free = candidate_rotations(0.5, directions=8)
    assert free.shape == (11, 4) and torch.allclose(free[0], torch.tensor([1.0, 0, 0, 0]))
    angles = 2 * torch.acos(free[:, 0].clamp(max=1.0))
    assert torch.allclose(angles[1:], torch.full((10,), 0.5), atol=1e-5)
    twist_only = candidate_rotations(0.5, directions=8, lock=(True, False, True))
    assert twist_only.shape == (3, 4) and torch.allclose(twist_only[1:, [1, 3]], torch.zeros(2, 2))


def test_searched_bones_skip_bones_that_move_little_skin(rig):
    bones = searched_bones(rig, 0.01)
    assert list(bones) == sorted(bones) and rig.bone_index("upper_arm.R") in bones
    assert len(searched_bones(rig, 0.5)) < len(bones)  # only bones carrying half the skin (the trunk) remain


def test_best_path_is_consistent_over_time():
    unary = torch.tensor([[0.0, 0.0, 0.0], [0.1, -0.05, 0.1]])  # candidate 1 wins frame 1 alone, narrowly
    jump = torch.tensor([[0.0, 1.0], [1.0, 0.0]]).expand(2, 2, 2)
    assert viterbi_path(unary, 0.0 * jump).tolist() == [0, 1, 0]
    assert viterbi_path(unary, jump).tolist() == [0, 0, 0]  # switching costs more than it gains
    assert viterbi_path(unary - torch.tensor([[0.0], [1.0]]), jump).tolist() == [1, 1, 1]  # all frames move together


def test_keys_reproduce_frames_and_rotvecs_stay_continuous():
    values = torch.randn(6, 2, 3)
    assert torch.allclose(keys_from_frames(values, 6, smooth=0.0), values, atol=1e-5)
    keys = keys_from_frames(values, 11)  # more keys than frames: calm in between
    assert keys.shape == (11, 2, 3) and torch.isfinite(keys).all()
    near_pi = torch.tensor([[0.0, 0.0, 3.1], [0.0, 0.0, -3.1]])  # the same turn twice, written both ways
    fixed = continuous_rotvecs(near_pi)
    assert torch.allclose(fixed[1], torch.tensor([0.0, 0.0, 2 * math.pi - 3.1]), atol=1e-5)


def test_smoothing_removes_frame_jitter_and_keeps_slow_motion():
    t = torch.arange(16, dtype=torch.float32)
    slow = torch.stack([0.5 * torch.sin(2 * math.pi * t / 16), 0.1 * t, torch.ones(16)], -1)[:, None]  # [16,1,3]
    jitter = 0.2 * (-1.0) ** t[:, None, None]  # the ring's quantisation flipping every frame
    smoothed = smooth_frames(slow + jitter, 1.5)
    assert smoothed.shape == slow.shape
    assert smooth_frames(jitter, 1.5)[4:-4].abs().max() < 0.01  # the flicker is gone (edges are held) ...
    assert (smoothed - slow)[2:-2].abs().max() < 0.1  # ... and a sway over the clip survives (84 % of it)
    assert torch.allclose(smooth_frames(slow, 0.0), slow) and torch.allclose(
        smooth_frames(torch.ones(5, 2), 1.5), torch.ones(5, 2)
    )


def test_smoothing_can_hold_the_first_frame():
    """A root lift anchored at the first frame (0) and high from the second on keeps its first frame
    when smoothed with ``hold_first``; plain smoothing lifts it with its neighbours."""
    lift = torch.tensor([0.0, 0.3, 0.4, 0.4, 0.4, 0.4, 0.4, 0.4, 0.4, 0.4])[:, None].repeat(1, 3)
    plain, held = smooth_frames(lift, 0.75), smooth_frames(lift, 0.75, hold_first=True)
    assert float(plain[0, 0]) > 0.05 and torch.equal(held[0], lift[0])
    assert torch.allclose(held[5:], plain[5:], atol=1e-4) and (held[1:] - plain[1:]).abs().max() < float(plain[0, 0])


def test_search_finds_a_raised_arm(rig):
    renderer = Renderer(rig, SIZE, SIZE, backend="torch", device="cpu")
    truth = raised_arm(rig, FRAMES, 1.6)
    target = _render(rig, renderer, truth)
    start = neutral_clip(rig, FRAMES)
    result = search_poses(
        rig,
        target,
        *start.pose_channels(),
        renderer,
        lambda path: make_cameras(rig, path, SIZE, SIZE),
        config=SearchConfig(scales=(2.4, 1.6, 1.0, 0.6, 0.3)),
    )
    assert result.rotvec.shape == (FRAMES, rig.num_bones, 3) and result.root.shape == (FRAMES, 3)
    assert float(result.errors.mean()) < 0.35 * float(result.start_errors.mean())
    assert result.renders > 0
    # The right hand ends near the target's, far from where it started.
    skeleton = Skeleton(rig)
    hand = rig.bone_index("hand.R")
    rotations, locations = start.pose_channels()
    found = quat_multiply(rotations, rotvec_to_quat(result.rotvec))
    joints = skeleton.joint_positions(found, locations)
    want = skeleton.joint_positions(*truth.pose_channels())
    was = skeleton.joint_positions(rotations, locations)
    assert float((joints[:, hand] - want[:, hand]).norm(dim=-1).max()) < 0.3 * float(
        (was[:, hand] - want[:, hand]).norm(dim=-1).min()
    )


def _root_axes(rig) -> np.ndarray:
    """[3,3] maps the root's location channel to armature space (its rest axes when it moves locally)."""
    root = int(rig.root_indices[0])
    return rig.rest_matrices[root, :3, :3] if rig.use_local_location[root] else np.eye(3)


def _moved(rig, clip: MotionClip, offsets) -> MotionClip:
    """``clip`` with the root moved by ``offsets`` [F,3] (Blender units, world axes) per frame."""
    locations = clip.locations.copy()
    locations[:, int(rig.root_indices[0])] += np.asarray(offsets) @ _root_axes(rig)
    return MotionClip(clip.bone_names, clip.fps, 1, clip.rotations.copy(), locations)


def _lifted(rig, clip: MotionClip, heights: list[float]) -> MotionClip:
    """``clip`` with the root raised by ``heights[f]`` (Blender units, world up) in frame f."""
    return _moved(rig, clip, np.outer(heights, [0.0, 0.0, 1.0]))


def _travelled(rig, clip: MotionClip, velocity: tuple[float, float, float]) -> MotionClip:
    """``clip`` with the root moved by f · ``velocity`` (Blender units per frame, world axes) in frame f."""
    return _moved(rig, clip, np.outer(np.arange(len(clip.locations)), velocity))


def _search(rig, renderer, target: torch.Tensor, start: MotionClip, scales=(2.4, 1.0, 0.3), **settings):
    cameras = lambda path: make_cameras(rig, path, SIZE, SIZE)  # noqa: E731
    config = SearchConfig(scales=scales, **settings)
    return search_poses(rig, target, *start.pose_channels(), renderer, cameras, config=config)


def test_root_lift_follows_a_jump_and_ignores_a_frame_of_noise(rig):
    renderer = Renderer(rig, SIZE, SIZE, backend="torch", device="cpu")
    start = neutral_clip(rig, 6)
    h = float(rig.height)
    jump = _render(rig, renderer, _lifted(rig, start, [0.0, 0.0, 0.2 * h, 0.2 * h, 0.0, 0.0]))
    lift = _search(rig, renderer, jump, start).root[:, 2] / h
    assert (lift[2:4] - 0.2).abs().max() < 0.05 and lift[[0, 1, 4, 5]].abs().max() < 0.05, lift
    noisy = _render(rig, renderer, start)
    noisy[0] = torch.rand(noisy[0].shape, generator=torch.Generator().manual_seed(0))  # a frame the rig cannot match
    # Chosen per frame alone, the lift of that frame wandered (by 0.5 heights in the teacher's noisy runs);
    # jointly, a frame of pure noise may still take one of the lifts tried with the root's turns (0.09 h).
    assert float(_search(rig, renderer, noisy, start).root.norm(dim=-1).max()) < 0.1 * h


def test_root_travel_is_read_from_the_follow_cameras_lag(rig):
    """The follow camera hides where the character is, except that it lags at the clip's ends behind a
    character that travels: the search finds the speed along the facing (-Y) from that lag alone (on
    the embedded teacher's plain ground; a checkerboard would show the travel as it scrolls by)."""
    renderer = Renderer(rig, SIZE, SIZE, backend="torch", device="cpu", style=TeacherConfig(ground="plain").scene_style())
    start = neutral_clip(rig, 10)
    speed = 0.15 * float(rig.height)  # a run's speed, per frame
    result = _search(rig, renderer, _render(rig, renderer, _travelled(rig, start, (0.0, -speed, 0.0))), start)
    assert abs(float(result.velocity[1]) + speed) < 0.25 * speed and abs(float(result.velocity[0])) < 0.1 * speed, result.velocity
    assert torch.allclose(result.root[-1] - result.root[0], 9 * result.velocity, atol=1e-4)
    standing = _search(rig, renderer, _render(rig, renderer, start), start, (2.4, 1.0))
    assert float(standing.velocity.norm()) == 0.0


def test_root_tipped_and_lowered_together_is_found(rig):
    """A bow (the hips tipped forward 0.6 rad and lowered by a quarter of the height): each move alone
    matches worse than standing, so the root's turns are tried together with lifts. With straight legs
    that bow puts the feet under the ground from the first frame on, so the grounding (sinking,
    floating, the first frame's height) is off here: this checks the candidates, not the ground."""
    renderer = Renderer(rig, SIZE, SIZE, backend="torch", device="cpu", style=TeacherConfig(ground="plain").scene_style())
    start = neutral_clip(rig, 4)
    rotations = start.rotations.copy()
    tip = rotvec_to_quat(torch.tensor([0.6, 0.0, 0.0], dtype=torch.float64))
    rotations[:, 0] = quat_multiply(torch.as_tensor(rotations[:, 0]), tip).numpy()
    h = float(rig.height)
    bow = _lifted(rig, MotionClip(start.bone_names, start.fps, 1, rotations, start.locations.copy()), [-0.25 * h] * 4)
    ungrounded = {"ground_weight": 0.0, "penetration_weight": 0.0, "anchor_start": False}
    lift = _search(rig, renderer, _render(rig, renderer, bow), start, (2.4, 1.0, 0.6, 0.3), **ungrounded).root[:, 2] / h
    assert (lift + 0.25).abs().max() < 0.05, lift


class DrawsOneVideo:
    """A prior whose drawing is a fixed video and whose SDS target is that video (pixel target)."""

    name, fps = "draws-one-video", 8.0

    def __init__(self, video: torch.Tensor) -> None:
        self.video = video
        self.frames, _, self.height, self.width = video.shape
        self.drawn = 0

    def encode_text(self, prompt, negative_prompt=""):
        return None

    def sample(self, text, generator=None, guidance=3.0, steps=30, progress=None):
        self.drawn += 1
        return self.video

    def sds_loss(self, video, text, step, total_steps, generator=None, region=None):
        return {"loss": multiscale_mse(video.float(), self.video)}


def test_distill_starts_from_the_fitted_sample(rig):
    renderer = Renderer(rig, SIZE * 2, SIZE * 2, backend="torch", device="cpu")
    truth = raised_arm(rig, FRAMES, 1.6)
    with torch.no_grad():
        vertices = Skeleton(rig)(truth)
        target = renderer.render(vertices, make_cameras(rig, root_path(vertices), SIZE * 2, SIZE * 2))[:, :3]
        target = torch.nn.functional.avg_pool2d(target, 2)
    prior = DrawsOneVideo(target)
    config = DistillConfig(
        frames=FRAMES,
        fps=8.0,
        keys=FRAMES,
        steps=1,
        lr=1e-6,
        device="cpu",
        supersample=2,
        start="sample",
        search=SearchSettings(scales=(2.4, 1.6, 1.0, 0.6)),
    )
    result = distill(rig, "raise the right arm", config, prior, init_pose=neutral_clip(rig))
    assert prior.drawn == 1 and result.extra["sample_frames"] == FRAMES
    assert result.extra["search_error"] < 0.35 * result.extra["search_error_start"]
    assert "sample_and_search" in result.timings
    held = distill(
        rig,
        "raise the right arm",
        replace(config, start="pose", redraw=RedrawSettings(noise=())),
        prior,
        init_pose=neutral_clip(rig),
    )
    assert prior.drawn == 1 and held.extra == {}  # "pose" never draws
    assert result.history[0]["sds"] < 0.5 * held.history[0]["sds"]

    class CannotDraw:
        name = "cannot-draw"

    with pytest.raises(InputError, match="start 'sample' needs a prior that can draw"):
        distill(rig, "raise the right arm", replace(config, start="sample"), CannotDraw())
    with pytest.raises(InputError, match="start must be"):
        DistillConfig(start="guess").validate()
    assert np.isfinite(result.clip.rotations).all()
    with pytest.raises(InputError, match="steps must be at least 1, or 0 with start 'sample'"):
        DistillConfig(steps=0, start="pose", redraw=RedrawSettings(noise=())).validate()
    # The default start: a drawn video when the prior can draw (then no steps), else the pose (200 steps).
    assert (resolve_start(DistillConfig(), prior).start, resolve_start(DistillConfig(), prior).steps) == ("sample", 0)
    assert (resolve_start(DistillConfig(), CannotDraw()).start, resolve_start(DistillConfig(), CannotDraw()).steps) == (
        "pose",
        200,
    )
    with pytest.raises(InputError, match="steps 0 needs start 'sample' or redraw rounds; 'cannot-draw' can do neither"):
        resolve_start(DistillConfig(steps=0), CannotDraw())
    # Steps 0: the fitted drawing as it is (no optimiser step shakes it), the same fit as above.
    fitted = distill(rig, "raise the right arm", replace(config, steps=0), prior, init_pose=neutral_clip(rig))
    assert fitted.history == [] and prior.drawn == 2
    assert np.abs(fitted.clip.rotations - result.clip.rotations).max() < 1e-3


def test_distill_keeps_the_drawn_travel_in_its_keys(rig):
    """A drawn video of a character that travels becomes keys that travel at that speed, start to end
    (the smoothing of the fitted poses over frames leaves the steady travel as it is)."""
    style = TeacherConfig(ground="plain").scene_style()
    renderer = Renderer(rig, SIZE, SIZE, backend="torch", device="cpu", style=style)
    start = neutral_clip(rig, 10)
    speed = 0.15 * float(rig.height)
    prior = DrawsOneVideo(_render(rig, renderer, _travelled(rig, start, (0.0, -speed, 0.0))))
    prior.render_style = style
    config = DistillConfig(
        frames=10,
        fps=8.0,
        keys=10,
        steps=0,
        device="cpu",
        supersample=1,
        start="sample",
        search=SearchSettings(scales=(2.4, 1.0, 0.3)),
    )
    clip = distill(rig, "walk forward", config, prior, init_pose=neutral_clip(rig)).clip
    path = clip.locations[:, int(rig.root_indices[0])] @ np.linalg.inv(_root_axes(rig))  # armature space
    travel = path[-1] - path[0]
    assert abs(travel[1] + 9 * speed) < 0.25 * 9 * speed and abs(travel[0]) < 0.1 * 9 * speed, travel
    steps = np.diff(path, axis=0)[:, 1]
    assert np.abs(steps - steps.mean()).max() < 0.05 * speed, steps  # the smoothing does not shorten the first and last steps


def test_standardised_images_ignore_a_colour_cast():
    from akd_blender.core.render.image_losses import standardise

    video = torch.rand(3, 3, 8, 8)
    cast = video * torch.tensor([1.3, 0.9, 0.7]).view(1, 3, 1, 1) + torch.tensor([0.0, 0.05, 0.1]).view(1, 3, 1, 1)
    assert torch.allclose(standardise(cast), standardise(video), atol=1e-5)
    assert torch.isfinite(standardise(torch.full((1, 3, 4, 4), 0.5))).all()  # a flat image stays finite


def test_normalised_search_sees_a_colour_cast_drawing_of_the_pose_as_that_pose(rig):
    """A drawing of the raised arm whose colours drifted (gains 1.3, 0.9, 0.7 and an offset): with the
    plain comparison the true pose scores nearly as badly as the standing pose (ratio 0.91 measured),
    with the standardised one it scores about 1 % of it."""
    renderer = Renderer(rig, SIZE, SIZE, backend="torch", device="cpu")
    truth, standing = raised_arm(rig, FRAMES, 1.6), neutral_clip(rig, FRAMES)
    cast = _render(rig, renderer, truth) * torch.tensor([1.3, 0.9, 0.7]).view(1, 3, 1, 1)
    cast = (cast + torch.tensor([0.0, 0.05, 0.1]).view(1, 3, 1, 1)).clamp(0, 1)

    def error(clip, appearance):
        config = SearchConfig(scales=(), appearance=appearance, root_travel=0.0)  # scores the base pose only
        result = search_poses(
            rig, cast, *clip.pose_channels(), renderer, lambda p: make_cameras(rig, p, SIZE, SIZE), config=config
        )
        return float(result.start_errors.mean())

    assert error(truth, "rgb") > 0.5 * error(standing, "rgb")
    assert error(truth, "normalised") < 0.05 * error(standing, "normalised")
    with pytest.raises(ValueError, match="appearance"):
        error(truth, "hsv")
    with pytest.raises(InputError, match="appearance"):
        DistillConfig(search=SearchSettings(appearance="hsv")).validate()


def test_rendering_on_threads_and_remembering_candidates_change_nothing(rig):
    """``workers`` renders batches side by side on the CPU: the same result as one at a time; each
    distinct candidate is rendered once (every ring's unchanged pose is remembered), so the renders
    are fewer than the candidates scored."""
    renderer = Renderer(rig, SIZE, SIZE, backend="torch", device="cpu")
    start = neutral_clip(rig, FRAMES)
    target = _render(rig, renderer, raised_arm(rig, FRAMES, 0.8))
    threads = torch.get_num_threads()
    seen = []
    one = _search(rig, renderer, target, start, scales=(1.0, 0.3), workers=1)
    two = search_poses(
        rig,
        target,
        *start.pose_channels(),
        renderer,
        lambda path: make_cameras(rig, path, SIZE, SIZE),
        config=SearchConfig(scales=(1.0, 0.3), workers=2),
        callbacks=Callbacks(progress=seen.append),
    )
    assert torch.get_num_threads() == threads  # restored
    assert torch.equal(one.rotvec, two.rotvec) and torch.equal(one.lift, two.lift)
    assert torch.allclose(one.errors, two.errors, rtol=1e-5)  # torch's own threads round sums differently
    assert one.renders == two.renders and seen[-1].step == seen[-1].total
    assert two.renders < seen[-1].total * FRAMES  # some candidates were known already


def test_the_distillation_weights_the_starts_by_the_motion_the_prompt_was_understood_as(rig):
    """``SearchSettings.prompt_prior`` reaches the search through the prompt's reading: a drawing of
    standing keeps standing at 0; at 1 the understood motion's start is always taken."""
    from types import SimpleNamespace

    renderer = Renderer(rig, SIZE, SIZE, backend="torch", device="cpu")
    with torch.no_grad():
        vertices = Skeleton(rig)(neutral_clip(rig, FRAMES))
        standing = renderer.render(vertices, make_cameras(rig, root_path(vertices), SIZE, SIZE))[:, :3]

    class ReadsAsWave(DrawsOneVideo):
        def encode_text(self, prompt, negative_prompt=""):
            return SimpleNamespace(extra={"motion": "biped/wave"})

    def started(prompt_prior: float) -> str:
        config = DistillConfig(
            frames=FRAMES,
            fps=8.0,
            keys=FRAMES,
            steps=0,
            device="cpu",
            supersample=1,
            start="sample",
            search=SearchSettings(scales=(0.3,), prior_scales=(0.15,), supersample=1, prompt_prior=prompt_prior),
        )
        result = distill(rig, "a figure waves", config, ReadsAsWave(standing), init_pose=neutral_clip(rig))
        return result.extra["search_start"]

    assert started(0.0) == "standing pose"
    assert started(1.0).startswith("wave (")
