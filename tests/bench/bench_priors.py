"""GPU benchmark: full-size CogVideoX-5B / -2B and Wan2.1-1.3B with random weights (nothing downloaded).

For each model: one full SDS step at native size (CogVideoX 49×480×720, Wan 81×480×832: VAE encode,
transformer with CFG batch 2, backward to the video) on a render of the rig (``--rig``; default the
procedural biped) from the default follow camera, with the character's box as the prior's
``region`` (the pixel target is decoded around it), in several memory modes — seconds and peak GPU
memory — then a 20-step ``distill`` of the procedural biped with that prior. Architectures are the
published configs written below; the text encoders are 1-layer random T5/UMT5 with the real hidden
size (4096), since the text embedding is computed once per prompt.

Run:  python -m tests.bench.bench_priors --out DIR [--models cogvideox-5b,cogvideox-2b,wan2.1-1.3b]
Each mode: one warm-up step (cuDNN autotune), then the median of ``--repeats`` steps (one for "lowest").
Writes DIR/bench_priors.jsonl (one line per measurement) and prints a table.
"""

from __future__ import annotations

import argparse
import json
import time
from dataclasses import replace
from pathlib import Path

import pytest
import torch

from akd_blender.core.render.image_losses import character_region, crop_video
from akd_blender.core.settings import SDSSettings
from akd_blender.core.video_models.protocol import MemoryOptions

COGVIDEOX_TRANSFORMER = dict(  # THUDM/CogVideoX-5b transformer/config.json
    num_attention_heads=48,
    attention_head_dim=64,
    in_channels=16,
    out_channels=16,
    flip_sin_to_cos=True,
    freq_shift=0,
    time_embed_dim=512,
    text_embed_dim=4096,
    num_layers=42,
    dropout=0.0,
    attention_bias=True,
    sample_width=90,
    sample_height=60,
    sample_frames=49,
    patch_size=2,
    temporal_compression_ratio=4,
    max_text_seq_length=226,
    activation_fn="gelu-approximate",
    timestep_activation_fn="silu",
    norm_elementwise_affine=True,
    norm_eps=1e-5,
    spatial_interpolation_scale=1.875,
    temporal_interpolation_scale=1.0,
    use_rotary_positional_embeddings=True,
    use_learned_positional_embeddings=False,
)
MODELS = {
    "cogvideox-5b": dict(family="cogvideox", transformer=COGVIDEOX_TRANSFORMER, scaling_factor=0.7, snr_shift_scale=1.0),
    "cogvideox-2b": dict(  # THUDM/CogVideoX-2b: 30 heads × 64, 30 layers, sinusoidal positions
        family="cogvideox",
        transformer=COGVIDEOX_TRANSFORMER | dict(num_attention_heads=30, num_layers=30, use_rotary_positional_embeddings=False),
        scaling_factor=1.15258426,
        snr_shift_scale=3.0,
    ),
    "wan2.1-1.3b": dict(  # Wan-AI/Wan2.1-T2V-1.3B-Diffusers transformer/config.json
        family="wan",
        transformer=dict(
            patch_size=(1, 2, 2),
            num_attention_heads=12,
            attention_head_dim=128,
            in_channels=16,
            out_channels=16,
            text_dim=4096,
            freq_dim=256,
            ffn_dim=8960,
            num_layers=30,
            cross_attn_norm=True,
            qk_norm="rms_norm_across_heads",
            eps=1e-6,
            rope_max_seq_len=1024,
        ),
    ),
}
NATIVE = {"cogvideox": (49, 480, 720), "wan": (81, 480, 832)}


def _text_encoder(cls_config, cls_model):
    from tests.core.dummy_priors import WORDS

    config = cls_config(
        vocab_size=len(WORDS) + 4, d_model=4096, d_kv=64, d_ff=256, num_layers=1, num_heads=64, decoder_start_token_id=0
    )
    return cls_model(config)


