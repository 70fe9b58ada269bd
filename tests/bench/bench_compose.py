"""Composed prompts on several rigs, each checked on the motion itself (no judge).

Every case is a prompt written for this table (none is a test's or a library phrasing), read with
:func:`akd_blender.core.prompt.compose.plan_prompt` and played with
:func:`akd_blender.core.prompt.compose.clip.compose_clip` at 24 fps on one rig: the procedural biped and
quadruped, held-out family members (bird, hexapod, biped, quadruped) and, when their fixtures are
there (``tests/bench/artist_fixtures.py``), the Fox and CesiumMan glTF rigs with their found roles.
Checks (:mod:`akd_blender.core.prompt.compose.checks`): the parts read (labels in order), travel of a part
(root, > 0.25 body heights) and staying put (< 0.08 h), the hips coming down, airborne spells, turn
angle's sign (> 60°), which hand rose, the length in seconds, speed ratio and height against a second
prompt on the same rig, the way the body travelled (ahead, to its left, backwards), a refused part
named, and the feet: the composed clip's mean foot skate (:func:`~akd_blender.core.motion.metrics.motion_metrics`)
at most the largest of its parts' own (each part played alone at its variation) + 0.05 h/s.

    python tests/bench/bench_compose.py [--bar 0.9] [--artists bench_out/artists] [--only biped] [--job]
                                        [--baseline single|standing]

``--job`` runs every prompt (and every comparison prompt) through the product's job instead,
:func:`akd_blender.core.distillation.sds_loop.distill` with ``DistillConfig(device="cpu")`` (the embedded teacher
reads the prompt; a composed prompt is played from :func:`~akd_blender.core.prompt.reading.composed_plan`'s
plan), and checks the job's clip: the parts are the job's reading (its ``motion`` fact, arrows between
parts), a part's frames are the direct plan's (:func:`plan_prompt`) at the clip's rate when that plan has
the job's parts and length (else the per-part checks fail), a refusal is the job's
:class:`~akd_blender.core.prompt.understanding.PromptNotUnderstood`, and the feet are compared with the direct
parts' own skate.

``--baseline`` plays two baselines that use no composition instead, through the same checks:
``single`` reads the whole prompt as one library motion of the rig's kind (the product's reading
without its composition layer; a prompt below the understanding threshold is refused) and plays that
motion's library clip at its default variation for 2 seconds; ``standing`` holds the rig's rest pose
for 2 seconds.

Prints one row per prompt (checks passed ✓ or not ✗) and the totals; exits 1 when the share of checks
passed is below ``--bar``.
"""

from __future__ import annotations

import argparse
import sys
import time
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np
import torch

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from akd_blender.core.character.kinematics import Skeleton  # noqa: E402
from akd_blender.core.character.procedural import biped, quadruped  # noqa: E402
from akd_blender.core.character.rig import load_rig  # noqa: E402
from akd_blender.core.character.roles import find_roles  # noqa: E402
from akd_blender.core.errors import InputError  # noqa: E402
from akd_blender.core.motion.clip import MotionClip  # noqa: E402
from akd_blender.core.motion.metrics import main_root, motion_metrics  # noqa: E402
from akd_blender.core.prompt.compose import PartNotUnderstood, plan_prompt  # noqa: E402
from akd_blender.core.prompt.compose.checks import motion_facts, raised_hand  # noqa: E402
from akd_blender.core.prompt.compose.clip import compose_clip, piece_frames, schedule  # noqa: E402
from tools.family import make_member  # noqa: E402
from tools.family.truth import truth_roles  # noqa: E402

FPS = 24.0


@dataclass(frozen=True)
class Case:
    """A prompt on a rig and what its motion must show (keys: see :func:`run_case`)."""

    rig: str
    prompt: str
    expect: dict = field(default_factory=dict)


