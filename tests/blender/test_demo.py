"""`make demo`'s jobs: the default model on the procedural biped and on the Fox imported from the
shared assets, with prompts each character's kind understands; without the assets, the biped only.
The CLI itself is replaced by a recorder here (a real job takes a minute; tests/e2e runs the CLI)."""

from __future__ import annotations

import json
import os

import imageio.v3 as iio
import pytest

from akd_blender.blender import demo
from akd_blender.blender.cli import parser as cli_parser

FOX = os.path.join(os.environ.get("AKD_SHARED", ""), "assets", "Fox", "Fox.gltf")


def _write_keyed_scene(job) -> None:
    """Save the job's input scene with a new two-frame action on its armature (the rest pose keyed) as
    the job's output, as a job writes it."""
    import bpy

    from akd_blender.blender.character.io import find_armature, load_scene

    load_scene(job.input)
    armature = find_armature(None)
    armature.animation_data_create().action = bpy.data.actions.new(job.prompt)
    bone = armature.pose.bones[0]
    bone.rotation_mode = "QUATERNION"
    for frame in (1, 2):
        bone.keyframe_insert("rotation_quaternion", frame=frame)
    bpy.ops.wm.save_as_mainfile(filepath=job.out, copy=True)


def _record(monkeypatch) -> list:
    """Replace the demo's CLI run by one that parses the flags as the CLI does, records the job and
    writes the scene with a new action and the report a fitted drawing gives (no steps)."""
    jobs = []

    def fake_main(flags):
        (job,), _ = cli_parser.parse_jobs(flags)
        jobs.append(job)
        _write_keyed_scene(job)
        report = {"prompt": job.prompt, "model": job.model, "device": "cpu", "loss_history": [], "action_names": [job.prompt]}
        report |= {"frames": 48, "steps": 0, "seconds": 1.0, "distill": {"search_error_start": 2e-3, "search_error": 1e-3}}
        with open(job.report, "w", encoding="utf-8") as fh:
            json.dump(report, fh)
        return 0

    monkeypatch.setattr(demo.distill, "main", fake_main)
    return jobs


def _check_biped(job, out) -> None:
    import bpy

    assert job.input == str(out / "biped.blend") and os.path.isfile(job.input)
    bpy.ops.wm.open_mainfile(filepath=job.input)
    assert [o.type for o in bpy.data.objects if o.type == "ARMATURE"] == ["ARMATURE"]
    assert job.prompt == demo.JOBS["biped"]


def test_demo_runs_the_default_model_on_the_biped_and_the_fox(tmp_path, monkeypatch, capsys):
    if not os.path.isfile(FOX):
        pytest.skip("the shared assets (AKD_SHARED) are not here")
    jobs = _record(monkeypatch)
    assert demo.main(["--out", str(tmp_path)]) == 0
    biped, fox = jobs
    default_model = cli_parser.build_parser().get_default("model")
    for job, name in ((biped, "biped"), (fox, "fox")):
        assert job.model == default_model == "tiny"
        assert job.tunables == {} and job.start is None  # every default: the library start
        assert (job.out, job.preview, job.report) == tuple(str(tmp_path / f"{name}_akd{e}") for e in (".blend", ".mp4", ".json"))
        assert (tmp_path / f"{name}_loss_curve.png").is_file()  # the fitted drawing's search errors
        sheet = iio.imread(tmp_path / f"{name}_contact_sheet.png")
        assert sheet.shape[0] == 256 and sheet.shape[1] == 256 * 2  # the two frames of the action, side by side
    _check_biped(biped, tmp_path)
    assert os.path.samefile(fox.input, FOX) and fox.prompt == demo.JOBS["fox"]
    assert "done" in capsys.readouterr().out


def test_demo_without_the_shared_assets_says_so_and_runs_the_biped_only(tmp_path, monkeypatch, capsys):
    jobs = _record(monkeypatch)
    monkeypatch.setenv("AKD_SHARED", str(tmp_path / "nowhere"))
    assert demo.main(["--out", str(tmp_path)]) == 0
    (biped,) = jobs
    _check_biped(biped, tmp_path)
    said = [line for line in capsys.readouterr().out.splitlines() if "shared assets" in line]
    assert len(said) == 1 and "Fox" in said[0] and "skipped" in said[0]


def test_demo_stops_with_the_cli_exit_code(tmp_path, monkeypatch):
    monkeypatch.setattr(demo.distill, "main", lambda flags: 3)
    assert demo.main(["--out", str(tmp_path)]) == 3


def test_demo_prompts_read_as_motions_of_each_characters_kind():
    """The biped's prompt as a biped motion and the Fox's as a quadruped one, for the kinds the rigs'
    roles give (the Fox imported with Blender's glTF importer, as the CLI does)."""
    from akd_blender.blender.character.extract import rig_from_armature
    from akd_blender.blender.character.io import find_armature, load_scene
    from akd_blender.core.character.procedural import CHARACTERS
    from akd_blender.core.distillation.plan import character_kind
    from akd_blender.core.prompt.sentence_encoder import TextEncoder
    from akd_blender.core.prompt.understanding import PromptVocabulary, library_vocabulary

    kinds = {"biped": character_kind(CHARACTERS["biped"]())}
    if os.path.isfile(FOX):
        load_scene(FOX)
        kinds["fox"] = character_kind(rig_from_armature(find_armature(None)))
    assert kinds == {name: kind for name, kind in (("biped", "biped"), ("fox", "quadruped")) if name in kinds}
    encoder = TextEncoder()
    expected = {"biped": "raise_arms", "fox": "walk"}
    for name, kind in kinds.items():
        understanding = PromptVocabulary(library_vocabulary(kind), encoder).understand(demo.JOBS[name])
        assert understanding.understood and understanding.motion.endswith(expected[name]), understanding
