"""The settings a tuning run may change (:data:`TUNABLES`), their command-line names and how they are applied."""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

from .choices import SettingError
from .distill_config import DistillConfig

__all__ = ["TUNABLES", "Tunable", "setting_name", "with_tunables"]


@dataclass(frozen=True)
class Tunable:
    """A distillation setting a user may change: the command line's ``--name`` flag (``_`` → ``-``), the
    ``--jobs`` file's key and the panel's Advanced property of the same ``name``, all derived from
    :data:`TUNABLES`.

    Attributes:
        name: flag, jobs-file key and panel property name. field: its place in :class:`DistillConfig`
            (nested ones as ``"sds.cfg_scale"``). label: the panel's label. description: what it does.
        minimum, maximum: the accepted range (inclusive). kind: ``float`` or ``int``.
    """

    name: str
    field: str
    label: str
    description: str
    minimum: float
    maximum: float
    kind: type = float

    def default(self) -> float | int:
        """The value :class:`DistillConfig` has when the user leaves the setting alone."""
        value = DistillConfig()
        for part in self.field.split("."):
            value = getattr(value, part)
        return value


TUNABLES: tuple[Tunable, ...] = (
    Tunable(
        "cfg_scale",
        "sds.cfg_scale",
        "Guidance",
        "classifier-free guidance scale of the SDS steps (1: no negative pass)",
        1.0,
        100.0,
    ),
    # t_min < t_max (SDSSettings, which names t_min): a Noise Max of 0 leaves no level to draw
    Tunable("t_min", "sds.t_min", "Noise Min", "lowest noise level an SDS step draws, as a fraction of the schedule", 0.0, 1.0),
    Tunable(
        "t_max",
        "sds.t_max",
        "Noise Max",
        "highest noise level an SDS step draws at the start, a fraction of the schedule",
        0.001,
        1.0,
    ),
    Tunable("lr", "lr", "Learning Rate", "Adam learning rate of the joint rotations per SDS step (radians)", 1e-5, 1.0),
    Tunable(
        "root_lr", "root_lr", "Root Learning Rate", "Adam learning rate of the root path per step (character heights)", 1e-5, 1.0
    ),
    Tunable(
        "draw_guidance", "search.guidance", "Drawing Guidance", "classifier-free guidance scale of the drawn video", 1.0, 100.0
    ),
    Tunable("draw_steps", "search.steps", "Drawing Steps", "denoising steps of the drawn video", 1, 1000, int),
    Tunable(
        "search_supersample",
        "search.supersample",
        "Search Supersampling",
        "supersampling of the pose search's renders (1: fastest; at most the render's own)",
        1,
        8,
        int,
    ),
    Tunable(
        "prompt_prior",
        "search.prompt_prior",
        "Prompt Prior",
        "how much the pose search favours starting from the library motion the prompt was understood as (0: the drawing alone decides)",
        0.0,
        1.0,
    ),
)
"""The settings the command line and the panel's Advanced section offer besides steps, frames, seed …"""


def setting_name(field_name: str) -> str:
    """The user's name of a :class:`DistillConfig` field (the tunable's name for ``"sds.cfg_scale"``,
    else the field itself): front ends build their flag or label from it."""
    return next((t.name for t in TUNABLES if t.field == field_name), field_name)


def with_tunables(config: DistillConfig, values: dict[str, float | int | None]) -> DistillConfig:
    """``config`` with the :data:`TUNABLES` in ``values`` set (a value of None leaves it as it is).

    A ``t_max`` below the annealing's end (``sds.t_max_end``) lowers that end to it.
    Raises :class:`SettingError` naming the field (e.g. ``"sds.t_min"``) for a value outside its
    tunable's range or not a number, and for a name that is not a tunable."""
    known = {t.name: t for t in TUNABLES}
    for name in values:
        if name not in known:
            raise SettingError(name, f"is not a setting (known: {', '.join(known)})")
    nested: dict[str, dict] = {}
    top: dict = {}
    for name, value in values.items():
        if value is None:
            continue
        t = known[name]
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
            raise SettingError(t.field, f"must be a number (got {value!r})")
        if t.kind is int and int(value) != value:
            raise SettingError(t.field, f"must be a whole number (got {value})")
        if not t.minimum <= value <= t.maximum:
            raise SettingError(t.field, f"must be between {t.minimum:g} and {t.maximum:g} (got {value:g})")
        value = t.kind(value)
        if "." in t.field:
            group, attr = t.field.split(".")
            nested.setdefault(group, {})[attr] = value
        else:
            top[t.field] = value
    sds = nested.get("sds", {})
    if "t_max" in sds and config.sds.t_max_end is not None:  # the annealing runs down from t_max, never up
        sds["t_max_end"] = min(config.sds.t_max_end, sds["t_max"])
    for group, changes in nested.items():
        top[group] = replace(getattr(config, group), **changes)  # SDSSettings checks its timestep range
    return replace(config, **top)
