"""Pose search: fit a rig's per-frame pose to a target video without gradients, from coarse to fine.

Image losses of small renders have many local minima in the joint angles: a limb that must swing a
radian first has to cross poses that match the target worse than the start, so gradient descent
from the standing pose leaves it where it is (``make bench-fit`` measured it). The search instead
tries, for one bone at a time (root first, then outwards), a ring of candidate rotations of that
bone in every frame at once, renders them all in batches (each candidate seen by the cameras its
own motion sets, as the follow camera would), and chooses per frame — jointly over time, so the
choice does not flicker — whichever matched the target best; the ring's angle shrinks sweep by
sweep. It works for any rig: candidates are swings about the bone's two cross axes and twists about
its own axis (Blender's bone Y), minus locked axes, and the root's turns about the world's up axis.

Used by the distillation's sample-then-fit start (the teacher draws a video, the search fits it,
gradient steps refine it); see :func:`akd_blender.core.distillation.sds_loop.distill`.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence

import numpy as np
import torch

from ..character.kinematics import Skeleton
from ..character.rig import RigAsset
from ..character.rotations import quat_conjugate, quat_multiply, quat_to_rotvec, rotvec_to_quat
from ..progress import Callbacks, eta_seconds
from ..render import Cameras, Renderer
from ..settings import SEARCH_APPEARANCES
from .frame_paths import (
    angle_between,
    armature_direction,
    candidate_rotations,
    continuous_rotvecs,
    mean_facing,
    searched_bones,
    step_height_changes,
    step_turns,
    up_tilt,
    viterbi_path,
)
from .scorer import Scorer, render_pool
from .search_config import PoseSearchResult, SearchConfig

__all__ = ["search_poses"]


@torch.no_grad()
def search_poses(
    rig: RigAsset,
    target: torch.Tensor,
    base_rotations: torch.Tensor,
    base_locations: torch.Tensor,
    renderer: Renderer,
    cameras_for: Callable[[torch.Tensor], Cameras],
    supersample: int = 1,
    config: SearchConfig | None = None,
    callbacks: Callbacks | None = None,
    starts: tuple[torch.Tensor, torch.Tensor] | None = None,
    start_weights: torch.Tensor | None = None,
    label: str = "",
) -> PoseSearchResult:
    r"""Coarse-to-fine per-frame search of the bone rotations that make the render match ``target``.

    Each candidate is scored by its multi-scale image error plus penalties in units of the starting
    pose's mean error: ``pose_weight`` × the bone's squared turn away from the base pose (for the
    root ``tilt_weight`` × its squared tilt only: turning about the world's up axis, the facing, is
    not penalised as a pose) and ``move_weight`` × the candidate's own turn (radians). Frames are
    chosen jointly: per bone, the candidate sequence over time minimises those scores plus
    ``time_weight`` × the squared turn between consecutive frames (Viterbi), so a swing that all
    frames share costs nothing extra while a flicker between poses does. The root's turns are tried
    together with lifts of its height (up to 4 × the sweep's scale, capped at 0.6); after each sweep its
    height is searched once more (up, down or stay), jointly over frames like the turns: chosen per
    frame alone, a frame the rig cannot match (the teacher's speckled legs) sank the character by half
    its height. Before and after the bones, the root's speed along the character's facing is searched
    (faster, slower or the same, one for the clip, see ``SearchConfig.root_travel``).

    Args:
        rig: the character.
        target: [F·views,3,H,W] video in [0,1] (frame-major like :class:`Cameras`).
        base_rotations, base_locations: [F,J,4] / [F,J,3] the starting pose channels per frame.
        renderer: renders at (H·supersample, W·supersample); its device is used throughout.
        cameras_for: root path [F,3] (world) → cameras for F frames at the renderer's size (the
            loop's own camera rule, e.g. ``make_cameras(rig, path, ...)``).
        supersample: the render is area-downsampled by this factor before scoring.
        callbacks: ``progress`` gets a "search" :class:`~akd_blender.core.progress.Progress` after
            every batch of renders (``step`` / ``total`` count candidate clips, so their ratio tracks
            the time spent; ``detail`` "``label``\ sweep 2/6 · hips": the sweep and the stage, "travel",
            "height" or the bone's name); ``should_cancel`` is checked before every bone, travel and
            height pass (True raises :class:`~akd_blender.core.errors.Cancelled` naming the sweep and
            the stage). None: silent.
        starts: candidate starting motions (a motion prior, :mod:`akd_blender.core.fitting.motion_starts`):
            rotations [S,F,J,4] and the root's offsets [S,F,3] from ``base_locations`` (armature
            space), e.g. :func:`~akd_blender.core.fitting.motion_starts.starts_as_channels`. Each is scored like
            a candidate of the sweeps (image error plus the ground terms, summed over frames); the best
            one that beats the base pose is where the sweeps begin, its horizontal root path kept under
            the searched lifts, and each bone's turn from it may be taken back whole (one more
            candidate per bone and sweep: the base pose's rotation), so a start that moves a limb the
            drawing keeps still does not trap it. None or S = 0: the base pose.
        start_weights: [S] factors on each start's total error before they compete with each other
            and with the base pose (None: all 1): a factor below 1 favours a start the prompt names
            when the drawing shows its motion only faintly.
        label: put before each progress detail (e.g. "round 2/3 · ").
    The result does not depend on ``callbacks``.
    Returns:
        :class:`PoseSearchResult`; offsets are relative to the base pose (zero where nothing beat it).
    """
    config = config or SearchConfig()
    device = renderer.device
    skeleton = Skeleton(rig).to(device)
    if config.appearance not in SEARCH_APPEARANCES:
        raise ValueError(f"search_poses: appearance must be one of {SEARCH_APPEARANCES}, not {config.appearance!r}")
    with render_pool(device, config.workers) as (pool, workers):
        target = target.to(device, torch.float32)
        scorer = Scorer(skeleton, renderer, cameras_for, target, supersample, config.batch, config.appearance, pool, workers)
        callbacks = callbacks or Callbacks()
        return _Sweeps(rig, scorer, base_rotations, base_locations, config, callbacks, starts, label).run(starts, start_weights)


class _Sweeps:
    """The state of one :func:`search_poses` run: the pose channels as chosen so far (``rot`` [F,J,4],
    ``loc`` [F,J,3]), the root's lift [F,3] and steady travel (``speed``, ``velocity`` [3], armature
    space), a chosen start's horizontal path (``drift`` [F,3]) and the measures every candidate is
    scored with (``unit``: the start's mean image error, which the penalties are in units of)."""

    def __init__(
        self,
        rig: RigAsset,
        scorer: Scorer,
        base_rotations: torch.Tensor,
        base_locations: torch.Tensor,
        config: SearchConfig,
        callbacks: Callbacks,
        starts: tuple[torch.Tensor, torch.Tensor] | None,
        label: str,
    ) -> None:
        self.rig, self.scorer, self.config, self.callbacks = rig, scorer, config, callbacks
        device = self.device = scorer.renderer.device
        frames = self.frames = base_rotations.shape[0]
        self.rows = torch.arange(frames, device=device)
        self.rot = base_rotations.to(device, torch.float32).clone()
        self.loc = base_locations.to(device, torch.float32).clone()
        self.base_rot, self.base_loc = self.rot.clone(), self.loc.clone()
        if config.appearance == "matched":
            scorer.match_to(self.rot, self.loc)
        elif config.appearance in ("calibrated", "auto"):
            scorer.calibrate_to(self.rot, self.loc, explained_only=config.appearance == "auto")
        self.free = np.flatnonzero(~rig.rotation_locks.all(axis=1))
        root = self.root = int(rig.root_indices[0])
        self.root_axes = torch.as_tensor(
            rig.rest_matrices[root, :3, :3] if rig.use_local_location[root] else np.eye(3), dtype=torch.float32, device=device
        )
        self.rest_root = torch.as_tensor(rig.rest_matrices[root, :3, :3], dtype=torch.float32, device=device)
        self.up_arm, self.forward_arm = (armature_direction(rig, axis).to(device) for axis in ((0.0, 0.0, 1.0), (0.0, -1.0, 0.0)))
        self.up = self.rest_root.T @ self.up_arm  # the world's up axis in the root bone's rest frame
        self.ramp = torch.arange(frames, device=device, dtype=torch.float32)[:, None]  # frame index [F,1]
        self.lift = torch.zeros(frames, 3, device=device)  # the root's lift along up_arm [F,3] (armature space)
        self.drift = torch.zeros(frames, 3, device=device)  # a chosen start's horizontal root path, kept under the lifts
        self.speed, self.velocity = 0.0, torch.zeros(3, device=device)  # travel along the facing per frame
        # Heights in "radians": a lift of root_lift × height counts like a turn of one radian, so the move
        # and time penalties weigh a lift as they weigh the bones' turns.
        self.lift_per_radian = max(config.root_lift, 1e-12) * float(rig.height)
        self.bones = searched_bones(rig, config.min_influence)
        self.prior_count = 0 if starts is None else int(starts[0].shape[0])
        self.tracker = _Tracker(rig, self.bones, config, callbacks, self.prior_count, label)
        scorer.report = self.tracker.scored
        self.ground = float(rig.ground_height) + config.contact_tolerance * float(rig.height)
        self.floor = float(rig.ground_height)
        self.floating_weight = torch.full((frames,), config.ground_weight, device=device)
        if config.leaves_ground:  # in the air in between, on the ground where it takes off and lands
            self.floating_weight[1:-1] = 0.0
        self.unit = 1.0
        self.chosen = -1

    def run(self, starts: tuple[torch.Tensor, torch.Tensor] | None, start_weights: torch.Tensor | None) -> PoseSearchResult:
        """The whole search: the start, then per sweep the travel, each bone (the root with its lift),
        the travel again and the height."""
        config = self.config
        start = self.begin(starts, start_weights)
        scales = config.scales if self.chosen < 0 or config.prior_scales is None else config.prior_scales
        self.tracker.plan(scales)
        for sweep, scale in enumerate(scales):
            self.check(sweep, "travel")
            self.search_travel(scale)
            for b in self.bones:
                self.check(sweep, self.rig.bone_names[b])
                self.sweep_bone(int(b), scale)
            self.check(sweep, "travel")
            self.search_travel(scale)
            if config.root_lift > 0:
                self.check(sweep, "height")
                self.sweep_height(scale)
        self.check(len(scales) - 1, "end")
        return self.result(start)

    def check(self, sweep: int, stage: str) -> None:
        """Tell the tracker where the search is; stop if the user cancelled."""
        self.tracker.sweep, self.tracker.stage = sweep, stage
        self.callbacks.stop_if_cancelled(f"pose search cancelled in sweep {sweep + 1} of {self.tracker.sweeps} ({stage})")

    def place(self, lifts: torch.Tensor, velocities: torch.Tensor) -> torch.Tensor:
        """Root lifts [C,F,3] and velocities [C,3] → location channels [C·F,J,3]."""
        trial = self.loc.repeat(lifts.shape[0], 1, 1)
        offsets = lifts + self.ramp[None] * velocities[:, None]
        trial[:, self.root] = self.base_loc[:, self.root].repeat(lifts.shape[0], 1) + offsets.reshape(-1, 3) @ self.root_axes
        return trial

    def off_ground(self, lowest: torch.Tensor) -> torch.Tensor:
        """Penalty [C,F] on lowest vertices [C,F] floating above the ground beyond the tolerance
        (``ground_weight``) or below it (``penetration_weight``), per lift "radian"."""
        floating = self.floating_weight * (lowest - self.ground).clamp_min(0.0)
        sinking = self.config.penetration_weight * (self.floor - lowest).clamp_min(0.0)
        return self.unit * (floating + sinking) / self.lift_per_radian

    def anchored(self, score: torch.Tensor, heights: torch.Tensor) -> torch.Tensor:
        """``score`` [C,F] with the first frame's candidates that change its height [C] ruled out."""
        if not self.config.anchor_start:
            return score
        score = score.clone()
        score[heights.abs() > 1e-6, 0] = torch.inf
        return score

    def lift_moves(self, scale: float) -> torch.Tensor:
        """The lift moves [L] tried with each of the root's turns ("radians"): none when lifts are off,
        else up to four times the sweep's scale, at most 0.6 (a sitting dog's rear drops by a third
        of its height as it tips back, and neither move alone matches the video better)."""
        if self.config.root_lift <= 0:
            return torch.zeros(1, device=self.device)
        return torch.tensor([0.0, 1.0, -1.0, 2.0, -2.0, 4.0, -4.0], device=self.device) * min(scale, 0.6)

    def begin(self, starts: tuple[torch.Tensor, torch.Tensor] | None, start_weights: torch.Tensor | None) -> torch.Tensor:
        """Score the base pose (its errors [F] set :attr:`unit`) and the starts; the best start that
        beats the base pose becomes the current motion (:attr:`chosen`). Returns the base pose's errors."""
        scorer, frames, device = self.scorer, self.frames, self.device
        self.check(0, "start")
        start = scorer.errors(self.rot, self.loc, frames)[0]
        self.unit = float(start.mean().clamp_min(1e-12))
        if not self.prior_count:
            return start
        self.check(0, "motion prior")
        base_total = float((start + self.off_ground(scorer.lowest)[0]).sum())
        locked = torch.as_tensor(self.rig.rotation_locks.all(axis=1), device=device)
        prior_rot = torch.where(locked[None, None, :, None], self.rot[None], starts[0].to(device, torch.float32))
        prior_lift = starts[1].to(device, torch.float32)
        prior_loc = self.place(prior_lift, self.velocity[None].expand(self.prior_count, -1))
        totals = (
            scorer.errors(prior_rot.reshape(-1, *self.rot.shape[1:]), prior_loc, frames) + self.off_ground(scorer.lowest)
        ).sum(1)
        if start_weights is not None:
            totals = totals * start_weights.to(device, totals.dtype)
        pick = int(totals.argmin())
        if float(totals[pick]) < base_total:
            self.chosen, self.rot, self.lift = pick, prior_rot[pick].clone(), prior_lift[pick].clone()
            self.drift = self.lift - (self.lift @ self.up_arm)[:, None] * self.up_arm
            self.loc = self.place(self.lift[None], self.velocity[None])
        return start

    def search_travel(self, scale: float) -> None:
        """The clip's speed along the facing: the same, faster or slower by ``scale`` "radians"."""
        config, root = self.config, self.root
        if config.root_travel <= 0:
            return
        per_radian = config.root_travel * float(self.rig.height)  # units per frame that count as a radian
        facing = mean_facing(self.rot[:, root], self.base_rot[:, root], self.rest_root, self.forward_arm, self.up_arm)
        moves = torch.tensor([0.0, scale, -scale], device=self.device)
        speeds = self.speed + moves * per_radian
        lifts = self.lift[None].expand(3, -1, -1)
        score = self.scorer.errors(self.rot.repeat(3, 1, 1), self.place(lifts, speeds[:, None] * facing), self.frames)
        pick = int((score.sum(1) + config.move_weight * self.unit * moves.abs()).argmin())
        self.speed, self.velocity = float(speeds[pick]), speeds[pick] * facing
        self.loc = self.place(self.lift[None], self.velocity[None])

    def sweep_bone(self, b: int, scale: float) -> None:
        """Bone ``b``'s ring of turns at ``scale`` (the root's with its lifts and facing turns), chosen
        per frame jointly over time."""
        config, device, frames, unit, rot = self.config, self.device, self.frames, self.unit, self.rot
        root, base_rot, up_arm = self.root, self.base_rot, self.up_arm
        post = candidate_rotations(scale, config.directions, tuple(self.rig.rotation_locks[b])).to(device)
        pre = torch.zeros_like(post)
        pre[:, 0] = 1.0
        if b == root:  # facing: turns about the world's up axis, applied after the pose
            yaw = rotvec_to_quat(torch.stack([self.up * scale, -self.up * scale]).double()).float()
            pre = torch.cat([pre, yaw])
            post = torch.cat([post, torch.tensor([[1.0, 0, 0, 0], [1.0, 0, 0, 0]], device=device)])
        turned = quat_multiply(
            quat_multiply(pre[:, None].expand(-1, frames, -1), rot[None, :, b]), post[:, None].expand(-1, frames, -1)
        )  # [C,F,4]
        undo = self.chosen >= 0 and b != root  # the start's own turn of this bone may be taken back whole
        if undo:
            turned = torch.cat([turned, base_rot[None, :, b]])
        rise = self.lift_moves(scale) if b == root else torch.zeros(1, device=device)  # the root's lift, jointly ("radians")
        count, rises = turned.shape[0], rise.shape[0]
        turned = turned.repeat_interleave(rises, 0)  # candidate k: turn k // rises with lift move k % rises
        heights = (self.lift @ up_arm)[None] / self.lift_per_radian + rise[:, None]  # [L,F]
        trial_lift = (self.drift + heights[..., None] * self.lift_per_radian * up_arm).repeat(count, 1, 1)  # [C·L,F,3]
        trial = rot.repeat(count * rises, 1, 1)  # [C·L·F,J,4]
        trial[:, b] = turned.reshape(-1, 4)
        score = self.scorer.errors(trial, self.place(trial_lift, self.velocity[None].expand(count * rises, -1)), frames)
        score = score + self.off_ground(self.scorer.lowest)  # [C·L,F]
        if b == root:
            score = self.anchored(score, (heights - (self.lift @ up_arm)[None] / self.lift_per_radian).repeat(count, 1)[:, 0])
            score = score + config.tilt_weight * unit * up_tilt(turned, base_rot[:, b], self.up).pow(2)
        else:
            score = score + config.pose_weight * unit * angle_between(turned, base_rot[None, :, b]).pow(2)
        identity = pre.new_tensor([1.0, 0, 0, 0])
        own = angle_between(post, identity) + angle_between(pre, identity)  # each ring candidate's own turn [C]
        if undo:
            own = torch.cat([own, angle_between(rot[:, b], base_rot[:, b]).mean()[None]])
        moved = own.repeat_interleave(rises) + rise.abs().repeat(count)
        score = score + config.move_weight * unit * moved[:, None]
        steps = step_turns(turned) + step_height_changes(heights.repeat(count, 1))
        pick = viterbi_path(score, config.time_weight * unit * steps)
        rot[:, b] = turned[pick, self.rows]
        if b == root:
            self.lift = trial_lift[pick, self.rows]
            self.loc = self.place(self.lift[None], self.velocity[None])

    def sweep_height(self, scale: float) -> None:
        """The root's height once more at ``scale``: stay, up or down, chosen jointly over frames."""
        config, unit, up_arm = self.config, self.unit, self.up_arm
        moves = torch.tensor([0.0, scale, -scale], device=self.device)  # stay, up, down ("radians")
        heights = (self.lift @ up_arm)[None] / self.lift_per_radian + moves[:, None]  # [3,F]
        trial_lift = self.drift + heights[..., None] * self.lift_per_radian * up_arm  # [3,F,3] armature space
        score = self.scorer.errors(
            self.rot.repeat(3, 1, 1), self.place(trial_lift, self.velocity[None].expand(3, -1)), self.frames
        )
        score = (
            self.anchored(score + self.off_ground(self.scorer.lowest), moves) + config.move_weight * unit * moves.abs()[:, None]
        )
        pick = viterbi_path(score, config.time_weight * unit * step_height_changes(heights))
        self.lift = trial_lift[pick, self.rows]
        self.loc = self.place(self.lift[None], self.velocity[None])

    def result(self, start: torch.Tensor) -> PoseSearchResult:
        """The search's result: offsets from the base pose, the root's lift, travel and drift, the
        errors now and at the ``start`` [F], the renders, the chosen start."""
        best = self.scorer.errors(self.rot, self.loc, self.frames)[0]
        free = self.free
        offsets = quat_multiply(quat_conjugate(self.base_rot[:, free]), self.rot[:, free])
        return PoseSearchResult(
            continuous_rotvecs(quat_to_rotvec(offsets)),
            self.lift - self.drift,
            self.velocity,
            best,
            start,
            self.scorer.renders,
            self.chosen,
            self.drift,
        )


class _Tracker:
    """Counts the candidate clips :func:`search_poses` scores and reports them as "search" progress."""

    def __init__(
        self, rig: RigAsset, bones: np.ndarray, config: SearchConfig, callbacks: Callbacks, starts: int = 0, label: str = ""
    ) -> None:
        self.callbacks, self.rig, self.bones, self.config, self.starts = callbacks, rig, bones, config, starts
        self.label = label
        self.done, self.renders, self.sweep, self.stage = 0, 0, 0, "start"
        self.began = time.perf_counter()
        self.plan(config.scales)

    def plan(self, scales: Sequence[float]) -> None:
        """Count the work of the sweeps at ``scales`` (the motion prior's start may change them)."""
        rig, bones, config = self.rig, self.bones, self.config
        self.sweeps = len(scales)
        root = int(rig.root_indices[0])
        total = 2 + self.starts  # the start, the motion prior's starts and the final scoring
        for scale in scales:
            total += 6 if config.root_travel > 0 else 0  # two travel passes of three speeds
            total += 3 if config.root_lift > 0 else 0  # the height pass
            for b in bones:
                count = candidate_rotations(scale, config.directions, tuple(rig.rotation_locks[b])).shape[0]
                if b == root:
                    count = (count + 2) * (7 if config.root_lift > 0 else 1)
                total += count
        self.total = total

    def scored(self, clips: int, renders: int) -> None:
        self.done, self.renders = self.done + clips, renders
        done = min(self.done, self.total)
        eta = eta_seconds(time.perf_counter() - self.began, done, self.total)
        detail = f"{self.label}sweep {self.sweep + 1}/{self.sweeps} · {self.stage}"
        self.callbacks.report("search", done, self.total, eta, detail)
