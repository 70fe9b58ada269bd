"""Quality on rigs no model saw (``make bench-quality``): distil each case as the product does, judge, measure fidelity.

Cases: held-out family members of every kind (seeds from 10500 on: neither the teacher nor the
judge saw them; bone roles as drawn) and the artist rigs of ``--artists`` (written by
``tests/bench/artist_fixtures.py``; roles found by :func:`~akd_blender.core.character.roles.find_roles`).
Case ``i`` has seed ``i``, its own member and one of its kind's motions with a held-out phrasing, so
cases are independent draws. **Splits share no prompt**: the test split (the default cases) prompts
every motion with its first held-out phrasing (``spec.heldout_phrasings[0]``), the validation split
(``--validation``: members from 10800, seeds from 1000, the RiggedFigure rig) with its second
(``spec.heldout_phrasings[1]``); :func:`check_splits_disjoint` asserts over the whole library that no
first phrasing is any motion's second, and the run prints how many distinct prompts its split has. Each case is distilled with the defaults of
:class:`~akd_blender.core.distillation.sds_loop.DistillConfig` from the rest pose, rendered with the distillation's
judged by the motion judge (:class:`~akd_blender.core.motion.judge.MotionJudge`: the clip's body
tracks in the judge's window). A case is **recovered** when the product does not refuse its prompt,
it is judged as its motion *and* its joint distance to
the nearest ground truth (the library motion on the same rig, several variations) is below the rest
pose's. **Refused** (column "refused"): the product's job (``allow_nearest`` off, its default) would
stop with :class:`~akd_blender.core.prompt.understanding.PromptNotUnderstood`; such a case is played as the
standing pose and counts as not recovered on every route. ``--allow-nearest`` goes ahead with the
nearest motion instead, as a user who allows it would (then nothing is refused). Joint distance: root-relative joint positions in character heights, best yaw about the up
axis and best time shift within ±3 frames. Prints a markdown table, writes JSON and exits 1 when the
recovered share is below ``--bar``, by default the retrieval baseline's (``--route library``)
recovered share on the same cases, computed in the same run (about 0.3 s per case on a CPU).

    python tests/bench/bench_unseen.py [--per-kind 12] [--per-artist 8] [--bar SHARE] [--allow-nearest] [--out FILE]
    python tests/bench/bench_unseen.py --embed FILE   # only write the cases' prompt embeddings (needs the text encoder)
    python tests/bench/bench_unseen.py --shard 0/4 --out s0.json …   # every 4th case, from case 0
    python tests/bench/bench_unseen.py --merge s0.json s1.json … --out all.json   # judge shards' saved clips, one table
    python tests/bench/bench_unseen.py --oracle …   # the fit's ceiling: the teacher "draws" the true motion
    python tests/bench/bench_unseen.py --route library …   # the retrieval baseline (no model); --route standing

``--route`` chooses what makes each case's clip: ``default`` (the product's job with the defaults,
through :func:`~akd_blender.core.job.request.run_request`), ``library`` (the retrieval baseline, no model:
the prompt read as the product reads it and that motion's library clip, default variation, played
on the rig's found roles at the default job's frames and rate) or ``standing`` (the standing pose
held: its joint distance is the bar a recovered case must beat, so it recovers none). Every route,
and ``--merge``, exits 1 below ``--bar`` (default: the library route's share on the same cases; the
table's "baseline recovered" column shows it per group).

``--oracle`` replaces the teacher's drawing by the case's true motion (a held-out variation of the
library motion on the case's rig, facing the camera, not one of the fidelity references) rendered
as the distillation renders (the teacher's look, follow camera, its size and frame rate); the rest of
the job is unchanged. What it recovers is the ceiling of the drawing-then-fit path on these rigs.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np
import torch

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests" / "bench"))

from akd_blender.core.character.kinematics import Skeleton  # noqa: E402
from akd_blender.core.character.rig import RigAsset, load_rig  # noqa: E402
from akd_blender.core.character.roles import BoneRoles, find_roles  # noqa: E402
from akd_blender.core.distillation.sds_loop import DistillConfig  # noqa: E402
from akd_blender.core.job.request import JobRequest, run_request  # noqa: E402
from akd_blender.core.motion.clip import MotionClip  # noqa: E402
from akd_blender.core.motion.library import make_role_clip, motions_for, sample_variations  # noqa: E402
from tools.family import HELDOUT_SEEDS, make_member  # noqa: E402
from tools.family.truth import truth_roles  # noqa: E402

FAMILY_KINDS = ("biped", "quadruped", "bird", "hexapod")
FIRST_MEMBER = 10500  # held-out members the judge's evaluation (10000 on) does not use
DEFAULT_ARTISTS = ("Fox", "CesiumMan")
VALIDATION_MEMBER = 10800  # --validation: other held-out members, for choosing settings without the test cases
VALIDATION_SEED = 1000
VALIDATION_ARTISTS = ("RiggedFigure",)
TEST_PHRASING, VALIDATION_PHRASING = 0, 1  # which of each motion's held-out phrasings a split prompts with


@dataclass(frozen=True)
class Case:
    """One benchmark case: where the rig comes from (``"family"`` or an artist model's name), its
    kind, the member's seed (family only), the motion label, the prompt and the distillation seed."""

    source: str
    kind: str
    member: int
    label: str
    prompt: str
    seed: int


def load_case_rig(case: Case, artists: Path) -> tuple[RigAsset, BoneRoles]:
    """The case's rig and its roles (drawn roles for family members, found roles for artist rigs)."""
    if case.source == "family":
        member = make_member(case.kind, case.member)
        return member.rig, truth_roles(member)
    rig = load_rig(str(artists / f"{case.source}.npz"))
    return rig, find_roles(rig)


def make_cases(per_kind: int, per_artist: int, artists: Path, names: tuple[str, ...], validation: bool = False) -> list[Case]:
    """``per_kind`` cases per family kind and ``per_artist`` per artist rig, seeds 0, 1, 2 … in order,
    over the library motions the shipped motion judge was trained on (the cases of a kind cycle
    through them; the prompts are still read against the whole vocabulary), each prompting with its
    motion's first held-out phrasing (``TEST_PHRASING``). ``validation``: the
    split settings are chosen on instead: members from ``VALIDATION_MEMBER``, seeds from
    ``VALIDATION_SEED``, each motion's second held-out phrasing (``VALIDATION_PHRASING``), so no prompt
    of one split is a prompt of the other (:func:`check_splits_disjoint`)."""
    check_splits_disjoint()
    first_member, first_seed = (VALIDATION_MEMBER, VALIDATION_SEED) if validation else (FIRST_MEMBER, 0)
    phrasing = VALIDATION_PHRASING if validation else TEST_PHRASING
    plan: list[tuple[str, str, int]] = []
    for kind in FAMILY_KINDS:
        plan += [("family", kind, first_member + i) for i in range(per_kind)]
    for name in names:
        if (artists / f"{name}.npz").is_file():
            kind = find_roles(load_rig(str(artists / f"{name}.npz"))).kind
            plan += [(name, kind, -1)] * per_artist
    from akd_blender.core.motion.judge import load_motion_judge

    judged = set(load_motion_judge().cfg.labels)  # the motions the shipped judge can tell (a newer motion: "none")
    cases, counters = [], {}
    for seed, (source, kind, member) in enumerate(plan, start=first_seed):
        specs = [spec for spec in motions_for(kind) if spec.label in judged]
        k = counters.get(source + kind, 0)
        counters[source + kind] = k + 1
        spec = specs[k % len(specs)]
        prompt = spec.heldout_phrasings[phrasing]
        cases.append(Case(source, kind, member if member >= 0 else -1, spec.label, prompt, seed))
    assert all(m in HELDOUT_SEEDS for c in cases if c.source == "family" for m in [c.member])
    return cases


def split_prompts() -> tuple[set[str], set[str]]:
    """Every prompt the test split and the validation split can use, over all kinds' library motions:
    (each motion's ``heldout_phrasings[TEST_PHRASING]``, each one's ``[VALIDATION_PHRASING]``)."""
    from akd_blender.core.motion.library import KINDS

    specs = [spec for kind in KINDS for spec in motions_for(kind)]
    return {s.heldout_phrasings[TEST_PHRASING] for s in specs}, {s.heldout_phrasings[VALIDATION_PHRASING] for s in specs}


def check_splits_disjoint() -> None:
    """Raise AssertionError when a prompt of the test split could be a prompt of the validation split."""
    test, validation = split_prompts()
    shared = sorted(test & validation)
    assert not shared, f"the test and validation splits share prompts: {shared}"


def joints_rel(skeleton: Skeleton, clip: MotionClip, height: float) -> np.ndarray:
    """World joint positions relative to the first frame's root joint [F,J,3], in character heights
    (``height`` in world units)."""
    j = skeleton.joint_positions(*clip.pose_channels(torch.float64)).numpy()
    return (j - j[:1, :1]) / height


def _yawed(j: np.ndarray, angle: float) -> np.ndarray:
    c, s = np.cos(angle), np.sin(angle)
    return j @ np.array([[c, -s, 0], [s, c, 0], [0, 0, 1]]).T


def joint_distance(a: np.ndarray, refs: list[np.ndarray], max_shift: int = 3, yaws: int = 24) -> float:
    """Min over references, yaws of ``a`` about world Z and time shifts (|s| ≤ max_shift) of the mean
    joint distance (same units as the inputs)."""
    best = np.inf
    for angle in np.linspace(0, 2 * np.pi, yaws, endpoint=False):
        x0 = _yawed(a, angle)
        for r in refs:
            for s in range(-max_shift, max_shift + 1):
                x, y = (x0[s:], r[: len(r) - s]) if s >= 0 else (x0[:s], r[-s:])
                best = min(best, float(np.linalg.norm(x - y, axis=-1).mean()))
    return best


def ground_truths(rig: RigAsset, roles: BoneRoles, label: str, frames: int, fps: float, count: int) -> list[MotionClip]:
    """``count`` library variations of ``label`` on the rig (train and held-out streams), facing 0."""
    from dataclasses import replace

    half = max(1, count // 2)
    vs = sample_variations(label, "train", half, 0) + sample_variations(label, "heldout", count - half, 0)
    return [make_role_clip(rig, roles, label, replace(v, facing=0.0), frames, fps) for v in vs]


def extend_phrases(prior, path: Path) -> None:
    """Add the precomputed prompt embeddings in ``path`` (a PhraseTable file) to the teacher's table."""
    from akd_blender.core.prompt.sentence_encoder import PhraseTable

    extra = PhraseTable.load(path)
    table = prior.encoder.table
    phrases = table.phrases + [p for p in extra.phrases if p not in table]
    vectors = np.concatenate([table.vectors, extra.vectors[[extra.index[p] for p in extra.phrases if p not in table]]])
    prior.encoder.table = PhraseTable(phrases, vectors)


class OracleDrawing:
    """The embedded teacher with its drawing replaced by a true motion rendered in the teacher's look;
    ``clip_of(frames, fps)`` is that motion on the rig at any length and rate."""

    def __init__(self, prior, rig: RigAsset, clip_of: Callable[[int, float], MotionClip]) -> None:
        self.prior, self.rig, self.clip_of = prior, rig, clip_of
        self.name = f"{getattr(prior, 'name', 'prior')} (oracle drawing)"

    def __getattr__(self, name: str):
        return getattr(self.prior, name)

    @torch.no_grad()
    def sample(self, text, generator=None, guidance: float = 3.0, steps: int = 30, progress=None) -> torch.Tensor:
        """The true motion's video [F,3,H,W] in [0,1] at the teacher's size, frame count and rate (4×
        supersampled, area-pooled)."""
        from akd_blender.core.render import render_clip

        p, ss = self.prior, 4
        clip = self.clip_of(p.frames, p.fps)
        rgba = render_clip(
            self.rig,
            clip,
            p.height * ss,
            p.width * ss,
            device=getattr(p, "device", None),
            style=p.render_style,
            camera_options=p.camera_options,
        )
        return torch.nn.functional.avg_pool2d(rgba, ss)[:, :3]


def oracle_prior(case: Case, artists: Path, prior) -> OracleDrawing:
    """``prior`` drawing case ``case``'s true motion: held-out variation (seed 1000 + case seed), facing 0."""
    from dataclasses import replace

    rig, roles = load_case_rig(case, artists)
    variation = replace(sample_variations(case.label, "heldout", 1, 1000 + case.seed)[0], facing=0.0)
    return OracleDrawing(prior, rig, lambda frames, fps: make_role_clip(rig, roles, case.label, variation, frames, fps))


def distil_case(
    case: Case,
    artists: Path,
    prior,
    device: str,
    gt_count: int,
    search_steps: int | None = None,
    search: dict | None = None,
    floor: Callable[[int, float], MotionClip] | None = None,
    settings: dict | None = None,
    allow_nearest: bool = True,
) -> tuple[dict, MotionClip]:
    """Distil one case → (its figures that need no judge, the clip); ``search``: SearchSettings fields to
    change; ``settings``: DistillConfig fields to change; ``floor(frames, fps)``: a motion whose own
    joint distance to the references goes in the row as ``truth_distance`` (``--oracle``: the drawn
    truth, what a perfect fit scores); ``allow_nearest`` off: a prompt the job refuses gives
    :func:`refused_case`'s row and standing pose."""
    from dataclasses import replace

    from akd_blender.core.prompt.understanding import PromptNotUnderstood

    rig, roles = load_case_rig(case, artists)
    t0 = time.time()
    config = DistillConfig(seed=case.seed, device=device, allow_nearest=allow_nearest)
    if search_steps is not None:
        config = replace(config, search=replace(config.search, steps=search_steps))
    if search:
        config = replace(config, search=replace(config.search, **search))
    if settings:
        nested = {k: v for k, v in settings.items() if "." in k}  # e.g. sds.t_max=0.5: a field of a field
        config = replace(config, **{k: v for k, v in settings.items() if "." not in k})
        for key, value in nested.items():
            outer, inner = key.split(".", 1)
            config = replace(config, **{outer: replace(getattr(config, outer), **{inner: value})})
    try:
        result = run_request(JobRequest(rig, case.prompt, config), prior=prior)
    except PromptNotUnderstood as refusal:
        return refused_case(case, rig, roles, prior, gt_count, t0, refusal.understanding.facts())
    row = case_row(case, rig, roles, result.clip, result.facts, time.time() - t0, gt_count)
    for key in ("ranked_margin", "ranked_runner_up", "redraw_starts", "library_variation"):
        if key in result.facts:  # start "pose" with ranked_start: the prompt's choice; start "library": the variation
            row[key] = result.facts[key]
    if floor is not None:
        skeleton, clip = Skeleton(rig), result.clip
        row["truth_distance"] = round(
            joint_distance(
                joints_rel(skeleton, floor(clip.num_frames, clip.fps), rig.height), refs_of(case, rig, roles, clip, gt_count)
            ),
            4,
        )
    return row, result.clip


def refs_of(case: Case, rig: RigAsset, roles: BoneRoles, clip: MotionClip, gt_count: int) -> list[np.ndarray]:
    """The case's fidelity references at ``clip``'s length and rate (:func:`ground_truths`, joints_rel)."""
    skeleton = Skeleton(rig)
    truths = ground_truths(rig, roles, case.label, clip.num_frames, clip.fps, gt_count)
    return [joints_rel(skeleton, g, rig.height) for g in truths]


def case_row(case: Case, rig: RigAsset, roles: BoneRoles, clip: MotionClip, facts: dict, seconds: float, gt_count: int) -> dict:
    """One case's figures that need no judge: joint distance of ``clip`` and of the standing pose to
    the references, how the prompt was read (``facts``: a job's), the start and the seconds taken."""
    skeleton = Skeleton(rig)
    refs = refs_of(case, rig, roles, clip, gt_count)
    rest = MotionClip.rest(rig, clip.num_frames, clip.fps)
    return {
        **asdict(case),
        "joint_distance": round(joint_distance(joints_rel(skeleton, clip, rig.height), refs), 4),
        "rest_distance": round(joint_distance(joints_rel(skeleton, rest, rig.height), refs), 4),
        "understood_as": facts.get("understood_as"),
        "understood_motion": facts.get("motion"),
        "understood": facts.get("understood"),
        "start": facts.get("search_start"),
        "shake": facts.get("drawing_shake"),
        "seconds": round(seconds, 2),
        "refused": False,
    }


def refused_case(
    case: Case, rig: RigAsset, roles: BoneRoles, prior, gt_count: int, t0: float, facts: dict
) -> tuple[dict, MotionClip]:
    """A case whose prompt the product refuses: the standing pose at the default job's frames and rate
    for ``prior``, its row with ``refused`` True (``facts``: the refused reading's; ``t0``: the case's
    start, ``time.time()``)."""
    from akd_blender.core.distillation.plan import resolve_sizes

    sizes = resolve_sizes(DistillConfig(), prior)
    clip = MotionClip.rest(rig, sizes.frames, sizes.fps)
    row = case_row(case, rig, roles, clip, {**facts, "search_start": "refused"}, time.time() - t0, gt_count)
    return {**row, "refused": True}, clip


def product_refuses(choice, reading, understanding, allow_nearest: bool) -> bool:
    """Whether the product's job (start "auto" or "library") stops with PromptNotUnderstood for a
    prompt with library ``choice`` and ``reading`` (:func:`~akd_blender.core.prompt.reading.choose_library_motion`'s,
    called with ``allow_nearest``) and the prior's own ``understanding`` (``text.extra``): the same two
    checks as :func:`~akd_blender.core.distillation.sds_loop.distill`."""
    from akd_blender.core.prompt.understanding import Understanding

    if allow_nearest:
        return False
    if choice is None and reading is not None and not reading.understood:
        return True
    own = isinstance(understanding, Understanding) and (choice is None or choice.plan is None)
    return bool(own and not understanding.understood)


ROUTES = ("default", "library", "standing")
"""What makes a case's clip (``--route``): the product's default job, the retrieval baseline, the standing pose."""


def baseline_case(
    case: Case, artists: Path, prior, route: str, gt_count: int, allow_nearest: bool = False
) -> tuple[dict, MotionClip]:
    """A case without a distillation: ``route`` "library" (the prompt read by ``prior`` as the product
    reads it for the rig's kind; that motion's library clip at the default variation on the rig's
    found roles) or "standing" (the standing pose), at the default job's frames and rate for
    ``prior``. A prompt the product refuses (:func:`product_refuses`; never with ``allow_nearest``)
    gives :func:`refused_case`'s row on both routes."""
    from akd_blender.core.distillation.library_start import library_clip
    from akd_blender.core.distillation.plan import resolve_sizes
    from akd_blender.core.motion.library.labelled import Variation
    from akd_blender.core.prompt.reading import LibraryChoice, choose_library_motion

    rig, roles = load_case_rig(case, artists)
    t0 = time.time()
    sizes = resolve_sizes(DistillConfig(), prior)
    facts: dict = {}
    found = find_roles(rig)
    text = prior.encode_text(case.prompt, kind=found.kind)
    understanding = text.extra.get("understanding")
    choice, reading = choose_library_motion(case.prompt, found.kind, understanding, prior, allow_nearest=allow_nearest)
    facts = {k: v for k, v in (reading.facts() if reading is not None else {}).items()}
    if product_refuses(choice, reading, understanding, allow_nearest):
        return refused_case(case, rig, roles, prior, gt_count, t0, facts)
    if route == "standing":
        clip = MotionClip.rest(rig, sizes.frames, sizes.fps)
        facts["search_start"] = "standing pose"
    else:
        if choice is None:
            clip = MotionClip.rest(rig, sizes.frames, sizes.fps)
            facts["search_start"] = "standing pose"
        else:
            choice = LibraryChoice(choice.kind, choice.label, Variation())
            clip = library_clip(rig, found, choice, sizes.frames, sizes.fps)
            facts["search_start"] = choice.name
    return case_row(case, rig, roles, clip, facts, time.time() - t0, gt_count), clip


def judge_case(row: dict, clip: MotionClip, artists: Path, judge) -> dict:
    """The row with the judges' verdicts on the distilled clip and on one ground truth, and "recovered"
    (judged right, closer than the standing pose and not refused)."""
    case = Case(**{k: row[k] for k in Case.__dataclass_fields__})
    rig, roles = load_case_rig(case, artists)
    verdict = judge.judge(rig, roles, clip)
    gt = ground_truths(rig, roles, case.label, clip.num_frames, clip.fps, 1)[0]
    right = verdict["label"] == case.label
    out = {
        **row,
        "judged": verdict["label"],
        "p": round(verdict["probability"], 3),
        "right": right,
        "recovered": bool(right and row["joint_distance"] < row["rest_distance"] and not row.get("refused", False)),
        "gt_judged": judge.judge(rig, roles, gt)["label"],
    }
    return out


def save_clips(clips: dict[int, MotionClip], path: Path) -> None:
    """The distilled clips by case seed in one ``.npz`` (``rot_<seed>``, ``loc_<seed>``, fps, frame start)."""
    arrays = {}
    for seed, c in clips.items():
        arrays[f"rot_{seed}"], arrays[f"loc_{seed}"] = c.rotations, c.locations
        arrays[f"meta_{seed}"] = np.array([c.fps, c.frame_start])
    np.savez_compressed(path, **arrays)


def load_clips(path: Path, rows: list[dict], artists: Path) -> dict[int, MotionClip]:
    """Clips written by :func:`save_clips` for ``rows`` (bone names from each case's rig)."""
    out = {}
    with np.load(path) as data:
        for r in rows:
            case = Case(**{k: r[k] for k in Case.__dataclass_fields__})
            rig, _ = load_case_rig(case, artists)
            fps, start = data[f"meta_{case.seed}"]
            out[case.seed] = MotionClip(
                rig.bone_names, float(fps), int(start), data[f"rot_{case.seed}"], data[f"loc_{case.seed}"]
            )
    return out


def table(rows: list[dict], baseline: dict[int, bool] | None = None) -> str:
    """Markdown: per group (family kind, artist rig) and overall; ``baseline``: case seed → recovered by
    the retrieval baseline (a "baseline recovered" column)."""
    groups: dict[str, list[dict]] = {}
    for r in rows:
        groups.setdefault(r["kind"] if r["source"] == "family" else r["source"], []).append(r)
    groups["all"] = rows
    floor = all("truth_distance" in r for r in rows)  # --oracle: the drawn truth's own distance
    lines = [
        "| group | cases | refused | judged right | recovered (not refused, right, closer than rest) |"
        + (" baseline recovered |" if baseline is not None else "")
        + " joint dist. / rest |"
        + (" drawn truth's dist. |" if floor else "")
        + " GT judged right | s per case |",
        "|---|---|---|---|---|" + ("---|" if baseline is not None else "") + "---|" + ("---|" if floor else "") + "---|---|",
    ]
    for name, rs in groups.items():
        n = len(rs)
        lines.append(
            f"| {name} | {n} | {sum(r.get('refused', False) for r in rs)} | {sum(r['right'] for r in rs) / n:.0%} | "
            f"{sum(r['recovered'] for r in rs)} ({sum(r['recovered'] for r in rs) / n:.0%}) | "
            + (f"{sum(baseline[r['seed']] for r in rs)} ({sum(baseline[r['seed']] for r in rs) / n:.0%}) | " if baseline else "")
            + f"{np.mean([r['joint_distance'] for r in rs]):.3f} / {np.mean([r['rest_distance'] for r in rs]):.3f} | "
            + (f"{np.mean([r['truth_distance'] for r in rs]):.3f} | " if floor else "")
            + f"{sum(r['gt_judged'] == r['label'] for r in rs) / n:.0%} | "
            f"{np.mean([r['seconds'] for r in rs]):.1f} |"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--per-kind", type=int, default=12, help="cases per family kind")
    ap.add_argument("--per-artist", type=int, default=8, help="cases per artist rig")
    ap.add_argument("--artists", default=str(ROOT / "bench_out" / "artists"), help="folder from artist_fixtures.py")
    ap.add_argument(
        "--artist-names",
        default=None,
        help=f"default: {','.join(DEFAULT_ARTISTS)} ({','.join(VALIDATION_ARTISTS)} with --validation)",
    )
    ap.add_argument(
        "--validation",
        action="store_true",
        help="the validation split (other members, seeds and phrasings) to choose settings on",
    )
    ap.add_argument("--judge", default=None, help="motion judge folder (default: the shipped one)")
    ap.add_argument("--phrases", default=None, help="precomputed prompt embeddings (--embed) for a machine without the encoder")
    ap.add_argument("--embed", default=None, help="write the cases' prompt embeddings to this file and stop")
    ap.add_argument("--gt", type=int, default=6, help="ground-truth variations per case for fidelity")
    ap.add_argument("--device", default="auto")
    ap.add_argument("--search-steps", type=int, default=None, help="DDIM steps of the teacher's drawing (default: the config's)")
    ap.add_argument("--model", default="tiny", help='the embedded teacher: "tiny" (image and text, default) or "tiny-text"')
    ap.add_argument("--oracle", action="store_true", help="the teacher draws each case's true motion (the fit's ceiling)")
    ap.add_argument(
        "--route",
        choices=ROUTES,
        default="default",
        help="default: the product's job; library: the library clip of the motion the prompt is read as (no model); "
        "standing: the standing pose",
    )
    ap.add_argument(
        "--search",
        action="append",
        default=[],
        metavar="FIELD=VALUE",
        help="a SearchSettings field to change, as a Python literal (e.g. motion_prior=False); repeatable",
    )
    ap.add_argument(
        "--config",
        action="append",
        default=[],
        metavar="FIELD=VALUE",
        help="a DistillConfig field to change, as a Python literal (e.g. start='pose', sds.t_max=0.5); repeatable",
    )
    ap.add_argument(
        "--bar",
        type=float,
        default=None,
        help="exit 1 when the recovered share is below this (default: the library route's share on the same cases)",
    )
    ap.add_argument(
        "--allow-nearest",
        action="store_true",
        help="go ahead with the nearest motion where the product would refuse the prompt (default: refused, not recovered)",
    )
    ap.add_argument("--shard", default="0/1", help="K/N: run cases K, K+N, K+2N … only")
    ap.add_argument("--merge", nargs="+", help="shard JSON files: judge their saved clips into one table (no distillation)")
    ap.add_argument("--no-judge", action="store_true", help="distil and save the clips only (judge later with --merge)")
    ap.add_argument("--out", default=str(ROOT / "bench_out" / "unseen.json"))
    args = ap.parse_args(argv)
    artists = Path(args.artists)
    if args.merge:
        return rejudge(args, artists)
    names = (
        args.artist_names
        if args.artist_names is not None
        else ",".join(VALIDATION_ARTISTS if args.validation else DEFAULT_ARTISTS)
    )
    cases = make_cases(args.per_kind, args.per_artist, artists, tuple(n for n in names.split(",") if n), args.validation)
    k, n = (int(x) for x in args.shard.split("/"))
    cases = cases[k::n]
    split = "validation" if args.validation else "test"
    print(f"{split} split: {len(cases)} cases, {len({c.prompt for c in cases})} distinct prompts", flush=True)
    if args.embed:
        from akd_blender.core.prompt.sentence_encoder import PhraseTable, TextEncoder

        prompts = sorted({c.prompt for c in cases})
        PhraseTable(prompts, TextEncoder().encode(prompts).numpy()).save(args.embed)
        print(f"{len(prompts)} prompts → {args.embed}")
        return 0
    device, prior = load_reader(args)
    judge = load_judge(args)
    rows, clips = [], {}
    settings = search_fields(args.config)
    if args.oracle:
        settings.setdefault("start", "sample")  # the oracle measures the drawing-then-fit path
    for case in cases:
        if args.route != "default":
            row, clip = baseline_case(case, artists, prior, args.route, args.gt, args.allow_nearest)
        else:
            drawer = oracle_prior(case, artists, prior) if args.oracle else prior
            floor = drawer.clip_of if args.oracle else None
            row, clip = distil_case(
                case,
                artists,
                drawer,
                device,
                args.gt,
                args.search_steps,
                search_fields(args.search),
                floor,
                settings,
                args.allow_nearest,
            )
        clips[case.seed] = clip
        if judge is not None:
            row = judge_case(row, clip, artists, judge)
        rows.append(row)
        print(
            f"{case.seed:3d} {case.source}/{case.kind} {case.label:12s} '{case.prompt}' → {row.get('judged')}, "
            f"dist {row['joint_distance']:.3f} vs rest {row['rest_distance']:.3f}, recovered {row.get('recovered')}, "
            f"start {row['start']}, {row['seconds']:.0f} s" + (", REFUSED" if row.get("refused") else ""),
            flush=True,
        )
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    save_clips(clips, out.with_suffix(".clips.npz"))
    if judge is None:
        out.write_text(json.dumps({"cases": rows}, indent=1))
        print(f"{len(rows)} distilled cases (not judged) → {out}")
        return 0
    baseline = rows if args.route == "library" else baseline_rows(cases, artists, prior, judge, args)
    return report(rows, args.bar, Path(args.out), baseline)


def load_reader(args) -> tuple[str, object]:
    """(device, the embedded teacher of ``--model``) reading the cases' prompts as new wordings, with
    ``--phrases``' embeddings added."""
    from akd_blender.core.video_models import load_prior

    device = ("cuda" if torch.cuda.is_available() else "cpu") if args.device == "auto" else args.device
    prior = load_prior(args.model, device=device, dtype=torch.float32)
    prior.heldout_wordings = False  # the cases prompt with held-out phrasings: read them as new wordings
    if args.phrases:
        extend_phrases(prior, Path(args.phrases))
    return device, prior


def baseline_rows(cases: list[Case], artists: Path, prior, judge, args) -> list[dict] | None:
    """The retrieval baseline's judged rows (route "library") on ``cases``, for the default ``--bar``;
    None when ``--bar`` is given."""
    if args.bar is not None:
        return None
    t0 = time.time()
    rows = []
    for case in cases:
        row, clip = baseline_case(case, artists, prior, "library", args.gt, args.allow_nearest)
        rows.append(judge_case(row, clip, artists, judge))
    print(f"retrieval baseline (library route) on the same {len(rows)} cases: {time.time() - t0:.0f} s", flush=True)
    return rows


def search_fields(pairs: list[str]) -> dict:
    """``FIELD=VALUE`` pairs (``--search``, ``--config``) → dataclass fields (values read as Python literals)."""
    import ast

    out = {}
    for pair in pairs:
        key, _, value = pair.partition("=")
        out[key.strip()] = ast.literal_eval(value.strip())
    return out


def load_judge(args):
    """The motion judge of ``--judge`` (default: the shipped one), or None with ``--no-judge``."""
    from akd_blender.core.motion.judge import load_motion_judge

    return None if args.no_judge else load_motion_judge(args.judge)


def rejudge(args, artists: Path) -> int:
    """Judge the saved clips of shard files (``--merge``) and write one table."""
    judge = load_judge(args)
    rows = []
    for f in args.merge:
        shard = json.loads(Path(f).read_text())["cases"]
        clips = load_clips(Path(f).with_suffix(".clips.npz"), shard, artists)
        rows += [judge_case(r, clips[r["seed"]], artists, judge) for r in shard]
    rows = sorted(rows, key=lambda r: r["seed"])
    baseline = None
    if args.bar is None:
        cases = [Case(**{k: r[k] for k in Case.__dataclass_fields__}) for r in rows]
        baseline = baseline_rows(cases, artists, load_reader(args)[1], judge, args)
    return report(rows, args.bar, Path(args.out), baseline)


def report(rows: list[dict], bar: float | None, out: Path, baseline: list[dict] | None = None) -> int:
    """Print the table, write the JSON; 1 when the recovered share is below ``bar`` (None: the share
    ``baseline``, the retrieval baseline's judged rows on the same cases, recovers)."""
    by_seed = {r["seed"]: bool(r["recovered"]) for r in baseline} if baseline is not None else None
    summary = table(rows, by_seed)
    print(summary)
    recovered = sum(r["recovered"] for r in rows) / len(rows)
    refused = sum(r.get("refused", False) for r in rows)
    if bar is None:
        assert by_seed is not None and set(by_seed) == {r["seed"] for r in rows}, "the baseline must cover the same cases"
        bar = sum(by_seed.values()) / len(by_seed)
        print(f"bar: the retrieval baseline (library route) recovers {sum(by_seed.values())} of {len(by_seed)} ({bar:.1%})")
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(
        json.dumps(
            {"recovered": recovered, "refused": refused, "bar": bar, "baseline": by_seed, "cases": rows, "table": summary},
            indent=1,
        )
    )
    print(
        f"recovered {sum(r['recovered'] for r in rows)} of {len(rows)} cases ({recovered:.1%}), {refused} refused "
        f"(bar {bar:.1%}) → {out}"
    )
    if recovered < bar:
        print(f"below the bar {bar:.1%}", file=sys.stderr)
    return 0 if recovered >= bar else 1


if __name__ == "__main__":
    raise SystemExit(main())
