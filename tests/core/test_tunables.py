"""The user-facing distillation settings (core.config.TUNABLES): defaults, ranges, nesting."""

from __future__ import annotations

import json

import pytest

from akd_blender.core.settings import (
    TUNABLES,
    DistillConfig,
    SDSSettings,
    SearchSettings,
    SettingError,
    config_from_dict,
    setting_name,
    with_tunables,
)


def test_every_tunable_names_a_config_field_and_its_default_is_the_configs():
    config = DistillConfig()
    assert len({t.name for t in TUNABLES}) == len(TUNABLES)
    for t in TUNABLES:
        value = config
        for part in t.field.split("."):
            value = getattr(value, part)
        assert t.default() == value and t.minimum <= value <= t.maximum, t.name
        assert setting_name(t.field) == t.name
    assert setting_name("frames") == "frames"


def test_values_land_in_their_nested_fields_and_none_leaves_them():
    got = with_tunables(DistillConfig(), {"cfg_scale": 4.5, "t_min": 0.1, "lr": 0.002, "draw_steps": 12, "root_lr": None})
    assert (got.sds.cfg_scale, got.sds.t_min, got.lr, got.search.steps) == (4.5, 0.1, 0.002, 12)
    assert got.root_lr == DistillConfig().root_lr and got.sds.mode == DistillConfig().sds.mode
    assert isinstance(got.search.steps, int)
    assert with_tunables(DistillConfig(), {}) == DistillConfig()


def test_a_lower_t_max_pulls_the_annealing_end_down_with_it():
    default_end = DistillConfig().sds.t_max_end
    assert default_end is not None
    low = with_tunables(DistillConfig(), {"t_max": default_end / 2})
    assert low.sds.t_max == low.sds.t_max_end == default_end / 2
    high = with_tunables(DistillConfig(), {"t_max": 0.9})
    assert high.sds.t_max_end == default_end


@pytest.mark.parametrize(
    ("values", "field", "reason"),
    [
        ({"cfg_scale": 0.5}, "sds.cfg_scale", "between 1 and 100"),
        ({"lr": float("nan")}, "lr", "must be a number"),
        ({"draw_steps": 2.5}, "search.steps", "whole number"),
        ({"t_min": "low"}, "sds.t_min", "must be a number"),
        ({"t_min": 0.6, "t_max": 0.4}, "sds.t_min", "t_min < t_max"),
        ({"sharpness": 1.0}, "sharpness", "is not a setting"),
    ],
)
def test_a_bad_value_names_its_field(values, field, reason):
    with pytest.raises(SettingError, match=reason) as caught:
        with_tunables(DistillConfig(), values)
    assert caught.value.field == field


def test_a_config_survives_its_report_round_trip():
    """A report's "config" (JSON lists for tuples, nested settings as dicts) reads back as the same config."""
    config = DistillConfig(
        seed=3,
        sds=SDSSettings(cfg_scale=7.5),
        search=SearchSettings(guidance=5.0, scales=(1.0, 0.5), prior_scales=(0.3,), motion_prior=False),
    )
    assert config_from_dict(json.loads(json.dumps(config.as_dict()))) == config
    unset = DistillConfig(search=SearchSettings(prior_scales=None))
    assert config_from_dict(json.loads(json.dumps(unset.as_dict()))) == unset
