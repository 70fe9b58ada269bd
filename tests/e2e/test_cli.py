"""Black-box: ``python run_akd.py`` on the shared Fox glTF and on a saved .blend, as a user runs it.

One ``--jobs`` run (three jobs, the middle one failing) keeps the cost to one Blender start and one
model load; the tests below read what it wrote. The prior is a tiny random CogVideoX pipeline saved
with ``save_pretrained`` (``--model PATH``); 2 steps, 16×16 renders.
"""

from __future__ import annotations

import json
import math

import imageio_ffmpeg
import pytest

from akd_blender import __version__
from akd_blender.blender.cli import parser as cli_parser
from akd_blender.blender.cli.distill import REPORT_FIELDS
from akd_blender.blender.job import settings as job_settings
from akd_blender.core.errors import InputError
from tests.conftest import ASSET_FILES
from tests.e2e.akd_cli import blend_summary, make_blends, run_cli, sha256, tiny_model

PROMPT_FOX = "a fox trots forward"
PROMPT_BIPED = "a person waves the right arm"


@pytest.fixture(scope="module")
def batch(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("cli")
    model = tiny_model(tmp / "tiny-cogvideox")
    blends = make_blends(tmp)
    fox = ASSET_FILES["Fox"]
    jobs = [
        {"input": str(fox), "prompt": PROMPT_FOX, "out": str(tmp / "fox.blend"), "report": str(tmp / "fox.json")}
        | {"preview": str(tmp / "fox.mp4"), "preview-size": 32, "export": str(tmp / "fox.glb"), "keys": "dense"},
        {"input": str(tmp / "missing.glb"), "prompt": "a fox jumps", "out": str(tmp / "never.blend")},
        {"input": str(blends["biped"]), "prompt": PROMPT_BIPED, "frames": 6, "out": str(tmp / "biped_out.blend")}
        | {"report": str(tmp / "biped.json"), "export": str(tmp / "biped.fbx"), "physics": True},
        {"input": str(blends["biped"]), "ground-action": "OldWalk", "out": str(tmp / "grounded.blend")}
        | {"report": str(tmp / "grounded.json"), "set-scene-range": True},
        {"input": str(blends["biped"]), "ground-action": "OldDrift", "report": str(tmp / "drift.json")},
    ]
    (tmp / "jobs.json").write_text(json.dumps(jobs))
    hashes = {p: sha256(p) for p in (fox, blends["biped"])}
    common = ("--model", model, "--steps", 2, "--frames", 4, "--height", 16, "--width", 16, "--device", "cpu")
    result = run_cli("--jobs", tmp / "jobs.json", *common)
    return {"tmp": tmp, "result": result, "hashes": hashes, "blends": blends}


def test_jobs_run_reports_the_failure_and_goes_on(batch):
    result, tmp = batch["result"], batch["tmp"]
    assert result.returncode == 2, result.stderr[-3000:]  # the failing job's exit code
    assert "summary: 4 of 5 jobs done, 1 failed" in result.stdout
    assert "job 2 [exit 2]" in result.stdout and "missing.glb" in result.stdout
    lines = [ln for ln in result.stderr.splitlines() if ln.startswith("akd:")]
    errors = [ln for ln in lines if ": warning: " not in ln]  # warning lines: test_report_warnings_…
    assert len(errors) == 1 and "missing.glb" in errors[0] and "does not exist" in errors[0]
    assert not (tmp / "never.blend").exists()
    assert (tmp / "fox.blend").is_file() and (tmp / "biped_out.blend").is_file()


def test_inputs_unchanged(batch):
    for path, digest in batch["hashes"].items():
        assert sha256(path) == digest, path


def test_fox_blend_has_new_action_and_keeps_old_ones(batch):
    summary = blend_summary(batch["tmp"] / "fox.blend")
    actions = summary["actions"]
    new = actions[PROMPT_FOX]
    assert new["fcurves"] > 0 and new["frames"] == [1, 2, 3, 4]
    assert list(summary["armatures"].values()) == [PROMPT_FOX]
    for old in ("Survey", "Walk", "Run"):  # the Fox's own animations survive
        assert any(name.startswith(old) for name in actions), actions.keys()


def test_fox_report_has_every_field(batch):
    report = json.loads((batch["tmp"] / "fox.json").read_text())
    assert set(REPORT_FIELDS) <= set(report)
    assert report["status"] == "done" and report["package_version"] == __version__
    assert report["prompt"] == PROMPT_FOX and report["armature"] and report["device"] == "cpu"
    assert (report["frames"], report["steps"], report["fps"]) == (4, 2, 24.0)
    assert report["model"].endswith("tiny-cogvideox") and report["action_names"] == [PROMPT_FOX]
    assert report["final_losses"] and all(math.isfinite(v) for v in report["final_losses"].values())
    assert {"foot_skate", "penetration", "jitter"} <= set(report["motion_metrics"])
    assert report["seconds"] > 0 and report["previous_action"]
    assert set(report["outputs"]) == {"out", "report", "preview", "export"}
    keys = report["keys"]  # --keys dense: every channel keyed on every frame, exactly
    assert keys["mode"] == "dense" and keys["keys_per_channel"] == 4.0 and keys["keys"] == 4 * keys["channels"]
    assert keys["rotation_error_deg"] < 1e-3 and keys["location_error"] < 1e-6
    assert report["scene_changes"][0] == f"new action '{PROMPT_FOX}' active on '{report['armature']}'"
    assert not any(c.startswith("frame range") for c in report["scene_changes"])


def test_report_warnings_are_the_motion_warnings_and_printed(batch):
    """Every job's motion_warnings (its own metrics, thresholds of the motion the model understood) are in
    its report and each report warning is one ``akd: … warning:`` line on stderr."""
    from akd_blender.core.motion.metrics import motion_thresholds, motion_warnings

    stderr = batch["result"].stderr
    for n, name in ((1, "fox"), (3, "biped"), (4, "grounded"), (5, "drift")):
        report = json.loads((batch["tmp"] / f"{name}.json").read_text())
        expected = motion_warnings(report["motion_metrics"], motion_thresholds(report["distill"].get("motion")))
        assert report["warnings"][len(report["warnings"]) - len(expected) :] == expected, name
        for line in report["warnings"]:
            assert f"akd: job {n}/5: warning: {line}" in stderr, (name, line)
        if name != "fox":  # the biped's Preserve Volume skinning: a rig warning, printed
            assert any("Preserve Volume" in line for line in report["warnings"]), report["warnings"]
        if name == "drift":  # the root slides 2 m (more than a height): a motion warning, printed
            assert any("drifts" in line for line in expected), report["warnings"]


def test_fox_preview_mp4_has_every_frame(batch):
    frames, _seconds = imageio_ffmpeg.count_frames_and_secs(str(batch["tmp"] / "fox.mp4"))
    assert frames == 4
    reader = imageio_ffmpeg.read_frames(str(batch["tmp"] / "fox.mp4"))
    meta = next(reader)
    assert tuple(meta["size"]) == (32, 32)
    reader.close()


def test_exports_written(batch):
    tmp = batch["tmp"]
    assert (tmp / "fox.glb").read_bytes()[:4] == b"glTF"
    assert b"Kaydara FBX Binary" in (tmp / "biped.fbx").read_bytes()[:32]


def test_blend_input_new_action_over_frame_range_old_actions_kept(batch):
    summary = blend_summary(batch["tmp"] / "biped_out.blend")
    actions = summary["actions"]
    grounded = f"{PROMPT_BIPED} grounded"  # --physics: the distilled action and the grounded one
    for name in (PROMPT_BIPED, grounded):  # sparse keys (the default): within the frames, first and last keyed
        frames = actions[name]["frames"]
        assert set(frames) <= set(range(1, 7)) and frames[0] == 1 and frames[-1] == 6 and actions[name]["fcurves"] > 0
    assert summary["armatures"] == {"Biped": grounded}
    assert actions["OldWalk"]["fake_user"] and actions["OldWalk"]["frames"] == [1, 10]
    assert "OldSpare" in actions
    report = json.loads((batch["tmp"] / "biped.json").read_text())
    assert report["previous_action"] == "OldWalk" and report["frames"] == 6
    assert report["action_names"] == [PROMPT_BIPED, grounded]
    assert {"foot_skate", "penetration"} <= set(report["physics"]["before"]) and report["physics"]["after"]
    keys = report["keys"]  # the grounded action's keys, within SparseKeys' default bounds (0.5°, 0.2 % of the height)
    assert keys["mode"] == "sparse" and 0 < keys["keys_per_channel"] <= 6
    assert keys["rotation_error_deg"] <= 0.5 + 1e-3 and keys["location_error"] <= 0.002 + 1e-5
    # the scene's frame range is the input's (no --set-scene-range); the changes name both actions
    assert summary["scene_range"] == blend_summary(batch["blends"]["biped"])["scene_range"] != [1, 6]
    assert report["scene_changes"] == [
        f"new action '{PROMPT_BIPED}' on 'Biped'",
        f"new action '{grounded}' active on 'Biped'",
        "action 'OldWalk' kept with a fake user",
    ]


def test_ground_existing_action(batch):
    summary = blend_summary(batch["tmp"] / "grounded.blend")
    assert summary["armatures"] == {"Biped": "OldWalk grounded"}
    frames = summary["actions"]["OldWalk grounded"]["frames"]  # sparse keys: fewer than one a frame
    assert set(frames) <= set(range(1, 11)) and frames[0] == 1 and frames[-1] == 10
    assert summary["scene_range"] == [1, 10]  # --set-scene-range
    assert summary["actions"]["OldWalk"]["frames"] == [1, 10]
    report = json.loads((batch["tmp"] / "grounded.json").read_text())
    assert set(REPORT_FIELDS) <= set(report) and report["prompt"] is None and report["steps"] == 0
    assert report["physics"]["after"]["penetration"] <= report["physics"]["before"]["penetration"] + 1e-3
    assert report["keys"]["mode"] == "sparse" and report["keys"]["keys_per_channel"] < 10
    assert report["scene_changes"][-1] == "frame range 1–10"


def test_cli_flags_are_derived_from_the_core_settings():
    """Each distillation flag's choices are the core's lists and a left-out flag keeps DistillConfig's default."""
    from dataclasses import fields

    from akd_blender.core import settings as core
    from akd_blender.core.render import CAMERA_MODES

    actions = {a.dest: a for a in cli_parser.build_parser()._actions}
    for model in core.MODEL_CHOICES:  # --model names the published models, image-to-video ones included
        assert f"{model.alias} ({model.task})" in actions["model"].help
    assert "cogvideox-5b-i2v (image-to-video)" in actions["model"].help
    assert actions["camera"].choices == core.CAMERA_MODES == CAMERA_MODES
    assert actions["start"].choices == core.START_MODES and actions["device"].choices == core.DEVICES
    assert actions["keys"].choices == core.KEY_MODES and actions["keys"].default == core.KEYS_DEFAULT == "sparse"
    assert job_settings.CliJob().keys == core.KEYS_DEFAULT and actions["set_scene_range"].default is False
    with pytest.raises(InputError, match="--keys must be one of sparse, dense"):  # a --jobs file's "keys"
        job_settings.check_usage(job_settings.CliJob(input="x.blend", prompt="p", report="r.json", keys="every"))
    with pytest.raises(InputError, match="--keys"):
        cli_parser.parse_jobs(["--input", "x.blend", "--keys", "every"])
    config = job_settings.distill_config(job_settings.CliJob(input="x.blend", prompt="p"), frame_start=1, fps=24.0)
    assert config == core.DistillConfig(preview_every=0)  # every other field at the core's default
    names = {f.name for f in fields(core.DistillConfig)}
    for flag in ("frames", "steps", "seed", "device", "height", "width", "camera", "start", "loop", "negative_prompt", "fps"):
        assert flag in names and flag in actions, flag
    assert actions["allow_nearest"].default is core.DistillConfig.allow_nearest is False and "allow_nearest" in names
    jobs, _ = cli_parser.parse_jobs(["--input", "x.blend", "--prompt", "p", "--allow-nearest"])
    assert job_settings.distill_config(jobs[0], frame_start=1, fps=24.0).allow_nearest is True
    job = job_settings.CliJob(input="x.blend", prompt="p", frames=7, steps=3, height=40, width=48, camera="orbit", start="pose")
    got = job_settings.distill_config(job, frame_start=5, fps=30.0)
    assert (got.frames, got.steps, got.height, got.width, got.camera, got.start, got.frame_start, got.fps) == (
        7,
        3,
        40,
        48,
        "orbit",
        "pose",
        5,
        30.0,
    )


def test_every_tunable_is_a_flag_and_a_jobs_key_that_reaches_the_config(tmp_path):
    """``--cfg-scale`` … are core.config.TUNABLES: typed flags defaulting to the core, jobs-file keys, and a
    bad value is named by its flag."""
    from akd_blender.core.settings import TUNABLES, DistillConfig, with_tunables

    actions = {a.dest: a for a in cli_parser.build_parser()._actions}
    for t in TUNABLES:
        assert actions[t.name].type is t.kind and actions[t.name].default is None, t.name
        assert f"--{t.name.replace('_', '-')}" in actions[t.name].option_strings
    argv = ["--input", "x.blend", "--prompt", "p", "--cfg-scale", "5", "--t-max", "0.7", "--draw-steps", "9"]
    jobs, _ = cli_parser.parse_jobs(argv)
    got = job_settings.distill_config(jobs[0], frame_start=1, fps=24.0)
    assert got == with_tunables(DistillConfig(preview_every=0), {"cfg_scale": 5.0, "t_max": 0.7, "draw_steps": 9})
    listing = tmp_path / "jobs.json"
    listing.write_text(json.dumps([{"prompt": "a", "lr": 0.005}, {"prompt": "b", "draw-guidance": 6}]))
    jobs, _ = cli_parser.parse_jobs([*argv, "--jobs", str(listing)])
    first, second = (job_settings.distill_config(j, frame_start=1, fps=24.0) for j in jobs)
    assert (first.lr, first.sds.cfg_scale, second.search.guidance, second.lr) == (0.005, 5.0, 6.0, DistillConfig().lr)
    with pytest.raises(InputError, match=r"^--t-min must be between 0 and 1 \(got 3\)"):
        job_settings.check_usage(
            job_settings.CliJob(input="x.blend", prompt="p", report=str(tmp_path / "r.json"), tunables={"t_min": 3})
        )
    with pytest.raises(InputError, match="--draw-steps"):
        cli_parser.parse_jobs(["--input", "x.blend", "--draw-steps", "many"])
    listing.write_text(json.dumps([{"prompt": "a", "tunables": {}}]))
    with pytest.raises(InputError, match="unknown key 'tunables'"):
        cli_parser.parse_jobs([*argv, "--jobs", str(listing)])


def test_the_progress_bar_follows_every_phase(batch):
    """The tqdm bars on stderr: the model's loading, the optimiser steps, physics and the writing of the
    actions and files each move a bar of their own to its end."""
    err = batch["result"].stderr
    for bar in ("akd root load", "akd Biped physics", "akd Biped load"):
        assert f"{bar}: 100%" in err, err[-3000:]
    assert "akd root steps: 100%" in err and "2/2" in err
    assert "akd root write: 100%" in err and "5/5" in err  # actions, keys, save, preview, export
    assert "akd Biped write: 100%" in err and "4/4" in err  # actions, keys, save, export
