"""The judge's window: a clip resampled in its own time, looped when cyclic."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from akd_blender.core.character.rotations import rotvec_to_quat
from akd_blender.core.motion.clip import MotionClip
from akd_blender.core.motion.judge import cycle_period, is_cyclic, judge_window


def _spin(frames: int, fps: float, turns: float, bones: int = 2) -> MotionClip:
    """Bone 0 turning about X by ``turns`` full turns over the clip (the last frame equal to the first
    when ``turns`` is whole); bone 1 still; bone 0 moves along Y by its frame index × 0.01."""
    angle = np.linspace(0, 2 * np.pi * turns, frames)
    rotvec = np.zeros((frames, bones, 3))
    rotvec[:, 0, 0] = angle
    quat = rotvec_to_quat(torch.as_tensor(rotvec)).numpy()
    loc = np.zeros((frames, bones, 3))
    loc[:, 0, 1] = 0.01 * (np.arange(frames) % (frames - 1)) if turns == int(turns) else 0.01 * np.arange(frames)
    return MotionClip(tuple(f"b{i}" for i in range(bones)), fps, 1, quat, loc)


def _same_rotations(a: np.ndarray, b: np.ndarray) -> None:
    """Quaternions [...,4] equal up to sign (q and -q are one rotation)."""
    np.testing.assert_allclose(np.abs((a * b).sum(-1)), 1.0, atol=1e-9)


def _angle(q: np.ndarray) -> np.ndarray:
    return 2 * np.arctan2(np.linalg.norm(q[..., 1:], axis=-1), q[..., 0]) * np.sign(q[..., 1] + 1e-12)


def test_window_keeps_real_time():
    clip = _spin(49, 24.0, 0.5)  # half a turn in 2 s
    window = judge_window(clip, frames=16, seconds=2.0)
    assert window.num_frames == 16 and window.fps == 8.0
    _same_rotations(window.rotations, clip.rotations[::3][:16])
    np.testing.assert_allclose(window.locations, clip.locations[::3][:16], atol=1e-12)


def test_window_interpolates_between_frames():
    clip = _spin(25, 12.0, 0.25)  # 12 fps: the window's 8 fps falls between source frames
    window = judge_window(clip, frames=16, seconds=2.0)
    expected = np.arange(16) * 12.0 / 8.0 * (np.pi / 2 / 24)  # linear angle in time
    np.testing.assert_allclose(np.abs(_angle(window.rotations[:, 0])), expected, atol=1e-9)
    np.testing.assert_allclose(window.locations[:, 0, 1], 0.01 * np.arange(16) * 1.5, atol=1e-12)


def test_cyclic_clip_loops_and_short_clip_holds():
    cycle = _spin(9, 8.0, 1.0)  # one turn in 1 s, last frame = first
    assert is_cyclic(cycle)
    window = judge_window(cycle, frames=16, seconds=2.0)
    _same_rotations(window.rotations[8:], window.rotations[:8])  # period 8 frames
    assert window.locations[9, 0, 1] == pytest.approx(0.01)
    once = _spin(9, 8.0, 0.75)
    assert not is_cyclic(once)
    held = judge_window(once, frames=16, seconds=2.0)
    _same_rotations(held.rotations[8:], np.repeat(once.rotations[-1:], 8, 0))
    _same_rotations(judge_window(cycle, cyclic=False).rotations[8:], np.repeat(cycle.rotations[-1:], 8, 0))


def test_travelling_cycle_keeps_travelling():
    """A cycle whose root moves on (rotations closed, location not): looped, each loop starting where
    the last one ended."""
    cycle = _spin(9, 8.0, 1.0)
    loc = cycle.locations.copy()
    loc[:, 0, 1] = 0.01 * np.arange(9)  # 0.08 forward per cycle
    moving = MotionClip(cycle.bone_names, cycle.fps, 1, cycle.rotations, loc)
    assert not is_cyclic(moving) and cycle_period(moving) == 8
    window = judge_window(moving, frames=16, seconds=2.0)
    _same_rotations(window.rotations[8:], window.rotations[:8])
    np.testing.assert_allclose(window.locations[:, 0, 1], 0.01 * np.arange(16), atol=1e-12)


def test_cycle_without_its_repeated_end_frame_loops():
    """A cycle baked without its closing frame (last frame one step before the first): period F."""
    full = _spin(9, 8.0, 1.0)
    cut = MotionClip(full.bone_names, full.fps, 1, full.rotations[:8], full.locations[:8])
    assert not is_cyclic(cut) and cycle_period(cut) == 8
    window = judge_window(cut, frames=16, seconds=2.0)
    _same_rotations(window.rotations[8:], window.rotations[:8])
    _same_rotations(window.rotations[:8], full.rotations[:8])


def test_clip_ending_elsewhere_is_no_cycle():
    assert cycle_period(_spin(9, 8.0, 0.75)) is None
    still = _spin(9, 8.0, 0.0)
    assert cycle_period(still) == 8  # a held pose is its own cycle
