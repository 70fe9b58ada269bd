"""Styles of the gaits (``Variation.style``), each checked from the motion on the skinned mesh of
three rigs of its kind against the plain walk on the same rig: a sneak is lower and slower, a limp's
feet stand for uneven times, a stumble weaves, a skip leaves the ground, a march lifts the knees …;
planted feet slide no more than the walk's, nothing goes below the floor, and no style is the gait
as it was."""

from __future__ import annotations

import dataclasses
import functools
import hashlib

import numpy as np
import pytest

from akd_blender.core.character.procedural import biped, quadruped
from akd_blender.core.character.roles import find_roles
from akd_blender.core.motion.library import GAIT_STYLES, make_role_clip
from akd_blender.core.motion.library.gait_styles import GAIT_LABELS, gait_style
from akd_blender.core.motion.library.labelled import Variation
from tests.core.library_checks import Measured
from tests.core.role_fixtures import family_character
from tools.family import make_member
from tools.family.truth import truth_roles

FRAMES, FPS = 24, 12.0
RIGS = {
    "biped": ("procedural_biped", "family_biped_5", "family_biped_2"),
    "quadruped": ("procedural_quadruped", "family_quadruped_0", "family_quadruped_3"),
}


@functools.cache
def character(name: str):
    if name.startswith("procedural_"):
        rig = {"procedural_biped": biped, "procedural_quadruped": quadruped}[name]()
        return rig, find_roles(rig)
    _, kind, seed = name.split("_")
    return family_character(kind, int(seed))


@functools.cache
def measured(name: str, style: str | None, label: str = "walk", direction: int = 1) -> Measured:
    rig, roles = character(name)
    clip = make_role_clip(rig, roles, label, Variation(style=style, direction=direction), FRAMES, FPS)
    return Measured(rig, roles, clip, 0.0)


# --------------------------------------------------------------------------- what is measured


def speed(m: Measured) -> float:
    """Horizontal distance the body's centre travelled, in heights."""
    move = m.centroid()[-1] - m.centroid()[0]
    return float(np.linalg.norm(move - (move @ m.up) * m.up) / m.H)


def root_height(m: Measured) -> float:
    """Mean height of the root above the ground, in heights."""
    return float(m.root_height().mean() / m.H)


def airborne(m: Measured) -> int:
    """Frames with every vertex at least 1 % of the height off the ground."""
    return int((m.height().min(1) > 0.01 * m.H).sum())


def stance_frames(m: Measured) -> dict[str, int]:
    """Leg (position and side) → the longest spell its foot (the bones below the knee's: foot and
    toes) stays on the ground, in frames (lowest vertex within 1 % of the height of the ground)."""
    out = {}
    for limb in m.roles.legs:
        down = m.height(m.of(limb.bones[2:] or limb.bones[-1:])).min(1) < 0.01 * m.H
        edges = np.flatnonzero(np.diff(np.concatenate([[0], down.astype(int), [0]])))
        out[f"{limb.position}{limb.side}"] = int(max(np.diff(edges)[::2], default=0))
    return out


def stance_asymmetry(m: Measured) -> int:
    """The most the longest spells down of a left foot and the right foot at the same position (front,
    hind; a biped's two) differ, frames."""
    frames = stance_frames(m)
    positions = {limb.position for limb in m.roles.legs}
    return max(abs(frames.get(f"{at}left", 0) - frames.get(f"{at}right", 0)) for at in positions)


def weave(m: Measured) -> float:
    """How far the root's path strays sideways from the straight line between its ends, in heights."""
    root = m.joints[:, m.roles.root]
    path = root - root[0]
    line = path[-1] - (path[-1] @ m.up) * m.up
    line = line / max(np.linalg.norm(line), 1e-12)
    aside = path - np.outer(path @ line, line) - np.outer(path @ m.up, m.up)
    return float(np.linalg.norm(aside, axis=1).max() / m.H)


def knee_height(m: Measured) -> float:
    """Highest any knee (the second joint of a leg) gets above the ground, in heights."""
    knees = [limb.bones[1] for limb in m.roles.legs if len(limb.bones) > 1]
    return float(max((m.joints[:, knees] @ m.up).max() - m.ground, 0.0) / m.H)


def hands_ahead(m: Measured) -> float:
    """Median over frames of how far the hands' centre is ahead of the chest, in heights."""
    chest = m.joints[:, m.roles.spine[-1] if m.roles.spine else m.roles.root]
    hands = np.mean([m.verts[:, m.of(limb.bones[-1:])].mean(1) for limb in m.roles.arms], axis=0)
    return float(np.median((hands - chest) @ m.forward) / m.H)


def head_height(m: Measured) -> float:
    """Mean height of the head's vertices, in heights."""
    head = m.of([m.roles.head] if m.roles.head is not None else m.roles.neck[-1:])
    return float(m.height(head).mean() / m.H)


