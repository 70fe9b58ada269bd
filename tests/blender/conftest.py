"""Blender-facing tests run inside the PyPI ``bpy`` module: one Blender per test process.

User resources go to a temporary folder before ``import bpy`` so tests never touch the real
Blender preferences or extensions; each test starts from an empty scene.
"""

from __future__ import annotations

import os
import tempfile

os.environ.setdefault("BLENDER_USER_RESOURCES", tempfile.mkdtemp(prefix="akd-blender-user-"))

import bpy  # noqa: E402
import pytest  # noqa: E402


@pytest.fixture(autouse=True)
def empty_scene():
    bpy.ops.wm.read_homefile(use_empty=True)
    yield
