"""find_roles over the procedural character family: 40 training-split and 40 held-out members of each
kind, scored against each member's true roles (bone names are never used). Prints a table of accuracy per
kind and role and the members that fail."""

from __future__ import annotations

from collections import Counter

import pytest

from akd_blender.core.character.roles import find_roles
from tools.family import KINDS, members

PER_SPLIT = 40
MIN_KIND = 0.9  # share of members whose kind is found
MIN_ROLE = 0.93  # share of the bones of a role that get it
MIN_EXACT = 0.9  # share of members whose every bone role is right (and no bone gets a role it lacks)
# a snake's neck is only found as the slimmer run of bones behind its head; the family draws it as thick
# as the body at times, so serpents are held to a lower bar on the neck and on whole members
LOWER_BARS = {("serpent", "neck"): 0.7, ("serpent", "exact"): 0.6}


def score(kind: str, split: str) -> dict:
    kinds_right, exact, right, total, failures = 0, 0, Counter(), Counter(), []
    for m in members(kind, split, PER_SPLIT):
        roles = find_roles(m.rig)
        got = roles.role_of()
        kinds_right += roles.kind == kind
        for bone, role in m.truth.items():
            group = role.split(".")[0]
            total[group] += 1
            right[group] += got.get(bone) == role
        wrong = sorted({b for b in m.truth if got.get(b) != m.truth[b]} | (set(got) - set(m.truth)))
        exact += not wrong and roles.kind == kind
        if wrong or roles.kind != kind:
            failures.append(f"{kind} seed {m.seed} ({m.style.build}): found {roles.kind}, {len(wrong)} bones wrong")
    n = PER_SPLIT
    return {"kind": kinds_right / n, "exact": exact / n, "roles": {g: right[g] / total[g] for g in total}, "failures": failures}


@pytest.mark.slow
@pytest.mark.parametrize("split", ["train", "heldout"])
@pytest.mark.parametrize("kind", KINDS)
def test_roles_of_family_members(kind, split):
    result = score(kind, split)
    table = ", ".join(f"{g} {a:.0%}" for g, a in sorted(result["roles"].items()))
    print(f"\n{kind}/{split}: kind {result['kind']:.0%}, all bones right {result['exact']:.0%}; {table}")
    for line in result["failures"]:
        print("  ", line)
    assert result["kind"] >= MIN_KIND
    assert result["exact"] >= LOWER_BARS.get((kind, "exact"), MIN_EXACT)
    for group, accuracy in result["roles"].items():
        assert accuracy >= LOWER_BARS.get((kind, group), MIN_ROLE), (group, accuracy)
