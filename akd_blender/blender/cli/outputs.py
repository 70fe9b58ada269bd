"""A job's files beside the action: the MP4 preview (the project's renderer) and the export through Blender's own FBX / BVH / glTF exporters."""

from __future__ import annotations

import os

from ...core.errors import AkdError

__all__ = ["export", "write_preview"]


def write_preview(rig, clip, path: str, size: int = 256, camera: str | None = None) -> None:
    """Render ``clip`` with the project renderer (``core.render.render_clip``) to an H.264 MP4.

    The renderer's RGB (the character composited on the checkerboard ground; alpha is only the
    character's mask) is written at the clip's fps; ``contain=True`` keeps every vertex of every
    frame in the image.
    """
    import imageio_ffmpeg
    import numpy as np

    from ...core.render import render_clip
    from .compat import ffmpeg_executable

    ffmpeg_executable()  # an extension install leaves the bundled ffmpeg without its execute bit

    kwargs = {"camera": camera} if camera else {}
    video = render_clip(rig, clip, size, size, contain=True, **kwargs).detach().float().cpu().numpy()  # [F,4,H,W]
    frames = video[:, :3].clip(0, 1).transpose(0, 2, 3, 1)  # [F,H,W,3]
    frames = (frames * 255 + 0.5).astype(np.uint8)
    writer = imageio_ffmpeg.write_frames(
        path, (size, size), fps=float(clip.fps), codec="libx264", pix_fmt_out="yuv420p", macro_block_size=2, quality=8
    )
    writer.send(None)
    for frame in frames:
        writer.send(np.ascontiguousarray(frame))
    writer.close()


def export(arm, clip, path: str) -> None:
    """Export the armature, its skinned meshes and the active action with Blender's own exporters
    (``.fbx``, ``.bvh``, ``.glb``/``.gltf``) over the clip's frame range."""
    import bpy

    from ..character.io import skinned_meshes

    objs = [arm, *skinned_meshes(arm)]
    view_layer = bpy.context.view_layer
    for obj in view_layer.objects:
        obj.select_set(obj in objs)
    view_layer.objects.active = arm
    ext = os.path.splitext(path)[1].lower()
    path = os.path.abspath(path)
    scene = bpy.context.scene
    scene_range = scene.frame_start, scene.frame_end
    with bpy.context.temp_override(active_object=arm, object=arm, selected_objects=objs):
        if ext == ".fbx":  # the FBX exporter bakes over the scene's range: the clip's, for the export only
            scene.frame_start, scene.frame_end = clip.frame_start, max(clip.frame_end, clip.frame_start + 1)
            try:
                result = _export_fbx(path)
            finally:
                scene.frame_start, scene.frame_end = scene_range
        elif ext == ".bvh":
            result = bpy.ops.export_anim.bvh(filepath=path, frame_start=clip.frame_start, frame_end=clip.frame_end)
        else:
            fmt = "GLB" if ext == ".glb" else "GLTF_SEPARATE"
            result = bpy.ops.export_scene.gltf(filepath=path, export_format=fmt, use_selection=True, export_animations=True)
    if "FINISHED" not in result or not os.path.isfile(path):
        raise AkdError(f"--export: Blender's exporter did not write '{path}'")


def _export_fbx(path: str) -> set[str]:
    import bpy

    return bpy.ops.export_scene.fbx(
        filepath=path,
        use_selection=True,
        object_types={"ARMATURE", "MESH"},
        bake_anim=True,
        bake_anim_use_all_actions=False,
        bake_anim_use_nla_strips=False,
        add_leaf_bones=False,
    )
