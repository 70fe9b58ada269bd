"""The apply step: a finished job's motion written into the scene, shared by the panel and the CLI.

:func:`apply_result` (a :class:`~akd_blender.core.job.request.JobResult`) and :func:`apply_clips` (clips and
their action names, e.g. ``--ground-action``'s grounded clip) do, on Blender's main thread:

1. key each clip as a new action (:func:`.keys.actions.write_action`, which keys a control rig's
   controls when the clip's bones are driven); the last one written is the armature's active action,
   the previous active action is kept with a fake user;
2. set the scene's frame range to the last clip's only when asked, then show the new pose;
3. measure the keys of the active action against its clip (:func:`.keys.figures.key_figures`,
   :func:`.keys.keyframes.key_summary`), the clip's motion metrics and the job's warnings
   (:func:`~akd_blender.core.job.request.job_warnings`);

and return all of it as an :class:`Applied`, which the CLI's report and the panel both read.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import bpy

from ...core.job.request import JobResult, action_name, job_warnings, plain_data

if TYPE_CHECKING:
    from ...core.character.rig import RigAsset
    from ...core.motion.clip import MotionClip
    from ..controls.bound import BoundArmature

__all__ = ["Applied", "apply_clips", "apply_result", "result_clips"]


@dataclass(frozen=True)
class Applied:
    """What the apply step did to the scene and measured.

    Attributes:
        action_names: the new actions' names, in the order written (Blender may add .001 …).
        action: the active new action's name (the last of ``action_names``).
        previous_action: the armature's active action before, now kept with a fake user (None: none).
        keys: :func:`.keys.keyframes.key_summary` of the active action against its clip (the report's "keys").
        motion_metrics: :func:`~akd_blender.core.motion.metrics.motion_metrics` of the active action's clip, as
            plain JSON-ready numbers (units: ``core.metrics``).
        warnings: the job's warnings, one line each (:func:`~akd_blender.core.job.request.job_warnings`),
            then, for an action keyed on a rig's controls, its undriven bones
            (:meth:`.controls.check.ControlResult.warnings`), else the bones its joint limits hold short
            of the motion (:func:`~akd_blender.core.motion.joint_limits.joint_limit_warnings`).
        scene_changes: what changed in the scene, one line each: every new action (the active one said so),
            the previous action kept, the frame range when set.
    """

    action_names: list[str]
    action: str
    previous_action: str | None
    keys: dict
    motion_metrics: dict
    warnings: list[str]
    scene_changes: list[str]


def apply_clips(
    arm: bpy.types.Object,
    rig: RigAsset,
    clips: Sequence[tuple[MotionClip, str]],
    *,
    keys: str,
    set_scene_range: bool,
    facts: dict | None = None,
    scene: bpy.types.Scene | None = None,
    on_step: Callable[[str], None] | None = None,
    bound: BoundArmature | None = None,
) -> Applied:
    """Write each ``(clip, name)`` of ``clips`` on armature ``arm`` as a new action, in order; the last
    one becomes the active action and is the one measured.

    Args:
        arm: the armature object the clips move (keyed, or, for a game rig whose bones copy another
            armature's, that armature: :func:`.character.game_rig.followed_armature`).
        rig: its :class:`~akd_blender.core.character.rig.RigAsset` (height for the key bounds and figures, feet and
            floor for the motion metrics, the rig's own warnings).
        clips: one or more (clip, action name); each name goes through
            :func:`~akd_blender.core.job.request.action_name` (whitespace collapsed, cut to 63 bytes).
        keys: a ``core.settings.KEY_MODES`` choice: "sparse" (the fewest keys within the default bounds)
            or "dense" (a key on every frame).
        set_scene_range: set ``scene``'s frame range to the last clip's; False leaves it as it is.
        facts: the job's facts (``JobResult.facts``: the motion understood), read by the warnings.
        scene: the scene whose range is set and whose current frame is shown again (default: the
            context's).
        on_step: called with "actions" once the actions are written, "keys" once they are measured.
        bound: the job's binding of ``arm`` (:func:`.job.rig.bind_job`): the rig a game rig copies and a
            control rig's probe, made when the job read the rig; None (or a binding of other bones): bound here.
    Raises:
        InputError (an AkdError) from :func:`.keys.actions.write_action` or :func:`.keys.keyframes.sparse_keys_for`
        (a bone of a clip missing on ``arm``, a bad ``keys``).
    """
    from ...core.motion.joint_limits import joint_limit_warnings
    from ...core.motion.metrics import motion_metrics
    from ..controls.bound import bound_for
    from ..controls.check import result_of
    from ..keys.actions import write_action
    from ..keys.figures import key_figures, key_summary
    from ..keys.keyframes import sparse_keys_for

    if not clips:
        raise ValueError("apply_clips needs at least one clip")
    scene = scene or bpy.context.scene
    bound = bound_for(bound, arm, clips[-1][0].bone_names)
    keyed = bound.keyed  # a game rig's keys go on the rig it copies
    ad = keyed.animation_data
    previous = ad.action.name if ad is not None and ad.action is not None else None
    sparse = sparse_keys_for(keys, rig.height)
    names, changes = [], []
    action = None
    for clip, name in clips:
        action = write_action(arm, clip, action_name(name), sparse=sparse, bound=bound_for(bound, arm, clip.bone_names))
        names.append(action.name)
        changes.append(f"new action '{action.name}' on '{keyed.name}'")
    if on_step is not None:
        on_step("actions")
    clip = clips[-1][0]
    changes[-1] = f"new action '{action.name}' active on '{keyed.name}'" + (
        f" (the armature '{arm.name}' copies)" if keyed != arm else ""
    )
    if previous is not None:
        changes.append(f"action '{previous}' kept with a fake user")
    if set_scene_range:
        scene.frame_start, scene.frame_end = clip.frame_start, clip.frame_end
        changes.append(f"frame range {clip.frame_start}–{clip.frame_end}")
    scene.frame_set(scene.frame_current)  # show the new action's pose
    summary = key_summary(key_figures(arm, action, clip, rig.height), keys)
    if on_step is not None:
        on_step("keys")
    metrics = motion_metrics(rig, clip)
    checked = result_of(action)
    # keyed on the rig's controls, Blender's own evaluation is checked; keyed on the bones, their limits are read
    held_short = checked.warnings() if checked is not None else joint_limit_warnings(rig, clip)
    warnings = job_warnings(rig, metrics, dict(facts or {})) + held_short
    return Applied(names, action.name, previous, summary, plain_data(metrics), warnings, changes)


def result_clips(result: JobResult, name: str, physics: bool, keep_distilled: bool = True) -> list[tuple[MotionClip, str]]:
    """The (clip, action name) pairs a finished job writes: without ``physics`` its clip as ``name``;
    with it, the clip before grounding as ``name`` and the grounded one as ``"<name> grounded"``
    (``keep_distilled`` False: only the grounded clip, as ``name``)."""
    if physics and keep_distilled:
        return [(result.distilled, name), (result.clip, f"{name} grounded")]
    return [(result.clip, name)]


def apply_result(
    arm: bpy.types.Object,
    rig: RigAsset,
    result: JobResult,
    *,
    name: str,
    keys: str,
    set_scene_range: bool,
    physics: bool = False,
    keep_distilled: bool = True,
    scene: bpy.types.Scene | None = None,
    on_step: Callable[[str], None] | None = None,
    bound: BoundArmature | None = None,
) -> Applied:
    """Write a finished job's motion on ``arm`` (:func:`result_clips` of ``result``, ``name``: the
    prompt) through :func:`apply_clips`, its warnings read from ``result.facts``. ``physics``: the job
    grounded its clip (``JobRequest.physics``). The other arguments are :func:`apply_clips`'s."""
    clips = result_clips(result, name, physics, keep_distilled)
    return apply_clips(
        arm,
        rig,
        clips,
        keys=keys,
        set_scene_range=set_scene_range,
        facts=result.facts,
        scene=scene,
        on_step=on_step,
        bound=bound,
    )
