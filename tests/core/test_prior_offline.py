"""Hub ids resolve through the Hugging Face cache only: no network connection is ever opened."""

from __future__ import annotations

import socket
import time
import traceback

import pytest

from akd_blender.core.errors import ModelNotAvailable
from akd_blender.core.video_models import load_prior
from akd_blender.core.video_models.cogvideox import CogVideoXPrior
from akd_blender.core.video_models.registry import hub_cache_dir
from tests.core.dummy_priors import cogvideox_pipeline, save_pipeline


@pytest.fixture
def network_attempts(monkeypatch, tmp_path):
    """An empty HF cache, HF_HUB_OFFLINE unset, and every socket connection or name lookup recorded and refused."""
    cache = tmp_path / "hub"
    cache.mkdir()
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.setenv("HF_HUB_CACHE", str(cache))
    monkeypatch.setattr("huggingface_hub.constants.HF_HUB_CACHE", str(cache))
    attempts: list[str] = []

    def refuse(kind):
        def call(*args, **kwargs):
            attempts.append(f"{kind}{args[1:2] or args[:1]}" + "".join(traceback.format_stack(limit=40)))
            raise OSError(f"network blocked by the test ({kind})")

        return call

    monkeypatch.setattr(socket.socket, "connect", refuse("connect"))
    monkeypatch.setattr(socket.socket, "connect_ex", refuse("connect_ex"))
    monkeypatch.setattr(socket, "getaddrinfo", refuse("getaddrinfo"))
    return cache, attempts


def test_uncached_hub_id_fails_at_once_without_network(network_attempts):
    cache, attempts = network_attempts
    start = time.perf_counter()
    with pytest.raises(ModelNotAvailable) as err:
        load_prior("THUDM/CogVideoX-5b", device="cpu")
    seconds = time.perf_counter() - start
    message = str(err.value)
    assert attempts == [], attempts[0]
    assert "\n" not in message and err.value.exit_code == 3
    assert "THUDM/CogVideoX-5b" in message and str(cache) in message and hub_cache_dir() == str(cache)
    assert "huggingface-cli download THUDM/CogVideoX-5b" in message
    assert seconds < 5.0, f"an uncached id took {seconds:.1f} s to fail"  # the hub's retries took 28 s


def test_alias_names_its_hub_id(network_attempts):
    _, attempts = network_attempts
    with pytest.raises(ModelNotAvailable, match="Wan-AI/Wan2.1-T2V-1.3B-Diffusers"):
        load_prior("wan2.1-1.3b", device="cpu")
    assert attempts == [], attempts[0]


def test_cached_hub_id_loads_from_the_cache_without_network(network_attempts):
    """A pipeline laid out as the hub cache lays out a download (models--owner--name/snapshots/<rev>, refs/main)."""
    cache, attempts = network_attempts
    revision = "0" * 40
    repo_dir = cache / "models--someone--tiny-cogvideox"
    save_pipeline(cogvideox_pipeline(), repo_dir / "snapshots" / revision)
    (repo_dir / "refs").mkdir()
    (repo_dir / "refs" / "main").write_text(revision)
    prior = load_prior("someone/tiny-cogvideox", device="cpu")
    assert isinstance(prior, CogVideoXPrior) and prior.name == "someone/tiny-cogvideox"
    assert attempts == [], attempts[0]


def test_incomplete_cached_pipeline_names_how_to_complete_it(network_attempts):
    cache, attempts = network_attempts
    revision = "1" * 40
    repo_dir = cache / "models--someone--broken"
    snapshot = save_pipeline(cogvideox_pipeline(), repo_dir / "snapshots" / revision)
    for weights in (snapshot / "transformer").glob("*.safetensors"):
        weights.unlink()
    (repo_dir / "refs").mkdir()
    (repo_dir / "refs" / "main").write_text(revision)
    with pytest.raises(ModelNotAvailable) as err:
        load_prior("someone/broken", device="cpu")
    assert "\n" not in str(err.value) and "huggingface-cli download someone/broken" in str(err.value)
    assert attempts == [], attempts[0]
