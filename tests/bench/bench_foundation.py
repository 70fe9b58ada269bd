"""Foundation benchmarks (issue 2): extraction speed, LBS forward+backward, keys written per second.

Run: `make bench` (or `.venv/bin/python -m pytest -q -s tests/bench/bench_foundation.py`). Prints figures; the
only assertions are sanity checks, never timings.
"""

from __future__ import annotations

import os
import tempfile
import time

os.environ.setdefault("BLENDER_USER_RESOURCES", tempfile.mkdtemp(prefix="akd-bench-user-"))

import bpy  # noqa: E402
import numpy as np  # noqa: E402
import torch  # noqa: E402

from akd_blender.blender.character.extract import rig_from_armature  # noqa: E402
from akd_blender.blender.character.io import find_armature, load_scene  # noqa: E402
from akd_blender.blender.keys.actions import write_action  # noqa: E402
from akd_blender.core.character.kinematics import Skeleton  # noqa: E402
from akd_blender.core.motion.clip import MotionParams  # noqa: E402
from tests.conftest import ASSET_FILES  # noqa: E402


def _subdivided_fox(levels: int) -> bpy.types.Object:
    load_scene(str(ASSET_FILES["Fox"]))
    fox = bpy.data.objects["fox"]
    mod = fox.modifiers.new("Subdiv", "SUBSURF")
    mod.levels = levels
    fox.modifiers.move(len(fox.modifiers) - 1, 0)
    bpy.context.view_layer.objects.active = fox
    bpy.ops.object.modifier_apply(modifier=mod.name)
    return find_armature()


def test_bench_extraction_per_100k_vertices():
    arm = _subdivided_fox(4)
    start = time.perf_counter()
    rig = rig_from_armature(arm)
    seconds = time.perf_counter() - start
    print(
        f"\nextraction: {rig.num_vertices} vertices, {rig.num_bones} bones: {seconds:.3f} s = {seconds / rig.num_vertices * 1e5:.3f} s per 100k vertices"
    )
    assert rig.num_vertices > 50_000


def test_bench_lbs_forward_backward_cpu():
    load_scene(str(ASSET_FILES["Fox"]))
    rig = rig_from_armature(find_armature())
    skeleton = Skeleton(rig)
    for frames in (16, 49):
        params = MotionParams(rig, frames=frames, keys=8)
        for _ in range(2):  # warm-up
            skeleton(params).square().mean().backward()
        start = time.perf_counter()
        repeats = 5
        for _ in range(repeats):
            skeleton(params).square().mean().backward()
        per_frame = (time.perf_counter() - start) / repeats / frames
        print(
            f"\nLBS fwd+bwd, Fox ({rig.num_vertices} v, {rig.num_bones} bones), {frames} frames, {torch.get_num_threads()} threads: {per_frame * 1e3:.2f} ms per frame"
        )


def test_bench_keys_written_per_second():
    load_scene(str(ASSET_FILES["Fox"]))
    arm = find_armature()
    rig = rig_from_armature(arm)
    params = MotionParams(rig, frames=1000, keys=50)
    with torch.no_grad():
        params.rotvec.normal_(0, 0.3)
    clip = params.to_clip()
    start = time.perf_counter()
    write_action(arm, clip, "bench")
    seconds = time.perf_counter() - start
    keys = clip.num_frames * rig.num_bones * 7
    print(f"\nwrite_action: {keys} keys in {seconds:.3f} s = {keys / seconds / 1e6:.2f} M keys/s")
    assert np.isfinite(seconds)
