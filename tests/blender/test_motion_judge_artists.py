"""The shipped motion judge on artists' own clips, read from the glTF files through Blender's importer
(roles found by find_roles, actions evaluated by Blender)."""

from __future__ import annotations

import numpy as np
import pytest

from akd_blender.core.character.rig import load_rig
from akd_blender.core.character.roles import find_roles
from akd_blender.core.motion.clip import MotionClip
from akd_blender.core.motion.judge import load_motion_judge
from tests.bench.artist_fixtures import export_model, load_clip
from tools.artist_clips import ARTIST_EXPECTED

LOCOMOTION = {"walk", "run", "gallop", "hop"}


@pytest.fixture(scope="module")
def judge():
    return load_motion_judge()


def _clips(path, tmp_path) -> tuple:
    entry = export_model(path, tmp_path)
    rig = load_rig(str(tmp_path / entry["rig"]))
    return rig, find_roles(rig), {action: load_clip(tmp_path / info["file"])[0] for action, info in entry["clips"].items()}


def _verdicts(path, tmp_path, judge) -> dict[str, dict]:
    rig, roles, clips = _clips(path, tmp_path)
    return {action: judge.judge(rig, roles, clip) for action, clip in clips.items()}


def _started_later(clip: MotionClip, frames: int) -> MotionClip:
    """A cycle (last frame = first) played from ``frames`` later."""
    rotations, locations = (np.roll(a[:-1], -frames, 0) for a in (clip.rotations, clip.locations))
    return MotionClip(
        clip.bone_names,
        clip.fps,
        clip.frame_start,
        np.concatenate([rotations, rotations[:1]]),
        np.concatenate([locations, locations[:1]]),
    )


def test_cesium_man_walk_cycle_is_a_walk(assets, tmp_path, judge):
    (verdict,) = _verdicts(assets["CesiumMan"], tmp_path, judge).values()
    assert verdict["label"] == "walk", verdict


def test_fox_clips(assets, tmp_path, judge):
    """Walk is a walk, Run a run (the library's quadruped runs are "run", a trot, and "gallop"; the
    Fox's Run has a gallop's footfalls) and Survey (looking around) no locomotion."""
    verdicts = _verdicts(assets["Fox"], tmp_path, judge)
    assert verdicts["Survey"]["label"] not in LOCOMOTION, verdicts["Survey"]
    assert verdicts["Walk"]["label"] == "walk", verdicts["Walk"]
    assert verdicts["Run"]["label"] in ARTIST_EXPECTED["Fox.Run"], verdicts["Run"]


def test_fox_run_is_a_run_from_any_start(assets, tmp_path, judge):
    """The Run's cycle started a third and two thirds of the way through reads as a run too."""
    rig, roles, clips = _clips(assets["Fox"], tmp_path)
    run = clips["Run"]
    for k in (1, 2):
        verdict = judge.judge(rig, roles, _started_later(run, k * (run.num_frames - 1) // 3))
        assert verdict["label"] in ARTIST_EXPECTED["Fox.Run"], (k, verdict)
