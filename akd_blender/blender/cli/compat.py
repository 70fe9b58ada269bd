"""Shims for what differs between the Blenders akd_blender runs in (4.2 LTS – 5.2, Python 3.11 / 3.13).

Blender's extension installer unpacks the bundled wheels into ``extensions/.local/lib/python3.X/
site-packages`` without the files' permission bits, so the ffmpeg executable that the imageio-ffmpeg
wheel carries arrives without its execute bit and imageio-ffmpeg reports "No ffmpeg exe could be
found" (seen on the real Blender 4.3.2 with the zip of ``make extension``). The action / slot API
differences between 4.2, 4.4 and 5.0 are handled in ``keyframes.py``; 5.1 and 5.2 add none that
akd_blender uses.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

__all__ = ["restore_execute_bits", "ffmpeg_executable"]

_EXECUTE = stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH


def restore_execute_bits(binaries: Path) -> list[Path]:
    """Give every ``ffmpeg*`` file in the folder ``binaries`` the execute bits that its read bits
    allow (``rw-r--r--`` → ``rwxr-xr-x``). Returns the files changed; files it may not change are
    left as they are."""
    changed = []
    for path in sorted(binaries.glob("ffmpeg*")):
        mode = path.stat().st_mode
        if not path.is_file() or path.suffix in (".py", ".md", ".txt") or mode & stat.S_IXUSR:
            continue
        try:
            os.chmod(path, mode | ((mode >> 2) & _EXECUTE))  # each read bit (4) gives its execute bit (1)
        except OSError:
            continue
        changed.append(path)
    return changed


def ffmpeg_executable() -> str:
    """The ffmpeg that imageio-ffmpeg runs, after restoring the execute bit of the one bundled in its
    wheel when an extension install dropped it. Raises imageio-ffmpeg's RuntimeError when there is none."""
    import imageio_ffmpeg

    restore_execute_bits(Path(imageio_ffmpeg.__file__).parent / "binaries")
    return imageio_ffmpeg.get_ffmpeg_exe()
