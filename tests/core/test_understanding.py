"""Prompt understanding (core.understanding) with the real offline sentence encoder: known wordings
are read as their motion, unknown prompts and another kind's motions are refused with one line, the
nearest motion goes ahead when allowed, and the embedded teacher reads prompts through the same seam."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from akd_blender.core.errors import InputError
from akd_blender.core.job.request import job_warnings
from akd_blender.core.motion.library import KINDS, motions_for
from akd_blender.core.motion.library.english import EXTRA_WORDINGS
from akd_blender.core.prompt.sentence_encoder import TextEncoder
from akd_blender.core.prompt.understanding import (
    MOTIONS_COMMAND,
    UNDERSTOOD_THRESHOLD,
    PromptNotUnderstood,
    PromptVocabulary,
    library_vocabulary,
    require_understood,
    teacher_vocabulary,
    understood_line,
)
from akd_blender.core.settings import DistillConfig, RedrawSettings

ROOT = Path(__file__).resolve().parents[2]
PROMPTS = json.loads((ROOT / "tools" / "understanding_prompts.json").read_text())


@pytest.fixture(scope="module")
def encoder():
    return TextEncoder()


@pytest.fixture(scope="module")
def vocabularies(encoder):
    return {kind: PromptVocabulary(library_vocabulary(kind), encoder) for kind in KINDS}


def test_library_vocabulary_holds_only_its_kinds_motions_with_every_wording():
    for kind in KINDS:
        rows = library_vocabulary(kind)
        specs = motions_for(kind)
        assert {m for _, m, _ in rows} == {f"{kind}/{s.label}" for s in specs}
        for spec in specs:
            mine = [(w, t) for w, m, t in rows if m == f"{kind}/{spec.label}"]
            extra = EXTRA_WORDINGS.get((kind, spec.label), ())
            assert [w for w, t in mine if t] == list(spec.phrasings)
            assert [w for w, t in mine if not t] == [*spec.heldout_phrasings, *extra]
    assert not any("wag_tail" in m for _, m, _ in library_vocabulary("biped"))
    assert [m for _, m, _ in library_vocabulary("biped", heldout=False, extra=False)].count("biped/walk") == 5
    with pytest.raises(InputError, match="'fish'"):
        library_vocabulary("fish")


def test_no_extra_wording_is_a_library_phrasing_or_belongs_to_two_motions():
    """The extra wordings only help to read prompts: none is a training or held-out phrasing (the
    benchmark prompts with held-out ones) and none asks for two motions of a kind."""
    from akd_blender.core.motion.library import library_phrasings

    phrasings = {t for split in ("train", "heldout") for t, _, _ in library_phrasings(split)}
    for kind in KINDS:
        extra = [w for (k, _), words in EXTRA_WORDINGS.items() if k == kind for w in words]
        assert not phrasings & set(extra)
        assert len(extra) == len(set(extra))


def test_test_prompts_are_read_as_the_threshold_tool_found(vocabularies, encoder):
    """The held-apart test prompts of tools/understanding_prompts.json at the shipped threshold: known
    wordings read as their motion (74 of 74 when chosen), another kind's motions and unknown prompts
    refused (111 of 117 over the four kinds it was chosen on; 135 of 143 with the serpents' vocabulary,
    added later, reading the unknown prompts too). "does a cartwheel" and "swimming" moved from the
    unknown prompts to the known ones once the library had those motions (77 of 77 read as their
    motion; 126 of 133 refused, the same nine misses allowed)."""
    test = PROMPTS["test"]
    known = [(k, p, f"{k}/{label}") for k, ms in test["known"].items() for label, ps in ms.items() for p in ps]
    unknown = [(k, p) for k, rows in test["other_kind"].items() for p, _ in rows]
    unknown += [(k, p) for p in test["unknown"] for k in KINDS]
    vectors = encoder.encode([p for _, p, _ in known] + [p for _, p in unknown])
    right = 0
    for (kind, prompt, motion), v in zip(known, vectors):
        u = vocabularies[kind].understand(prompt, v)
        right += u.understood and u.motion == motion
    refused = sum(not vocabularies[k].understand(p, v).understood for (k, p), v in zip(unknown, vectors[len(known) :]))
    assert len(known) == 77 and right >= 75, right
    assert len(unknown) == 133 and refused >= 124, refused


def test_the_teacher_reads_from_vectors_alone_as_the_vocabulary_does(vocabularies, encoder):
    """text.understand and PromptMatcher (what the teacher has where only the phrase table is) pick
    the same trained phrasing with the same score as PromptVocabulary."""
    from akd_blender.core.prompt.sentence_encoder import PromptMatcher, understand

    vocab = vocabularies["quadruped"]
    matcher = PromptMatcher(vocab.rows, vocab.vectors)
    for prompt in ("a fox trots forward", "a dog lies down to rest", "plays the violin"):
        u, emb = vocab.understand(prompt), encoder.encode([prompt])[0]
        for index, score in (understand(emb, vocab.vectors, vocab.motions, vocab.trained), matcher.match(emb)):
            assert index == u.index and score == pytest.approx(u.similarity, abs=1e-6)


def test_known_wordings_are_understood_as_their_motion(vocabularies):
    cases = [
        ("biped", "a boxer throws a punch", "biped/punch"),
        ("biped", "take a bow", "biped/bow"),
        ("quadruped", "the dog wags its tail", "quadruped/wag_tail"),
        ("bird", "a chicken pecks at grain", "bird/peck"),
        ("hexapod", "a cricket hops along", "hexapod/hop"),
    ]
    for kind, prompt, motion in cases:
        u = vocabularies[kind].understand(prompt)
        assert u.understood and u.motion == motion, (prompt, u)
        assert u.phrasing in next(s.phrasings for s in motions_for(kind) if f"{kind}/{s.label}" == motion)
        assert u.nearest[0].motion == motion and u.nearest[0].similarity == u.similarity >= UNDERSTOOD_THRESHOLD
        assert [m.similarity for m in u.nearest] == sorted((m.similarity for m in u.nearest), reverse=True)
        require_understood(u)  # does not raise
    exact = vocabularies["biped"].understand("a person waving hello")  # a training phrasing itself
    assert exact.phrasing == "a person waving hello" and exact.similarity > 0.8


def test_a_biped_refuses_a_tail_wag_that_a_quadruped_understands(vocabularies):
    for prompt in ("wag its tail", "a dog wagging its tail"):
        biped = vocabularies["biped"].understand(prompt)
        assert not biped.understood, biped
        with pytest.raises(PromptNotUnderstood):
            require_understood(biped)
        quadruped = vocabularies["quadruped"].understand(prompt)
        assert quadruped.understood and quadruped.motion == "quadruped/wag_tail"


def test_refusal_is_one_line_naming_the_prompt_the_nearest_three_and_the_list(vocabularies):
    u = vocabularies["biped"].understand("juggles three balls")
    assert not u.understood and u.similarity < UNDERSTOOD_THRESHOLD
    with pytest.raises(PromptNotUnderstood) as info:
        require_understood(u)
    error = info.value
    line = str(error)
    assert isinstance(error, InputError) and error.exit_code == 2 and error.understanding is u
    assert "\n" not in line and '"juggles three balls"' in line and f"`{MOTIONS_COMMAND}`" in line
    assert "--allow-nearest" in line and f"needs {UNDERSTOOD_THRESHOLD:.2f}" in line
    trained = {f"biped/{s.label}": s.phrasings for s in motions_for("biped")}
    for near in u.nearest[:3]:
        assert near.phrasing in trained[near.motion]
        assert f'{near.motion} ("{near.phrasing}", {near.similarity:.2f})' in line
    assert u.nearest[3].motion not in line.split("nearest:")[1].split("; the known")[0]


def test_allow_nearest_goes_ahead_and_says_so(vocabularies):
    u = vocabularies["biped"].understand("plays the violin")
    require_understood(u, allow_nearest=True)  # does not raise
    facts = u.facts()
    assert facts["understood"] is False and facts["motion"] == u.motion and facts["threshold"] == UNDERSTOOD_THRESHOLD
    line = understood_line(facts)
    assert line.startswith(f'understood as {u.motion} ("{u.phrasing}", similarity {u.similarity:.2f}')
    assert f"below the {UNDERSTOOD_THRESHOLD:.2f} needed" in line

    class Rig:
        warnings: tuple[str, ...] = ()

    warned = job_warnings(Rig(), {"height": 1.0}, facts)
    assert any("went ahead with the nearest" in w and u.motion in w for w in warned)
    assert not any(
        "nearest" in w for w in job_warnings(Rig(), {"height": 1.0}, vocabularies["biped"].understand("a man bows").facts())
    )


def test_understood_line_format():
    facts = {"understood_as": "a person waving hello", "motion": "biped/wave", "similarity": 0.8712, "understood": True}
    assert understood_line(facts) == 'understood as biped/wave ("a person waving hello", similarity 0.87)'
    assert understood_line({}) is None and understood_line({"search_error": 0.1}) is None


def test_empty_vocabularies_are_refused(encoder):
    with pytest.raises(ValueError, match="no wordings"):
        PromptVocabulary([], encoder)
    with pytest.raises(ValueError, match="no motion has a trained wording"):
        PromptVocabulary([("a cat", "cat", False)], encoder)


def test_the_known_motions_command_lists_them():
    def run(*args):
        env = {"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"}
        return subprocess.run(
            [sys.executable, "-m", "akd_blender.core.prompt.understanding", *args], capture_output=True, text=True, env=env
        )

    bird = run("--kind", "bird")
    assert bird.returncode == 0, bird.stderr
    lines = bird.stdout.splitlines()
    assert len(lines) == len(motions_for("bird")) and lines[0].startswith('bird/walk: "a bird walks forward", ')
    shipped = run()
    assert shipped.returncode == 0 and len(shipped.stdout.splitlines()) == len({m for _, m, t in teacher_vocabulary() if t})
    bad = run("--kind", "fish")
    assert bad.returncode == 2 and "'fish'" in bad.stderr and bad.stdout == ""


def test_distill_config_default_refuses():
    assert DistillConfig().allow_nearest is False


def test_the_embedded_teacher_refuses_through_the_seam_unless_the_nearest_is_allowed():
    from akd_blender.core.character.procedural import biped
    from akd_blender.core.distillation.sds_loop import distill
    from akd_blender.core.video_models.tiny import load_tiny_prior

    prior = load_tiny_prior("cpu")
    known = prior.encode_text("a man is waving hello").extra
    assert known["understood"] is True and known["motion"] == "biped/wave"
    assert known["understanding"].phrasing == known["understood_as"]
    rig = biped()
    config = DistillConfig(start="pose", steps=1, frames=4, height=16, width=16, device="cpu", redraw=RedrawSettings(noise=()))
    with pytest.raises(PromptNotUnderstood, match='"plays the violin"'):
        distill(rig, "plays the violin", config, prior)
    config.allow_nearest = True
    result = distill(rig, "plays the violin", config, prior)
    assert result.extra["understood"] is False and result.extra["motion"] in {m for _, m, _ in prior.vocabulary}
    assert "understanding" not in result.extra and len(result.history) == 1  # plain facts only