CASES: tuple[Case, ...] = (
    # procedural biped
    Case(
        "biped",
        "The woman strides ahead and then settles down to sit on the ground",
        {"labels": ["walk", "sit"], "travel": 0, "stays": 1, "hips_down": 1},
    ),
    Case("biped", "he leaps up three times in a row", {"labels": ["jump"], "spells": 3}),
    Case("biped", "jogs at a leisurely pace", {"labels": ["run"], "slower_than": "jogs at full speed"}),
    Case("biped", "spins around to the right", {"labels": ["turn"], "turn": "right"}),
    Case("biped", "waves at us with her left hand, then bows", {"labels": ["wave", "bow"], "hand": "left"}),
    Case("biped", "strolls for five seconds", {"labels": ["walk"], "seconds": 5.0, "travel": 0}),
    Case("biped", "a tiny jump, followed by a huge leap", {"labels": ["jump", "jump"], "higher_part": 1}),
    Case("biped", "walks backwards for three seconds", {"labels": ["walk"], "seconds": 3.0, "way": "back"}),
    # procedural quadruped
    Case(
        "quadruped",
        "the dog trots forward, then lies down",
        {"labels": ["run", "lie_down"], "travel": 0, "stays": 1, "hips_down": 1},
    ),
    Case("quadruped", "the cat pounces two times", {"labels": ["jump"], "spells": 2}),
    Case("quadruped", "the horse ambles along slowly", {"labels": ["walk"], "slower_than": "the horse ambles along quickly"}),
    Case("quadruped", "the wolf turns towards the right", {"labels": ["turn"], "turn": "right"}),
    Case("quadruped", "the puppy wags its tail for four seconds", {"labels": ["wag_tail"], "seconds": 4.0}),
    Case("quadruped", "the pony rears up after walking a few steps", {"labels": ["walk", "rear_up"], "travel": 0}),
    # family bird
    Case("bird", "the sparrow hops along, then pecks at the dirt", {"labels": ["hop", "peck"], "travel": 0, "stays": 1}),
    Case("bird", "the crow walks hurriedly", {"labels": ["walk"], "faster_than": "the crow walks lazily"}),
    Case("bird", "the duck turns to its left, and then flaps its wings", {"labels": ["turn", "flap_wings"], "turn": "left"}),
    Case("bird", "a little jump", {"labels": ["jump"], "lower_than": "an enormous jump"}),
    Case(
        "bird",
        "the chicken walks for three seconds, then sits down",
        {"labels": ["walk", "sit"], "seconds": None, "travel": 0, "hips_down": 1},
    ),
    Case("bird", "the pigeon jumps twice", {"labels": ["jump"], "spells": 2}),
    # family hexapod
    Case(
        "hexapod",
        "the ant scuttles forward, after that it turns right",
        {"labels": ["run", "turn"], "travel": 0, "turn": "right"},
    ),
    Case("hexapod", "the spider jumps three times", {"labels": ["jump"], "spells": 3}),
    Case("hexapod", "the beetle walks briskly", {"labels": ["walk"], "faster_than": "the beetle walks sluggishly"}),
    Case("hexapod", "the insect lifts its front legs after a short walk", {"labels": ["walk", "raise_front_legs"], "travel": 0}),
    Case("hexapod", "the bug walks to the left", {"labels": ["walk"], "way": "left"}),
    Case("hexapod", "the mantis crawls on, then juggles pebbles", {"refused": "juggles pebbles"}),
    # family biped
    Case(
        "biped_member",
        "the robot marches on, then crouches down low",
        {"labels": ["walk", "crouch"], "travel": 0, "hips_down": 1},
    ),
    Case(
        "biped_member",
        "waves with the right hand and then turns around to the left",
        {"labels": ["wave", "turn"], "hand": "right", "turn": "left"},
    ),
    Case("biped_member", "jumps really high", {"labels": ["jump"], "higher_than": "jumps"}),
    Case("biped_member", "walks to the right for four seconds", {"labels": ["walk"], "seconds": 4.0, "way": "right"}),
    Case("biped_member", "kicks with the left leg, then punches", {"labels": ["kick", "punch"]}),
    # family quadruped
    Case(
        "quadruped_member", "the goat gallops, then sits", {"labels": ["gallop", "sit"], "travel": 0, "stays": 1, "hips_down": 1}
    ),
    Case("quadruped_member", "the deer leaps over and over", {"labels": ["jump"], "spells": 3}),
    Case("quadruped_member", "the lamb lowers its head briefly, then walks", {"labels": ["head_down", "walk"], "travel": 1}),
    Case("quadruped_member", "turns counterclockwise quickly", {"labels": ["turn"], "turn": "left"}),
    # artist rigs (when their fixtures are there)
    Case(
        "CesiumMan", "walks forward and then waves with the left hand", {"labels": ["walk", "wave"], "travel": 0, "hand": "left"}
    ),
    Case("CesiumMan", "jumps two times", {"labels": ["jump"], "spells": 2}),
    Case("Fox", "the fox trots ahead, then sits", {"labels": ["run", "sit"], "travel": 0, "hips_down": 1}),
    Case("Fox", "the fox turns to its right", {"labels": ["turn"], "turn": "right"}),
)


