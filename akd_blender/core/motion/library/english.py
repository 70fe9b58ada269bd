"""The motion library's English, read from the data files beside this module.

``phrasings.json``: each motion's phrasings, 5 trained on and 2 held out (never trained on), for the
role-based library (``"library"``, keyed ``kind/label``) and for the embedded teacher's two procedural
characters (``"teacher_characters"``, keyed ``character/label``). ``wordings.json``: more ways to ask
for each motion that the prompt matcher knows besides the phrasings, never trained on and never a
benchmark prompt — written blind (``"blind"``), verb-led (``"verb_led"``), later ones
(``"later"``) and those of the motions played from records (``"records"``); each group's ``"about"`` says how it was written. Every text is lower case without
trailing punctuation.
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path

__all__ = ["DATA_DIR", "PHRASINGS", "TEACHER_PHRASINGS", "VERB_WORDINGS", "EXTRA_WORDINGS", "read_table"]

DATA_DIR = Path(__file__).resolve().parent

Key = tuple[str, str]


@cache
def read_table(name: str) -> dict:
    """The JSON data file ``name`` of :data:`DATA_DIR`, parsed (UTF-8)."""
    return json.loads((DATA_DIR / name).read_text(encoding="utf-8"))


def _key(text: str) -> Key:
    kind, _, label = text.partition("/")
    return kind, label


def _phrasings(section: str) -> dict[Key, tuple[tuple[str, ...], tuple[str, ...]]]:
    table = read_table("phrasings.json")[section]
    return {_key(k): (tuple(v["train"]), tuple(v["heldout"])) for k, v in table.items()}


def _wordings(group: str) -> dict[Key, tuple[str, ...]]:
    return {_key(k): tuple(v) for k, v in read_table("wordings.json")[group].items()}


PHRASINGS: dict[Key, tuple[tuple[str, ...], tuple[str, ...]]] = _phrasings("library")
"""(kind, label) → (training phrasings, held-out phrasings) of the role-based library's motions."""

TEACHER_PHRASINGS: dict[Key, tuple[tuple[str, ...], tuple[str, ...]]] = _phrasings("teacher_characters")
"""(character, label) → (training phrasings, held-out phrasings) of the teacher characters' motions."""

VERB_WORDINGS: dict[Key, tuple[str, ...]] = _wordings("verb_led")
"""(kind, label) → verb-led wordings."""


def _extra() -> dict[Key, tuple[str, ...]]:
    groups = [_wordings(g) for g in ("blind", "verb_led", "later", "records")]
    keys = dict.fromkeys(k for g in groups for k in g)
    return {k: sum((g.get(k, ()) for g in groups), ()) for k in keys}


EXTRA_WORDINGS: dict[Key, tuple[str, ...]] = _extra()
"""(kind, label) → extra wordings: the blind ones, then the verb-led, the later ones and the records' ones."""
