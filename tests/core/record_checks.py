"""The facts a motion record declares (its ``checks``) and the craft every played record must show,
read from the motion itself: the skinned mesh and the joints of a :class:`~tests.core.library_checks.Measured`
(armature space, body-frame axes). Shared by the core tests on procedural characters and the Blender
tests on artist rigs."""

from __future__ import annotations

import numpy as np

from akd_blender.core.motion.library.limbs import arm_bones
from akd_blender.core.motion.library.records import arm_joints
from tests.core.library_checks import Measured, check_in_place, head_turn, leg_length, travel

NEAR = 0.12
"""How close (body heights) a hand must come to a landmark's skin to count as reaching it."""


def _other(side: str) -> str:
    return "left" if side == "right" else "right"


def _sides(check: dict, side: str) -> list[str]:
    which = check.get("side", "prompted")
    if which == "both":
        return ["left", "right"]
    return [side if which == "prompted" else _other(side)]


def _arm(m: Measured, side: str):
    arm = m.roles.limb("arms", side)
    assert arm is not None, f"no {side} arm"
    return arm


def _upper_arm(m: Measured, side: str) -> int:
    return arm_bones(m.rig, _arm(m, side), m.up)[0]


def hand_mask(m: Measured, side: str) -> np.ndarray:
    """[V] the hand's skin: the vertices of the arm's last bone and the bones below it (fingers); the
    far third of the forearm's for an arm without a hand bone."""
    hand = _arm(m, side).bones[-1]
    below = [b for b in range(m.rig.num_bones) if _descends(m, b, hand)]
    mask = m.of([hand, *below])
    if len(arm_bones(m.rig, _arm(m, side), m.up)) < 3:
        reach = np.linalg.norm(m.rest - m.rig.heads[hand], axis=1)
        mask = mask & (reach > 0.67 * reach[mask].max())
    return mask


def _descends(m: Measured, bone: int, ancestor: int) -> bool:
    while bone >= 0:
        bone = int(m.rig.parents[bone])
        if bone == ancestor:
            return True
    return False


def hand_points(m: Measured, side: str) -> np.ndarray:
    """[F,3] the centroid of the hand's skin (:func:`hand_mask`)."""
    return m.verts[:, hand_mask(m, side)].mean(1)


def _head_mask(m: Measured) -> np.ndarray:
    return m.of([m.roles.head] if m.roles.head is not None else m.roles.neck[-1:])


def _torso_mask(m: Measured) -> np.ndarray:
    return m.of([m.roles.root, *m.roles.spine])