def torso_lean(m: Measured) -> float:
    """Mean sine of the tilt towards the facing of the line from the root to the top of the torso (the
    head's joint, else the last neck or spine joint away from the root), positive leaning forward."""
    roles = m.roles
    candidates = [b for b in ((roles.head,) if roles.head is not None else ()) + roles.neck[::-1] + roles.spine[::-1]]
    top = next(b for b in candidates if np.linalg.norm(m.rig.heads[b] - m.rig.heads[roles.root]) > 0.05 * m.H)
    line = m.joints[:, top] - m.joints[:, roles.root]
    return float(np.mean((line @ m.forward) / np.linalg.norm(line, axis=1)))


def slip(m: Measured) -> float:
    """Median horizontal slide per frame of foot vertices on the ground in two successive frames, as a
    share of the body's median speed per frame (0: planted feet never slide)."""
    feet = m.of([limb.bones[-1] for limb in m.roles.legs])
    heights = m.height(feet)
    horizontal = m.verts[:, feet] - (m.verts[:, feet] @ m.up)[..., None] * m.up
    contact = heights < 0.01 * m.H
    slides = [
        np.median(np.linalg.norm(horizontal[f + 1, both] - horizontal[f, both], axis=1))
        for f in range(len(heights) - 1)
        if (both := contact[f] & contact[f + 1]).any()
    ]
    pace = np.median(np.linalg.norm(np.diff(m.centroid(), axis=0), axis=1))
    return float(np.median(slides) / max(pace, 1e-12)) if slides else 0.0


def lowest(m: Measured) -> float:
    """The lowest any vertex gets relative to the ground, in heights."""
    return float(m.height().min() / m.H)


def facing_change(m: Measured) -> float:
    """Degrees the line between the hips turned about up from the first frame, at most."""
    hips = [next(limb for limb in m.roles.legs if limb.side == side).bones[0] for side in ("left", "right")]
    across = m.joints[:, hips[0]] - m.joints[:, hips[1]]
    across = across - np.outer(across @ m.up, m.up)
    turned = np.arctan2(np.cross(across[0], across) @ m.up, across @ across[0])
    return float(np.degrees(np.abs(turned).max()))


def leg_gap(m: Measured) -> float:
    """The closest the left and right legs below the hips come to each other, in heights."""
    left, right = (next(limb for limb in m.roles.legs if limb.side == side) for side in ("left", "right"))
    a, b = (m.verts[:, m.of(limb.bones[1:])][:, ::3] for limb in (left, right))
    return float(np.linalg.norm(a[:, :, None] - b[:, None], axis=-1).min() / m.H)


def travel_axes(m: Measured) -> tuple[float, float]:
    """(forward, to the left) travel of the body's centre, in heights."""
    move = m.centroid()[-1] - m.centroid()[0]
    return float(move @ m.forward / m.H), float(move @ m.left / m.H)


# --------------------------------------------------------------------------- checks per style


def _sneak(m: Measured, walk: Measured) -> None:
    assert root_height(m) < root_height(walk) - 0.03, (root_height(m), root_height(walk))
    assert speed(m) < 0.8 * speed(walk), (speed(m), speed(walk))


def _crouched(m: Measured, walk: Measured) -> None:
    assert root_height(m) < 0.85 * root_height(walk), (root_height(m), root_height(walk))


def _limp(m: Measured, walk: Measured) -> None:
    assert stance_asymmetry(m) >= 0.15 * FRAMES, stance_frames(m)
    assert stance_asymmetry(walk) < stance_asymmetry(m), (stance_frames(walk), stance_frames(m))


def _stumble(m: Measured, walk: Measured) -> None:
    assert weave(m) > weave(walk) + 0.04, (weave(m), weave(walk))


def _skip(m: Measured, walk: Measured) -> None:
    assert airborne(m) >= 3 and airborne(walk) == 0, (airborne(m), airborne(walk))


def _march(m: Measured, walk: Measured) -> None:
    assert knee_height(m) > knee_height(walk) + 0.04, (knee_height(m), knee_height(walk))


def _shamble(m: Measured, walk: Measured) -> None:
    assert hands_ahead(m) > 0.15, hands_ahead(m)
    assert hands_ahead(m) > hands_ahead(walk) + 0.1, (hands_ahead(m), hands_ahead(walk))


def _tired(m: Measured, walk: Measured) -> None:
    assert speed(m) < 0.8 * speed(walk), (speed(m), speed(walk))
    assert head_height(m) < head_height(walk) - 0.02, (head_height(m), head_height(walk))


def _proud(m: Measured, walk: Measured) -> None:
    assert torso_lean(m) <= torso_lean(walk), (torso_lean(m), torso_lean(walk))


