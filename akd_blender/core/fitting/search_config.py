"""The pose search's settings (:class:`SearchConfig`, per motion by :func:`search_config_for`) and what it returns (:class:`PoseSearchResult`)."""

from __future__ import annotations

from dataclasses import dataclass

import torch

__all__ = ["PoseSearchResult", "SearchConfig", "search_config_for"]


@dataclass(frozen=True)
class SearchConfig:
    """Settings of :func:`search_poses`.

    scales: the candidate ring's angle per sweep (radians), coarse to fine.
    prior_scales: the sweeps' angles when the search begins from one of the ``starts`` of
        :func:`search_poses` (a motion already near the drawing needs no coarse sweeps); None: ``scales``.
    directions: swing directions in the ring (evenly spaced about the bone's axis).
    min_influence: bones whose subtree carries less than this fraction of the skin weights are not
        searched (fingers, eyes: they barely change the image).
    root_lift: vertical root candidates per sweep, as a fraction of the character's height per
        radian of the sweep's scale (0 disables); they are also tried with each of the root's turns
        (up to 4 × the scale, the scale capped at 0.6). A lift of ``root_lift`` × height counts as
        one radian for ``move_weight`` and ``time_weight``; lifts are chosen jointly over frames too.
    root_travel: candidate changes of the root's speed along the character's facing per sweep, as a
        fraction of its height per frame per radian of the sweep's scale (0 disables); such a speed
        counts as one radian for ``move_weight``. One speed for the whole clip: a follow camera
        hides where the character is, except that it lags behind a character that travels (the
        camera's path is smoothed), so the lag at the clip's ends is the only trace of the travel,
        and the judge of the embedded teacher does not recognise a run done on the spot.
    tilt_weight, pose_weight, time_weight: penalties per radian² of the root's tilt, of another
        bone's turn from the base pose and of a bone's turn between consecutive frames, in units of
        the base pose's mean image error (see :func:`search_poses`).
    move_weight: penalty per radian of a candidate's own turn (same units): a move must buy more
        than image noise.
    ground_weight: penalty per frame on the candidate's lowest skinned vertex floating above the
        ground the rig stands on (``rig.ground_height``) by more than ``contact_tolerance`` × height,
        per ``root_lift`` × height of gap (same units as ``move_weight``; 0 disables; not applied when
        ``leaves_ground``). A character whose look differs from the drawn one (a white, textured glTF
        figure against the teacher's coloured biped) otherwise matches the video best by leaving the
        drawn silhouette, and lifts or slides out of it.
    penetration_weight: penalty per frame on the lowest skinned vertex below that ground (from the
        first depth on), per ``root_lift`` × height of depth (same units; 0 disables); applied to
        every motion, airborne or not.
    leaves_ground: the motion has frames in the air (a jump): floating is penalised only at the first
        and the last frame (it takes off from and lands on the ground), sinking everywhere.
    anchor_start: the first frame keeps the base pose's height (no lift): every motion starts where
        the character stood.
    contact_tolerance: a gap up to this fraction of the height counts as touching the ground.
    batch: most renders per batch (bounds memory).
    workers: batches rendered at once on a CPU, each on one thread of its own (None: as many as
        torch's intra-op threads, ``torch.get_num_threads()``; 1: one batch at a time on all of them).
        On a CPU the renders' many small tensor operations gain little from torch's own threads and
        lose much when another process holds a core; whole batches side by side keep every core busy.
        Ignored on other devices. The poses found do not depend on it (the error figures only to float
        rounding: torch's intra-op threads split its sums differently).
    appearance: how renders are compared with the target: "rgb" (the colours as they are),
        "normalised" (each image's channels standardised first, :func:`~akd_blender.core.render.image_losses.standardise`:
        a drawing whose colours or brightness drifted from the render still matches its pose) or
        "matched" (the target recoloured into the render's colours through its first frame, which shows
        the base pose, :func:`~akd_blender.core.render.image_losses.match_first_frame`; where the drawing shows
        a ground or sky the render lacks, only the character's coverage there is penalised, at
        ``FOREIGN_COVER_WEIGHT`` per pixel) or "calibrated" (the target's colours through the affine map,
        per channel by default, that turns its first frame into the render of the base pose,
        :func:`~akd_blender.core.render.image_losses.calibrate_to_first_frame`: a colour cast or a brightness
        change of the whole drawing undone) or "auto" ("calibrated" where the calibration explains
        the first frame, ``explained_only``; else "rgb": a drawing whose first frame already matches,
        or whose ground was redrawn, is compared as it is).
    """

    scales: tuple[float, ...] = (2.4, 1.6, 1.0, 0.6, 0.3, 0.15)
    prior_scales: tuple[float, ...] | None = None
    directions: int = 8
    min_influence: float = 0.01
    root_lift: float = 0.15
    root_travel: float = 0.1
    tilt_weight: float = 0.1
    pose_weight: float = 0.0
    time_weight: float = 0.1
    move_weight: float = 0.1
    ground_weight: float = 0.25
    penetration_weight: float = 2.0
    leaves_ground: bool = False
    anchor_start: bool = True
    contact_tolerance: float = 0.01
    batch: int = 512
    appearance: str = "rgb"
    workers: int | None = None


def search_config_for(motion: str | None, **overrides) -> SearchConfig:
    """The search's settings for a motion label (e.g. the teacher's ``"biped/walk"``; None: unknown):
    the root's steady travel is searched only for motions that travel (walk, run …; and for an unknown
    motion), so a wave, a sit or a jump stays where it stood; motions with frames in the air (jump,
    run …, :func:`~akd_blender.core.motion.metrics.motion_leaves_ground`) may float, every other one is kept
    on the ground. ``overrides`` are further SearchConfig fields."""
    from ..motion.metrics import motion_leaves_ground, motion_travels

    fields = {} if motion is None or motion_travels(motion) else {"root_travel": 0.0}
    fields["leaves_ground"] = motion_leaves_ground(motion)
    return SearchConfig(**{**fields, **overrides})


@dataclass
class PoseSearchResult:
    """``rotvec``: [F,B,3] bone-local rotation offsets of the rig's free bones (radians, applied after
    the base pose like :class:`~akd_blender.core.motion.clip.MotionParams`); ``lift``: [F,3] the root's
    lift per frame and ``velocity``: [3] its steady travel per frame (both armature space, Blender
    units); ``errors``: [F] multi-scale image error per frame after the search; ``start_errors``:
    the same for the base pose; ``renders``: images rendered; ``start``: which of the ``starts``
    given to :func:`search_poses` the search began from (-1: the base pose); ``drift``: [F,3] that
    start's horizontal root path (armature space; zero without one), part of the root's translation
    but not of ``lift``."""

    rotvec: torch.Tensor
    lift: torch.Tensor
    velocity: torch.Tensor
    errors: torch.Tensor
    start_errors: torch.Tensor
    renders: int
    start: int
    drift: torch.Tensor

    @property
    def travel(self) -> torch.Tensor:
        """[F,3] the root's travel per frame: f · ``velocity``."""
        frames = torch.arange(self.lift.shape[0], device=self.lift.device, dtype=self.lift.dtype)
        return frames[:, None] * self.velocity

    @property
    def root(self) -> torch.Tensor:
        """[F,3] the root's translation: the lift plus the start's drift plus the travel."""
        return self.lift + self.travel + self.drift