def _skin_distance(m: Measured, points: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """[F] distance from ``points`` [F,3] to the nearest vertex of ``mask`` in the same frame."""
    return np.linalg.norm(m.verts[:, mask] - points[:, None], axis=-1).min(1)


def _shoulder_height(m: Measured, side: str) -> np.ndarray:
    return m.joints[:, _upper_arm(m, side)] @ m.up - m.ground


def reaches(m: Measured, side: str, landmark: str, within: float = NEAR) -> np.ndarray:
    """[F] bool: the ``side`` hand is at ``landmark`` in that frame, read from the skin: near the head
    (in front of it for the face, above its centre for the brow and eyes, below for the mouth and chin,
    beside it for the ear, behind it for the back of the head, over it for the top); near the torso in
    front of the chest or belly; at the hips' height beside them; above the head; on the floor."""
    hand = hand_points(m, side)
    head = _head_mask(m)
    centre = m.verts[:, head].mean(1)
    rel = np.einsum("fji,fj->fi", head_rotations(m), hand - centre)  # in the head's own (rest) frame
    ahead, above = rel @ m.roles.frame.forward, rel @ m.up
    near_head = _skin_distance(m, hand, head) < within * m.H
    head_size = np.ptp(m.rest[head] @ m.up)
    if landmark in ("brow", "eyes"):
        return near_head & (ahead > 0) & (above > -0.1 * head_size)
    if landmark in ("mouth", "chin"):
        return near_head & (ahead > 0) & (above < 0.2 * head_size)
    if landmark == "ear":
        out = np.asarray(m.roles.frame.left) * (1.0 if side == "left" else -1.0)
        return near_head & (rel @ out > 0.2 * head_size)
    if landmark == "back_of_head":
        return near_head & (ahead < 0.1 * head_size)
    if landmark == "top_of_head":
        return near_head & (above > 0.2 * head_size)
    if landmark in ("chest", "belly"):
        spine = m.joints[:, m.roles.spine[0] if m.roles.spine else m.roles.root]
        in_front = (hand - spine) @ m.forward > 0
        height = hand @ m.up - m.ground
        shoulder = _shoulder_height(m, side)
        root = m.root_height()
        band = (height < shoulder + 0.03 * m.H) & (height > root - 0.05 * m.H)
        return (_skin_distance(m, hand, _torso_mask(m)) < within * m.H) & in_front & band
    if landmark == "hip":
        height = hand @ m.up - m.ground
        aside = (hand - m.joints[:, m.roles.root]) @ (m.left if side == "left" else -m.left)
        return (np.abs(height - m.root_height()) < 0.12 * m.H) & (aside > 0.03 * m.H)
    if landmark == "overhead":
        return _hand_top(m, side) > m.height(head).max(1)
    if landmark == "floor":
        return m.height(hand_mask(m, side)).min(1) < 0.08 * m.H
    if landmark == "forward":
        shoulder = m.joints[:, _upper_arm(m, side)]
        return (hand - shoulder) @ m.forward > 0.15 * m.H
    raise ValueError(f"no reading for landmark {landmark!r}")


def head_rotations(m: Measured) -> np.ndarray:
    """[F,3,3] the head's rotation from rest in each frame (the best rotation taking the rest head
    vertices to the frame's, Kabsch; armature space)."""
    head = _head_mask(m)
    rest = m.rest[head] - m.rest[head].mean(0)
    out = []
    for verts in m.verts[:, head]:
        u, _, vt = np.linalg.svd((verts - verts.mean(0)).T @ rest)
        out.append(u @ np.diag([1.0, 1.0, np.sign(np.linalg.det(u @ vt))]) @ vt)
    return np.stack(out)


def elbow_angle(m: Measured, side: str) -> np.ndarray:
    """[F] degrees the elbow is bent (0: straight), from the shoulder, elbow and wrist joints over any
    twist segments (:func:`~akd_blender.core.motion.library.records.arm_joints`; zeros for an arm of
    two segments)."""
    upper, fore, hand = arm_joints(m.rig, arm_bones(m.rig, _arm(m, side), m.up))
    if hand is None:
        return np.zeros(len(m.joints))
    shoulder, elbow, wrist = (m.joints[:, b] for b in (upper, fore, hand))
    a, b = elbow - shoulder, wrist - elbow
    cos = (a * b).sum(-1) / np.maximum(np.linalg.norm(a, axis=-1) * np.linalg.norm(b, axis=-1), 1e-12)
    return np.degrees(np.arccos(np.clip(cos, -1, 1)))


def _head_top(m: Measured) -> np.ndarray:
    return m.height(_head_mask(m)).max(1)


def _runs(mask: np.ndarray) -> int:
    return int(mask[0]) + int(np.sum(mask[1:] & ~mask[:-1]))


def check_fact(m: Measured, check: dict, side: str) -> None:
    """Assert one declared fact of a record (its first key names which; see :data:`READINGS`)."""
    name = next(iter(check))
    READINGS[name](m, check, side)


def _hand_near(m, check, side):
    for s in _sides(check, side):
        hit = reaches(m, s, check["hand_near"], float(check.get("within", NEAR)))
        assert hit.sum() >= int(check.get("frames", 2)), (check, s, hit)


def arm_length(m: Measured, side: str) -> float:
    """The arm's rest length: shoulder joint to the hand's farthest vertex."""
    return float(np.linalg.norm(m.rest[hand_mask(m, side)] - m.rig.heads[_upper_arm(m, side)], axis=1).max())


def _hand_hangs(m, check, side):
    s = side if check["hand_hangs"] == "prompted" else _other(side)
    hand = hand_points(m, s) @ m.up - m.ground
    assert (hand < _shoulder_height(m, s) - 0.6 * arm_length(m, s)).all(), (s, hand, _shoulder_height(m, s))


def _hand_top(m: Measured, side: str) -> np.ndarray:
    """[F] the height of the hand's highest vertex."""
    return m.height(hand_mask(m, side)).max(1)


def _hands_above_head(m, check, side):
    above = sum((_hand_top(m, s) > _head_top(m)).astype(int) for s in ("left", "right"))
    assert above.max() >= int(check["hands_above_head"]), above


def _hand_above_head(m, check, side):
    for s in _sides(check, side):
        assert (_hand_top(m, s) > _head_top(m)).any(), s


def _hands_together(m, check, side):
    gap = np.linalg.norm(hand_points(m, "left") - hand_points(m, "right"), axis=1)
    assert gap.min() < float(check["hands_together"]) * m.H, gap.min() / m.H


def _hand_below(m, check, side):
    for s in _sides(check, side):
        low = m.height(hand_mask(m, s)).min(1)
        assert low.min() < float(check["hand_below"]) * m.H, (s, low.min() / m.H)


def _hand_forward(m, check, side):
    for s in _sides(check, side):
        ahead = (hand_points(m, s) - m.joints[:, m.roles.root]) @ m.forward
        assert ahead.max() > float(check["hand_forward"]) * m.H, (s, ahead.max() / m.H)


def _hand_behind(m, check, side):
    for s in _sides(check, side):
        behind = (m.joints[:, m.roles.root] - hand_points(m, s)) @ m.forward
        assert behind.max() > float(check["hand_behind"]) * m.H, (s, behind.max() / m.H)


def _hand_above_shoulder(m, check, side):
    for s in _sides(check, side):
        over = hand_points(m, s) @ m.up - m.ground - _shoulder_height(m, s)
        assert over.max() > float(check["hand_above_shoulder"]) * m.H, (s, over.max() / m.H)


def _elbows_bent(m, check, side):
    for s in _sides(check, side):
        if arm_joints(m.rig, arm_bones(m.rig, _arm(m, s), m.up))[2] is None:
            continue  # an arm of two segments has no elbow to read
        assert elbow_angle(m, s).max() > float(check["elbows_bent"]), (s, elbow_angle(m, s).max())


def _feet_planted(m, check, side):
    if check["feet_planted"]:
        for leg in m.roles.legs:
            planted(m, leg)


def _in_place(m, check, side):
    if check["in_place"]:
        check_in_place(m)


def _root_below(m, check, side):
    root = m.root_height()
    assert root.min() < float(check["root_below"]) * root[0], (root.min(), root[0])


def _root_rises(m, check, side):
    root = m.root_height()
    assert root[-1] - root[0] > float(check["root_rises"]) * m.H, (root[0] / m.H, root[-1] / m.H)


def _root_bounces(m, check, side):
    root = m.root_height()
    low = root < root.max() - 0.5 * np.ptp(root)
    assert np.ptp(root) > float(check["root_bounces"]) * m.H and _runs(low) >= 2, root / m.H


def _airborne(m, check, side):
    assert m.height().min(1).max() > float(check["airborne"]) * m.H, m.height().min(1).max() / m.H


def _travel(m, check, side):
    ahead, _ = travel(m)
    want = float(check["travel"]) * leg_length(m)
    assert (ahead > want) if want > 0 else (ahead < want), (ahead / leg_length(m), check)


def _head_below(m, check, side):
    head = m.height(_head_mask(m)).mean(1)
    assert head.min() < float(check["head_below"]) * m.rest_height(_head_mask(m)).mean(), head


def _head_above(m, check, side):
    head = m.height(_head_mask(m)).mean(1)
    assert head.max() > float(check["head_above"]) * m.rest_height(_head_mask(m)).mean(), head


def _lying(m, check, side):
    head = m.height(_head_mask(m)).mean(1)
    assert head[-1] < 0.35 * m.rest_height(_head_mask(m)).mean(), head[-1]
    chest = m.joints[-1, m.roles.spine[-1] if m.roles.spine else m.roles.head] - m.joints[-1, m.roles.root]
    assert abs(chest @ m.up) < 0.5 * np.linalg.norm(chest), chest


def _head_pitch_below(m, check, side):
    _, pitch = head_turn(m)
    assert (pitch - pitch[0]).min() < float(check["head_pitch_below"]), pitch


def _head_pitch_above(m, check, side):
    _, pitch = head_turn(m)
    assert (pitch - pitch[0]).max() > float(check["head_pitch_above"]), pitch


def _foot_raised(m, check, side):
    position = check.get("position", "")
    legs = m.roles.legs if check.get("side") == "any" else [m.roles.limb("legs", s, position) for s in _sides(check, side)]
    best = max(m.height(m.of(leg.bones[-1:])).min(1).max() for leg in legs if leg is not None)
    assert best > float(check["foot_raised"]) * m.H, best / m.H


def _feet_raised(m, check, side):
    position = check.get("position", "")
    legs = [leg for leg in m.roles.legs if not position or leg.position == position]
    lowest = np.min([m.height(m.of(leg.bones[-1:])).min(1) for leg in legs], axis=0)
    assert lowest.max() > float(check["feet_raised"]) * m.H, lowest.max() / m.H


def _feet_down(m, check, side):
    position = check.get("position", "")
    legs = [leg for leg in m.roles.legs if not position or leg.position == position]
    for leg in legs:
        assert m.height(m.of(leg.bones[-1:])).min(1).max() < float(check["feet_down"]) * m.H, leg


def _rolled(m, check, side):
    legs = [m.roles.limb("legs", s, "hind") or m.roles.limb("legs", s) for s in ("left", "right")]
    across = m.joints[:, legs[0].bones[0]] - m.joints[:, legs[1].bones[0]]
    across = across / np.linalg.norm(across, axis=1, keepdims=True)
    turned = np.degrees(np.arccos(np.clip(across @ across[0], -1, 1)))  # the hips' line turned from the first frame
    assert turned.max() > float(check["rolled"]), turned


def _tail_moves(m, check, side):
    if not m.roles.tail:
        return
    tip = m.verts[:, m.of(m.roles.tail[-1:])].mean(1) - m.joints[:, m.roles.root]
    assert np.linalg.norm(tip - tip[:1], axis=1).max() > float(check["tail_moves"]) * m.H


def _torso_twist(m, check, side):
    arms = [m.roles.limb("arms", s) for s in ("left", "right")]
    across = m.joints[:, arms[0].bones[0]] - m.joints[:, arms[1].bones[0]]
    across = across - (across @ m.up)[:, None] * m.up
    a = across[0]
    turn = np.degrees(np.arctan2(np.cross(a, across) @ m.up, across @ a))
    assert np.abs(turn).max() > float(check["torso_twist"]), turn


def _leans(m, check, side):
    chest = m.joints[:, m.roles.spine[-1] if m.roles.spine else m.roles.head] - m.joints[:, m.roles.root]
    forward = np.degrees(np.arctan2(chest @ m.forward, chest @ m.up))
    forward = forward - forward[0]
    want = float(check["leans"])
    assert (forward.max() > want) if want > 0 else (forward.min() < want), forward


def _repeats(m, check, side):
    spec = check["repeats"]
    s = side if spec.get("side", "prompted") == "prompted" else _other(side)
    axis = {"up": m.up, "forward": m.forward, "left": m.left}[spec.get("axis", "up")]
    if spec.get("of") == "root":
        x = m.root_height()
    elif spec.get("of") == "head":
        x = m.height(_head_mask(m)).mean(1)
    elif spec.get("of") == "foot":
        x = m.height(m.of(m.roles.limb("legs", s, spec.get("position", "")).bones[-1:])).min(1)
    else:
        x = (hand_points(m, s) - m.joints[:, m.roles.root]) @ axis
    if "window" in spec:  # clip fractions
        t = np.arange(len(x)) / len(x)
        x = x[(t >= spec["window"][0]) & (t <= spec["window"][1])]
    x = x - np.median(x)
    high = x > 0.3 * np.abs(x).max()
    assert _runs(high) >= int(spec["times"]) and np.ptp(x) > float(spec.get("range", 0.03)) * m.H, x / m.H


def _hands_crossed(m, check, side):
    across = (hand_points(m, "right") - hand_points(m, "left")) @ m.left  # > 0: the right hand left of the left one
    assert (across > 0.02 * m.H).sum() >= 2, across / m.H


def planted(m: Measured, leg) -> None:
    """Assert the leg's foot stays where it stood: its lowest vertex within 3 % of the height of the
    ground and its skin's centroid within 5 % of the height (horizontally) of where it started, every
    frame (the centroid, not the lowest vertex, which flips between heel and toe on a flat foot)."""
    foot = m.of(leg.bones[-1:])
    heights = m.height(foot)
    assert heights.min(1).max() < 0.03 * m.H, (leg.side, leg.position, heights.min(1) / m.H)
    centre = m.verts[:, foot].mean(1)
    horizontal = centre - (centre @ m.up)[:, None] * m.up
    slide = np.linalg.norm(horizontal - horizontal[:1], axis=1)
    assert slide.max() < 0.05 * m.H, (leg.side, leg.position, slide / m.H)


def _foot_planted(m, check, side):
    planted(m, m.roles.limb("legs", side if check["foot_planted"] == "prompted" else _other(side)))


def _feet_apart(m, check, side):
    feet = [m.verts[:, m.of(m.roles.limb("legs", s).bones[-1:])].mean(1) for s in ("left", "right")]
    apart = np.abs((feet[0] - feet[1]) @ m.forward)
    assert apart.max() > float(check["feet_apart"]) * m.H, apart.max() / m.H


def _hand_crosses(m, check, side):
    out = m.left if side == "left" else -m.left
    across = (hand_points(m, side) - m.joints[:, m.roles.root]) @ out  # < 0: past the midline
    assert across.min() < -0.02 * m.H, across.min() / m.H


def _head_sways(m, check, side):
    head = m.verts[:, _head_mask(m)].mean(1)
    horizontal = head - (head @ m.up)[:, None] * m.up
    assert np.ptp(horizontal @ m.forward) + np.ptp(horizontal @ m.left) > float(check["head_sways"]) * m.H


def _moves(m, check, side):
    moved = np.linalg.norm(m.verts - m.verts[:1], axis=-1).mean(1)
    assert moved.max() > float(check["moves"]) * m.H, moved.max() / m.H


def _feet_wide(m, check, side):
    feet = [m.verts[:, m.of(m.roles.limb("legs", s).bones[-1:])].mean(1) for s in ("left", "right")]
    wide = np.abs((feet[0] - feet[1]) @ m.left)
    assert wide.max() - wide[0] > float(check["feet_wide"]) * m.H * 0.5, (wide - wide[0]) / m.H


def _feet_forward(m, check, side):
    feet = np.mean([m.verts[:, m.of(leg.bones[-1:])].mean(1) for leg in m.roles.legs], axis=0)
    ahead = (feet - m.joints[:, m.roles.root]) @ m.forward
    assert ahead.max() > float(check["feet_forward"]) * m.H, ahead.max() / m.H


def _knee_down(m, check, side):
    shin = m.of(m.roles.limb("legs", side).bones[1:2])
    assert m.height(shin).min(1).min() < float(check["knee_down"]) * m.H, m.height(shin).min() / m.H


def _leans_aside(m, check, side):
    chest = m.joints[:, m.roles.spine[-1] if m.roles.spine else m.roles.head] - m.joints[:, m.roles.root]
    out = m.left if side == "left" else -m.left
    aside = np.degrees(np.arctan2(chest @ out, chest @ m.up))
    assert (aside - aside[0]).max() > float(check["leans_aside"]), aside


def _head_forward(m, check, side):
    head = m.verts[:, _head_mask(m)].mean(1)
    ahead = (head - head[:1]) @ m.forward
    assert ahead.max() > float(check["head_forward"]) * m.H, ahead.max() / m.H


def _head_yaw(m, check, side):
    yaw, _ = head_turn(m)
    toward = -1.0 if side == "right" else 1.0  # positive yaw turns to the left
    assert (toward * (yaw - yaw[0])).max() > float(check["head_yaw"]), yaw


def _head_roll(m, check, side):
    rotations = head_rotations(m)
    out = np.asarray(m.roles.frame.left) * (1.0 if side == "left" else -1.0)
    side_up = np.degrees(np.arcsin(np.clip((rotations @ m.up) @ out, -1, 1)))  # the head's up tipped toward the side
    assert (side_up - side_up[0]).max() > float(check["head_roll"]), side_up


def _max_speed(m, check, side):
    speed = np.linalg.norm(np.diff(m.joints, axis=0), axis=-1).max() * m.clip.fps
    assert speed < float(check["max_speed"]) * m.H, speed / m.H


READINGS = {
    "head_forward": _head_forward,
    "head_yaw": _head_yaw,
    "head_roll": _head_roll,
    "feet_wide": _feet_wide,
    "feet_forward": _feet_forward,
    "knee_down": _knee_down,
    "leans_aside": _leans_aside,
    "feet_apart": _feet_apart,
    "hand_crosses": _hand_crosses,
    "head_sways": _head_sways,
    "moves": _moves,
    "hands_crossed": _hands_crossed,
    "foot_planted": _foot_planted,
    "max_speed": _max_speed,
    "hand_near": _hand_near,
    "hand_hangs": _hand_hangs,
    "hands_above_head": _hands_above_head,
    "hand_above_head": _hand_above_head,
    "hands_together": _hands_together,
    "hand_below": _hand_below,
    "hand_forward": _hand_forward,
    "hand_behind": _hand_behind,
    "hand_above_shoulder": _hand_above_shoulder,
    "elbows_bent": _elbows_bent,
    "feet_planted": _feet_planted,
    "in_place": _in_place,
    "root_below": _root_below,
    "root_rises": _root_rises,
    "root_bounces": _root_bounces,
    "airborne": _airborne,
    "travel": _travel,
    "head_below": _head_below,
    "head_above": _head_above,
    "lying": _lying,
    "head_pitch_below": _head_pitch_below,
    "head_pitch_above": _head_pitch_above,
    "foot_raised": _foot_raised,
    "feet_raised": _feet_raised,
    "feet_down": _feet_down,
    "rolled": _rolled,
    "tail_moves": _tail_moves,
    "torso_twist": _torso_twist,
    "leans": _leans,
    "repeats": _repeats,
}
"""A check's first key → the reading that asserts it on a :class:`Measured` motion played on ``side``."""


def check_craft(m: Measured, speed: float = 3.0, eases: bool = True) -> None:
    """What an animator expects of every played record: nothing sinks through the floor (no vertex,
    no hand, more than 2 % of the height below the ground); no joint moves faster than ``speed``
    body heights a second between two frames; with ``eases``, the motion eases in from its first
    pose and out into its last (the joints' largest step grows from the first step to the second and
    shrinks from the last but one to the last)."""
    assert np.isfinite(m.verts).all()
    assert m.height().min() > -0.02 * m.H, m.height().min() / m.H
    step = np.linalg.norm(np.diff(m.joints, axis=0), axis=-1).max() * m.clip.fps
    assert step < speed * m.H, step / m.H
    if eases:
        steps = np.linalg.norm(np.diff(m.joints, axis=0), axis=-1).max(1)
        tol = 1e-3 * m.H
        assert steps[0] <= steps[1] + tol and steps[-1] <= steps[-2] + tol, (steps[:2] / m.H, steps[-2:] / m.H)
