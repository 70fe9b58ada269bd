"""The realistic-prompt scorer's reading strings and matching (plans built by hand, no encoder)."""

from __future__ import annotations

from dataclasses import dataclass, field

from akd_blender.core.prompt.compose.plan import Part, Plan
from tools.realistic_reading import (
    GROUPS,
    KINDS,
    RealisticPrompt,
    Scored,
    load_names,
    load_split,
    outcome,
    parse_reading,
    plan_reading,
    rates,
    strict_wrong_rate,
    tally,
)

NAMES = load_names()


def _part(label: str, **fields) -> Part:
    return Part(label=label, motion=f"biped/{label}", text=label, core=label, similarity=0.9, **fields)


@dataclass(frozen=True)
class StyledPart:
    """A part with the fields a composed plan may carry (style, parts played at the same time)."""

    label: str
    style: str | None = None
    together: tuple = field(default=())


def _item(right: tuple[str, ...], kind: str = "biped", group: str = "single") -> RealisticPrompt:
    return RealisticPrompt("a prompt", kind, group, right)


def test_plan_reading_orders_parts_and_joins_styles_and_together():
    plan = Plan("p", "biped", (_part("walk"), _part("sit")))
    assert plan_reading(plan) == "walk > sit"
    styled = Plan("p", "biped", (StyledPart("walk", "march", ("salute",)), StyledPart("bow")))
    assert plan_reading(styled) == "walk:march+salute > bow"
    nested = Plan("p", "biped", (StyledPart("run", None, (StyledPart("wave"),)),))
    assert plan_reading(nested) == "run+wave"
    assert plan_reading(Plan("p", "biped", (_part("walk", backwards=True),))) == "walk:backwards"


def test_together_parts_compare_as_a_set_and_aliases_both_ways():
    assert outcome(_item(("walk+wave",)), "wave+walk", NAMES) == "right"
    assert outcome(_item(("walk+wave",)), "walk > wave", NAMES) == "wrong"
    assert outcome(_item(("run",)), "run", NAMES) == "right"
    assert outcome(_item(("trot+wag_tail",), "quadruped"), "run+wag_tail", NAMES) == "right"  # trot is played by run
    assert outcome(_item(("run",), "quadruped"), "trot", NAMES) == "right"
    assert outcome(_item(("gallop",), "quadruped"), "run", NAMES) == "wrong"
    assert parse_reading("walk > hold", "biped", NAMES) == (frozenset({("walk", None)}), frozenset({("idle", None)}))


def test_styles_missed_are_told_apart_from_wrong_styles():
    sneak = _item(("walk:sneak", "walk:crouched"), group="style")
    assert outcome(sneak, "walk:sneak", NAMES) == "right"
    assert outcome(sneak, "walk", NAMES) == "style_missed"
    assert outcome(sneak, "walk:limp", NAMES) == "wrong"
    assert outcome(sneak, "crouch", NAMES) == "wrong"
    assert outcome(_item(("walk",)), "walk:sneak", NAMES) == "wrong"  # a style nobody asked for
    marching = _item(("walk:march+salute > sit",), group="together")
    assert outcome(marching, "salute+walk > sit", NAMES) == "style_missed"
    assert outcome(marching, "walk > sit", NAMES) == "wrong"


def test_refusals_are_right_only_outside_the_vocabulary():
    assert outcome(_item((), group="outside"), None, NAMES) == "right"
    assert outcome(_item((), group="outside"), "wave", NAMES) == "wrong"
    assert outcome(_item(("salute",)), None, NAMES) == "refused"


def test_tally_and_rates_count_a_missed_style_wrong_only_when_strict():
    item = _item(("walk:skip",), group="style")
    scored = [
        Scored(item, "walk:skip", "right"),
        Scored(item, "walk", "style_missed"),
        Scored(item, None, "refused"),
        Scored(item, "jump", "wrong"),
    ]
    counts = tally(scored)
    assert counts[("biped", "style")] == counts[("all", "all")]
    r = rates(counts[("all", "all")])
    assert (r["right"], r["refused"], r["wrong"], r["right_lenient"], r["wrong_lenient"]) == (25, 25, 50, 50, 25)
    assert strict_wrong_rate(scored) == 50


def test_sets_use_known_names_and_share_no_prompt():
    splits = {s: load_split(s) for s in ("validation", "test")}
    assert not {i.prompt.lower() for i in splits["validation"]} & {i.prompt.lower() for i in splits["test"]}
    for items in splits.values():
        assert len(items) >= 150 and len({i.prompt for i in items}) == len(items)
        assert sum(i.kind == "biped" for i in items) >= 100 and sum(i.kind == "quadruped" for i in items) >= 50
        for i in items:
            assert i.kind in KINDS and i.group in GROUPS and (i.group == "outside") == (not i.right), i
            known = set(NAMES[i.kind]) | set(NAMES["aliases"].get(i.kind, {}))
            for right in i.right:
                for part in parse_reading(right, i.kind, NAMES):
                    for name, style in part:
                        assert name in known, (i.prompt, name)
                        assert style is None or style in NAMES["styles"][name], (i.prompt, style)
