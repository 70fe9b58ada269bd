"""Scoring candidate clips against a video for the pose search: each is posed, rendered with the run's renderer and cameras and compared with the video (multi-scale image error, appearance matched as configured), figures remembered by the clip's channels so a clip is rendered once."""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager

import numpy as np
import torch

from ..character.kinematics import Skeleton
from ..render import Renderer, concat_cameras, root_path
from ..render.image_losses import calibrate_to_first_frame, match_first_frame, multiscale_errors, standardise

__all__ = ["FOREIGN_COVER_WEIGHT", "KNOWN_CLIPS", "Scorer", "render_pool"]


KNOWN_CLIPS = 4096  # scored candidates the search remembers (their figures, by their channels' digest)


FOREIGN_COVER_WEIGHT = 0.25  # per pixel of character drawn over a ground the render does not have (squared units)


class Scorer:
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
def render_pool(device: torch.device, workers: int | None) -> Iterator[tuple[ThreadPoolExecutor | None, int]]:
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
