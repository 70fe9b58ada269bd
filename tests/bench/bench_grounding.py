"""What an animator gets on the artist rigs with the default path: floating, penetration, root slide,
keys, key-reduction error and time per rig × prompt, read from the product's own report (``run_akd.py --report``),
and the motion judge's verdict on the action each job wrote (``--out``; this checkout's judge for every ``--root``).

Each case is one ``run_akd.py`` process (the embedded teacher, start "auto" = draw then pose search,
every other setting at its default), run one after the other. Cases: Fox, CesiumMan and RiggedFigure
from ``$AKD_SHARED/assets`` (loaded with Blender's glTF importer, as the tests load them) × a walk, a
wave or sit, and a jump.

    python tests/bench/bench_grounding.py --out bench_out/grounding_after.json [--root DIR] [--frames N]
    python tests/bench/bench_grounding.py --table bench_out/grounding_before.json bench_out/grounding_after.json
    python tests/bench/bench_grounding.py --silences 3   # first progress message and longest silence, case 3

``--root`` runs another checkout's ``run_akd.py`` (e.g. the code before a change) with the same cases.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CASES = (
    ("Fox", ("a fox walks forward", "a fox sits down", "a fox jumps in the air")),
    ("CesiumMan", ("a man walks forward", "a man waves his hand", "a man jumps in the air")),
    ("RiggedFigure", ("a person walks forward", "a person waves", "a person jumps in the air")),
)
FIELDS = ("floating_fraction", "penetration_max", "root_travel_max", "start_gap")


def judged(blend: Path, action: str) -> tuple[str, float]:
    """The motion judge's verdict (this checkout's judge, whatever code wrote ``blend``): (label, p)."""
    cmd = [sys.executable, "-m", "akd_blender.blender.cli.judge", "--input", str(blend), "--action", action, "--json"]
    done = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"judging {action} in {blend}: exit {done.returncode}\n{done.stderr[-2000:]}")
    verdict = json.loads(done.stdout.strip().splitlines()[-1])
    return verdict["label"], float(verdict["probability"])


def run_case(root: Path, asset: Path, prompt: str, frames: int | None) -> dict:
    """One default job through ``root/run_akd.py`` → the figures of its report, and the motion judge's
    verdict on the action it wrote."""
    with tempfile.TemporaryDirectory() as tmp:
        report_path, blend = Path(tmp) / "report.json", Path(tmp) / "out.blend"
        cmd = [sys.executable, str(root / "run_akd.py"), "--input", str(asset), "--prompt", prompt]
        cmd += ["--report", str(report_path), "--out", str(blend), "--quiet", "--device", "cpu"]
        if frames:
            cmd += ["--frames", str(frames)]
        done = subprocess.run(cmd, cwd=root, capture_output=True, text=True)
        if done.returncode != 0:
            raise RuntimeError(f"{asset.stem} '{prompt}': exit {done.returncode}\n{done.stderr[-2000:]}")
        report = json.loads(report_path.read_text())
        label, probability = judged(blend, report["action_names"][0])
    metrics = report["motion_metrics"]
    return {
        "rig": asset.stem,
        "prompt": prompt,
        "motion": report["distill"].get("motion"),
        "frames": report["frames"],
        **{k: metrics[k] for k in FIELDS},
        "keys_per_channel": report["keys"]["keys_per_channel"],
        "key_error_deg": report["keys"]["rotation_error_deg"],
        "key_error_h": report["keys"]["location_error"],
        "judged": label,
        "judged_p": probability,
        "seconds": report["seconds"],
        "warnings": report["warnings"],
    }


def silences(asset: Path, prompt: str) -> dict:
    """One default job run in this process as the CLI runs it (needs the ``bpy`` module): seconds from
    the job's start to its first progress message, the longest time between two messages (and the
    phase it ended in), and the messages per phase."""
    import time

    sys.path.insert(0, str(ROOT))
    from akd_blender.blender.character.extract import rig_from_armature
    from akd_blender.blender.character.io import find_armature, load_scene
    from akd_blender.blender.character.pose_channels import current_pose
    from akd_blender.core.job import worker as wk
    from akd_blender.core.job.request import JobRequest
    from akd_blender.core.settings import DistillConfig

    load_scene(str(asset))
    arm = find_armature(None)
    request = JobRequest(rig_from_armature(arm), prompt, DistillConfig(device="cpu"), init_pose=current_pose(arm))
    stamps: list[tuple[float, str]] = []
    t0 = time.perf_counter()
    final = wk.run_job(request, lambda m: stamps.append((time.perf_counter() - t0, getattr(m, "phase", type(m).__name__))))
    times = [0.0] + [t for t, _ in stamps]
    gaps = [(b - a, stamps[i][1]) for i, (a, b) in enumerate(zip(times, times[1:]))]
    longest = max(gaps)
    counts: dict[str, int] = {}
    for _, phase in stamps:
        counts[phase] = counts.get(phase, 0) + 1
    return {
        "rig": asset.stem,
        "prompt": prompt,
        "done": isinstance(final, wk.Done),
        "seconds": times[-1],
        "first_progress_s": stamps[0][0],
        "longest_silence_s": longest[0],
        "longest_silence_before": longest[1],
        "messages": counts,
    }


def table(before: list[dict], after: list[dict]) -> str:
    """A markdown table: one row per case, before → after for each figure."""
    head = (
        "| rig | prompt (understood as) | floating fraction | max penetration (h) | root slide max (h) | start gap (h) "
        "| keys / channel | max key error (°, h) | judged as | seconds |"
    )
    lines = [head, "|---" * 10 + "|"]
    old = {(r["rig"], r["prompt"]): r for r in before}

    def pair(b: dict, r: dict, key: str, fmt: str) -> str:
        return f"{format(b[key], fmt)} → {format(r[key], fmt)}" if key in b else format(r[key], fmt)

    def cell(row: dict, fmt) -> str:
        return fmt(row) if "judged" in row else "–"

    def both(b: dict, r: dict, fmt) -> str:
        return f"{cell(b, fmt)} → {cell(r, fmt)}" if b else cell(r, fmt)

    def key_error(row: dict) -> str:
        return f"{row['key_error_deg']:.2f}°, {row['key_error_h']:.4f}"

    def verdict(row: dict) -> str:
        return f"{row['judged']} {row['judged_p']:.2f}"

    for r in after:
        b = old.get((r["rig"], r["prompt"]), {})
        cells = [
            r["rig"],
            f"{r['prompt']} ({r['motion']})",
            pair(b, r, "floating_fraction", ".2f"),
            pair(b, r, "penetration_max", ".3f"),
            pair(b, r, "root_travel_max", ".2f"),
            pair(b, r, "start_gap", ".3f"),
            pair(b, r, "keys_per_channel", ".1f"),
            both(b, r, key_error),
            both(b, r, verdict),
            pair(b, r, "seconds", ".0f"),
        ]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--root", default=str(ROOT), help="the checkout whose run_akd.py runs the cases")
    ap.add_argument("--assets", default=os.path.join(os.environ.get("AKD_SHARED", str(ROOT.parent / "shared")), "assets"))
    ap.add_argument("--out", default="bench_out/grounding.json")
    ap.add_argument("--frames", type=int, default=None, help="clip length (default: the job's own)")
    ap.add_argument("--rigs", nargs="*", default=None, help="only these rigs")
    ap.add_argument("--case", type=int, action="append", help="only case N (0-based over rigs × prompts; repeatable)")
    ap.add_argument("--table", nargs=2, metavar=("BEFORE", "AFTER"), help="print the before/after table and stop")
    ap.add_argument("--silences", type=int, metavar="N", help="time case N's progress messages in this process and stop")
    args = ap.parse_args(argv)
    if args.silences is not None:
        rig, prompt = [(r, p) for r, prompts in CASES for p in prompts][args.silences]
        print(json.dumps(silences(Path(args.assets) / rig / f"{rig}.gltf", prompt)))
        return 0
    if args.table:
        before, after = (json.loads(Path(p).read_text())["cases"] for p in args.table)
        print(table(before, after))
        return 0
    out = Path(args.out)
    rows = json.loads(out.read_text())["cases"] if out.exists() else []  # cases run before are kept
    cases = [(rig, prompt) for rig, prompts in CASES for prompt in prompts]
    for index, (rig, prompt) in enumerate(cases):
        if (args.rigs and rig not in args.rigs) or (args.case and index not in args.case):
            continue
        row = run_case(Path(args.root), Path(args.assets) / rig / f"{rig}.gltf", prompt, args.frames)
        rows = [r for r in rows if (r["rig"], r["prompt"]) != (rig, prompt)] + [row]
        rows.sort(key=lambda r: cases.index((r["rig"], r["prompt"])))
        print(json.dumps(row), flush=True)
        out.parent.mkdir(parents=True, exist_ok=True)
        machine = {"cpu": platform.processor() or platform.machine(), "cores": os.cpu_count()}
        out.write_text(json.dumps({"machine": machine, "root": str(args.root), "cases": rows}, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
