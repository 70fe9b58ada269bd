"""Observable effects of the role-based library's motions, measured on the skinned mesh (shared by
the core tests on procedural characters and the Blender tests on artist rigs)."""

from __future__ import annotations

import functools

import numpy as np
import torch

from akd_blender.core.character.kinematics import Skeleton
from akd_blender.core.character.rig import RigAsset
from akd_blender.core.character.roles import BoneRoles
from akd_blender.core.motion.clip import MotionClip


def _turn(vector: np.ndarray, up: np.ndarray, angle: float) -> np.ndarray:
    return vector * np.cos(angle) + np.cross(up, vector) * np.sin(angle) + up * (up @ vector) * (1 - np.cos(angle))


class Measured:
    """A clip played on a rig, measured on its skinned mesh (armature space, body-frame axes)."""

    def __init__(self, rig: RigAsset, roles: BoneRoles, clip: MotionClip, facing: float) -> None:
        self.rig, self.roles, self.clip = rig, roles, clip
        skeleton = Skeleton(rig, torch.float64)
        self.verts = skeleton(clip, space="armature").numpy()
        self.rest = skeleton(MotionClip.rest(rig, 1), space="armature").numpy()[0]
        self.joints = skeleton.joint_positions(*clip.pose_channels(torch.float64), space="armature").numpy()
        f = roles.frame
        self.up, self.H, self.ground = f.up, f.height, f.ground
        self.forward = _turn(f.forward, f.up, facing)
        self.left = np.cross(self.up, self.forward)
        self.owner = rig.weights.argmax(1)

    def of(self, bones) -> np.ndarray:
        mask = np.isin(self.owner, list(bones)) & (self.rig.weights.max(1) > 0)
        assert mask.any(), bones
        return mask

    def height(self, mask=slice(None)) -> np.ndarray:
        """[F,n] heights above the rest ground of the chosen vertices."""
        return self.verts[:, mask] @ self.up - self.ground

    def rest_height(self, mask) -> np.ndarray:
        return self.rest[mask] @ self.up - self.ground

    def centroid(self) -> np.ndarray:
        return self.verts.mean(1)

    def root_height(self) -> np.ndarray:
        return self.joints[:, self.roles.root] @ self.up - self.ground

    def facing_angles(self) -> float:
        """Degrees the left-minus-right leg centroid turned about up between the first and last frame."""
        left = self.of([b for limb in self.roles.legs if limb.side == "left" for b in limb.bones])
        right = self.of([b for limb in self.roles.legs if limb.side == "right" for b in limb.bones])
        side = self.verts[:, left].mean(1) - self.verts[:, right].mean(1)
        side = side - (side @ self.up)[:, None] * self.up
        a, b = side[0], side[-1]
        return float(np.degrees(np.arctan2(np.cross(a, b) @ self.up, a @ b)))

    def limb_end(self, group: str, side: str, position: str = "") -> np.ndarray:
        limb = self.roles.limb(group, side, position)
        return self.of(limb.bones[-1:])


def travel(m: Measured) -> tuple[float, float]:
    move = m.centroid()[-1] - m.centroid()[0]
    return float(move @ m.forward), float(abs(move @ m.left))


def leg_length(m: Measured) -> float:
    return float(np.mean([m.rig.heads[limb.bones[0]] @ m.up - m.ground for limb in m.roles.legs]))


def _head(m: Measured) -> np.ndarray:
    """The head's vertices (the last neck bone's when the rig has no head bone)."""
    return m.of([m.roles.head] if m.roles.head is not None else m.roles.neck[-1:])


