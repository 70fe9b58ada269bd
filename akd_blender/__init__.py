"""akd_blender: text-to-motion for rigged characters (Articulated Kinematics Distillation).

Only :func:`register` / :func:`unregister` live here; they import Blender modules inside, so that
``import akd_blender.core`` works in a Python without Blender.
"""

__version__ = "0.1.0"


def register() -> None:
    """Register the add-on's properties, operators, panel and CLI command with Blender."""
    from .blender import registration

    registration.register()


def unregister() -> None:
    """Undo :func:`register`."""
    from .blender import registration

    registration.unregister()
