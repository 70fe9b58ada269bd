"""A job leaves the process as it found it: ``os.environ`` unchanged (the Hugging Face offline switches
included: the embedded text encoder is loaded with ``local_files_only``, not by setting them), and no
network connection is tried. The job runs in a fresh Python (without HF_HUB_OFFLINE) so that what
importing the add-on's modules does counts too; its third-party dependencies are imported before the
comparison starts (what they set on import, they set for any importer)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

_JOB = r"""
import json, os, socket, sys

attempts = []


def refuse(kind):
    def call(*args, **kwargs):
        attempts.append(kind)
        raise OSError(f"network blocked by the test ({kind})")

    return call


socket.socket.connect = refuse("connect")
socket.socket.connect_ex = refuse("connect_ex")
socket.getaddrinfo = refuse("getaddrinfo")
# the dependencies first: importing some of them sets variables of their own (scikit-learn, which
# sentence-transformers imports: KMP_DUPLICATE_LIB_OK, KMP_INIT_AT_FORK; torch's compiler, which
# diffusers imports: TORCHINDUCTOR_CACHE_DIR), whoever imports them; the job must add nothing to that
start = dict(os.environ)
import diffusers, sentence_transformers, torch, transformers  # noqa: E401, F401

before = dict(os.environ)

from akd_blender.core.job import worker as wk
from akd_blender.core.settings import DistillConfig, SearchSettings
from akd_blender.core.job.request import JobRequest
from akd_blender.core.prompt.sentence_encoder import TextEncoder
from akd_blender.core.character.procedural import biped

search = SearchSettings(steps=2, scales=(2.4,), supersample=1)
config = DistillConfig(frames=4, steps=1, device="cpu", height=16, width=16, supersample=1, search=search, allow_nearest=True)
# the model spec "tiny" goes through the registry and the cache, as the CLI and the panel load it
message = wk.run_job(JobRequest(rig=biped(), prompt="a person waves the right arm", config=config, model="tiny"), lambda m: None)
# the sentence encoder itself (the teacher answers its known phrasings from a table without loading it)
vector = TextEncoder().encode(["someone hops on one foot across a room"])
after = dict(os.environ)
print("RESULT" + json.dumps({
    "message": type(message).__name__,
    "text": getattr(message, "message", ""),
    "frames": message.result.clip.num_frames if hasattr(message, "result") else None,
    "norm": float(vector.norm()),
    "added": sorted(set(after) - set(before)),
    "removed": sorted(set(before) - set(after)),
    "changed": sorted(k for k in set(before) & set(after) if before[k] != after[k]),
    "attempts": attempts,
    "by_dependencies": sorted(set(before) - set(start)),
}))
"""


def test_a_job_changes_no_environment_variable_and_opens_no_connection():
    env = {k: v for k, v in os.environ.items() if k not in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE")}
    env["PYTHONPATH"] = str(ROOT)
    out = subprocess.run([sys.executable, "-c", _JOB], cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr[-3000:]
    got = json.loads(out.stdout.split("RESULT", 1)[1])
    assert got["message"] == "Done", got["text"]
    assert got["frames"] == 4 and abs(got["norm"] - 1.0) < 1e-4  # a real job and a real (L2-normalised) embedding
    assert (got["added"], got["removed"], got["changed"]) == ([], [], [])
    assert got["attempts"] == []