def load_rigs(artists: Path) -> dict:
    """rig name → (rig, roles): procedural, held-out family members (drawn roles) and artist rigs
    (found roles) whose fixtures exist."""
    rigs = {}
    for name, make in (("biped", biped), ("quadruped", quadruped)):
        rig = make()
        rigs[name] = (rig, find_roles(rig))
    for name, kind, seed in (
        ("bird", "bird", 10601),
        ("hexapod", "hexapod", 10602),
        ("biped_member", "biped", 10603),
        ("quadruped_member", "quadruped", 10604),
    ):
        member = make_member(kind, seed)
        rigs[name] = (member.rig, truth_roles(member))
    for name in ("CesiumMan", "Fox"):
        path = artists / f"{name}.npz"
        if path.is_file():
            rig = load_rig(str(path))
            rigs[name] = (rig, find_roles(rig))
    return rigs


def _slice(clip: MotionClip, a: int, b: int) -> MotionClip:
    return MotionClip(clip.bone_names, clip.fps, 1, clip.rotations[a:b], clip.locations[a:b])


def _spans(plan, fps: float = FPS) -> list[tuple[int, int]]:
    pieces = schedule(plan)
    ends = np.cumsum(piece_frames(pieces, fps))
    spans: dict[int, list[int]] = {}
    for piece, a, b in zip(pieces, np.concatenate([[0], ends[:-1]]), ends):
        spans.setdefault(piece.part, [int(a), int(b)])[1] = int(b)
    return [tuple(spans[k]) for k in range(len(plan.parts))]


def _play(rig, roles, prompt: str):
    plan = plan_prompt(prompt, roles.kind)
    return plan, compose_clip(rig, roles, plan, FPS)


class JobPlayer:
    """Prompts through the product's job (:func:`~akd_blender.core.distillation.sds_loop.distill`, ``DistillConfig(device="cpu")``,
    the embedded teacher loaded once): ``play(rig, roles, prompt)`` → (the job's understood-as line,
    its parts' labels, the clip). Raises what the job raises (a refusal: PromptNotUnderstood)."""

    def __init__(self) -> None:
        from akd_blender.core.video_models import load_prior

        self.prior = load_prior("tiny", device="cpu", dtype=torch.float32)

    def play(self, rig, roles, prompt: str) -> tuple[str, list[str], MotionClip]:
        from akd_blender.core.distillation.sds_loop import DistillConfig, distill

        result = distill(rig, prompt, DistillConfig(device="cpu"), prior=self.prior)
        facts = result.extra
        labels = [m.rsplit("/", 1)[-1] for m in str(facts.get("motion", "")).split(" → ") if m]
        return str(facts.get("understood_as", "")), labels, result.clip


