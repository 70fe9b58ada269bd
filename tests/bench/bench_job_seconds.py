"""Seconds of one default job as a user runs it: the whole ``run_akd.py`` process (Blender's start to
the report), on an artist rig, repeated; exits 1 when the median is above ``--bar`` seconds.

Default: CesiumMan (``$AKD_SHARED/assets``), "bends forward in a deep bow", the job's own length (2 s
at 24 fps), three runs, bar 15 s. Prints each run's wall seconds and the report's ``seconds`` and
``timings`` (the job's own part), then the median.

    python tests/bench/bench_job_seconds.py [--input FILE] [--prompt TEXT] [--runs 3] [--bar 15]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
ASSET = Path(os.environ.get("AKD_SHARED", ROOT.parent / "shared")) / "assets" / "CesiumMan" / "CesiumMan.gltf"


def one_run(input_file: Path, prompt: str, folder: Path) -> tuple[float, dict]:
    """Wall seconds of one whole CLI process and its report."""
    report = folder / "report.json"
    start = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "run_akd.py", "--input", str(input_file), "--prompt", prompt, "--out", str(folder / "out.blend")]
        + ["--report", str(report), "--quiet"],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    wall = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"run_akd.py exited {done.returncode}: {done.stderr.strip().splitlines()[-1:]}")
    return wall, json.loads(report.read_text())


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--input", default=str(ASSET))
    ap.add_argument("--prompt", default="bends forward in a deep bow")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--bar", type=float, default=15.0, help="exit 1 when the median wall seconds are above this")
    args = ap.parse_args(argv)
    walls = []
    with tempfile.TemporaryDirectory() as tmp:
        for k in range(args.runs):
            wall, report = one_run(Path(args.input), args.prompt, Path(tmp))
            walls.append(wall)
            timings = {name: round(float(v), 2) for name, v in report["timings"].items()}
            print(
                f"run {k + 1}: {wall:.1f} s wall; job {report['seconds']:.1f} s; {report['frames']} frames at {report['fps']:g} fps; {timings}"
            )
    median = statistics.median(walls)
    print(f"median {median:.1f} s wall over {len(walls)} runs (bar {args.bar:g} s); load average {os.getloadavg()[0]:.1f}")
    return 0 if median <= args.bar else 1


if __name__ == "__main__":
    sys.exit(main())
