"""Black-box: ``python run_akd.py --jobs FILE --ray`` (a local Ray) gives the serial run's reports,
summary and exit code; ``torchrun --nproc-per-node 2 run_akd.py -- …`` (gloo on the CPU) takes the
steps of one process with two draws per step; a missing Ray is one line. Embedded teacher from the
pose, 2 steps, 4 frames at 16×16, one torch thread per process (CPU results depend on the count)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import pytest

from akd_blender.blender.cli import distill
from tests.conftest import ASSET_FILES
from tests.e2e.akd_cli import ROOT, env, run_cli

FAST = ("--start", "pose", "--redraw", "none", "--steps", 2, "--frames", 4, "--height", 16, "--width", 16, "--device", "cpu")
VARIES = ("seconds", "timings", "outputs")  # wall times and the run's own output paths


def _jobs(folder) -> list[dict]:
    folder.mkdir()
    return [
        {"input": str(ASSET_FILES["Fox"]), "prompt": "a fox trots forward", "draws": 2, "report": str(folder / "fox.json")},
        {"input": str(folder.parent / "missing.glb"), "prompt": "a fox jumps", "report": str(folder / "never.json")},
        {"input": str(ASSET_FILES["CesiumMan"]), "prompt": "a person waves", "seed": 4, "report": str(folder / "man.json")},
    ]


def _run(tmp, name: str, *extra) -> tuple[subprocess.CompletedProcess, list[dict]]:
    jobs = _jobs(tmp / name)
    (tmp / name / "jobs.json").write_text(json.dumps(jobs))
    result = run_cli("--jobs", tmp / name / "jobs.json", *FAST, *extra, timeout=600)
    return result, jobs


@pytest.fixture(scope="module")
def runs(tmp_path_factory, monkeypatch_module):
    pytest.importorskip("ray")
    monkeypatch_module.setenv("OMP_NUM_THREADS", "1")
    tmp = tmp_path_factory.mktemp("ray")
    return {"serial": _run(tmp, "serial", "--quiet"), "ray": _run(tmp, "ray", "--ray", "--ray-cpus", 1), "tmp": tmp}


@pytest.fixture(scope="module")
def monkeypatch_module():
    with pytest.MonkeyPatch.context() as mp:
        yield mp


def _summary(stdout: str) -> list[str]:
    return [line for line in stdout.splitlines() if line.startswith(("akd: summary", "akd:   job"))]


def test_ray_run_gives_the_serial_reports_summary_and_exit_code(runs):
    (serial, jobs), (spread, ray_jobs) = runs["serial"], runs["ray"]
    assert serial.returncode == spread.returncode == 2, spread.stderr[-3000:]  # the missing input's exit code
    assert _summary(spread.stdout) == _summary(serial.stdout) and "2 of 3 jobs done, 1 failed" in spread.stdout
    assert "akd: job 2/3: error: " in spread.stderr and "missing.glb" in spread.stderr
    assert "akd jobs" in spread.stderr  # the progress bar over the jobs
    for job, ray_job in zip(jobs, ray_jobs):
        if "missing" in job["input"]:
            assert not os.path.exists(job["report"]) and not os.path.exists(ray_job["report"])
            continue
        a, b = (json.loads(open(j["report"]).read()) for j in (job, ray_job))
        assert {k: v for k, v in a.items() if k not in VARIES} == {k: v for k, v in b.items() if k not in VARIES}
        assert a["loss_history"] and a["config"]["draws"] == (2 if "Fox" in job["input"] else 1)


def test_torchrun_two_processes_take_the_steps_of_one_with_two_draws(runs):
    (serial, jobs) = runs["serial"]
    fox = jobs[0]
    report = runs["tmp"] / "ddp.json"
    args = ["--input", fox["input"], "--prompt", fox["prompt"], *map(str, FAST), "--report", str(report)]
    cmd = [sys.executable, "-m", "torch.distributed.run", "--nproc-per-node", "2", str(ROOT / "run_akd.py"), "--", *args]
    result = subprocess.run(
        cmd, cwd=runs["tmp"], env=env() | {"OMP_NUM_THREADS": "1"}, capture_output=True, text=True, timeout=600
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.stdout.count("akd: done:") == 1  # rank 0 speaks and writes, rank 1 does neither
    spread, single = (json.loads(open(p).read()) for p in (report, fox["report"]))
    assert spread["config"]["draws"] == 2 and spread["distill"]["processes"] == 2
    for key in ("total", "sds"):
        np.testing.assert_allclose([h[key] for h in spread["loss_history"]], [h[key] for h in single["loss_history"]], rtol=1e-4)


def test_a_missing_ray_is_one_line(monkeypatch, capsys, tmp_path):
    monkeypatch.setitem(sys.modules, "ray", None)  # what `import ray` meets in a Python without it
    args = ["--input", str(ASSET_FILES["Fox"]), "--prompt", "a fox trots", "--report", str(tmp_path / "r.json"), "--ray"]
    assert distill.main(args) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("akd: error: --ray needs Ray") and "pip install" in err[0]
    assert not (tmp_path / "r.json").exists()