class BaselinePlayer:
    """A baseline without composition (``--baseline``): ``play(rig, roles, prompt)`` → (line, labels,
    clip) like :class:`JobPlayer`. ``"single"``: the whole prompt read as one library motion of the
    rig's kind (:func:`~akd_blender.core.prompt.reading.library_understanding`, refused
    below the threshold), its library clip at the default variation; ``"standing"``: the rest pose.
    Both 2 seconds at :data:`FPS`."""

    def __init__(self, mode: str) -> None:
        self.mode = mode

    def play(self, rig, roles, prompt: str) -> tuple[str, list[str], MotionClip]:
        from akd_blender.core.motion.library import make_role_clip
        from akd_blender.core.prompt.reading import library_understanding
        from akd_blender.core.prompt.understanding import require_understood

        frames = int(2 * FPS)
        if self.mode == "standing":
            return "standing pose", [], MotionClip.rest(rig, frames, FPS)
        reading = library_understanding(prompt, roles.kind)
        require_understood(reading)
        label = reading.motion.rsplit("/", 1)[-1]
        return reading.motion, [label], make_role_clip(rig, roles, label, None, frames, FPS)


def _job_plan(roles, prompt: str, labels: list[str], clip: MotionClip) -> tuple[object, list[tuple[int, int]]]:
    """(the direct plan of ``prompt`` when it has the job's parts ``labels``, else None; each part's
    frames [start, end) in ``clip``: the whole clip for one part, the plan's schedule at the clip's rate
    when the plan has the clip's length, else none)."""
    from akd_blender.core.prompt.reading import plan_frames

    try:
        plan = plan_prompt(prompt, roles.kind)
    except InputError:  # the direct reading fails where the job's did not
        return None, []
    if [p.label for p in plan.parts] != labels:
        return None, []
    if len(plan.parts) == 1:
        return plan, [(0, clip.num_frames)]
    return plan, (_spans(plan, clip.fps) if plan_frames(plan, clip.fps) == clip.num_frames else [])


def _way(rig, roles, clip: MotionClip) -> str:
    """Which way the root travelled relative to the rest facing: "ahead", "left", "right" or "back"."""
    j = Skeleton(rig).joint_positions(*clip.pose_channels(torch.float64)).numpy()[:, main_root(rig), :2]
    move = j[-1] - j[0]
    world = rig.armature_world[:3, :3]
    forward = (world @ np.asarray(roles.frame.forward))[:2]
    left = (world @ np.asarray(roles.frame.left))[:2]
    along, side = move @ forward, move @ left
    if abs(along) >= abs(side):
        return "ahead" if along > 0 else "back"
    return "left" if side > 0 else "right"


