"""Table-driven bad input through ``python run_akd.py``: the right exit code, ONE line naming the
problem, no output file, and the input file unchanged (hash)."""

from __future__ import annotations

import pytest

from tests.e2e.akd_cli import make_blends, run_cli, sha256


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("bad")
    blends = make_blends(tmp)
    (tmp / "garbage.blend").write_bytes(b"this is not a blend file\x00" * 40)
    (tmp / "garbage.gltf").write_text("{ not json")
    (tmp / "out").mkdir()
    return {**blends, "garbage_blend": tmp / "garbage.blend", "garbage_gltf": tmp / "garbage.gltf", "tmp": tmp}


FAST = ("--steps", "1", "--frames", "4", "--height", "16", "--width", "16", "--device", "cpu")

# id, input key, extra args, expected exit code, words the error line must contain
CASES = [
    ("no-armature", "no_armature", [], 2, ["no armature"]),
    ("two-armatures", "two_armatures", [], 2, ["2 armatures", "--armature"]),
    ("armature-names-nothing", "biped", ["--armature", "Nobody"], 2, ["Nobody"]),
    ("armature-is-a-mesh", "biped", ["--armature", "Biped_mesh"], 2, ["Biped_mesh", "not an armature"]),
    ("no-skinned-mesh", "no_skin", [], 2, ["no skinned mesh"]),
    ("empty-prompt", "biped", ["--prompt", "  "], 2, ["--prompt", "empty"]),
    ("one-frame", "biped", ["--frames", "1"], 2, ["--frames", "at least 2"]),
    (
        "zero-steps-from-pose",
        "biped",
        ["--start", "pose", "--steps", "0", "--redraw", "none"],
        2,
        ["--steps", "0 with start 'sample' or 'auto'"],
    ),
    ("missing-input", "missing", [], 2, ["missing.blend", "does not exist"]),
    ("unreadable-blend", "garbage_blend", [], 2, ["garbage.blend", "could not be read"]),
    ("unreadable-gltf", "garbage_gltf", [], 2, ["garbage.gltf"]),
    ("unknown-model-hub", "biped", ["--model", "nobody/no-such-model"], 3, ["nobody/no-such-model"]),
    ("unknown-model-folder", "biped", ["--model", "/nonexistent/model"], 3, ["/nonexistent/model"]),
    ("out-folder-missing", "biped", ["--out", "{tmp}/nowhere/out.blend"], 2, ["nowhere", "does not exist"]),
    ("out-folder-not-writable", "biped", ["--out", "/proc/akd_out.blend"], 2, ["/proc", "not writable"]),
    ("unknown-flag", "biped", ["--frobnicate"], 2, ["--frobnicate"]),
    # the embedded teacher (the default model) knows no such motion: the nearest three and the list are named
    (
        "prompt-not-understood",
        "biped",
        ["--prompt", "juggles three balls"],
        2,
        ['"juggles three balls"', "nearest: ", "python -m akd_blender.core.prompt.understanding"],
    ),
]


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_bad_input(files, case):
    _id, key, extra, code, words = case
    tmp = files["tmp"]
    inp = files.get(key, tmp / "missing.blend")
    before = sha256(inp) if inp.exists() else None
    outdir = tmp / "out" / _id
    outdir.mkdir()
    args = {"--input": str(inp), "--prompt": "a person walks", "--out": str(outdir / "result.blend")}
    args["--report"] = str(outdir / "report.json")
    extra = [e.format(tmp=tmp) for e in extra]
    for flag in [a for a in extra if a in args]:
        args.pop(flag)  # the case's own value replaces the default
        if flag == "--out":
            args.pop("--report")  # so that only the unwritable folder is at fault
    result = run_cli(*[x for kv in args.items() for x in kv], *FAST, *extra)  # the case's flags come last

    assert result.returncode == code, (result.returncode, result.stderr[-2000:])
    lines = [ln for ln in result.stderr.splitlines() if ln.startswith("akd:")]
    assert len(lines) == 1, result.stderr[-2000:]
    assert all(w in lines[0] for w in words), lines[0]
    assert "Traceback" not in result.stderr
    assert list(outdir.iterdir()) == []  # nothing written
    if before is not None:
        assert sha256(inp) == before
