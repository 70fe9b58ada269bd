"""A prompt cut into its parts, in the order they happen.

Sentences (``.``, ``;``, ``!``, ``?``) and sequence words ("then", "and then", "after that", "followed
by" …) cut a prompt in order; "A before B" and "before B, A" keep A first, "A after B" and "after B,
A" put B first; what is left is cut at commas and "and" (a fragment with no motion of its own, such
as ", slowly", is given to its neighbour by :mod:`.plan`). :func:`split_clauses` also says which
fragments play at the same time as the one before (``words.json`` ``together``): "walks while waving",
"while waving, it walks", "walks as she waves", "jumps and claps at the same time", a clause opened by
a verb in -ing after a comma or "and" ("walks forward, waving"), and a posture held with the arms or
hands ("runs with both arms up": "arms up" is read as its own part). The words are data (``words.json``:
``sequence``, ``before``, ``after``, ``joiners``, ``leading_fillers``); phrases inside the number and
repetition words and idioms ("one and a half", "over and over", "up and down") are never cut, nor is a
decimal point ("2.5 seconds").
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from .words import phrase_pattern, reads_as_verb, words

__all__ = ["AFTER", "WITH", "AND", "Clause", "normalise", "split_parts", "split_clauses", "is_sequenced", "has_ordering_clause"]


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
    } | _together_patterns()


def _together_patterns() -> dict:
    t = words()["together"]
    subjects = phrase_pattern(t["subjects"])
    owners, limbs, postures = (phrase_pattern(t[k]) for k in ("with_owners", "with_limbs", "with_postures"))
    return {
        "trailing": re.compile(r"\s*,?\s*" + phrase_pattern(t["trailing"]) + r"\s*$"),
        "lead_together": re.compile(rf"^{phrase_pattern(t['leading'])}\s+(?P<sub>[^,]+),\s*(?P<main>.+)$"),
        "between": re.compile(r"\s*,?\s*(?:" + phrase_pattern(t["between"]) + rf"|(?<![\w'])as\s+(?={subjects}))\s*,?\s*"),
        "with": re.compile(rf"(?<![\w'])with\s+(?P<held>(?:{owners}\s+)*{limbs}\s+{postures})(?![\w'])"),
        "as_as": re.compile(r"(?<![\w'])as\s+\w+\s+as(?![\w'])"),
        "a_while": re.compile(r"(?<![\w'])(?:a|little|short|long|good|some)\s+while(?![\w'])"),
        "not_participles": frozenset(t["not_participles"]),
        "motion_participles": frozenset(t["motion_participles"]),
        "not_before_participles": frozenset(t["not_before_participles"]),
        "nouns_after_participles": frozenset(t["nouns_after_participles"]),
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


AFTER, WITH, AND = "after", "with", "and"
"""How a clause is tied to the one before: it follows it (a sequence word, a new sentence, "before" /
"after"; the first clause too), it plays at the same time ("while", "as she …", "at the same time",
a verb in -ing, "with both arms up"), or it is joined by "and" or a comma alone (played at the same
time where the two motions drive different body parts, else after)."""


@dataclass(frozen=True)
class Clause:
    """One fragment of a prompt: its ``text`` (normalised) and ``link`` to the clause before it
    (:data:`AFTER`, :data:`WITH` or :data:`AND`)."""

    text: str
    link: str = AFTER


def split_parts(prompt: str) -> list[str]:
    """The fragments of ``prompt`` (normalised), in the order they happen; none is empty. A fragment
    may hold only modifiers (", twice"); :mod:`.plan` gives those to a neighbouring part."""
    return [clause.text for clause in split_clauses(prompt)]


def split_clauses(prompt: str, participles: bool = True) -> list[Clause]:
    """The fragments of ``prompt`` as :func:`split_parts` cuts them (plus the "while", "as she …" and
    "with both arms up" cuts), each with its link to the one before. ``participles``: also cut before a
    motion verb in -ing said without a comma (:func:`_cut_participles`)."""
    pats = _patterns()
    text = pats["protected"].sub(lambda m: m.group(0).replace(" ", "_"), normalise(prompt))
    for idiom in ("as_as", "a_while"):  # "as fast as she can" is no "as she …", "for a while" no "while …"
        text = pats[idiom].sub(lambda m: m.group(0).replace(" ", "_"), text)
    out: list[Clause] = []
    for sentence in re.split(r"\s*(?:[;!?]|\.(?!\d)|(?<!\d)\.)+\s*", text):
        for piece in pats["sequence"].split(sentence):
            for ordered in _ordered(piece.strip(" ,")):
                out += _together_clauses(ordered, participles)
    return out


def _together_clauses(piece: str, participles: bool = True) -> list[Clause]:
    """One ordered piece cut into clauses (the first follows what came before)."""
    pats = _patterns()
    trailing = pats["trailing"].search(piece)
    all_together = trailing is not None
    if trailing is not None:
        piece = piece[: trailing.start()].strip(" ,")
    lead = pats["lead_together"].match(piece)
    groups = [lead["main"], lead["sub"]] if lead else pats["between"].split(piece)
    out: list[Clause] = []
    for g, group in enumerate(groups):
        group = (group or "").strip(" ,")
        postures = [m.group("held").strip() for m in pats["with"].finditer(group)]
        main = pats["with"].sub(" ", group).strip(" ,")
        fragments = [pats["leading"].sub("", f.strip(" ,")).strip(" ,").replace("_", " ") for f in pats["joiner"].split(main)]
        fragments = [f for f in fragments if f]
        fragments = [cut for f in fragments for cut in (_cut_participles(f) if participles else [f])]
        for k, fragment in enumerate(fragments):
            if not out:
                link = AFTER
            elif g > 0 and k == 0 or all_together or _opens_with_participle(fragment):
                link = WITH
            else:
                link = WITH if g > 0 and out[-1].link == WITH else AND
            out.append(Clause(fragment, link))
        out += [Clause(held, WITH if out else AFTER) for held in postures]
    return [Clause(c.text.replace("_", " "), c.link) for c in out]


def _cut_participles(fragment: str) -> list[str]:
    """``fragment`` cut before each verb in -ing of a known motion (``motion_participles`` of
    ``words.json`` ``together``) said right after a clause with a verb, without a comma ("leaps up
    clapping her hands" → "leaps up", "clapping her hands"; "runs along barking"); each cut piece opens
    with its -ing word, so it plays with the one before (:func:`_opens_with_participle`). Not cut where
    the word before the -ing word is one of ``not_before_participles`` (an article, a possessive, a
    preposition, a verb that takes an -ing: "holds a walking stick", "keeps running", "does jumping
    jacks"), the word after it is one of ``nouns_after_participles`` (the -ing word names a thing:
    "wears running shoes") or no word before it reads as a verb ("a sleeping dog wakes", "a barking dog")."""
    pats = _patterns()
    tokens = fragment.split()
    for i in range(1, len(tokens)):
        if tokens[i] not in pats["motion_participles"] or tokens[i - 1] in pats["not_before_participles"]:
            continue
        if i + 1 < len(tokens) and tokens[i + 1] in pats["nouns_after_participles"]:
            continue
        if any(reads_as_verb(t) for t in tokens[:i]):
            return [" ".join(tokens[:i]), *_cut_participles(" ".join(tokens[i:]))]
    return [fragment]


def _opens_with_participle(fragment: str) -> bool:
    """Whether ``fragment`` starts with a verb in -ing ("waving his hand"), the form of a clause that
    goes with the one before ("walks forward, waving")."""
    first = fragment.split()[0] if fragment.split() else ""
    return len(first) > 4 and first.endswith("ing") and first not in _patterns()["not_participles"]


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