def run_case(case: Case, rig, roles, job: JobPlayer | BaselinePlayer | None = None) -> tuple[str, dict[str, bool], float]:
    """(understood-as line, check name → passed, seconds taken); ``job``: play the prompts through the
    product's job instead of the composition layer."""
    from akd_blender.core.prompt.understanding import PromptNotUnderstood

    start = time.perf_counter()
    e, checks = case.expect, {}
    if "refused" in e:
        try:
            if job is not None:
                job.play(rig, roles, case.prompt)
            else:
                plan_prompt(case.prompt, roles.kind)
            checks["refused"] = False
            return "(not refused)", checks, time.perf_counter() - start
        except PromptNotUnderstood as exc:
            part = getattr(exc, "part", None)
            checks["refused"] = isinstance(exc, PartNotUnderstood) and e["refused"] in str(exc) and part == e["refused"]
            return f"refused: {part or exc}", checks, time.perf_counter() - start

    def play(prompt: str) -> MotionClip:
        return job.play(rig, roles, prompt)[2] if job is not None else _play(rig, roles, prompt)[1]

    if job is not None:
        try:
            line, labels, clip = job.play(rig, roles, case.prompt)
        except PromptNotUnderstood as exc:  # the job refuses a prompt it should play: every check fails
            checks["parts"] = False
            return f"refused: {exc.understanding.prompt}", checks, time.perf_counter() - start
        plan, spans = _job_plan(roles, case.prompt, labels, clip)
    else:
        plan, clip = _play(rig, roles, case.prompt)
        line, labels, spans = plan.describe(), [p.label for p in plan.parts], _spans(plan)
    checks["parts"] = labels == e["labels"]
    facts = motion_facts(rig, clip, roles)
    spans = spans if checks["parts"] else []
    part_facts = [motion_facts(rig, _slice(clip, a, b), roles) for a, b in spans]
    if "travel" in e:
        checks["travel"] = bool(part_facts) and part_facts[e["travel"]].travel > 0.25
    if "stays" in e:
        checks["stays"] = bool(part_facts) and part_facts[e["stays"]].travel < 0.08
    if "hips_down" in e:
        f = part_facts[e["hips_down"]] if part_facts else None
        checks["hips down"] = f is not None and f.root_height[-1] < f.root_height[0] - 0.03
    if "spells" in e:
        checks["airborne"] = len(facts.airborne) == e["spells"]
    if "turn" in e:
        sign = 1 if e["turn"] == "left" else -1
        checks["turn"] = sign * facts.turn_degrees > 60
    if "hand" in e:
        checks["hand"] = raised_hand(facts) == e["hand"]
    if e.get("seconds"):
        checks["length"] = abs(facts.seconds - e["seconds"]) <= 1 / clip.fps
    for key, name, better in (
        ("slower_than", "speed ratio", lambda a, b: a.travel_per_second < 0.85 * b.travel_per_second),
        ("faster_than", "speed ratio", lambda a, b: a.travel_per_second > b.travel_per_second / 0.85),
        ("lower_than", "height", lambda a, b: a.peak < b.peak),
        ("higher_than", "height", lambda a, b: a.peak > b.peak),
    ):
        if key in e:
            try:
                checks[name] = better(facts, motion_facts(rig, play(e[key]), roles))
            except PromptNotUnderstood:  # the job refuses the comparison prompt
                checks[name] = False
    if "higher_part" in e:
        k = e["higher_part"]
        checks["height"] = bool(part_facts) and part_facts[k].peak > part_facts[1 - k].peak
    if "way" in e:
        checks["way"] = _way(rig, roles, clip) == e["way"]
    if plan is None:  # the job's parts are not the direct reading's: no parts to compare the feet with
        checks["feet"] = False
    else:
        own = max(motion_metrics(rig, compose_clip(rig, roles, replace(plan, parts=(p,)), FPS))["foot_skate"] for p in plan.parts)
        checks["feet"] = motion_metrics(rig, clip)["foot_skate"] <= own + 0.05
    return line, checks, time.perf_counter() - start


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--bar", type=float, help="least share of checks passed (exit 1 below; default 0.9, a baseline 0)")
    ap.add_argument("--artists", default=str(ROOT / "bench_out" / "artists"), help="folder of artist_fixtures.py's .npz files")
    ap.add_argument("--only", help="only the cases of this rig")
    ap.add_argument("--job", action="store_true", help="play each prompt through the product's job (distill) instead")
    ap.add_argument("--baseline", choices=("single", "standing"), help="play a baseline without composition instead")
    args = ap.parse_args(argv)
    job = JobPlayer() if args.job else BaselinePlayer(args.baseline) if args.baseline else None
    bar = args.bar if args.bar is not None else (0.0 if args.baseline else 0.9)
    torch.set_num_threads(max(1, torch.get_num_threads()))
    rigs = load_rigs(Path(args.artists))
    cases = [c for c in CASES if c.rig in rigs and (args.only is None or c.rig == args.only)]
    print(
        f"{'through the job: ' if args.job else f'baseline {args.baseline}: ' if args.baseline else ''}{len(cases)} prompts on {len({c.rig for c in cases})} rigs ({', '.join(dict.fromkeys(c.rig for c in cases))}), {FPS:g} fps\n"
    )
    print("| rig | prompt | understood as | checks | s |")
    print("|---|---|---|---|---|")
    passed = total = whole = 0
    for case in cases:
        rig, roles = rigs[case.rig]
        line, checks, seconds = run_case(case, rig, roles, job)
        marks = ", ".join(f"{name} {'✓' if ok else '✗'}" for name, ok in checks.items())
        print(f"| {case.rig} | {case.prompt} | {line} | {marks} | {seconds:.1f} |", flush=True)
        passed += sum(checks.values())
        total += len(checks)
        whole += all(checks.values())
    share = passed / max(total, 1)
    print(f"\nchecks passed: {passed} of {total} ({100 * share:.1f} %); prompts with every check passed: {whole} of {len(cases)}")
    if share < bar:
        print(f"below the bar {bar:.2f}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
