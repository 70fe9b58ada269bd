"""How often the product plays a wrong motion for a realistic prompt (CPU, about a minute).

Reads the held-out split ``test_b`` of ``tools/realistic_prompts`` with ``plan_prompt`` (:mod:`tools.realistic_reading`;
the older ``test`` split has since been used to choose reading rules, so it is no longer held out),
prints the right / refused / wrong table per kind and group, and fails when more than
:data:`WRONG_BAR` % of the prompts are played as a motion that is not right (a style the prompt asks
for and the reading missed counted wrong). Thresholds and rules are chosen on validation (and the old test split), never here.

    python tests/bench/bench_reading.py
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from tools.realistic_reading import run, strict_wrong_rate, table, tally  # noqa: E402

WRONG_BAR = 3.0
"""The most wrong readings allowed on the held-out split, % of its prompts (strict)."""
SPLIT = "test_b"


def reading_wrong_rate() -> float:
    """The held-out split read by the product: prints the table and the wrong readings, returns the strict
    wrong rate (%)."""
    scored, seconds = run(SPLIT)
    print(f"{SPLIT} split, {len(scored)} prompts, read in {seconds:.1f} s")
    print(table(tally(scored)))
    for s in scored:
        if s.outcome in ("wrong", "style_missed"):
            print(
                f"  {s.outcome}: [{s.item.kind}] {s.item.prompt!r} -> {s.read} (right: {' | '.join(s.item.right) or 'refusal'})"
            )
    rate = strict_wrong_rate(scored)
    print(f"wrong (strict): {rate:.1f} % (bar {WRONG_BAR:g} %)")
    return rate


def test_realistic_prompts_are_rarely_played_wrong():
    assert reading_wrong_rate() <= WRONG_BAR


def main() -> int:
    return 0 if reading_wrong_rate() <= WRONG_BAR else 1


if __name__ == "__main__":
    sys.exit(main())