def build_prior(name: str, device: torch.device, memory: MemoryOptions):
    """A full-size random-weight prior (weights created on the GPU, bf16)."""
    import diffusers
    from transformers import T5Config, T5EncoderModel, UMT5Config, UMT5EncoderModel

    from akd_blender.core.video_models.cogvideox import CogVideoXPrior
    from akd_blender.core.video_models.wan import WanPrior
    from tests.core.dummy_priors import tiny_tokenizer

    spec = MODELS[name]
    if spec.get("tiny"):
        from tests.core.dummy_priors import cogvideox_pipeline, wan_pipeline

        if spec["family"] == "cogvideox":
            return CogVideoXPrior(cogvideox_pipeline(), name=name, device=device, memory=memory)
        return WanPrior(wan_pipeline(), name=name, device=device, memory=memory)
    torch.manual_seed(0)
    with torch.device(device):
        if spec["family"] == "cogvideox":
            transformer = diffusers.CogVideoXTransformer3DModel(**spec["transformer"]).to(torch.bfloat16)
            vae = diffusers.AutoencoderKLCogVideoX(scaling_factor=spec["scaling_factor"]).to(torch.bfloat16)  # defaults = release
            text = _text_encoder(T5Config, T5EncoderModel).to(torch.bfloat16)
            scheduler = diffusers.CogVideoXDDIMScheduler(
                beta_schedule="scaled_linear",
                beta_start=0.00085,
                beta_end=0.012,
                prediction_type="v_prediction",
                rescale_betas_zero_snr=True,
                snr_shift_scale=spec["snr_shift_scale"],
                timestep_spacing="trailing",
            )
            pipe = diffusers.CogVideoXPipeline(tiny_tokenizer(), text, vae, transformer, scheduler)
            return CogVideoXPrior(pipe, name=name, device=device, dtype=torch.bfloat16, memory=memory)
        transformer = diffusers.WanTransformer3DModel(**spec["transformer"]).to(torch.bfloat16)
        vae = diffusers.AutoencoderKLWan().to(torch.bfloat16)  # defaults = Wan2.1 VAE
        text = _text_encoder(UMT5Config, UMT5EncoderModel).to(torch.bfloat16)
        scheduler = diffusers.FlowMatchEulerDiscreteScheduler(shift=3.0)
        pipe = diffusers.WanPipeline(tiny_tokenizer(), text, vae, scheduler, transformer)
        return WanPrior(pipe, name=name, device=device, dtype=torch.bfloat16, memory=memory)


# mode name → (memory options, SDS settings changes, target reuse for the amortised figure)
MODES = {
    "naive": (MemoryOptions(vae_checkpointing=False, cudnn_benchmark=False), dict(target_space="latent")),
    "ckpt": (MemoryOptions(vae_checkpointing=True), dict(target_space="latent")),
    "pixel": (MemoryOptions(vae_checkpointing=True), dict(target_space="pixel")),
    "lowest": (MemoryOptions.lowest(), dict(target_space="pixel")),
}


CUDA = torch.cuda.is_available()


def _sync() -> None:
    if CUDA:
        torch.cuda.synchronize()


def sds_step(prior, video: torch.Tensor, text, step: int = 0, region=None) -> dict:
    """One full SDS step (prior + backward to the video): seconds and peak GB."""
    _sync()
    if CUDA:
        torch.cuda.empty_cache()
        torch.cuda.reset_peak_memory_stats()
    video.grad = None
    start = time.perf_counter()
    out = prior.sds_loss(video, text, step, 100, torch.Generator().manual_seed(step), region=region)
    out["loss"].backward()
    _sync()
    seconds = time.perf_counter() - start
    assert video.grad is not None and torch.isfinite(video.grad).all()
    peak = torch.cuda.max_memory_allocated() / 1e9 if CUDA else 0.0
    return {"seconds": seconds, "peak_gb": peak, "loss": float(out["loss"])}