def check_gait(m: Measured, flight: float = 0.06) -> None:
    ahead, aside = travel(m)
    assert ahead > 1.0 * leg_length(m), ahead
    assert aside < 0.15 * ahead
    lowest = m.height().min(1)
    assert lowest.max() < flight * m.H  # a foot stays near the ground (a run may leave it briefly)
    # foot vertices on the ground in two successive frames (planted feet) slide far slower than the body
    feet = m.of([limb.bones[-1] for limb in m.roles.legs])
    heights = m.height(feet)
    horizontal = m.verts[:, feet] - (m.verts[:, feet] @ m.up)[..., None] * m.up
    contact = heights < heights.min(1, keepdims=True) + 0.005 * m.H
    slips = [
        np.median(np.linalg.norm(horizontal[f + 1, both] - horizontal[f, both], axis=1))
        for f in range(len(heights) - 1)
        if (both := contact[f] & contact[f + 1]).any()
    ]
    speed = np.linalg.norm(np.diff(m.centroid(), axis=0), axis=1)
    assert len(slips) > 0.5 * len(speed) and np.median(slips) < 0.3 * np.median(speed), (np.median(slips), np.median(speed))


def check_jump(m: Measured, rise: float = 0.08) -> None:
    lowest = m.height().min(1)
    assert lowest.min() < 0.03 * m.H and lowest.max() > rise * m.H, lowest


def check_hop(m: Measured) -> None:
    check_jump(m, 0.03)
    assert travel(m)[0] > 0.3 * leg_length(m)


def check_lowered(m: Measured) -> None:
    root = m.root_height()
    assert root[-1] < root[0] - 0.15 * root[0], root


def check_in_place(m: Measured) -> None:
    move = m.centroid() - m.centroid()[0]
    horizontal = move - (move @ m.up)[:, None] * m.up
    assert np.linalg.norm(horizontal, axis=1).max() < 0.3 * m.H


def check_wave(m: Measured) -> None:
    head_top = m.rest_height(_head(m)).max()
    right, left = m.limb_end("arms", "right"), m.limb_end("arms", "left")
    assert m.height(right).max(1).max() > head_top
    shoulder = m.rig.heads[m.roles.limb("arms", "left").bones[0]] @ m.up - m.ground
    assert m.height(left).max() < shoulder


def check_raise_arms(m: Measured) -> None:
    head_top = m.rest_height(_head(m)).max()
    for side in ("left", "right"):
        assert m.height(m.limb_end("arms", side))[-1].max() > head_top, side


def check_turn(m: Measured) -> None:
    assert abs(m.facing_angles()) > 90


def check_wag(m: Measured) -> None:
    if not m.roles.tail:  # a tailless body sways its hips instead
        assert np.ptp(m.centroid() @ m.left) > 0.0
        return
    tip = m.of(m.roles.tail[-1:])
    tail_length = np.linalg.norm(m.rest[tip].mean(0) - m.rig.heads[m.roles.tail[0]])
    sideways = m.verts[:, tip].mean(1) @ m.left
    assert np.ptp(sideways) > 0.5 * tail_length, (np.ptp(sideways), tail_length)


def check_head_down(m: Measured) -> None:
    head = _head(m)
    assert m.height(head).min(1).min() < 0.5 * m.rest_height(head).min()
    assert m.height(head).min() < 0.25 * m.H


def check_rear_up(m: Measured) -> None:
    front = m.of([limb.bones[-1] for limb in m.roles.legs if limb.position == "front"])
    assert m.height(front).min(1).max() > 0.2 * m.H
    hind = m.of([limb.bones[-1] for limb in m.roles.legs if limb.position == "hind"])
    assert m.height(hind).min(1).max() < 0.05 * m.H  # standing on the hind feet throughout


def check_kick(m: Measured) -> None:
    right, left = m.limb_end("legs", "right"), m.limb_end("legs", "left")
    assert m.height(right).max(1).max() > 0.25 * m.H
    assert m.height(left).min(1).max() < 0.03 * m.H


def check_bow(m: Measured) -> None:
    head = _head(m)
    top = m.height(head).max(1)
    assert top.min() < top[0] - 0.08 * m.H
    assert np.ptp(m.root_height()) < 0.05 * m.H


