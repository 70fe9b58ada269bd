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

import hashlib
import math
import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass

import numpy as np
import torch

from ..character.kinematics import Skeleton
from ..character.rig import RigAsset
from ..character.rotations import quat_multiply, quat_to_matrix, quat_to_rotvec, rotvec_to_quat
from ..errors import Cancelled
from ..motion.clip import interpolation_basis
from ..render import Cameras, Renderer, concat_cameras, root_path
from ..render.image_losses import calibrate_to_first_frame, match_first_frame, multiscale_errors, standardise
from ..settings import SEARCH_APPEARANCES

KNOWN_CLIPS = 4096  # scored candidates the search remembers (their figures, by their channels' digest)
FOREIGN_COVER_WEIGHT = 0.25  # per pixel of character drawn over a ground the render does not have (squared units)

__all__ = [
    "continuous_rotvecs",
    "SearchConfig",
    "SearchProgress",
    "search_config_for",
    "PoseSearchResult",
    "searched_bones",
    "candidate_rotations",
    "search_poses",
    "keys_from_frames",
    "smooth_frames",
]


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


@dataclass(frozen=True)
class SearchProgress:
    """Where :func:`search_poses` is: ``done`` of ``total`` candidate clips scored (a unit of work:
    each renders every frame once per view), in ``sweep`` (0-based) of ``sweeps``, on ``stage``
    (``"travel"``, ``"height"`` or the bone's name), ``renders`` so far and ``seconds`` since it began."""

    done: int
    total: int
    sweep: int
    sweeps: int
    stage: str
    renders: int
    seconds: float


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


def searched_bones(rig: RigAsset, min_influence: float = 0.01) -> np.ndarray:
    """Indices of the bones worth searching, parents first: rotatable (not all axes locked) and
    moving at least ``min_influence`` of the skin weight (their own plus their descendants')."""
    mass = rig.weights.sum(0).astype(np.float64)
    for j in range(rig.num_bones - 1, -1, -1):  # parents precede children: accumulate upwards
        if rig.parents[j] >= 0:
            mass[rig.parents[j]] += mass[j]
    share = mass / max(float(rig.weights.sum()), 1e-12)
    free = ~rig.rotation_locks.all(axis=1)
    return np.flatnonzero(free & (share >= min_influence)).astype(np.int64)


def candidate_rotations(angle: float, directions: int = 8, lock: Sequence[bool] = (False, False, False)) -> torch.Tensor:
    """Candidate local rotations [C,4] (wxyz) for one bone: identity first, then ``directions``
    swings by ``angle`` about axes in the bone's local XZ plane, then twists of ±``angle`` about its
    Y axis; components on locked axes are zeroed and duplicates dropped."""
    phi = torch.arange(directions, dtype=torch.float64) * (2 * math.pi / directions)
    swings = torch.stack([torch.cos(phi), torch.zeros_like(phi), torch.sin(phi)], -1)
    twists = torch.tensor([[0.0, 1.0, 0.0], [0.0, -1.0, 0.0]], dtype=torch.float64)
    rotvec = torch.cat([torch.zeros(1, 3, dtype=torch.float64), swings, twists]) * angle
    rotvec = rotvec * (~torch.as_tensor(lock, dtype=torch.bool)).to(rotvec.dtype)
    keep = [0] + [i for i in range(1, rotvec.shape[0]) if not any(torch.allclose(rotvec[i], rotvec[k]) for k in range(i))]
    return rotvec_to_quat(rotvec[keep]).float()


