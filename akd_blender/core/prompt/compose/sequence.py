"""A prompt cut into its parts, in the order they happen.

Sentences (``.``, ``;``, ``!``, ``?``) and sequence words ("then", "and then", "after that", "followed
by" …) cut a prompt in order; "A before B" and "before B, A" keep A first, "A after B" and "after B,
A" put B first; what is left is cut at commas and "and" (a fragment with no motion of its own, such
as ", slowly", is given to its neighbour by :mod:`.plan`). The words are data (``words.json``:
``sequence``, ``before``, ``after``, ``joiners``, ``leading_fillers``); phrases inside the number and
repetition words and idioms ("one and a half", "over and over", "up and down") are never cut, nor is a
decimal point ("2.5 seconds").
"""

from __future__ import annotations

import re
from functools import lru_cache

from .words import phrase_pattern, words

__all__ = ["normalise", "split_parts"]


def normalise(prompt: str) -> str:
    """Lower case, hyphens and quotes as spaces, one space between words, commas kept as ``,``."""
    text = prompt.lower().replace("\u2019", "'")
    text = re.sub(r"[\"“”()\[\]]", " ", text)
    text = re.sub(r"(?<=\w)-(?=\w)", " ", text)
    text = re.sub(r"\s*,\s*", ", ", text)
    return " ".join(text.split())


@lru_cache(maxsize=1)
def _patterns() -> dict[str, re.Pattern]:
    w = words()
    protected = [p for group in ("numbers", "repetition_words", "idioms") for p in w[group] if " and " in f" {p} "]
    return {
        "sequence": re.compile(r"\s*,?\s*" + phrase_pattern(w["sequence"]) + r"\s*,?\s*"),
        "lead_before": re.compile(rf"^(?P<k>{phrase_pattern(w['before'] + w['after'])})\s+(?P<sub>[^,]+),\s*(?P<main>.+)$"),
        "before": re.compile(rf"^(?P<a>.+?)\s*,?\s+{phrase_pattern(w['before'])}\s+(?P<b>.+)$"),
        "after": re.compile(rf"^(?P<a>.+?)\s*,?\s+{phrase_pattern(w['after'])}\s+(?P<b>.+)$"),
        "joiner": re.compile(r"\s*,\s*(?:" + phrase_pattern(w["joiners"]) + r"\s+)?|\s+" + phrase_pattern(w["joiners"]) + r"\s+"),
        "protected": re.compile(phrase_pattern(protected)) if protected else re.compile(r"(?!x)x"),
        "leading": re.compile(r"^(?:" + phrase_pattern(w["leading_fillers"]) + r"\s*,?\s*)+"),
    }


def _ordered(text: str) -> list[str]:
    """One sequence piece cut at "before" / "after", in the order the parts happen."""
    pats = _patterns()
    m = pats["lead_before"].match(text)
    if m:
        first, second = (m["main"], m["sub"]) if m["k"] in words()["before"] else (m["sub"], m["main"])
        return _ordered(first) + _ordered(second)
    m = pats["before"].match(text)
    if m:
        return _ordered(m["a"]) + _ordered(m["b"])
    m = pats["after"].match(text)
    if m:
        return _ordered(m["b"]) + _ordered(m["a"])
    return [text]


def split_parts(prompt: str) -> list[str]:
    """The fragments of ``prompt`` (normalised), in the order they happen; none is empty. A fragment
    may hold only modifiers (", twice"); :mod:`.plan` gives those to a neighbouring part."""
    pats = _patterns()
    text = pats["protected"].sub(lambda m: m.group(0).replace(" ", "_"), normalise(prompt))
    out: list[str] = []
    for sentence in re.split(r"\s*(?:[;!?]|\.(?!\d)|(?<!\d)\.)+\s*", text):
        for piece in pats["sequence"].split(sentence):
            for ordered in _ordered(piece.strip(" ,")):
                for fragment in pats["joiner"].split(ordered):
                    fragment = pats["leading"].sub("", fragment.strip(" ,")).strip(" ,").replace("_", " ")
                    if fragment:
                        out.append(fragment)
    return out


def is_sequenced(prompt: str) -> bool:
    """Whether ``prompt`` says its parts come one after another in so many words: a sequence word of
    ``words.json`` ("then", "after that", "followed by" …) or more than one sentence. Commas, "and",
    "before" and "after" alone do not count: single motions are often told in several clauses ("hops
    up and lands", "bows before the king")."""
    text = _patterns()["protected"].sub(lambda m: m.group(0).replace(" ", "_"), normalise(prompt))
    sentences = [t for t in re.split(r"\s*(?:[;!?]|\.(?!\d)|(?<!\d)\.)+\s*", text) if t.strip(" ,")]
    return len(sentences) > 1 or bool(_patterns()["sequence"].search(text))


@lru_cache(maxsize=1)
def _ordering() -> re.Pattern:
    nouns = phrase_pattern(words()["motion_nouns"])
    return re.compile(
        rf"(?<![\w'])(?:before|after)\s+(?:\w+ing(?![\w'])|(?:a|an|the|one|its|his|her|their)\s+(?:\w+\s+){{0,2}}?(?:{nouns})s?(?![\w']))"
    )


def has_ordering_clause(prompt: str) -> bool:
    """Whether ``prompt`` orders two actions with "before" / "after" and a verb in -ing ("rears up after
    walking a few steps") or a motion's noun (``motion_nouns`` of ``words.json``: "lifts its legs after a
    short walk"); "before the king", "after the trick" do not count."""
    return bool(_ordering().search(normalise(prompt)))
