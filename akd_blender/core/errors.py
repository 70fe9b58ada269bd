"""Errors a user can act on. Each maps to one CLI exit code and reads well as a single line."""

from __future__ import annotations

__all__ = ["AkdError", "InputError", "ModelNotAvailable", "Cancelled"]


class AkdError(Exception):
    """Base class; ``exit_code`` is what ``run_akd.py`` exits with."""

    exit_code = 1


class InputError(AkdError, ValueError):
    """Bad input or usage: a file, armature, prompt or option that cannot be used (exit 2)."""

    exit_code = 2


class ModelNotAvailable(AkdError):
    """A video prior that is not on this machine; the message says what was looked for (exit 3)."""

    exit_code = 3


class Cancelled(AkdError):
    """The user cancelled a running job (exit 4)."""

    exit_code = 4