class _Scorer:
    """Renders poses like the distillation loop (each candidate seen by the cameras its own motion
    sets, as the follow camera would) and scores them against the target, per frame."""

    def __init__(
        self,
        skeleton: Skeleton,
        renderer: Renderer,
        cameras_for: Callable,
        target: torch.Tensor,
        supersample: int,
        batch: int,
        appearance: str = "rgb",
        pool: ThreadPoolExecutor | None = None,
        workers: int = 1,
    ):
        self.skeleton, self.renderer, self.cameras_for = skeleton, renderer, cameras_for
        self.pool, self.workers = pool, workers  # batches side by side (SearchConfig.workers); None: one at a time
        self.normalised = appearance == "normalised"
        target = standardise(target) if self.normalised else target
        self.target, self.ss, self.batch, self.renders = target, supersample, batch, 0
        self.foreign: torch.Tensor | None = None  # [F·views,1,H,W] where the drawing's ground is not the render's
        self.kept: torch.Tensor | None = None  # [F·views,1,H,W] 1 − foreign: where colours are compared
        self.lowest = torch.zeros(0)  # [C,F] world Z of the lowest vertex of the last call's candidates
        self.report: Callable[[int, int], None] = lambda clips, renders: None  # told of each batch scored
        self.known: dict[bytes, tuple[torch.Tensor, torch.Tensor]] = {}  # clip key → (errors [F], lowest [F])

    def _render(self, rotations: torch.Tensor, locations: torch.Tensor, frames: int) -> tuple[torch.Tensor, torch.Tensor]:
        """Clips of poses [C·F,J,4], [C·F,J,3] → (vertices [C·F,V,3], RGBA [C·F·views,4,H,W] at the target's size)."""
        copies = rotations.shape[0] // frames
        verts = self.skeleton.deform(rotations, locations)
        cams = concat_cameras([self.cameras_for(root_path(verts[i * frames : (i + 1) * frames])) for i in range(copies)])
        rgba = self.renderer.render(verts, cams)
        return verts, torch.nn.functional.avg_pool2d(rgba, self.ss) if self.ss > 1 else rgba

    def match_to(self, rotations: torch.Tensor, locations: torch.Tensor) -> None:
        """Recolour the target through its first frame, which shows the poses [F,J,4], [F,J,3]
        (:func:`~akd_blender.core.render.image_losses.match_first_frame`); :attr:`foreign` then marks the
        drawing's ground that the render does not have: there only a character render is penalised."""
        frames = rotations.shape[0]
        views = self.target.shape[0] // frames
        _, rgba = self._render(rotations, locations, frames)
        recoloured, self.foreign = match_first_frame(self.target, rgba[:views], first=views)
        self.known.clear()
        self.kept = 1 - self.foreign
        self.target = self.kept * recoloured  # compared with the candidates' kept colours only

    def calibrate_to(self, rotations: torch.Tensor, locations: torch.Tensor, explained_only: bool = False) -> None:
        """Map the target's colours onto the render's through its first frame, which shows the poses
        [F,J,4], [F,J,3] (:func:`~akd_blender.core.render.image_losses.calibrate_to_first_frame`, with
        ``explained_only`` as there)."""
        frames = rotations.shape[0]
        views = self.target.shape[0] // frames
        _, rgba = self._render(rotations, locations, frames)
        mapped = calibrate_to_first_frame(self.target, rgba[:views], first=views, explained_only=explained_only)
        if mapped is not self.target:
            self.target = mapped
            self.known.clear()

    def errors(self, rotations: torch.Tensor, locations: torch.Tensor, frames: int) -> torch.Tensor:
        """Candidate poses [C·F,J,4], [C·F,J,3] (candidate-major) → errors [C,F] against the target
        [F·views,3,H,W]; :attr:`lowest` holds each candidate frame's lowest vertex (world Z) [C,F].

        A candidate whose channels equal, bit for bit, another's in the call or one scored before (the
        unchanged pose that every bone's ring starts with, a start's bone at rest taken back to rest)
        is not rendered again: rendering is deterministic, so its figures are the same. The rest are
        rendered in batches of whole candidates (at most ``batch`` renders), on :attr:`pool`'s threads
        side by side when there is one, split so that every thread gets a share."""
        copies = rotations.shape[0] // frames
        views = self.target.shape[0] // frames
        rot_clips = rotations.reshape(copies, frames, *rotations.shape[1:])
        loc_clips = locations.reshape(copies, frames, *locations.shape[1:])
        rot_host = rot_clips.detach().cpu().contiguous().numpy()  # one copy to the host for all the keys
        loc_host = loc_clips.detach().cpu().contiguous().numpy()
        keys = [_clip_key(rot_host[c], loc_host[c]) for c in range(copies)]
        new: dict[bytes, int] = {}
        for c, key in enumerate(keys):
            if key not in self.known and key not in new:
                new[key] = c
        todo = list(new.values())
        if todo:
            pick = torch.as_tensor(todo, device=rotations.device)
            rot_new, loc_new = rot_clips[pick].flatten(0, 1), loc_clips[pick].flatten(0, 1)
            per = max(1, self.batch // (frames * views))
            if self.pool is not None:
                per = min(per, -(-len(todo) // self.workers))
            spans = [(c0, min(len(todo), c0 + per)) for c0 in range(0, len(todo), per)]

            def score(span: tuple[int, int]) -> tuple[torch.Tensor, torch.Tensor]:
                c0, c1 = span
                with torch.no_grad():  # grad mode is per thread
                    return self._score(rot_new[c0 * frames : c1 * frames], loc_new[c0 * frames : c1 * frames], frames)

            scored = self.pool.map(score, spans) if self.pool is not None and len(spans) > 1 else map(score, spans)
            if len(self.known) > KNOWN_CLIPS:
                self.known.clear()
            for (c0, c1), (err, low) in zip(spans, scored):
                for i in range(c0, c1):
                    self.known[keys[todo[i]]] = (err[i - c0], low[i - c0])
                self.renders += (c1 - c0) * frames * views
                self.report(c1 - c0, self.renders)
        if copies > len(todo):
            self.report(copies - len(todo), self.renders)
        self.lowest = torch.stack([self.known[key][1] for key in keys])
        return torch.stack([self.known[key][0] for key in keys])

    def _score(self, rotations: torch.Tensor, locations: torch.Tensor, frames: int) -> tuple[torch.Tensor, torch.Tensor]:
        """One batch of whole candidates [c·F,J,4], [c·F,J,3] → (errors [c,F], lowest vertex [c,F])."""
        copies = rotations.shape[0] // frames
        views = self.target.shape[0] // frames
        verts, rgba = self._render(rotations, locations, frames)
        video = standardise(rgba[:, :3]) if self.normalised else rgba[:, :3]
        target = self.target.repeat(copies, 1, 1, 1)
        if self.foreign is None:
            err = multiscale_errors(video, target)
        else:  # colours where the drawing shows the render's world; elsewhere only the silhouette counts
            kept, foreign = self.kept.repeat(copies, 1, 1, 1), self.foreign.repeat(copies, 1, 1, 1)
            cover = foreign * rgba[:, 3:]
            err = multiscale_errors(kept * video, target) + FOREIGN_COVER_WEIGHT * multiscale_errors(
                cover, torch.zeros_like(cover)
            )
        return err.view(copies, frames, views).sum(-1), verts[..., 2].amin(-1).view(copies, frames)


def _clip_key(rotations: np.ndarray, locations: np.ndarray) -> bytes:
    """A digest of one candidate's channels [F,J,4], [F,J,3]: equal exactly when their bits are."""
    digest = hashlib.blake2b(rotations.tobytes(), digest_size=20)
    digest.update(locations.tobytes())
    return digest.digest()


@contextmanager
def _render_pool(device: torch.device, workers: int | None) -> Iterator[tuple[ThreadPoolExecutor | None, int]]:
    """Threads that render the search's batches side by side on a CPU (``SearchConfig.workers``; None:
    ``torch.get_num_threads()``), torch's intra-op threads set to one meanwhile (and restored after),
    and their count; (None, 1) when there is nothing to share (one worker, or a device other than the CPU)."""
    threads = torch.get_num_threads()
    count = threads if workers is None else workers
    if device.type != "cpu" or count <= 1:
        yield None, 1
        return
    torch.set_num_threads(1)
    try:
        with ThreadPoolExecutor(count, thread_name_prefix="pose-search") as pool:
            yield pool, count
    finally:
        torch.set_num_threads(threads)


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
    progress: Callable[[SearchProgress], None] | None = None,
    should_cancel: Callable[[], bool] | None = None,
    starts: tuple[torch.Tensor, torch.Tensor] | None = None,
    start_weights: torch.Tensor | None = None,
) -> PoseSearchResult:
    """Coarse-to-fine per-frame search of the bone rotations that make the render match ``target``.

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
        progress: called after every batch of renders with a :class:`SearchProgress` (its ``done`` /
            ``total`` count candidate clips, so their ratio tracks the time spent); None: silent.
        should_cancel: checked before every bone, travel and height pass; True raises
            :class:`~akd_blender.core.errors.Cancelled` naming the sweep and the stage.
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
    The result does not depend on ``progress`` or ``should_cancel``.
    Returns:
        :class:`PoseSearchResult`; offsets are relative to the base pose (zero where nothing beat it).
    """
    config = config or SearchConfig()
    device = renderer.device
    skeleton = Skeleton(rig).to(device)
    if config.appearance not in SEARCH_APPEARANCES:
        raise ValueError(f"search_poses: appearance must be one of {SEARCH_APPEARANCES}, not {config.appearance!r}")
    with _render_pool(device, config.workers) as (pool, workers):
        target = target.to(device, torch.float32)
        scorer = _Scorer(skeleton, renderer, cameras_for, target, supersample, config.batch, config.appearance, pool, workers)
        return _search(rig, scorer, base_rotations, base_locations, config, progress, should_cancel, starts, start_weights)


def _search(
    rig: RigAsset,
    scorer: _Scorer,
    base_rotations: torch.Tensor,
    base_locations: torch.Tensor,
    config: SearchConfig,
    progress: Callable[[SearchProgress], None] | None,
    should_cancel: Callable[[], bool] | None,
    starts: tuple[torch.Tensor, torch.Tensor] | None,
    start_weights: torch.Tensor | None,
) -> PoseSearchResult:
    """:func:`search_poses` with its scorer built."""
    device = scorer.renderer.device
    frames = base_rotations.shape[0]
    rows = torch.arange(frames, device=device)
    rot = base_rotations.to(device, torch.float32).clone()
    loc = base_locations.to(device, torch.float32).clone()
    base_rot, base_loc = rot.clone(), loc.clone()
    if config.appearance == "matched":
        scorer.match_to(rot, loc)
    elif config.appearance in ("calibrated", "auto"):
        scorer.calibrate_to(rot, loc, explained_only=config.appearance == "auto")
    free = np.flatnonzero(~rig.rotation_locks.all(axis=1))
    root = int(rig.root_indices[0])
    root_axes = torch.as_tensor(
        rig.rest_matrices[root, :3, :3] if rig.use_local_location[root] else np.eye(3), dtype=torch.float32, device=device
    )
    rest_root = torch.as_tensor(rig.rest_matrices[root, :3, :3], dtype=torch.float32, device=device)
    up_arm, forward_arm = (_armature_direction(rig, axis).to(device) for axis in ((0.0, 0.0, 1.0), (0.0, -1.0, 0.0)))
    up = rest_root.T @ up_arm  # the world's up axis in the root bone's rest frame
    ramp = torch.arange(frames, device=device, dtype=torch.float32)[:, None]  # frame index [F,1]
    lift = torch.zeros(frames, 3, device=device)  # the root's lift along up_arm [F,3] (armature space)
    drift = torch.zeros(frames, 3, device=device)  # a chosen start's horizontal root path, kept under the lifts
    speed, velocity = 0.0, torch.zeros(3, device=device)  # travel along the facing per frame (armature space)

    def place(lifts: torch.Tensor, velocities: torch.Tensor) -> torch.Tensor:
        """Root lifts [C,F,3] and velocities [C,3] → location channels [C·F,J,3]."""
        trial = loc.repeat(lifts.shape[0], 1, 1)
        offsets = lifts + ramp[None] * velocities[:, None]
        trial[:, root] = base_loc[:, root].repeat(lifts.shape[0], 1) + offsets.reshape(-1, 3) @ root_axes
        return trial

    def search_travel(scale: float) -> None:
        """The clip's speed along the facing: the same, faster or slower by ``scale`` "radians"."""
        nonlocal speed, velocity, loc
        if config.root_travel <= 0:
            return
        per_radian = config.root_travel * float(rig.height)  # units per frame that count as a radian
        facing = _facing(rot[:, root], base_rot[:, root], rest_root, forward_arm, up_arm)
        moves = torch.tensor([0.0, scale, -scale], device=device)
        speeds = speed + moves * per_radian
        score = scorer.errors(rot.repeat(3, 1, 1), place(lift[None].expand(3, -1, -1), speeds[:, None] * facing), frames)
        pick = int((score.sum(1) + config.move_weight * unit * moves.abs()).argmin())
        speed, velocity = float(speeds[pick]), speeds[pick] * facing
        loc = place(lift[None], velocity[None])

    # Heights in "radians": a lift of root_lift × height counts like a turn of one radian, so the move
    # and time penalties weigh a lift as they weigh the bones' turns.
    lift_per_radian = max(config.root_lift, 1e-12) * float(rig.height)

    def lift_moves(scale: float) -> torch.Tensor:
        """The lift moves [L] tried with each of the root's turns ("radians"): none when lifts are off,
        else up to four times the sweep's scale, at most 0.6 (a sitting dog's rear drops by a third
        of its height as it tips back, and neither move alone matches the video better)."""
        if config.root_lift <= 0:
            return torch.zeros(1, device=device)
        return torch.tensor([0.0, 1.0, -1.0, 2.0, -2.0, 4.0, -4.0], device=device) * min(scale, 0.6)

    bones = searched_bones(rig, config.min_influence)
    prior_count = 0 if starts is None else int(starts[0].shape[0])
    tracker = _Tracker(rig, bones, config, progress, prior_count)
    scorer.report = tracker.scored

    def check(sweep: int, stage: str) -> None:
        tracker.sweep, tracker.stage = sweep, stage
        if should_cancel is not None and should_cancel():
            raise Cancelled(f"pose search cancelled in sweep {sweep + 1} of {tracker.sweeps} ({stage})")

    ground = float(rig.ground_height) + config.contact_tolerance * float(rig.height)

    floor = float(rig.ground_height)
    floating_weight = torch.full((frames,), config.ground_weight, device=device)
    if config.leaves_ground:  # in the air in between, on the ground where it takes off and lands
        floating_weight[1:-1] = 0.0

    def off_ground(lowest: torch.Tensor) -> torch.Tensor:
        """Penalty [C,F] on lowest vertices [C,F] floating above the ground beyond the tolerance
        (``ground_weight``) or below it (``penetration_weight``), per lift "radian"."""
        floating = floating_weight * (lowest - ground).clamp_min(0.0)
        sinking = config.penetration_weight * (floor - lowest).clamp_min(0.0)
        return unit * (floating + sinking) / lift_per_radian

    def anchored(score: torch.Tensor, heights: torch.Tensor) -> torch.Tensor:
        """``score`` [C,F] with the first frame's candidates that change its height [C] ruled out."""
        if not config.anchor_start:
            return score
        score = score.clone()
        score[heights.abs() > 1e-6, 0] = torch.inf
        return score

    check(0, "start")
    start = scorer.errors(rot, loc, frames)[0]
    unit = float(start.mean().clamp_min(1e-12))
    chosen = -1
    if prior_count:
        check(0, "motion prior")
        base_total = float((start + off_ground(scorer.lowest)[0]).sum())
        locked = torch.as_tensor(rig.rotation_locks.all(axis=1), device=device)
        prior_rot = torch.where(locked[None, None, :, None], rot[None], starts[0].to(device, torch.float32))
        prior_lift = starts[1].to(device, torch.float32)
        prior_loc = place(prior_lift, velocity[None].expand(prior_count, -1))
        totals = (scorer.errors(prior_rot.reshape(-1, *rot.shape[1:]), prior_loc, frames) + off_ground(scorer.lowest)).sum(1)
        if start_weights is not None:
            totals = totals * start_weights.to(device, totals.dtype)
        pick = int(totals.argmin())
        if float(totals[pick]) < base_total:
            chosen, rot, lift = pick, prior_rot[pick].clone(), prior_lift[pick].clone()
            drift = lift - (lift @ up_arm)[:, None] * up_arm
            loc = place(lift[None], velocity[None])
    scales = config.scales if chosen < 0 or config.prior_scales is None else config.prior_scales
    tracker.plan(scales)
    for sweep, scale in enumerate(scales):
        check(sweep, "travel")
        search_travel(scale)
        for b in bones:
            check(sweep, rig.bone_names[b])
            post = candidate_rotations(scale, config.directions, tuple(rig.rotation_locks[b])).to(device)
            pre = torch.zeros_like(post)
            pre[:, 0] = 1.0
            if b == root:  # facing: turns about the world's up axis, applied after the pose
                yaw = rotvec_to_quat(torch.stack([up * scale, -up * scale]).double()).float()
                pre = torch.cat([pre, yaw])
                post = torch.cat([post, torch.tensor([[1.0, 0, 0, 0], [1.0, 0, 0, 0]], device=device)])
            turned = quat_multiply(
                quat_multiply(pre[:, None].expand(-1, frames, -1), rot[None, :, b]), post[:, None].expand(-1, frames, -1)
            )  # [C,F,4]
            undo = chosen >= 0 and b != root  # the start's own turn of this bone may be taken back whole
            if undo:
                turned = torch.cat([turned, base_rot[None, :, b]])
            rise = lift_moves(scale) if b == root else torch.zeros(1, device=device)  # the root's lift, jointly ("radians")
            count, rises = turned.shape[0], rise.shape[0]
            turned = turned.repeat_interleave(rises, 0)  # candidate k: turn k // rises with lift move k % rises
            heights = (lift @ up_arm)[None] / lift_per_radian + rise[:, None]  # [L,F]
            trial_lift = (drift + heights[..., None] * lift_per_radian * up_arm).repeat(count, 1, 1)  # [C·L,F,3]
            trial = rot.repeat(count * rises, 1, 1)  # [C·L·F,J,4]
            trial[:, b] = turned.reshape(-1, 4)
            score = scorer.errors(trial, place(trial_lift, velocity[None].expand(count * rises, -1)), frames)  # [C·L,F]
            score = score + off_ground(scorer.lowest)
            if b == root:
                score = anchored(score, (heights - (lift @ up_arm)[None] / lift_per_radian).repeat(count, 1)[:, 0])
                score = score + config.tilt_weight * unit * _tilt(turned, base_rot[:, b], up).pow(2)
            else:
                score = score + config.pose_weight * unit * _angle(turned, base_rot[None, :, b]).pow(2)
            identity = pre.new_tensor([1.0, 0, 0, 0])
            own = _angle(post, identity) + _angle(pre, identity)  # each ring candidate's own turn [C]
            if undo:
                own = torch.cat([own, _angle(rot[:, b], base_rot[:, b]).mean()[None]])
            moved = own.repeat_interleave(rises) + rise.abs().repeat(count)
            score = score + config.move_weight * unit * moved[:, None]
            steps = _step_turns(turned) + _step_heights(heights.repeat(count, 1))
            pick = _best_path(score, config.time_weight * unit * steps)
            rot[:, b] = turned[pick, rows]
            if b == root:
                lift = trial_lift[pick, rows]
                loc = place(lift[None], velocity[None])
        check(sweep, "travel")
        search_travel(scale)
        if config.root_lift > 0:
            check(sweep, "height")
            moves = torch.tensor([0.0, scale, -scale], device=device)  # stay, up, down ("radians")
            heights = (lift @ up_arm)[None] / lift_per_radian + moves[:, None]  # [3,F]
            trial_lift = drift + heights[..., None] * lift_per_radian * up_arm  # [3,F,3] armature space
            score = scorer.errors(rot.repeat(3, 1, 1), place(trial_lift, velocity[None].expand(3, -1)), frames)
            score = anchored(score + off_ground(scorer.lowest), moves) + config.move_weight * unit * moves.abs()[:, None]
            pick = _best_path(score, config.time_weight * unit * _step_heights(heights))
            lift = trial_lift[pick, rows]
            loc = place(lift[None], velocity[None])
    check(len(scales) - 1, "end")
    best = scorer.errors(rot, loc, frames)[0]
    offsets = quat_multiply(_conjugate(base_rot[:, free]), rot[:, free])
    return PoseSearchResult(
        continuous_rotvecs(quat_to_rotvec(offsets)),
        lift - drift,
        velocity,
        best,
        start,
        scorer.renders,
        chosen,
        drift,
    )


class _Tracker:
    """Counts the candidate clips :func:`search_poses` scores and reports them as :class:`SearchProgress`."""

    def __init__(self, rig: RigAsset, bones: np.ndarray, config: SearchConfig, progress, starts: int = 0) -> None:
        self.progress, self.rig, self.bones, self.config, self.starts = progress, rig, bones, config, starts
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
        if self.progress is not None:
            seconds = time.perf_counter() - self.began
            done = min(self.done, self.total)
            self.progress(SearchProgress(done, self.total, self.sweep, self.sweeps, self.stage, renders, seconds))


def _armature_direction(rig: RigAsset, world_direction: tuple[float, float, float]) -> torch.Tensor:
    """A world direction in the armature's space [3] (unit)."""
    direction = np.linalg.solve(rig.armature_world[:3, :3], np.asarray(world_direction))
    return torch.as_tensor(direction / np.linalg.norm(direction), dtype=torch.float32)


def _facing(
    rotations: torch.Tensor, base: torch.Tensor, rest: torch.Tensor, forward: torch.Tensor, up: torch.Tensor
) -> torch.Tensor:
    """The character's mean horizontal facing [3] (armature space, unit): ``forward`` (its facing in
    the base pose; characters face -Y) turned as the root's rotations [F,4] turn it from ``base``
    [F,4] (both relative to the root's rest orientation ``rest`` [3,3])."""
    turn = rest @ quat_to_matrix(rotations) @ quat_to_matrix(base).transpose(-1, -2) @ rest.T  # [F,3,3]
    facing = (turn @ forward).mean(0)
    facing = facing - (facing @ up) * up
    return facing / facing.norm().clamp_min(1e-9)


def _angle(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """Angle (radians) between rotations given as unit quaternions [...,4] (broadcast)."""
    dot = (a * b).sum(-1).abs().clamp(max=1.0)
    return 2 * torch.acos(dot)


def _tilt(rotations: torch.Tensor, base: torch.Tensor, up: torch.Tensor) -> torch.Tensor:
    """How far [C,F] root rotations tip the world's up axis relative to the base [F] (radians)."""
    seen = quat_to_matrix(rotations).transpose(-1, -2) @ up  # up in the posed bone's frame
    ref = (quat_to_matrix(base).transpose(-1, -2) @ up)[None]
    return torch.acos((seen * ref).sum(-1).clamp(-1.0, 1.0))


def _step_turns(rotations: torch.Tensor) -> torch.Tensor:
    """Squared angles [F-1,C,C] between candidate c at frame f and candidate c' at frame f+1 of
    candidate rotations [C,F,4]."""
    dot = torch.einsum("cfq,dfq->fcd", rotations[:, :-1], rotations[:, 1:]).abs().clamp(max=1.0)
    return (2 * torch.acos(dot)).pow(2)


def _step_heights(heights: torch.Tensor) -> torch.Tensor:
    """Squared changes [F-1,C,C] between candidate height c at frame f and c' at frame f+1 of heights [C,F]."""
    return (heights[:, None, :-1] - heights[None, :, 1:]).permute(2, 0, 1).pow(2)


def _best_path(unary: torch.Tensor, pairwise: torch.Tensor) -> torch.Tensor:
    """Viterbi: the candidate per frame [F] minimising Σ_f unary[c_f, f] + Σ_f pairwise[f, c_f, c_f+1]
    (unary [C,F], pairwise [F-1,C,C]); candidate 0 wins ties."""
    cost = unary[:, 0]
    back = []
    for f in range(1, unary.shape[1]):
        total = cost[:, None] + pairwise[f - 1]  # [C (previous), C (this)]
        cost, arg = total.min(0)
        cost = cost + unary[:, f]
        back.append(arg)
    path = [int(cost.argmin())]
    for arg in reversed(back):
        path.append(int(arg[path[-1]]))
    return torch.tensor(path[::-1], device=unary.device)


def continuous_rotvecs(rotvec: torch.Tensor) -> torch.Tensor:
    """Rotation vectors [F,...,3] with each frame's turned to whichever of its two forms near π
    (``r`` or ``r - 2π r/|r|``, the same rotation) lies closer to the previous frame's, so that
    interpolating them between frames does not swing through the identity."""
    out = rotvec.clone()
    for f in range(1, out.shape[0]):
        r = out[f]
        norm = r.norm(dim=-1, keepdim=True)
        alt = r - 2 * math.pi * r / norm.clamp_min(1e-12)
        closer = (alt - out[f - 1]).norm(dim=-1, keepdim=True) < (r - out[f - 1]).norm(dim=-1, keepdim=True)
        out[f] = torch.where(closer & (norm > 1e-6), alt, r)
    return out


def _conjugate(quat: torch.Tensor) -> torch.Tensor:
    return quat * torch.tensor([1.0, -1.0, -1.0, -1.0], dtype=quat.dtype, device=quat.device)


def smooth_frames(values: torch.Tensor, sigma: float, hold_first: bool = False) -> torch.Tensor:
    """``values`` [F,...] smoothed over frames by a Gaussian of ``sigma`` frames (edges held; 0 = as
    is). The search picks each frame's pose from a ring of candidates, so consecutive frames differ by
    the ring's quantisation; unsmoothed, that jitter reads as a shuffled clip rather than a motion.
    ``hold_first``: the first frame keeps its value exactly (the smoothing's change there is taken
    back, fading as the same Gaussian over the next frames), so a root lift anchored at the first
    frame (``SearchConfig.anchor_start``) still starts where the character stood."""
    if sigma <= 0 or values.shape[0] < 2:
        return values
    radius = max(1, math.ceil(3 * sigma))
    kernel = torch.exp(-0.5 * (torch.arange(-radius, radius + 1, dtype=torch.float64) / sigma) ** 2)
    kernel = (kernel / kernel.sum()).to(values.device, values.dtype)
    flat = values.reshape(values.shape[0], -1).T[:, None]  # [N,1,F]
    padded = torch.nn.functional.pad(flat, (radius, radius), mode="replicate")
    smoothed = torch.nn.functional.conv1d(padded, kernel.view(1, 1, -1))[:, 0].T.reshape(values.shape)
    if hold_first:
        frames = torch.arange(values.shape[0], device=values.device, dtype=values.dtype)
        fade = torch.exp(-0.5 * (frames / sigma) ** 2).reshape(-1, *([1] * (values.dim() - 1)))
        smoothed = smoothed - fade * (smoothed[:1] - values[:1])
    return smoothed


def keys_from_frames(values: torch.Tensor, keys: int, interpolation: str = "cubic", smooth: float = 1e-2) -> torch.Tensor:
    """Keys [K,...] whose interpolation (:func:`interpolation_basis`) best reproduces per-frame
    ``values`` [F,...] sampled evenly over the same span (first and last frame on the first and last
    key); a small second-difference penalty ``smooth`` keeps keys between samples calm when K > F."""
    frames = values.shape[0]
    basis = torch.as_tensor(interpolation_basis(frames, keys, interpolation), dtype=torch.float64, device=values.device)
    flat = values.reshape(frames, -1).to(torch.float64)
    diff = torch.diff(torch.eye(keys, dtype=torch.float64, device=values.device), n=2, dim=0)
    lhs = basis.T @ basis + smooth * diff.T @ diff + 1e-9 * torch.eye(keys, dtype=torch.float64, device=values.device)
    solved = torch.linalg.solve(lhs, basis.T @ flat)
    return solved.to(values.dtype).reshape(keys, *values.shape[1:])
