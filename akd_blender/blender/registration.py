"""Register / unregister everything the add-on adds to Blender.

Properties (``Scene.akd``, ``WindowManager.akd_run``), operators, the N-panel and the
``blender --command akd`` CLI command. Safe to call twice in a row (a second register first
unregisters) and idempotent on unregister. Imports no torch.
"""

from __future__ import annotations

import bpy

from .panel import operators, properties, sidebar

__all__ = ["register", "unregister", "CLASSES", "is_registered"]

CLASSES = (*properties.CLASSES, *operators.CLASSES, *sidebar.CLASSES)
_STATE: dict[str, object] = {}


def _cli_akd(argv: list[str]) -> int:
    """``blender --command akd ARGS``: the same flags and exit codes as run_akd.py."""
    from .cli.distill import main

    return main(argv)


def is_registered() -> bool:
    return bool(_STATE.get("registered"))


def register() -> None:
    if is_registered():
        unregister()
    for cls in CLASSES:
        bpy.utils.register_class(cls)
    bpy.types.Scene.akd = bpy.props.PointerProperty(type=properties.AKD_Settings)
    bpy.types.WindowManager.akd_run = bpy.props.PointerProperty(type=properties.AKD_RunState)
    if hasattr(bpy.utils, "register_cli_command"):  # 4.2+
        _STATE["cli"] = bpy.utils.register_cli_command("akd", _cli_akd)
    _STATE["registered"] = True


def unregister() -> None:
    if not is_registered():
        return
    run = operators.active_run()
    if run is not None and run.worker is not None:
        run.worker.cancel()
    handle = _STATE.pop("cli", None)
    if handle is not None:
        bpy.utils.unregister_cli_command(handle)
    for attr, owner in (("akd", bpy.types.Scene), ("akd_run", bpy.types.WindowManager)):
        if hasattr(owner, attr):
            delattr(owner, attr)
    for cls in reversed(CLASSES):
        if getattr(cls, "is_registered", False):
            bpy.utils.unregister_class(cls)
    _STATE["registered"] = False
