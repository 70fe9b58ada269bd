"""The settings of one distillation as plain dataclasses, their choices and their validation.

Imports no torch (nor bpy): the command line parses its flags and the panel lists its choices from
here before torch is loaded. :class:`DistillConfig` nests :class:`SDSSettings` (how a prior turns a
video into an SDS loss; handed to the prior with every query) and :class:`SearchSettings` (the
sample-then-fit start). :meth:`DistillConfig.validate` is the one place a setting is checked.
"""

from __future__ import annotations

from .choices import (
    CAMERA_MODES,
    DEVICES,
    INTERPOLATIONS,
    KEY_MODES,
    KEYS_DEFAULT,
    MODEL_CHOICES,
    SDS_MODES,
    SEARCH_APPEARANCES,
    START_MODES,
    TARGET_SPACES,
    ModelChoice,
    SettingError,
)
from .distill_config import DistillConfig, config_from_dict
from .parts import POSE_REDRAW_NOISE, RedrawSettings, SDSSettings, SearchSettings, parse_redraw, redraw_text
from .tunables import TUNABLES, Tunable, setting_name, with_tunables

__all__ = [
    "ModelChoice",
    "MODEL_CHOICES",
    "CAMERA_MODES",
    "START_MODES",
    "DEVICES",
    "SDS_MODES",
    "SEARCH_APPEARANCES",
    "TARGET_SPACES",
    "INTERPOLATIONS",
    "KEY_MODES",
    "KEYS_DEFAULT",
    "SettingError",
    "SDSSettings",
    "SearchSettings",
    "RedrawSettings",
    "POSE_REDRAW_NOISE",
    "parse_redraw",
    "redraw_text",
    "DistillConfig",
    "config_from_dict",
    "Tunable",
    "TUNABLES",
    "setting_name",
    "with_tunables",
]
