"""``outputs.write_preview``: the MP4 shows the clip as ``render_clip(..., contain=True)`` frames it (the whole
character in every frame), not the framing the teacher learnt, which loses the top of a jump."""

from __future__ import annotations

import imageio_ffmpeg
import numpy as np
import torch

from akd_blender.blender.cli.outputs import write_preview
from akd_blender.core.character.kinematics import Skeleton
from akd_blender.core.character.procedural import CHARACTERS
from akd_blender.core.motion.library.labelled import make_clip
from akd_blender.core.render import make_cameras, render_clip, root_path
from akd_blender.core.render.camera import frame_extent

SIZE = 48


def _rgb8(video: torch.Tensor) -> np.ndarray:
    frames = video[:, :3].detach().float().cpu().numpy().clip(0, 1).transpose(0, 2, 3, 1)
    return (frames * 255 + 0.5).astype(np.uint8).astype(np.float64)  # [F,H,W,3]


def test_preview_keeps_the_whole_jump_in_frame(tmp_path):
    rig = CHARACTERS["biped"]()
    clip = make_clip(rig, "biped", "jump", frames=8, fps=8.0)
    with torch.no_grad():
        vertices = Skeleton(rig)(clip)
    assert frame_extent(make_cameras(rig, root_path(vertices), SIZE, SIZE), vertices) > 1.0  # the learnt framing crops it

    path = tmp_path / "jump.mp4"
    write_preview(rig, clip, str(path), SIZE)
    reader = imageio_ffmpeg.read_frames(str(path))
    meta = next(reader)
    got = np.stack([np.frombuffer(f, np.uint8).reshape(SIZE, SIZE, 3) for f in reader]).astype(np.float64)
    assert tuple(meta["size"]) == (SIZE, SIZE) and got.shape[0] == clip.num_frames

    contained = np.abs(got - _rgb8(render_clip(rig, clip, SIZE, SIZE, contain=True))).mean()
    learnt = np.abs(got - _rgb8(render_clip(rig, clip, SIZE, SIZE))).mean()
    assert contained < 0.5 * learnt, (contained, learnt)
