"""The modifier words of a composed prompt, read from data (``words.json`` beside this module).

:func:`read_modifiers` takes one part of a prompt ("walks slowly to the left for four seconds") and
returns what is left once the modifier words are taken out ("walks") and the :class:`Modifiers`
they set: speed and amplitude factors, a direction, the side of a one-limb motion, repetitions, a
duration in seconds and whether the part repeats the one before ("again"). Every word list, number
word and factor is in ``words.json``; phrases match whole words, longest first.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field, replace
from functools import lru_cache
from pathlib import Path
from typing import Any

__all__ = [
    "WORDS_FILE",
    "Modifiers",
    "words",
    "read_modifiers",
    "read_style",
    "without_subject",
    "reads_as_verb",
    "is_empty",
    "is_hold",
    "phrase_pattern",
    "number_value",
]

WORDS_FILE = Path(__file__).with_name("words.json")
"""The data file of modifier words, factors, number words and motion classes."""


@lru_cache(maxsize=1)
def words() -> dict[str, Any]:
    """The contents of :data:`WORDS_FILE` (read once)."""
    return json.loads(WORDS_FILE.read_text(encoding="utf-8"))


def phrase_pattern(phrases: Any) -> str:
    """A regex alternation of ``phrases`` (any iterable of str), longest first, each on word boundaries."""
    ordered = sorted({str(p) for p in phrases}, key=lambda p: (-len(p), p))
    return r"(?<![\w'])(?:" + "|".join(re.escape(p).replace(r"\ ", r"\s+") for p in ordered) + r")(?![\w'])"


def number_value(text: str) -> float | None:
    """The number a word or numeral stands for ("three" → 3, "2.5" → 2.5, "a couple of" → 2); None
    when it is neither."""
    text = " ".join(text.split())
    if re.fullmatch(r"\d+(?:\.\d+)?", text):
        return float(text)
    value = words()["numbers"].get(text)
    return None if value is None else float(value)


@dataclass(frozen=True)
class Modifiers:
    """What a part's modifier words ask for (None: not said).

    Attributes:
        speed: factor on the motion's tempo (< 1 slower). amplitude: factor on its angles, travel and
        height. direction: "left", "right", "backward" or "forward". side: "left" or "right" (the limb
        of a one-limb motion). repetitions: how many times. duration: seconds. repeat_previous: the
        part asks for the part before it again. words: the modifier phrases found, in order. style: the
        gait's style (:func:`read_style`).
    """

    speed: float | None = None
    amplitude: float | None = None
    direction: str | None = None
    side: str | None = None
    repetitions: int | None = None
    duration: float | None = None
    repeat_previous: bool = False
    words: tuple[str, ...] = field(default=())
    style: str | None = None

    def merged(self, other: Modifiers) -> Modifiers:
        """These modifiers with ``other``'s said ones on top (speed and amplitude multiply)."""
        out = self
        for name in ("direction", "side", "repetitions", "duration", "style"):
            if getattr(other, name) is not None:
                out = replace(out, **{name: getattr(other, name)})
        for name in ("speed", "amplitude"):
            mine, theirs = getattr(out, name), getattr(other, name)
            if theirs is not None:
                out = replace(out, **{name: theirs if mine is None else mine * theirs})
        return replace(out, repeat_previous=out.repeat_previous or other.repeat_previous, words=out.words + other.words)

    @property
    def said(self) -> bool:
        """Whether any modifier was found."""
        return bool(self.words)


