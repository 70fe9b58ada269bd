"""Black-box: what the embedded teacher understood a prompt as, through ``python run_akd.py``.

A prompt it knows prints ``akd: understood as <motion> ("<training phrasing>", similarity s)``; a
prompt it matches to no known motion stops with one line and exit 2 (``tests/e2e/test_bad_input.py``)
unless ``--allow-nearest``, which goes ahead with the nearest motion, says so and writes the outputs."""

from __future__ import annotations

import json
import re

import pytest

from akd_blender.core.prompt.understanding import MOTIONS_COMMAND, UNDERSTOOD_THRESHOLD
from tests.e2e.akd_cli import make_blends, run_cli

FAST = (
    "--start",
    "pose",
    "--redraw",
    "none",
    "--steps",
    "1",
    "--frames",
    "4",
    "--height",
    "16",
    "--width",
    "16",
    "--device",
    "cpu",
)


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("understand")
    biped = make_blends(tmp)["biped"]
    jobs = [
        {"input": str(biped), "prompt": "a man is waving hello", "report": str(tmp / "wave.json")},
        {"input": str(biped), "prompt": "plays the violin", "allow-nearest": True, "report": str(tmp / "violin.json")}
        | {"out": str(tmp / "violin.blend")},
    ]
    (tmp / "jobs.json").write_text(json.dumps(jobs))
    batch = run_cli("--jobs", tmp / "jobs.json", *FAST)
    refused = run_cli("--input", biped, "--prompt", "plays the violin", "--report", tmp / "refused.json", *FAST)
    quiet = run_cli("--input", biped, "--prompt", "a man is waving hello", "--report", tmp / "quiet.json", "--quiet", *FAST)
    return {"tmp": tmp, "batch": batch, "refused": refused, "quiet": quiet}


def test_the_cli_prints_what_the_prompt_was_understood_as(runs):
    batch, tmp = runs["batch"], runs["tmp"]
    assert batch.returncode == 0, batch.stderr[-3000:]
    report = json.loads((tmp / "wave.json").read_text())["distill"]
    assert report["motion"] == "biped/wave" and report["understood"] is True
    line = f'akd: job 1/2: understood as biped/wave ("{report["understood_as"]}", similarity {report["similarity"]:.2f})'
    assert line in batch.stdout.splitlines(), batch.stdout


def test_allow_nearest_goes_ahead_with_the_nearest_motion_and_warns(runs):
    batch, tmp = runs["batch"], runs["tmp"]
    report = json.loads((tmp / "violin.json").read_text())
    facts = report["distill"]
    assert facts["understood"] is False and facts["similarity"] < UNDERSTOOD_THRESHOLD and (tmp / "violin.blend").is_file()
    printed = [ln for ln in batch.stdout.splitlines() if ln.startswith("akd: job 2/2: understood as")]
    assert len(printed) == 1 and f'{facts["motion"]} ("{facts["understood_as"]}"' in printed[0]
    assert f"below the {UNDERSTOOD_THRESHOLD:.2f} needed" in printed[0]
    assert any("went ahead with the nearest" in w for w in report["warnings"])
    assert re.search(r"akd: job 2/2: warning: the prompt matches no known motion well enough", batch.stderr)


def test_without_allow_nearest_the_prompt_stops_the_job_and_nothing_is_written(runs):
    refused, tmp = runs["refused"], runs["tmp"]
    assert refused.returncode == 2, refused.stderr[-3000:]
    lines = [ln for ln in refused.stderr.splitlines() if ln.startswith("akd:")]
    assert len(lines) == 1 and lines[0].startswith('akd: error: the prompt "plays the violin" matches no known motion')
    assert lines[0].count('("') >= 3 and f"`{MOTIONS_COMMAND}`" in lines[0] and "--allow-nearest" in lines[0]
    assert not (tmp / "refused.json").exists() and "understood as" not in refused.stdout


def test_quiet_prints_no_understood_line(runs):
    quiet = runs["quiet"]
    assert quiet.returncode == 0, quiet.stderr[-3000:]
    assert "understood as" not in quiet.stdout + quiet.stderr and "akd: done:" in quiet.stdout
    assert json.loads((runs["tmp"] / "quiet.json").read_text())["distill"]["motion"] == "biped/wave"