def _strafe(m: Measured, walk: Measured) -> None:
    ahead, left = travel_axes(m)
    assert left > 0.1 and abs(ahead) < 0.25 * left, (ahead, left)
    assert facing_change(m) < 3, facing_change(m)
    assert leg_gap(m) > 0.01, leg_gap(m)  # the legs step clear of each other


CHECKS = {
    "sneak": _sneak,
    "stalk": _sneak,
    "crouched": _crouched,
    "limp": _limp,
    "stumble": _stumble,
    "skip": _skip,
    "march": _march,
    "shamble": _shamble,
    "tired": _tired,
    "proud": _proud,
    "strafe": _strafe,
}

CASES = [(name, style) for kind, names in RIGS.items() for style in GAIT_STYLES[kind] for name in names]


@pytest.mark.parametrize("name,style", CASES, ids=[f"{n}-{s}" for n, s in CASES])
def test_style_shows_in_the_motion(name, style):
    m, walk = measured(name, style), measured(name, None)
    assert np.isfinite(m.clip.rotations).all() and np.isfinite(m.clip.locations).all()
    CHECKS[style](m, walk)
    assert lowest(m) > -0.005, lowest(m)  # no foot below the floor
    assert slip(m) <= slip(walk) + 0.05, (slip(m), slip(walk))  # planted feet stay planted
    if style != "strafe":
        assert travel_axes(m)[0] > 0.05  # still travels forward


def test_every_style_has_a_check_and_the_lists_are_public():
    assert set(GAIT_STYLES) == {"biped", "quadruped"}
    assert set(GAIT_STYLES["biped"]) >= {
        "sneak",
        "limp",
        "stumble",
        "shamble",
        "march",
        "skip",
        "tired",
        "proud",
        "crouched",
        "strafe",
    }
    assert set(GAIT_STYLES["quadruped"]) >= {"sneak", "stalk", "limp", "tired"}
    assert {s for styles in GAIT_STYLES.values() for s in styles} <= set(CHECKS)
    assert set(GAIT_LABELS) == set(GAIT_STYLES)


def test_strafe_goes_the_way_the_direction_says():
    ahead, left = travel_axes(measured("family_biped_5", "strafe", direction=-1))
    assert left < -0.1 and abs(ahead) < 0.25 * abs(left), (ahead, left)


@pytest.mark.parametrize("kind", ["biped", "quadruped"])
def test_styles_play_on_every_gait_label(kind):
    rig, roles = character(RIGS[kind][0])
    for label in GAIT_LABELS[kind]:
        for style in GAIT_STYLES[kind]:
            clip = make_role_clip(rig, roles, label, Variation(style=style), 4, FPS)
            assert np.isfinite(clip.rotations).all() and np.isfinite(clip.locations).all(), (label, style)


def test_unknown_style_is_named_with_the_known_ones():
    rig, roles = character("procedural_quadruped")
    with pytest.raises(ValueError, match=r"'moonwalk'.*sneak.*limp"):
        make_role_clip(rig, roles, "walk", Variation(style="moonwalk"), 4, FPS)
    with pytest.raises(ValueError, match=r"'march'.*quadruped"):  # a biped's style on a quadruped
        make_role_clip(rig, roles, "walk", Variation(style="march"), 4, FPS)
    with pytest.raises(ValueError, match="known"):
        gait_style("bird", "sneak")


def _checksum(clip) -> str:
    data = np.round(np.concatenate([clip.rotations.ravel(), clip.locations.ravel()]), 9) + 0.0
    return hashlib.sha256(data.astype("<f8").tobytes()).hexdigest()[:16]


PINNED = {
    ("biped", 5, "walk"): "6495181861c0f689",
    ("biped", 5, "run"): "53001e3ae6e6ed9f",
    ("quadruped", 0, "walk"): "99abef49ccee0e6f",
    ("quadruped", 0, "gallop"): "437c6d526db219ea",
}


@pytest.mark.parametrize("kind,seed,label", sorted(PINNED))
def test_no_style_is_the_gait_as_it_was(kind, seed, label):
    """style=None plays the gait bit for bit as a variation without it, and as the gait was before
    styles (checksums pinned; the family member's roles from its own truth, not the finder)."""
    member = make_member(kind, seed)
    rig, roles = member.rig, truth_roles(member)
    v = Variation(speed=0.9, phase=0.3)
    plain = make_role_clip(rig, roles, label, v, 32, FPS)
    none = make_role_clip(rig, roles, label, dataclasses.replace(v, style=None), 32, FPS)
    assert plain.rotations.tobytes() == none.rotations.tobytes() and plain.locations.tobytes() == none.locations.tobytes()
    assert _checksum(plain) == PINNED[(kind, seed, label)]