def check_clap(m: Measured) -> None:
    left, right = m.limb_end("arms", "left"), m.limb_end("arms", "right")
    settled = slice(len(m.verts) // 4, None)  # after the arms came up
    gap = np.linalg.norm(m.verts[:, left].mean(1) - m.verts[:, right].mean(1), axis=1)[settled]
    assert gap.min() < 0.5 * gap.max(), gap
    ahead = (m.verts[:, right].mean(1) - m.joints[:, m.roles.root]) @ m.forward
    assert ahead[settled].min() > 0.05 * m.H


def check_punch(m: Measured) -> None:
    peaks = []
    for side in ("left", "right"):
        hand = m.limb_end("arms", side)
        ahead = ((m.verts[:, hand] - m.joints[:, m.roles.root, None]) @ m.forward).max(1)  # the fist's front
        assert ahead.max() > 0.25 * m.H, side
        peaks.append(int(ahead.argmax()))
    assert peaks[0] != peaks[1]


def check_flap(m: Measured) -> None:
    for limb in m.roles.wings:
        tip = m.of(limb.bones[-1:])
        assert np.ptp(m.height(tip).mean(1)) > 0.15 * m.H


def check_take_off(m: Measured) -> None:
    """Starts on the ground, ends in the air (lowest vertex above 15 % of the height) ahead of where it
    started, the body higher at each third than at the one before."""
    lowest = m.height().min(1)
    assert lowest[0] < 0.03 * m.H and lowest[-1] > 0.15 * m.H, lowest / m.H
    thirds = [lowest[len(lowest) * k // 3 :][: max(len(lowest) // 3, 1)].mean() for k in range(3)]
    assert thirds[0] < thirds[1] < thirds[2], thirds
    assert travel(m)[0] > 0.3 * leg_length(m)


def check_land(m: Measured) -> None:
    """Starts in the air (lowest vertex above 15 % of the height) and ends on the ground."""
    lowest = m.height().min(1)
    assert lowest[0] > 0.15 * m.H and lowest[-1] < 0.03 * m.H, lowest / m.H


def check_glide(m: Measured) -> None:
    """In the air from a quarter of the clip on, sailing ahead, the wings spread and held: after the
    first quarter each wing tip stays within 12 % of the height of its mean height above the root
    (no beat)."""
    lowest = m.height().min(1)
    quarter = len(lowest) // 4
    assert lowest[quarter:].min() > 0.1 * m.H, lowest / m.H
    assert travel(m)[0] > 1.0 * leg_length(m)
    root = m.joints[:, m.roles.root] @ m.up
    for limb in m.roles.wings:
        tip = m.height(m.of(limb.bones[-1:])).mean(1) - root
        assert np.ptp(tip[quarter:]) < 0.12 * m.H, np.ptp(tip[quarter:]) / m.H


def check_peck(m: Measured) -> None:
    head = _head(m)
    assert m.height(head).min(1).min() < 0.6 * m.rest_height(head).min()


def check_raise_front_legs(m: Measured) -> None:
    front = m.of([limb.bones[-1] for limb in m.roles.legs if limb.position == "front"])
    assert m.height(front).min(1).max() > 0.15 * m.H


def head_turn(m: Measured) -> tuple[np.ndarray, np.ndarray]:
    """(yaw [F], pitch [F]) of the head in degrees, read from its vertices (the best rotation taking
    the rest head vertices to each frame's, Kabsch): yaw of the rest forward axis about up from the
    body's facing (positive to the left), pitch above the horizontal."""
    head = _head(m)
    rest = m.rest[head] - m.rest[head].mean(0)
    f0 = m.roles.frame.forward
    yaw, pitch = [], []
    for verts in m.verts[:, head]:
        u, _, vt = np.linalg.svd((verts - verts.mean(0)).T @ rest)
        r = u @ np.diag([1.0, 1.0, np.sign(np.linalg.det(u @ vt))]) @ vt
        d = r @ f0
        yaw.append(np.degrees(np.arctan2(d @ m.left, d @ m.forward)))
        pitch.append(np.degrees(np.arcsin(np.clip(d @ m.up, -1, 1))))
    return np.array(yaw), np.array(pitch)


def _runs(mask: np.ndarray) -> int:
    """How many separate runs of True ``mask`` [F] holds."""
    return int(mask[0]) + int(np.sum(mask[1:] & ~mask[:-1]))


def check_feet_planted(m: Measured) -> None:
    """Every foot stays on the ground where it stood: its lowest vertex within 3 % of the height of
    the ground and within 5 % of where it started, every frame."""
    for limb in m.roles.legs:
        foot = m.of(limb.bones[-1:])
        heights = m.height(foot)
        lowest = heights.argmin(1)
        assert heights.min(1).max() < 0.03 * m.H, (limb.side, limb.position)
        points = m.verts[:, foot][np.arange(len(lowest)), lowest]
        horizontal = points - (points @ m.up)[:, None] * m.up
        assert np.linalg.norm(horizontal - horizontal[:1], axis=1).max() < 0.05 * m.H, (limb.side, limb.position)


def check_look_around(m: Measured) -> None:
    yaw, _ = head_turn(m)
    assert yaw.max() > 25 and yaw.min() < -25, (yaw.min(), yaw.max())
    assert _runs(np.abs(yaw) > 25) == 2, yaw  # one look each way


def check_shake_head(m: Measured) -> None:
    yaw, _ = head_turn(m)
    assert yaw.max() > 12 and yaw.min() < -12, (yaw.min(), yaw.max())
    assert _runs(yaw > 12) + _runs(yaw < -12) >= 4, yaw  # side to side, again and again


def check_nod(m: Measured) -> None:
    yaw, pitch = head_turn(m)
    dip = pitch[0] - pitch
    assert dip.max() > 12, dip
    assert _runs(dip > 0.5 * dip.max()) == 2, dip  # down and up twice
    assert np.abs(yaw).max() < 5


def check_stretch(m: Measured) -> None:
    if m.roles.kind == "biped":
        check_raise_arms_peak(m)
        head = m.joints[:, m.roles.head if m.roles.head is not None else m.roles.neck[-1]]
        back = (head - m.joints[:, m.roles.root]) @ m.forward
        assert back.min() < back[0] - 0.03 * m.H, back  # the spine arches back
        return
    front = [m.roles.limb("legs", s, "front").bones[0] for s in ("left", "right")]
    hind = [m.roles.limb("legs", s, "hind").bones[0] for s in ("left", "right")]
    shoulders = m.joints[:, front].mean(1) @ m.up - m.ground
    hips = m.joints[:, hind].mean(1) @ m.up - m.ground
    assert shoulders.min() < 0.85 * shoulders[0], shoulders  # the chest sinks
    assert hips.min() > 0.9 * hips[0], hips  # the rump stays up


def check_raise_arms_peak(m: Measured) -> None:
    head_top = m.rest_height(_head(m)).max()
    for side in ("left", "right"):
        assert m.height(m.limb_end("arms", side)).max(1).max() > head_top, side


def check_point(m: Measured, side: str = "right") -> None:
    other = "left" if side == "right" else "right"
    hand = m.limb_end("arms", side)
    chest = m.joints[-1, m.roles.spine[-1] if m.roles.spine else m.roles.root]
    tip = m.verts[-1, hand].mean(0)
    assert (tip - chest) @ m.forward > 0.25 * m.H, (tip - chest) @ m.forward
    shoulder = m.joints[-1, m.roles.limb("arms", side).bones[0]]
    assert abs((tip - shoulder) @ m.up) < 0.08 * m.H, (tip - shoulder) @ m.up  # at shoulder height
    assert m.height(m.limb_end("arms", other))[-1].max() < shoulder @ m.up - m.ground


def check_shake(m: Measured) -> None:
    head = _head(m)
    aside = (m.verts[:, head].mean(1) - m.joints[:, m.roles.root]) @ m.left
    aside = aside - np.median(aside)
    assert np.ptp(aside) > 0.03 * m.H, np.ptp(aside)
    assert _runs(aside > 0.25 * aside.max()) + _runs(aside < 0.25 * aside.min()) >= 5, aside


def _hands(m: Measured) -> list[np.ndarray]:
    return [m.of(limb.bones[-1:]) for limb in m.roles.arms]


def check_fall(m: Measured) -> None:
    head = m.height(_head(m)).mean(1)
    assert head[-1] < 0.3 * head[0], head  # lying down at the end
    root = m.root_height()
    assert root[-1] < 0.45 * root[0], root
    ahead = (m.verts[-1, _head(m)].mean(0) - m.verts[0, _head(m)].mean(0)) @ m.forward
    assert ahead > 0.3 * m.H, ahead  # forward, face down
    assert np.abs(np.diff(head[-3:])).max() < 0.01 * m.H  # and still


def check_get_up(m: Measured) -> None:
    head = m.height(_head(m)).mean(1)
    rest = m.rest_height(_head(m)).mean()
    assert head[0] < 0.8 * rest and head[-1] > 0.95 * rest, (head[0], head[-1], rest)
    check_in_place(m)


def check_crawl(m: Measured) -> None:
    ahead, aside = travel(m)
    assert ahead > 0.5 * leg_length(m) and aside < 0.15 * ahead, (ahead, aside)
    head = m.height(_head(m)).mean(1)
    assert head.max() < 0.65 * m.rest_height(_head(m)).mean(), head  # low, on all fours
    for hand in _hands(m):
        assert np.median(m.height(hand).min(1)) < 0.06 * m.H  # the hands on the ground
    shins = [m.height(m.of(limb.bones[1:2])).min(1) for limb in m.roles.legs if len(limb.bones) > 1]
    assert shins and max(float(np.median(s)) for s in shins) < 0.06 * m.H, shins  # and the knees


def check_dance(m: Measured) -> None:
    check_in_place(m)
    assert m.height().min(1).max() < 0.03 * m.H  # never airborne
    root = m.root_height()
    low = root < root.max() - 0.3 * np.ptp(root)
    assert np.ptp(root) > 0.01 * m.H and _runs(low) >= 3, root  # the knees bounce, again and again
    right, left = (m.height(m.limb_end("arms", side)).max(1) for side in ("right", "left"))
    shoulder = m.rig.heads[m.roles.limb("arms", "right").bones[0]] @ m.up - m.ground
    assert (right > shoulder).any() and (left > shoulder).any()  # each arm swings up
    assert np.corrcoef(right, left)[0, 1] < 0, np.corrcoef(right, left)  # in turn


def _band(m: Measured, lo: float, hi: float) -> np.ndarray:
    """[F,3] the centroid of a serpent's skin between ``lo`` and ``hi`` of its rest length from the front."""
    along = m.rest @ m.roles.frame.forward
    place = (along.max() - along) / np.ptp(along)
    return m.verts[:, (place >= lo) & (place <= hi)].mean(1)


def _ends(m: Measured) -> tuple[np.ndarray, np.ndarray]:
    """[F,3] the centroids of the front and back fifths of a serpent's skin."""
    return _band(m, 0.0, 0.2), _band(m, 0.8, 1.0)


def check_slither(m: Measured, reach: float = 0.25) -> None:
    """A serpent's slither or swim: it travels ``reach`` of its length ahead and little aside (the curved
    body's centre sways by up to a tenth of its length), lies on the ground, its body swings side to side,
    and the swing runs from the front back: a quarter of the way along leads the middle (by under half
    a swing)."""
    length = m.roles.frame.length
    ahead, aside = travel(m)
    assert ahead > reach * length and aside < 0.15 * length, (ahead, aside, length)
    assert m.height().min(1).max() < 0.02 * m.H  # on the ground every frame
    centre = m.centroid()
    sway = [(_band(m, lo, lo + 0.1) - centre) @ m.left for lo in (0.2, 0.45)]
    assert max(np.ptp(x) for x in sway) > 0.06 * length, [np.ptp(x) for x in sway]
    f, b = (x - x.mean() for x in sway)
    lags = range(1, len(f) // 2)
    assert max(float(f[:-k] @ b[k:]) for k in lags) > max(float(b[:-k] @ f[k:]) for k in lags)  # front leads


def check_serpent_turn(m: Measured) -> None:
    """The line from a serpent's back to its front turns more than 90° about up."""
    front, back = _ends(m)
    axis = front - back
    axis = axis - (axis @ m.up)[:, None] * m.up
    a, b = axis[0], axis[-1]
    assert abs(np.degrees(np.arctan2(np.cross(a, b) @ m.up, a @ b))) > 90


def check_serpent_rear_up(m: Measured) -> None:
    """The head rises a fifth of the body's length off the ground while the back half stays down."""
    head = _head(m)
    assert m.height(head).max() > 0.2 * m.roles.frame.length
    along = m.rest @ m.roles.frame.forward
    back = along <= np.median(along)
    assert m.height(back).min(1).max() < 0.1 * m.H


def check_serpent_in_place(m: Measured) -> None:
    """The body's centre stays within 15 % of its length of where it lay (a serpent's height is its
    thickness, too small a yardstick)."""
    move = m.centroid() - m.centroid()[0]
    horizontal = move - (move @ m.up)[:, None] * m.up
    assert np.linalg.norm(horizontal, axis=1).max() < 0.15 * m.roles.frame.length


SERPENT_CHECKS = {
    "walk": [check_slither],
    "run": [functools.partial(check_slither, reach=0.7)],
    "turn": [check_serpent_turn, check_serpent_in_place],
    "rear_up": [check_serpent_rear_up, check_serpent_in_place],
}


def checks_for(kind: str, label: str) -> list:
    """The checks of motion ``label`` on a character of ``kind`` (a serpent's own where it has them)."""
    return SERPENT_CHECKS.get(label, CHECKS[label]) if kind == "serpent" else CHECKS[label]


CHECKS = {
    "walk": [check_gait],
    "run": [functools.partial(check_gait, flight=0.12)],
    "gallop": [functools.partial(check_gait, flight=0.12)],
    "jump": [check_jump],
    "hop": [check_hop],
    "sit": [check_lowered, check_in_place],
    "crouch": [check_lowered, check_in_place],
    "lie_down": [check_lowered, check_in_place],
    "wave": [check_wave, check_in_place],
    "raise_arms": [check_raise_arms, check_in_place],
    "turn": [check_turn, check_in_place],
    "wag_tail": [check_wag, check_in_place],
    "head_down": [check_head_down, check_in_place],
    "rear_up": [check_rear_up],
    "kick": [check_kick, check_in_place],
    "bow": [check_bow, check_in_place],
    "clap": [check_clap, check_in_place],
    "punch": [check_punch, check_in_place],
    "flap_wings": [check_flap, check_in_place],
    "take_off": [check_take_off, check_flap],
    "land": [check_land],
    "glide": [check_glide],
    "peck": [check_peck, check_in_place],
    "raise_front_legs": [check_raise_front_legs, check_in_place],
    "look_around": [check_look_around, check_feet_planted, check_in_place],
    "nod": [check_nod, check_feet_planted, check_in_place],
    "shake_head": [check_shake_head, check_feet_planted, check_in_place],
    "stretch": [check_stretch, check_feet_planted, check_in_place],
    "point": [check_point, check_feet_planted, check_in_place],
    "shake": [check_shake, check_feet_planted, check_in_place],
    "fall": [check_fall],
    "get_up": [check_get_up],
    "crawl": [check_crawl],
    "dance": [check_dance],
}
