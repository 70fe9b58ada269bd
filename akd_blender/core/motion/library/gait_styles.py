"""Styles of the gaits (sneak, limp, stumble, shamble, march, skip, tired, proud, crouched, strafe;
a quadruped's sneak, stalk, limp and tired), read from ``gait_styles.json`` beside this module.

A style is data: factors on the gait's own stride, cadence, duty and clearance, and offsets of its
lean, crouch, arms, head and path (:class:`GaitStyle`). :func:`~.limbs.gait` plays the style named by
``Variation.style``; :data:`GAIT_STYLES` says which styles each kind plays, and :data:`GAIT_LABELS`
which of its motions are gaits (the labels a style applies to).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from functools import cache

from .english import read_table

__all__ = ["GaitStyle", "GAIT_STYLES", "GAIT_LABELS", "PLAIN", "gait_style"]


@dataclass(frozen=True)
class GaitStyle:
    """How a style changes a gait (every default leaves the gait as it is).

    Attributes:
        cadence: × the gait's cycles per clip (its step rate).
        stride: × how far each foot reaches ahead of and behind its hip.
        duty: × the share of the cycle each foot is on the ground.
        clearance: × how high a foot lifts in its swing.
        lift_peak: where in its swing a foot is highest (0–1; None: the gait's own).
        lean: degrees the torso leans forward, added (negative: back, the chest out).
        sway: degrees the torso rolls towards the standing leg, once per cycle.
        crouch: share of the hips' height above the ground the body is lowered by (0–1).
        hop: leg lengths the body rises in the spells when no foot is on the ground.
        arm_swing: × the arms' swing against the legs.
        arm_forward: degrees the upper arms are raised forward from hanging.
        arm_out: degrees the arms are spread out from the sides, added to the hang's 8°.
        elbow: degrees of elbow bend, added to the gait's.
        head_pitch: degrees the head (neck) tips up (negative: down).
        head_roll: degrees the head tilts to its right side.
        tiptoe: degrees the feet tip onto their toes (the heel raised).
        hurt_side, hurt_position: the favoured leg ("right"/"left"; "front"/"hind", "" for any).
        hurt_duty: × the favoured leg's share of the cycle on the ground (0: carried, never put down).
        good_duty: × the other legs' share on the ground, when a leg is favoured.
        hurt_dip: leg lengths the body sinks while it stands on the favoured leg.
        carry: leg lengths a carried leg's foot is held above the ground.
        jitter: how uneven the step lengths are (0–1: the rate of travel varies by up to this share).
        timing: how uneven the steps' timing is (0–1: the step rate varies by up to this share).
        weave: leg lengths the path weaves to each side.
        weave_rate: weaves per gait cycle.
        weave_turn: share of the weaving path's heading the body turns into (0: facing unchanged).
        sideways: travel along the side axis (Variation.direction: +1 left, -1 right), facing unchanged.
        side_reach: how far a foot steps sideways, as a share of the hips' half-spacing (sideways only).
        spread: how far each foot stands out from under its hip, as a share of the hips' half-spacing
            (a wider stance).
    """

    cadence: float = 1.0
    stride: float = 1.0
    duty: float = 1.0
    clearance: float = 1.0
    lift_peak: float | None = None
    lean: float = 0.0
    sway: float = 0.0
    crouch: float = 0.0
    hop: float = 0.0
    arm_swing: float = 1.0
    arm_forward: float = 0.0
    arm_out: float = 0.0
    elbow: float = 0.0
    head_pitch: float = 0.0
    head_roll: float = 0.0
    tiptoe: float = 0.0
    hurt_side: str = "right"
    hurt_position: str = ""
    hurt_duty: float = 1.0
    good_duty: float = 1.0
    hurt_dip: float = 0.0
    carry: float = 0.0
    jitter: float = 0.0
    timing: float = 0.0
    weave: float = 0.0
    weave_rate: float = 0.5
    weave_turn: float = 0.0
    sideways: bool = False
    side_reach: float = 1.0
    spread: float = 0.0

    @property
    def uneven(self) -> bool:
        """Whether the feet's footfalls need planning step by step (a weaving or uneven path, sideways
        travel, or a favoured leg) rather than the even closed-form sweep."""
        return bool(self.jitter or self.weave or self.sideways or self.hurt_duty != 1.0 or self.good_duty != 1.0)


PLAIN = GaitStyle()
"""The gait as it is (no style)."""


@cache
def _table() -> dict[str, dict[str, GaitStyle]]:
    """style name → kind → its GaitStyle, from ``gait_styles.json`` (a bad field raises naming it)."""
    fields = {f.name for f in dataclasses.fields(GaitStyle)}
    out: dict[str, dict[str, GaitStyle]] = {}
    for name, entry in read_table("gait_styles.json")["styles"].items():
        kinds = tuple(entry["kinds"])
        shared = {k: v for k, v in entry.items() if k in fields}
        unknown = set(entry) - fields - {"about", "kinds", *kinds}
        if unknown:
            raise ValueError(f"gait_styles.json: style {name!r} has unknown fields {sorted(unknown)}")
        out[name] = {kind: GaitStyle(**{**shared, **entry.get(kind, {})}) for kind in kinds}
    return out


GAIT_STYLES: dict[str, tuple[str, ...]] = {
    kind: tuple(name for name, per_kind in _table().items() if kind in per_kind)
    for kind in dict.fromkeys(k for per_kind in _table().values() for k in per_kind)
}
"""kind → the gait styles it plays (``Variation.style``), in the data file's order."""

GAIT_LABELS: dict[str, tuple[str, ...]] = {"biped": ("walk", "run"), "quadruped": ("walk", "run", "gallop")}
"""kind → the labels of its motions played by the gait, which play the styles."""


def gait_style(kind: str, name: str | None) -> GaitStyle:
    """The style ``name`` as a ``kind`` character plays it (:data:`PLAIN` for None); ValueError naming
    the style and the known ones when the kind does not play it."""
    if name is None:
        return PLAIN
    per_kind = _table().get(name, {})
    if kind not in per_kind:
        known = ", ".join(GAIT_STYLES.get(kind, ())) or "none"
        raise ValueError(f"unknown gait style {name!r} for a {kind} character (known: {known})")
    return per_kind[kind]