def cheap_step(video: torch.Tensor, target: torch.Tensor) -> float:
    """A reused-target step's prior-side cost: multi-scale image loss + backward (render excluded)."""
    from akd_blender.core.render.image_losses import multiscale_mse

    _sync()
    start = time.perf_counter()
    video.grad = None
    multiscale_mse(video, target).backward()
    _sync()
    return time.perf_counter() - start


def _area(region) -> int:
    return (region[2] - region[0]) * (region[3] - region[1]) if region else 0


def character_video(rig_path: str | None, frames: int, height: int, width: int, device: torch.device):
    """What the distillation shows the prior: the rig (default: the procedural biped) in its rest pose
    from the default follow camera at the model's native size → (video [F,3,H,W] requiring grad,
    the character's pixel box)."""
    from akd_blender.core.character.procedural import biped
    from akd_blender.core.character.rig import load_rig
    from akd_blender.core.motion.clip import MotionClip
    from akd_blender.core.render import render_clip

    rig = load_rig(rig_path) if rig_path else biped()
    rgba = render_clip(rig, MotionClip.rest(rig, frames), height, width, backend="torch", device=device)
    return rgba[:, :3].detach().clone().requires_grad_(True), character_region(rgba[:, 3])


def bench_model(name: str, modes: list[str], distill_steps: int, log, rig_path: str | None = None, repeats: int = 3) -> None:
    device = torch.device("cuda" if CUDA else "cpu")
    t0 = time.perf_counter()
    prior = build_prior(name, device, MODES["ckpt"][0])
    frames, height, width = NATIVE[MODELS[name]["family"]]
    text = prior.encode_text("a person walks forward", "")
    log(
        {
            "model": name,
            "event": "built",
            "seconds": time.perf_counter() - t0,
            "params_b": sum(p.numel() for p in prior.transformer.parameters()) / 1e9,
        }
    )
    video, region = character_video(rig_path, frames, height, width, device)
    log({"model": name, "event": "video", "region": region, "region_fraction": _area(region) / (height * width)})
    warm = "pixel" if MODELS[name]["family"] == "wan" else "ckpt"  # Wan's VAE has no gradient checkpointing
    prior.set_memory(MODES[warm][0])
    prior.settings = SDSSettings(cfg_scale=2.0, mode="target", **MODES[warm][1])
    sds_step(prior, video, text)  # warm-up (cuDNN autotune, allocator)
    for mode in modes:
        memory, changes = MODES[mode]
        prior.set_memory(memory)
        prior.settings = replace(prior.settings, **changes)
        try:
            sds_step(prior, video, text, 1, region)  # cuDNN autotune for this mode's shapes
            runs = [sds_step(prior, video, text, 2 + i, region) for i in range(1 if mode == "lowest" else repeats)]
            result = sorted(runs, key=lambda r: r["seconds"])[len(runs) // 2]  # the median step
        except torch.cuda.OutOfMemoryError:
            result = {"seconds": float("nan"), "peak_gb": float("nan"), "error": "OOM"}
        row = {"model": name, "mode": mode, "frames": frames, "height": height, "width": width} | result
        if mode == "pixel":
            out = prior.sds_loss(video, text, 3, 100, torch.Generator().manual_seed(3), region=region)
            cheap = cheap_step(crop_video(video, out["target_box"]), out["target_video"])
            row["cheap_step_seconds"] = cheap
            row["amortised_4"] = (result["seconds"] + 3 * cheap) / 4
        log(row)
    # The distillation runs in the defaults a user gets (pixel target, target reuse), Wan included.
    prior.set_memory(MemoryOptions())
    prior.settings = SDSSettings()
    if distill_steps:
        from akd_blender.core.character.procedural import biped
        from akd_blender.core.character.rig import load_rig
        from akd_blender.core.distillation.sds_loop import DistillConfig
        from akd_blender.core.job.request import JobRequest, run_request

        rig = load_rig(rig_path) if rig_path else biped()

        small = (9, 32, 32) if MODELS[name].get("tiny") else (25, 240, 368)
        config = DistillConfig(
            steps=distill_steps,
            frames=small[0],
            height=small[1],
            width=small[2],
            device=device.type,
            render_backend="torch",
            preview_every=0,
        )
        result = run_request(JobRequest(rig, "a person walks forward", config, model=name), prior=prior)
        log(
            {
                "model": name,
                "event": "distill",
                "rig": rig.name,
                "steps": distill_steps,
                "video": "x".join(map(str, small)),
                "seconds": result.seconds,
                "clip_frames": result.clip.num_frames,
                "final": result.history[-1],
                "timings": result.timings,
            }
        )
    prior.free()
    del prior
    if CUDA:
        torch.cuda.empty_cache()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=".")
    parser.add_argument("--models", default="cogvideox-5b,cogvideox-2b,wan2.1-1.3b")
    parser.add_argument("--modes", default="ckpt,naive,pixel,lowest")
    parser.add_argument("--distill-steps", type=int, default=20)
    parser.add_argument("--repeats", type=int, default=3, help="measured steps per mode after one warm-up (median reported)")
    parser.add_argument("--tiny", action="store_true", help="tiny random models (CPU smoke test)")
    parser.add_argument(
        "--rig", help="a RigAsset .npz (akd_blender.core.character.rig.save_rig) to distil; default: the procedural biped"
    )
    args = parser.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    rows = []

    def log(row: dict) -> None:
        rows.append(row)
        print(json.dumps(row), flush=True)
        with open(out / "bench_priors.jsonl", "a") as f:
            f.write(json.dumps(row) + "\n")

    if args.tiny:  # CPU smoke test of this script: tiny configs, small videos
        MODELS.update({k: v | {"tiny": True} for k, v in MODELS.items()})
        NATIVE.update(cogvideox=(9, 32, 32), wan=(9, 32, 32))
    log({"event": "device", "name": torch.cuda.get_device_name() if CUDA else "cpu", "torch": torch.__version__})
    for name in args.models.split(","):
        try:
            bench_model(name, [m for m in args.modes.split(",") if m], args.distill_steps, log, args.rig, args.repeats)
        except Exception as exc:  # keep the other models' figures
            log({"model": name, "event": "error", "error": f"{type(exc).__name__}: {exc}"[:500]})
            if CUDA:
                torch.cuda.empty_cache()
    print(f"\n{'model':14} {'mode':8} {'video':12} {'s/step':>7} {'peak GB':>8}")
    for r in rows:
        if "mode" in r:
            video = f"{r['frames']}x{r['height']}x{r['width']}"
            print(f"{r['model']:14} {r['mode']:8} {video:12} {r['seconds']:7.2f} {r['peak_gb']:8.1f}")


if __name__ == "__main__":
    main()


def test_bench_priors_tiny_smoke(tmp_path, monkeypatch):
    """CPU smoke of this script with tiny random models (the figures come from the GPU run)."""
    monkeypatch.setattr(
        "sys.argv",
        ["bench_priors", "--tiny", "--models", "cogvideox-2b", "--distill-steps", "1", "--repeats", "1", "--out", str(tmp_path)],
    )
    main()
    rows = [json.loads(line) for line in (tmp_path / "bench_priors.jsonl").read_text().splitlines()]
    assert {r["mode"] for r in rows if "mode" in r} == set(MODES)
    assert any(r.get("event") == "distill" and r["clip_frames"] == 9 for r in rows)


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")
def test_bench_priors_full_size(tmp_path, monkeypatch):
    """The full-size figures (about 4.5 minutes on an H200)."""
    monkeypatch.setattr("sys.argv", ["bench_priors", "--out", str(tmp_path)])
    main()
