"""The package's layout as a test, read from the source by ``tools.import_graph`` (no import runs):

(a) no module of ``akd_blender/core`` imports ``akd_blender/blender`` or Blender's modules, at any depth
    (lazy imports inside functions included);
(b) no private name (``_x``) is taken from one module into another;
(c) the folders of ``akd_blender/blender`` import only downward, in the order of :data:`BLENDER_TIERS`;
(d) the stages of ``akd_blender/core`` import only the stages before them, in the order of :data:`CORE_TIERS`;
(e) no circle of imports, between modules or between folders.

Each check is also run on a copy of the source with one such import planted, so none passes vacuously.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from tools.import_graph import circles, folder_arrows, import_arrows, layer_breaks, module_names, outside_imports, private_imports

ROOT = Path(__file__).resolve().parents[2]
CORE = "akd_blender.core"
BLENDER = "akd_blender.blender"
BLENDER_MODULES = {"bpy", "mathutils", "bmesh", "bpy_extras", "addon_utils", "gpu", "idprop"}

BLENDER_TIERS: list[tuple[str, ...]] = [
    ("", "character", "build"),  # the package's __init__; the armature mirrored; procedural characters built
    ("controls",),  # a control rig's controls: found, probed, posed, checked
    ("keys",),  # clips keyed into actions, on deform bones or on controls
    ("job",),  # a job's steps shared by the CLI and the panel: settings, rig, apply
    ("cli", "panel"),  # the two front ends, side by side: neither imports the other
    ("registration", "demo"),  # the add-on's registration and `make demo`
]
"""The units of ``akd_blender/blender`` (subpackages and top-level modules), lowest tier first: a module
may import from its own unit or from a unit of a lower tier only."""


CORE_TIERS: list[tuple[str, ...]] = [
    ("", "errors"),  # the package's __init__; errors a user can act on
    ("settings", "progress", "assets"),  # what every stage shares
    ("character",),  # the rig as arrays, FK + LBS, bone roles
    ("motion",),  # clips, the motion library, metrics, physics, the judge
    ("prompt",),  # reading a prompt as library motions
    ("render",),  # the differentiable renderer
    ("video_models",),  # video priors and the SDS step
    ("fitting",),  # fitting a rig to a video
    ("distillation",),  # a job's distillation: plan, starts, SDS loop
    ("job",),  # the job seam, the worker, Ray
]
"""The stages of ``akd_blender/core`` in the order a job goes through them (``docs/how-it-works.md``),
lowest first: a module may import from its own stage or from an earlier one only."""


def core_imports_of_blender(root: Path) -> list[str]:
    """``module → target`` for each import by a core module of the Blender side or of Blender's modules."""
    arrows, outside = import_arrows(root), outside_imports(root)
    found = []
    for name in sorted(arrows):
        if name == CORE or name.startswith(CORE + "."):
            found += [f"{name} → {t}" for t in sorted(arrows[name]) if t == BLENDER or t.startswith(BLENDER + ".")]
            found += [f"{name} → {t}" for t in sorted(outside[name] & BLENDER_MODULES)]
    return found


def blender_breaks(root: Path) -> list[str]:
    return layer_breaks(import_arrows(root), BLENDER, BLENDER_TIERS)


def core_breaks(root: Path) -> list[str]:
    return layer_breaks(import_arrows(root), CORE, CORE_TIERS)


def source_copy(tmp_path: Path) -> Path:
    """The package's ``.py`` files copied under ``tmp_path`` (same layout), for planting imports."""
    for path in (ROOT / "akd_blender").rglob("*.py"):
        target = tmp_path / path.relative_to(ROOT)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, target)
    return tmp_path


def plant(root: Path, module: str, code: str) -> None:
    """Append ``code`` (a function holding a lazy import) to ``module``'s file under ``root``."""
    path = root / (module.replace(".", "/") + ".py")
    path.write_text(path.read_text() + "\n\n" + code)


def test_core_imports_neither_the_blender_side_nor_blender():
    assert core_imports_of_blender(ROOT) == []


def test_no_private_name_is_imported_across_modules():
    assert private_imports(ROOT) == []


def test_blender_folders_import_only_downward():
    assert blender_breaks(ROOT) == []


def test_core_stages_import_only_earlier_stages():
    assert core_breaks(ROOT) == []


def test_no_circle_of_modules_or_folders():
    arrows = import_arrows(ROOT)
    assert circles(arrows) == []
    assert circles(folder_arrows(arrows, module_names(ROOT))) == []


def test_every_core_stage_is_in_a_tier():
    units = {p.name for p in (ROOT / "akd_blender/core").iterdir() if (p / "__init__.py").is_file()}
    units |= {p.stem for p in (ROOT / "akd_blender/core").glob("*.py") if p.stem != "__init__"}
    assert units == {unit for tier in CORE_TIERS for unit in tier} - {""}


def test_every_blender_folder_is_in_a_tier():
    units = {p.name for p in (ROOT / "akd_blender/blender").iterdir() if (p / "__init__.py").is_file()}
    units |= {p.stem for p in (ROOT / "akd_blender/blender").glob("*.py") if p.stem != "__init__"}
    declared = {unit for tier in BLENDER_TIERS for unit in tier} - {""}
    assert units == declared


def test_the_checks_fail_on_planted_imports(tmp_path):
    root = source_copy(tmp_path)
    plant(root, "akd_blender.core.motion.clip", "def f():\n    from ...blender.keys.keyframes import read_clip\n")
    plant(root, "akd_blender.core.errors", "def g():\n    import mathutils\n")
    plant(root, "akd_blender.blender.character.io", "def h():\n    from ..keys.keyframes import read_clip\n")
    plant(root, "akd_blender.blender.cli.judge", "def k():\n    from ..panel.run import active_run\n")
    plant(root, "akd_blender.blender.keys.actions", "def m():\n    from ..controls import rig\n    return rig._x\n")
    plant(root, "akd_blender.blender.panel.sidebar", "def n():\n    from .run import _ACTIVE\n")
    plant(root, "akd_blender.core.character.kinematics", "def p():\n    from ..distillation import sds_loop\n")

    assert core_imports_of_blender(root) == [
        "akd_blender.core.errors → mathutils",
        "akd_blender.core.motion.clip → akd_blender.blender.keys.keyframes",
    ]
    breaks = blender_breaks(root)
    assert len(breaks) == 2
    assert breaks[0].startswith("akd_blender.blender.character.io → akd_blender.blender.keys.keyframes")
    assert breaks[1].startswith("akd_blender.blender.cli.judge → akd_blender.blender.panel.run")  # side by side
    assert core_breaks(root) == [
        "akd_blender.core.character.kinematics → akd_blender.core.distillation.sds_loop"
        " (unit 'character', tier 2 → unit 'distillation', tier 8)"
    ]
    privates = private_imports(root)
    assert [line.split(":")[0] + " " + line.split(" ", 1)[1] for line in privates] == [
        "akd_blender.blender.keys.actions _x from akd_blender.blender.controls.rig",
        "akd_blender.blender.panel.sidebar _ACTIVE from akd_blender.blender.panel.run",
    ]


def test_an_undeclared_unit_is_reported(tmp_path):
    root = source_copy(tmp_path)
    (root / "akd_blender/blender/stray.py").write_text("from .keys.keyframes import read_clip\n")
    assert blender_breaks(root) == ["akd_blender.blender.stray: unit 'stray' is in no tier"]
