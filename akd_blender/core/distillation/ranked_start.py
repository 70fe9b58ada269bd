"""The prompt-ranked start of start "pose" (``DistillConfig.ranked_start``): the motion library's
starts, rendered as the loop renders, ranked by the prior's own reading of the prompt.

From a held pose, SDS alone rarely finds a motion: the first steps' gradients through a still render
say little about which limbs should swing. The motion prior (:mod:`~akd_blender.core.fitting.motion_starts`)
offers the character's kind's library motions at several tempi, phases and directions; here each one,
and the held pose itself, is played on the optimised parameters (exactly what the loop would start
from), rendered with the loop's renderer and camera, and scored by the prior as a diffusion
classifier (:meth:`~akd_blender.core.video_models.base.SDSPrior.prompt_scores`: how much better the
prompt's branch predicts the noise than the unconditional branch). The best becomes the optimised
motion's start; the SDS steps then run as before. **The prompt, through the prior, chooses**: the
motion a prompt was understood as (``text.extra["motion"]``) and the candidates' labels are never
consulted.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import torch

from ..character.rig import RigAsset
from ..character.rotations import quat_multiply, quat_to_rotvec
from ..fitting.frame_paths import continuous_rotvecs, keys_from_frames
from ..motion.clip import MotionParams
from ..progress import eta_seconds
from ..settings import DistillConfig
from .context import RunContext

__all__ = [
    "RANK_DRAWS",
    "RANK_BATCH",
    "HELD",
    "Candidates",
    "render_params",
    "offsets_of",
    "candidates_for",
    "score_candidates",
    "start_from_ranking",
]

RANK_DRAWS: int = 2
"""Noise draws of the ranking (each scored at every timestep of
:data:`~akd_blender.core.video_models.base.PROMPT_SCORE_TIMESTEPS`, shared by all candidates)."""

RANK_BATCH: int = 32
"""Candidates rendered and scored together (the prior's noise is the same for every batch)."""

HELD = "standing pose"
"""How the report names the held pose when no library start scores better."""


@torch.no_grad()
def render_params(ctx: RunContext) -> torch.Tensor:
    """``ctx.params`` as the loop renders them: video [F·views,3,H,W] in [0,1] at the config's size
    (the renderer renders at the supersampled size; the loop's camera rule and views)."""
    vertices = ctx.skeleton(ctx.params.pose_channels())  # [F,V,3] world
    return ctx.render(vertices, ctx.config.views)[:, :3]


def offsets_of(params: MotionParams, rotations: torch.Tensor) -> torch.Tensor:
    """Rotations [F,J,4] (a start's channels) → the free bones' per-frame offsets [F,B,3] from
    ``params.base_rotations`` (rotation vectors, radians, sign-continuous over frames)."""
    base = params.base_rotations[:, params.free_bones]
    conjugate = base * base.new_tensor([1.0, -1.0, -1.0, -1.0])
    offsets = quat_multiply(conjugate, rotations.to(base)[:, params.free_bones])
    return continuous_rotvecs(quat_to_rotvec(offsets))


@dataclass
class Candidates:
    """The ranking's candidates: ``names`` [S+1] (0: the held pose, "standing pose"; s ≥ 1: motion-prior
    start s − 1, :attr:`~akd_blender.core.fitting.motion_starts.PriorStart.name`), their ``scores`` [S+1]
    (:meth:`~akd_blender.core.video_models.base.SDSPrior.prompt_scores`, float32; empty until scored) and
    what each is as the parameters' keys (:meth:`keys`)."""

    names: list[str]
    held: tuple[torch.Tensor, torch.Tensor]
    rotations: torch.Tensor
    drift: torch.Tensor
    params: MotionParams
    interpolation: str
    scores: torch.Tensor = field(default_factory=lambda: torch.zeros(0))

    def keys(self, s: int) -> tuple[torch.Tensor, torch.Tensor]:
        """Candidate ``s`` as (rotvec keys [K,B,3], root offset keys [K,3]) of :attr:`params`: the held
        keys, or a start's per-frame offsets fitted to the keys (its root path added to the held one)."""
        if s == 0:
            return self.held
        p, count = self.params, self.params.rotvec.shape[0]
        device = p.rotvec.device
        rotvec = keys_from_frames(offsets_of(p, self.rotations[s - 1].to(device)), count, self.interpolation) * p.axis_mask
        return rotvec, self.held[1] + keys_from_frames(self.drift[s - 1].to(device), count, self.interpolation)

    def apply(self, s: int) -> None:
        """Write candidate ``s``'s keys into :attr:`params` (in place)."""
        rotvec, root = self.keys(s)
        with torch.no_grad():
            self.params.rotvec.copy_(rotvec)
            self.params.root_offset.copy_(root)


def candidates_for(rig: RigAsset, params: MotionParams, config: DistillConfig) -> Candidates:
    """The held pose (``params`` as they stand) and every motion-prior start
    (:func:`~akd_blender.core.fitting.motion_starts.prior_starts` at the parameters' frames and ``config.fps``,
    played on the held pose by :func:`~akd_blender.core.fitting.motion_starts.starts_as_channels`, travelling
    the way the held pose faces), unscored."""
    from ..fitting.motion_starts import prior_starts, starts_as_channels
    from .heading import held_heading

    heading = held_heading(rig, params)  # a turned body travels the way it faces
    held = params.base_rotations[0].detach().cpu().double().numpy()
    starts = prior_starts(rig, params.num_frames, config.fps, held=held, heading=heading)  # played from the held pose
    rotations, drift = starts_as_channels(rig, starts, params.base_rotations, heading)  # [S,F,J,4], [S,F,3]
    held = (params.rotvec.detach().clone(), params.root_offset.detach().clone())
    return Candidates([HELD] + [s.name for s in starts], held, rotations, drift, params, config.interpolation)


@torch.no_grad()
def score_candidates(candidates: Candidates, ctx: RunContext) -> torch.Tensor:
    """Each candidate written into the parameters (``ctx.params``) in turn, rendered
    (:func:`render_params`) and scored by ``ctx.prior.prompt_scores(videos, ctx.text)`` in batches of :data:`RANK_BATCH`, each batch with a CPU
    generator seeded with ``ctx.config.seed`` (the same noise for all; the loop's own generator is not
    drawn from, so the SDS steps draw what they would without the ranking). Returns and stores
    :attr:`Candidates.scores` [S+1]; the parameters are left at the held pose. Progress "search"
    (candidates scored) after each batch; a cancel is seen before each (Cancelled)."""
    began = time.perf_counter()
    total = len(candidates.names)
    scores = []
    try:
        for lo in range(0, total, RANK_BATCH):
            ctx.callbacks.stop_if_cancelled(f"ranked start cancelled after {lo} of {total} candidates")
            videos = []
            for s in range(lo, min(lo + RANK_BATCH, total)):
                candidates.apply(s)
                videos.append(render_params(ctx))
            generator = torch.Generator("cpu").manual_seed(int(ctx.config.seed))
            scores.append(ctx.prior.prompt_scores(torch.stack(videos), ctx.text, generator=generator, draws=RANK_DRAWS))
            done, seconds = min(lo + RANK_BATCH, total), time.perf_counter() - began
            ctx.callbacks.report("search", done, total, eta_seconds(seconds, done, total), "ranking starts by the prompt")
    finally:
        candidates.apply(0)
    candidates.scores = torch.cat(scores).float()
    return candidates.scores


@torch.no_grad()
def start_from_ranking(ctx: RunContext) -> dict:
    """Start "pose" with ``ranked_start``: :func:`candidates_for` the held pose in ``ctx.params``, scored by
    :func:`score_candidates`; ``params`` keeps the best (the first of equals; the held pose when no
    start beats it).

    Returns facts for the report: ``search_start`` (the chosen start's name, or "standing pose"),
    ``ranked_starts`` (candidates scored, the held pose included), ``ranked_score`` (the winner's
    score), ``ranked_margin`` (its lead over the held pose), ``ranked_runner_up`` (the second best's name).
    """
    candidates = candidates_for(ctx.rig, ctx.params, ctx.config)
    score = score_candidates(candidates, ctx)
    order = torch.argsort(score, descending=True, stable=True)
    best = int(order[0])
    candidates.apply(best)
    return {
        "search_start": candidates.names[best],
        "ranked_starts": len(candidates.names),
        "ranked_score": round(float(score[best]), 6),
        "ranked_margin": round(float(score[best] - score[0]), 6),
        "ranked_runner_up": candidates.names[int(order[1])] if len(order) > 1 else "",
    }
