"""Every numeric flag of ``build_parser()`` refuses out-of-range values (zero where it means nothing,
negative, NaN, infinity), on the command line and in a ``--jobs`` file: exit 2, ONE line naming the flag,
nothing written. The input named does not exist, so a check made after reading the input would name the
input instead: the numbers are checked before any file is opened.

The table below must list every numeric flag (a test compares it with the parser): a new flag fails
here until its bad values are stated.
"""

from __future__ import annotations

import json
from dataclasses import fields

import pytest

from akd_blender.blender.cli import distill
from akd_blender.blender.cli import parser as cli_parser
from akd_blender.blender.job import settings as job_settings
from akd_blender.core.errors import InputError
from akd_blender.core.settings import TUNABLES

# flag → values it must refuse besides "nan", "inf" and "-inf" (refused by every numeric flag); and one
# value it accepts
BAD = {
    "--frames": ("0", "1", "-1"),
    "--fps": ("0", "-1", "-0.5"),
    "--steps": ("-1",),
    "--seed": ("-1",),
    "--height": ("0", "7", "-1"),
    "--width": ("0", "7", "-1"),
    "--draws": ("0", "-1"),
    "--preview-size": ("0", "-1", "15", "17"),
    "--ray-cpus": ("0", "-1"),
    "--ray-gpus": ("-1", "-0.5"),
    "--ray-threads": ("0", "-1"),
    "--ray-retries": ("-1",),
    "--ground-height": (),  # any finite height (a floor below z = 0 is a floor)
}
GOOD = {
    "--frames": "2",
    "--fps": "30",
    "--steps": "0",
    "--seed": "0",
    "--height": "8",
    "--width": "8",
    "--draws": "1",
    "--preview-size": "16",
    "--ray-cpus": "0.5",
    "--ray-gpus": "0",
    "--ray-threads": "1",
    "--ray-retries": "0",
    "--ground-height": "-0.5",
}
for _t in TUNABLES:  # the core's ranges: just outside each end, and -1
    _flag = f"--{_t.name.replace('_', '-')}"
    BAD[_flag] = tuple(
        dict.fromkeys(f"{v:g}" for v in (-1, _t.minimum - 1, _t.minimum / 2, _t.maximum + 1) if v < _t.minimum or v > _t.maximum)
    )
    GOOD[_flag] = f"{_t.default():g}"
NON_FINITE = ("nan", "inf", "-inf")
# a text flag holding numbers: the redraw rounds' noise levels, in (0, 1] ("0" is "none": no rounds)
TEXT_NUMBERS = {"--redraw": ("-1", "1.5", "0.5,0", "nan", "inf")}

ACTIONS = {a.option_strings[0]: a for a in cli_parser.build_parser()._actions if a.option_strings}
NUMERIC = sorted(flag for flag, a in ACTIONS.items() if a.type in (int, float))
CASES = [(flag, value) for flag in NUMERIC for value in (*BAD.get(flag, ()), *NON_FINITE)]
CASES += [(flag, value) for flag, values in TEXT_NUMBERS.items() for value in values]
JOB_KEYS = {f.name for f in fields(job_settings.CliJob)} | {t.name for t in TUNABLES}


def test_the_table_lists_every_numeric_flag():
    assert set(BAD) == set(GOOD) == set(NUMERIC), "state the bad values of a new numeric flag in BAD and GOOD"


@pytest.mark.parametrize("flag", NUMERIC)
def test_a_value_in_range_is_accepted(flag):
    jobs, _ = cli_parser.parse_jobs(["--input", "x.blend", "--prompt", "p", f"{flag}={GOOD[flag]}"])
    assert len(jobs) == 1


def _args(tmp_path, flag: str, value: str) -> list[str]:
    out = tmp_path / "out"
    out.mkdir()
    common = ["--input", str(tmp_path / "missing.blend"), "--prompt", "a person walks"]
    return [*common, "--out", str(out / "result.blend"), "--report", str(out / "report.json"), f"{flag}={value}"]


def _one_error_line(capsys) -> str:
    captured = capsys.readouterr()
    lines = [ln for ln in captured.err.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith("akd: error: "), captured.err
    assert "Traceback" not in captured.err and captured.out == ""
    return lines[0]


@pytest.mark.parametrize(("flag", "value"), CASES, ids=[f"{f}={v}" for f, v in CASES])
def test_flag_out_of_range(flag, value, tmp_path, capsys):
    assert distill.main(_args(tmp_path, flag, value)) == 2
    line = _one_error_line(capsys)
    assert flag in line and "missing.blend" not in line, line
    assert list((tmp_path / "out").iterdir()) == []


JOB_CASES = [(flag, value) for flag, value in CASES if ACTIONS[flag].dest in JOB_KEYS]


def _json_value(flag: str, value: str):
    """The value as a jobs file holds it: a JSON number (NaN and Infinity as Python's json writes them)
    for a numeric flag, else a string."""
    kind = ACTIONS[flag].type
    if kind not in (int, float):
        return value
    number = float(value)
    return int(number) if kind is int and number.is_integer() else number


@pytest.mark.parametrize(("flag", "value"), JOB_CASES, ids=[f"{f}={v}" for f, v in JOB_CASES])
def test_jobs_file_value_out_of_range(flag, value, tmp_path, capsys):
    out = tmp_path / "out"
    out.mkdir()
    good = {"input": str(tmp_path / "missing.blend"), "prompt": "a person walks", "report": str(out / "good.json")}
    bad = good | {"report": str(out / "bad.json"), flag.lstrip("-"): _json_value(flag, value)}
    listing = tmp_path / "jobs.json"
    listing.write_text(json.dumps([good, bad]))
    assert distill.main(["--jobs", str(listing)]) == 2
    line = _one_error_line(capsys)
    assert "job 2" in line and flag in line and "missing.blend" not in line, line
    assert list(out.iterdir()) == []


def test_not_given_is_none_and_zero_is_not_a_default():
    """A flag left out is None in the job (the defaults are decided later); a 0 given stays 0 and is refused."""
    (job,), _ = cli_parser.parse_jobs(["--input", "x.blend", "--prompt", "p"])
    assert (job.fps, job.frames, job.steps, job.height, job.width, job.draws) == (None,) * 6
    (job,), _ = cli_parser.parse_jobs(["--input", "x.blend", "--prompt", "p", "--steps", "0"])
    assert job.steps == 0 and job_settings.distill_config(job, 1, 24.0).steps == 0
    with pytest.raises(InputError, match="^--fps must be positive"):
        job_settings.check_settings(job_settings.CliJob(input="x.blend", prompt="p", fps=0.0))