@lru_cache(maxsize=1)
def _patterns() -> dict[str, re.Pattern]:
    w = words()
    number = phrase_pattern(w["numbers"]) + r"|\d+(?:\.\d+)?"
    unit = phrase_pattern(w["time_units"])
    side, limb = phrase_pattern(w["sides"]), phrase_pattern(w["limb_words"])
    owner = phrase_pattern(w["possessives"])
    intens = phrase_pattern(w["intensifiers"])
    return {
        "duration": re.compile(rf"(?:(?<![\w'])for\s+)?(?:(?:about|around|roughly|some)\s+)?(?P<n>{number})\s*(?P<u>{unit})"),
        "duration_words": re.compile(phrase_pattern(w["duration_words"])),
        "times": re.compile(rf"(?P<n>{number})\s+times(?![\w'])"),
        "repetition_words": re.compile(phrase_pattern(w["repetition_words"])),
        "repeat_previous": re.compile(phrase_pattern(w["repeat_previous"])),
        "side": re.compile(rf"(?:(?:{owner})\s+)*(?P<s>{side})(?:\s+|-)(?P<l>{limb}|handed|footed)(?![\w'])"),
        "direction": re.compile(phrase_pattern(w["direction_phrases"])),
        "speed": re.compile(rf"(?:(?P<i>{intens})\s+)?(?P<w>{phrase_pattern(w['speed_words'])})"),
        "amplitude": re.compile(rf"(?:(?P<i>{intens})\s+)?(?P<w>{phrase_pattern(w['amplitude_words'])})"),
        "fillers": re.compile(phrase_pattern(w["fillers"])),
    }


def _norm(text: str) -> str:
    return " ".join(text.split())


def _scaled(pattern: str, match: re.Match) -> float:
    """A speed or amplitude factor, raised to its intensifier's power ("very slowly": 0.6^1.5)."""
    w = words()
    factor = float(w[f"{pattern}_words"][_norm(match.group("w"))])
    power = float(w["intensifiers"][_norm(match.group("i"))]) if match.group("i") else 1.0
    return factor**power


def read_modifiers(text: str) -> tuple[str, Modifiers]:
    """``text`` (lower case, one part of a prompt) without its modifier words (a side's limb noun
    stays: it names the motion), and the :class:`Modifiers` they set. A property said twice keeps the last saying (speed and amplitude
    multiply)."""
    pats, w = _patterns(), words()
    found: dict[str, Any] = {}
    used: list[str] = []

    def take(name: str, value_of, keep: str | None = None) -> None:
        nonlocal text
        while (m := pats[name].search(text)) is not None:
            value = value_of(m)
            if value is None:
                break
            found[name.split("_")[0] if name != "repeat_previous" else name] = value
            used.append(_norm(m.group(0)))
            kept = m.group(keep) if keep and m.group(keep) not in ("handed", "footed") else ""
            text = text[: m.start()] + f" {kept} " + text[m.end() :]

    def duration(m: re.Match) -> float | None:
        n = number_value(m.group("n"))
        return None if n is None else n * float(w["time_units"][_norm(m.group("u"))])

    take("duration", duration)
    take("duration_words", lambda m: float(w["duration_words"][_norm(m.group(0))]))
    take("times", lambda m: None if number_value(m.group("n")) is None else max(1, round(number_value(m.group("n")))))
    take("repetition_words", lambda m: int(w["repetition_words"][_norm(m.group(0))]))
    take("repeat_previous", lambda m: True)
    take("side", lambda m: m.group("s"), keep="l")  # the limb stays: "raises the left arm" → "raises arm"
    speed = amplitude = None
    while (m := pats["speed"].search(text)) is not None:
        speed = (speed or 1.0) * _scaled("speed", m)
        used.append(_norm(m.group(0)))
        text = text[: m.start()] + " " + text[m.end() :]
    while (m := pats["amplitude"].search(text)) is not None:
        amplitude = (amplitude or 1.0) * _scaled("amplitude", m)
        used.append(_norm(m.group(0)))
        text = text[: m.start()] + " " + text[m.end() :]
    take("direction", lambda m: w["direction_phrases"][_norm(m.group(0))])
    mods = Modifiers(
        speed=speed,
        amplitude=amplitude,
        direction=found.get("direction"),
        side=found.get("side"),
        repetitions=found.get("times", found.get("repetition")),
        duration=found.get("duration"),
        repeat_previous=bool(found.get("repeat_previous", False)),
        words=tuple(used),
    )
    return _norm(text.replace(" ,", ",")).strip(" ,"), mods


