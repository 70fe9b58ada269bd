"""Version shims (akd_blender/blender/cli/compat.py)."""

from __future__ import annotations

import os
import subprocess

from akd_blender.blender.cli.compat import ffmpeg_executable, restore_execute_bits


def test_restore_execute_bits_makes_the_bundled_ffmpeg_runnable(tmp_path):
    ffmpeg = tmp_path / "ffmpeg-linux-x86_64-v9.0.2"
    ffmpeg.write_text("#!/bin/sh\necho ffmpeg-ran\n")
    ffmpeg.chmod(0o644)  # as Blender's extension installer leaves it
    readme = tmp_path / "README.md"
    readme.write_text("binaries\n")
    readme.chmod(0o644)
    private = tmp_path / "ffmpeg-private"
    private.write_text("#!/bin/sh\n")
    private.chmod(0o600)

    assert not os.access(ffmpeg, os.X_OK)
    assert restore_execute_bits(tmp_path) == [ffmpeg, private]
    assert ffmpeg.stat().st_mode & 0o777 == 0o755 and private.stat().st_mode & 0o777 == 0o700
    assert readme.stat().st_mode & 0o777 == 0o644
    assert subprocess.run([str(ffmpeg)], capture_output=True, text=True).stdout == "ffmpeg-ran\n"
    assert restore_execute_bits(tmp_path) == []  # already executable: nothing to do


def test_ffmpeg_executable_runs():
    exe = ffmpeg_executable()
    assert os.access(exe, os.X_OK)
    assert subprocess.run([exe, "-version"], capture_output=True, text=True).stdout.startswith("ffmpeg version")
