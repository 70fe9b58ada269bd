"""``python -m akd_blender.core.video_models.tiny judge``: the core's command runs the Blender-side judge
(``akd_blender.blender.cli.judge``) in a subprocess and passes its output and exit code through."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest

from akd_blender.core.motion.judge import load_motion_judge
from tests.e2e.akd_cli import ROOT, env, make_blends


@pytest.fixture(scope="module")
def biped(tmp_path_factory):
    return make_blends(tmp_path_factory.mktemp("judge"))["biped"]


def _judge(*args: str) -> subprocess.CompletedProcess:
    command = [sys.executable, "-m", "akd_blender.core.video_models.tiny", "judge", *args]
    return subprocess.run(command, cwd=ROOT, env=env(), capture_output=True, text=True, timeout=300)


def test_judge_prints_a_label_and_its_probability(biped):
    labels = set(load_motion_judge().cfg.labels)
    out = _judge("--input", str(biped), "--action", "OldWalk")
    assert out.returncode == 0, out.stderr[-2000:]
    ranking, last = out.stdout.strip().splitlines()[-2:]
    label, probability = last.split()  # the label and its probability on the last line
    assert label in labels and 0.0 <= float(probability) <= 1.0
    ranked = re.findall(r"(\S+) ([01]\.\d{3})", ranking)  # the runners-up, best first
    assert ranked[0] == (label, probability) and all(name in labels for name, _ in ranked)


def test_judge_names_a_missing_action_and_exits_2(biped):
    out = _judge("--input", str(biped), "--action", "Nobody")
    assert out.returncode == 2 and "no action named 'Nobody'" in out.stderr and "OldWalk" in out.stderr