def is_empty(text: str) -> bool:
    """Whether ``text`` holds nothing but filler words (articles, pronouns, "again" …): no motion."""
    return not _norm(_patterns()["fillers"].sub(" ", text).replace(",", " "))


def is_hold(text: str) -> bool:
    """Whether ``text`` asks the body to stay as it is ("stops", "waits", "stays there" …: ``words.json``
    ``hold_phrases``), with nothing but filler words besides."""
    pattern = re.compile(phrase_pattern(words()["hold_phrases"]))
    return pattern.search(text) is not None and is_empty(pattern.sub(" ", text))


@lru_cache(maxsize=1)
def _style_patterns() -> tuple[tuple[re.Pattern, dict[str, str]], tuple[re.Pattern, dict[str, str]]]:
    styles = {k: v for k, v in words()["styles"].items() if not k.startswith("_")}
    verbs = {_norm(p): style for style, said in styles.items() for p in said["verbs"]}
    adjectives = {_norm(p): style for style, said in styles.items() for p in said["words"]}
    return (re.compile(phrase_pattern(verbs)), verbs), (re.compile(phrase_pattern(adjectives)), adjectives)


def read_style(text: str) -> tuple[str, str | None]:
    """``text`` (lower case, one part) with the style of its gait taken out (``words.json`` ``styles``),
    and that style (None: not said). A style's verb names a walk in that style and is read as "walks"
    ("sneaks forward" → "walks forward", "sneak"); a style's word is taken out ("a drunk man runs" →
    "a man runs", "stumble"). The first style said is kept."""
    (verb_pattern, verbs), (word_pattern, adjectives) = _style_patterns()
    style: str | None = None
    m = verb_pattern.search(text)
    if m is not None:
        style = verbs[_norm(m.group(0))]
        text = text[: m.start()] + "walks" + text[m.end() :]
    for m in reversed(list(word_pattern.finditer(text))):
        style = style or adjectives[_norm(m.group(0))]
        text = text[: m.start()] + " " + text[m.end() :]
    return _norm(text), style


def reads_as_verb(word: str) -> bool:
    """Whether ``word`` (lower case) reads as a verb of a subject (``words.json`` ``subject``): one of
    ``verbs``, or a word of more than three letters ending in -s, -ing or -ed but not in one of
    ``not_verb_endings``."""
    said = words()["subject"]
    if word in said["verbs"]:
        return True
    if len(word) <= 3 or any(word.endswith(e) for e in said["not_verb_endings"]):
        return False
    return word.endswith(("s", "ing", "ed"))


def without_subject(text: str, kind: str = "biped") -> str:
    """``text`` (lower case, one part) with its subject said neutrally (``words.json`` ``subject``): a
    leading pronoun ("he", "someone") or a noun phrase opened by an article or possessive and ended by
    the first word that reads as a verb ("the orc walks" → "someone walks", "my little character
    jumps" → "someone jumps"; the neutral subject of ``kind``), so that who the character is never
    decides what it does; a clause that opens with its verb gets that subject ("claps" → "someone
    claps", as a clause after "and" is written). ``text`` unchanged when it opens with none of these or no
    verb follows within ``longest`` words."""
    said = words()["subject"]
    neutral = said["neutral"].get(kind, said["neutral"]["other"])
    tokens = text.split()
    if not tokens:
        return text
    if tokens[0] in said["pronouns"] and len(tokens) > 1:
        return " ".join([neutral, *tokens[1:]])
    if tokens[0] not in said["openers"]:
        return f"{neutral} {text}" if reads_as_verb(tokens[0]) and tokens[0] not in said["verbs"] else text
    for k in [*range(2, min(len(tokens), int(said["longest"]) + 2)), 1]:  # "a walks" once a style word is out
        if k < len(tokens) and reads_as_verb(tokens[k]):
            return " ".join([neutral, *tokens[k:]])
    return text
