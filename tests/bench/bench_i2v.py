"""GPU benchmark: the image-to-video priors end to end, full-size random weights (nothing downloaded).

Parts (``--parts``, comma-separated; each fits in one 10-minute device call on an H200):

- ``cogvideox``: CogVideoX-5B-I2V on the rig (``--rig FILE.npz``, a ``core.rig.save_rig`` file; default
  the procedural biped), the default path a user gets: the first frame rendered at 480 × 720, the model
  draws 49 frames (``--draw-steps`` DDIM steps, CFG), the pose search fits them, ``--refine-steps`` SDS
  steps refine, the motion's keys data (the MotionClip) comes out. Seconds and peak GB of each part
  of one run (``run_request`` with the progress phases as part boundaries). ``--variants`` runs several
  such jobs on one built model (:data:`COGVIDEOX_VARIANTS`: each change alone, all together, under a
  24 GB allocator cap, the library-seeded job) and ``kernels`` times the attention kernels and the
  VAE's tiling on their own pieces.
- ``ti2v``: the same with Wan2.2-TI2V-5B in a memory mode (``--ti2v-memory``: ``lowest`` = CPU offload
  of each component while the others run + VAE tiling/slicing/checkpointing, the mode meant for a
  24 GB GPU; ``default``) at ``--ti2v-size`` (default its published 121 × 704 × 1280).
- ``t2v-step``: the text-to-video CogVideoX-5B loop at 49 × 480 × 720 from the pose: per optimiser step
  the pose (FK + skinning), render, prior query, backward and optimiser time, every step querying
  the prior (target reuse 1) and with the default reuse (4), after a one-step warm-up.

Architectures are the published configs written below (``transformer/config.json``, ``vae/config.json``
of THUDM/CogVideoX-5b-I2V and Wan-AI/Wan2.2-TI2V-5B-Diffusers); the text encoders are random
T5-XXL / UMT5-XXL of the real size (``--text-encoder full``, so that their memory counts while they
encode; ``small``: one layer) behind a tiny tokenizer. Random weights draw noise, so the fit's result
is meaningless here; its cost is not (the search does the same work whatever it fits).

Run:  python -m tests.bench.bench_i2v --rig Fox.npz --out DIR [--parts cogvideox,ti2v,t2v-step]
Writes DIR/bench_i2v.jsonl (one line per measurement) and prints a table per part.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import time
from dataclasses import replace
from pathlib import Path
from unittest import mock

import torch

from akd_blender.core.distillation import sds_steps
from akd_blender.core.settings import RedrawSettings
from akd_blender.core.video_models.protocol import MemoryOptions
from tests.bench.bench_priors import COGVIDEOX_TRANSFORMER

CUDA = torch.cuda.is_available()
PROMPT = "a fox trots forward"

COGVIDEOX_I2V_TRANSFORMER = COGVIDEOX_TRANSFORMER | dict(  # THUDM/CogVideoX-5b-I2V transformer/config.json
    in_channels=32,  # 16 noisy + 16 image latents
    use_learned_positional_embeddings=True,
)
WAN22_TI2V_TRANSFORMER = dict(  # Wan-AI/Wan2.2-TI2V-5B-Diffusers transformer/config.json
    patch_size=(1, 2, 2),
    num_attention_heads=24,
    attention_head_dim=128,
    in_channels=48,
    out_channels=48,
    text_dim=4096,
    freq_dim=256,
    ffn_dim=14336,
    num_layers=30,
    cross_attn_norm=True,
    qk_norm="rms_norm_across_heads",
    eps=1e-6,
    image_dim=None,
    added_kv_proj_dim=None,
    rope_max_seq_len=1024,
)
WAN22_VAE = dict(  # Wan-AI/Wan2.2-TI2V-5B-Diffusers vae/config.json (latent statistics: zeros / ones, random weights)
    base_dim=160,
    decoder_base_dim=256,
    z_dim=48,
    dim_mult=[1, 2, 4, 4],
    num_res_blocks=2,
    attn_scales=[],
    temperal_downsample=[False, True, True],
    dropout=0.0,
    in_channels=12,
    out_channels=12,
    patch_size=2,
    is_residual=True,
    scale_factor_spatial=16,
    scale_factor_temporal=4,
    latents_mean=[0.0] * 48,
    latents_std=[1.0] * 48,
)
TEXT_XXL = dict(d_model=4096, d_kv=64, d_ff=10240, num_layers=24, num_heads=64, feed_forward_proj="gated-gelu")  # T5 v1.1 XXL
VOCAB = {"t5": 32128, "umt5": 256384}


def _sync() -> None:
    if CUDA:
        torch.cuda.synchronize()


def _peak_gb() -> float:
    return torch.cuda.max_memory_allocated() / 1e9 if CUDA else 0.0


def _reset_peak() -> None:
    if CUDA:
        torch.cuda.reset_peak_memory_stats()


@contextlib.contextmanager
def _building(device: torch.device):
    """Modules created directly on ``device`` in bf16 (no fp32 copy of 5B weights on the way)."""
    previous = torch.get_default_dtype()
    torch.set_default_dtype(torch.bfloat16 if device.type == "cuda" else torch.float32)
    try:
        with torch.device(device):
            yield
    finally:
        torch.set_default_dtype(previous)


def _text_encoder(kind: str, size: str):
    from transformers import T5Config, T5EncoderModel, UMT5Config, UMT5EncoderModel

    config_cls, model_cls = (T5Config, T5EncoderModel) if kind == "t5" else (UMT5Config, UMT5EncoderModel)
    dims = TEXT_XXL if size == "full" else dict(TEXT_XXL, d_ff=256, num_layers=1)
    return model_cls(config_cls(vocab_size=VOCAB[kind], decoder_start_token_id=0, pad_token_id=0, eos_token_id=1, **dims))


def build_cogvideox_i2v(device: torch.device, memory: MemoryOptions, text_size: str, tiny: bool = False):
    """CogVideoX-5B-I2V of random weights as the project's adapter (or the tiny test model)."""
    import diffusers

    from akd_blender.core.video_models.cogvideox_i2v import CogVideoXImageToVideoPrior
    from tests.core.dummy_priors import cogvideox_i2v_pipeline, tiny_tokenizer

    if tiny:
        return CogVideoXImageToVideoPrior(cogvideox_i2v_pipeline(), name="tiny cogvideox-i2v", device=device, memory=memory)
    torch.manual_seed(0)
    with _building(device):
        transformer = diffusers.CogVideoXTransformer3DModel(**COGVIDEOX_I2V_TRANSFORMER)
        vae = diffusers.AutoencoderKLCogVideoX(scaling_factor=0.7)  # the other defaults are the release's
        text = _text_encoder("t5", text_size)
    scheduler = diffusers.CogVideoXDDIMScheduler(
        beta_schedule="scaled_linear",
        beta_start=0.00085,
        beta_end=0.012,
        prediction_type="v_prediction",
        rescale_betas_zero_snr=True,
        snr_shift_scale=1.0,
        timestep_spacing="trailing",
    )
    pipe = diffusers.CogVideoXImageToVideoPipeline(tiny_tokenizer(), text, vae, transformer, scheduler)
    text.to("cpu")  # where from_pretrained leaves it: encode_text moves it to the GPU while it encodes
    return CogVideoXImageToVideoPrior(pipe, name="cogvideox-5b-i2v", device=device, dtype=torch.bfloat16, memory=memory)


def build_wan_ti2v(device: torch.device, memory: MemoryOptions, text_size: str, tiny: bool = False):
    """Wan2.2-TI2V-5B of random weights as the project's adapter (or the tiny test model)."""
    import diffusers

    from akd_blender.core.video_models.wan_i2v import WanImageToVideoPrior
    from tests.core.dummy_priors import tiny_tokenizer, wan_ti2v_pipeline

    if tiny:
        return WanImageToVideoPrior(wan_ti2v_pipeline(), name="tiny wan2.2-ti2v", device=device, memory=memory)
    torch.manual_seed(0)
    with _building(device):
        transformer = diffusers.WanTransformer3DModel(**WAN22_TI2V_TRANSFORMER)
        vae = diffusers.AutoencoderKLWan(**WAN22_VAE)
        text = _text_encoder("umt5", text_size)
    scheduler = diffusers.UniPCMultistepScheduler(prediction_type="flow_prediction", use_flow_sigmas=True, flow_shift=5.0)
    pipe = diffusers.WanPipeline(tiny_tokenizer(), text, vae, scheduler, transformer, expand_timesteps=True)
    if memory.cpu_offload:  # weights live on the CPU between uses (created on the GPU above for speed)
        text.to("cpu")
    return WanImageToVideoPrior(pipe, name="wan2.2-ti2v-5b", device=device, dtype=torch.bfloat16, memory=memory)


class PhaseMeter:
    """Seconds and peak GPU memory of each part of a job (a part ends where the next begins).

    Parts: "text + first frame" (from the start to the drawing: the prompt encoded, the first frame
    rendered), "draw" (``prior.sample``: the DDIM steps and the VAE decode), "fit" (the pose search),
    "refine" (from the search's end to the job's: the keys fitted, the SDS steps), "keys" (the clip's
    channels out of the result)."""

    def __init__(self) -> None:
        self.rows: list[dict] = []
        self.current, self.began = "text + first frame", time.perf_counter()
        _reset_peak()

    def switch(self, name: str) -> None:
        _sync()
        now = time.perf_counter()
        self.rows.append({"part": self.current, "seconds": now - self.began, "peak_gb": _peak_gb()})
        self.current, self.began = name, now
        _reset_peak()

    @contextlib.contextmanager
    def watching(self, prior):
        """Part boundaries at the start and end of ``prior.sample`` and at the end of the pose search."""
        from akd_blender.core.fitting import pose_search

        draw, search = prior.sample, pose_search.search_poses

        def sample(*args, **kwargs):
            self.switch("draw")
            video = draw(*args, **kwargs)
            self.switch("fit")
            return video

        def searched(*args, **kwargs):
            result = search(*args, **kwargs)
            self.switch("refine")
            return result

        prior.sample, pose_search.search_poses = sample, searched
        try:
            yield self
        finally:
            del prior.sample
            pose_search.search_poses = search


def end_to_end(prior, rig, args, draw_steps: int, refine_steps: int, log, label: str, prompt: str = PROMPT, **settings) -> None:
    """One job with ``prior`` on ``rig`` for ``prompt`` (start "auto": draw then fit for a prompt the
    library cannot read, the library motion for one it can), then ``refine_steps`` steps; ``settings``:
    more DistillConfig fields (e.g. ``start``, ``redraw``)."""
    from akd_blender.core.job.request import JobRequest, run_request
    from akd_blender.core.settings import DistillConfig, SearchSettings

    scales = {"scales": args.search_scales} if args.search_scales else {}
    config = DistillConfig(
        steps=refine_steps,
        frames=args.frames,
        device=prior.device.type,
        preview_every=0,
        render_backend=args.render_backend,
        search=SearchSettings(steps=draw_steps, guidance=args.guidance, **scales),
        seed=0,
        **settings,
    )
    start = time.perf_counter()
    with PhaseMeter().watching(prior) as meter:
        result = run_request(JobRequest(rig, prompt, config, model=prior.name), prior=prior)
        meter.switch("keys")
        clip = result.clip
        keys = {"rotations": clip.rotations.copy(), "locations": clip.locations.copy()}  # what blender.keyframes writes
        meter.switch("done")
    total = time.perf_counter() - start
    video = f"{prior.frames}x{prior.height}x{prior.width}"
    for row in meter.rows:
        log({"bench": label, "video": video, **row})
    log(
        {
            "bench": label,
            "part": "total",
            "video": video,
            "seconds": total,
            "peak_gb": max(r["peak_gb"] for r in meter.rows),
            "draw_steps": draw_steps,
            "refine_steps": refine_steps,
            "clip_frames": int(keys["rotations"].shape[0]),
            "fps": config.fps,
            "search_renders": result.facts.get("search_renders"),
            "start": result.facts.get("start") or result.config.start,
            "timings": result.timings,
        }
    )


def load_character(path: str | None):
    from akd_blender.core.character.procedural import biped
    from akd_blender.core.character.rig import load_rig

    return load_rig(path) if path else biped()


LIBRARY_PROMPT = "a fox scampering along at a quick trot"  # in the shipped phrase table: read without the sentence encoder
ALL_CHANGES = {"solver": "dpmsolver++", "draw_steps": 20, "draw_tiling": True, "budget_gb": 24.0}
COGVIDEOX_VARIANTS: dict[str, dict] = {
    "baseline": {},  # DDIM (--draw-steps), torch's attention kernel, the VAE whole-frame everywhere
    "dpm++": {"solver": "dpmsolver++", "draw_steps": 20},  # DPM-Solver++ 2M, 20 steps
    "cudnn": {"attention": "cudnn"},  # cuDNN fused attention first
    "tiling": {"vae_tiling": True},  # every VAE encode/decode in tiles
    "draw-tiling": {"draw_tiling": True},  # the drawing's decode in tiles
    "all": ALL_CHANGES | {"budget_gb": None},  # DPM-Solver++ 20 steps + the drawing decoded in tiles
    "all-24gb": ALL_CHANGES,  # the same under a 24 GB allocator cap
    "all-every-frame": ALL_CHANGES | {"budget_gb": None, "every_frame": True},  # "all" with SDS renders of every clip frame
    "no-refine-24gb": ALL_CHANGES | {"refine_steps": 0},  # the default after a drawing: no SDS steps
    "library": ALL_CHANGES | {"prompt": "library"},  # library start + SDS steps (stay close), 24 GB cap
    "library-redraw": ALL_CHANGES | {"prompt": "library", "redraw": True},  # library start + one SDEdit round
}
"""The CogVideoX job's variants (``--variants``): each change alone, all together, under a 24 GB cap,
and the library-seeded job (the prompt ``--library-prompt``, a library motion of the rig's kind)."""


def run_variant(prior, rig, args, log, name: str, memory: MemoryOptions) -> None:
    """One CogVideoX job as variant ``name`` of :data:`COGVIDEOX_VARIANTS` (rows labelled ``cogvideox/<name>``)."""
    change = COGVIDEOX_VARIANTS[name.removesuffix("+tiling")] | ({"vae_tiling": True} if name.endswith("+tiling") else {})
    prior.clear_text_cache()  # each job encodes its prompt, the text encoder coming from the CPU as loaded
    prior.draw_solver = change.get("solver", args.solver)
    prior.set_memory(
        replace(
            memory,
            attention=change.get("attention", "default"),
            vae_tiling=change.get("vae_tiling", False),
            draw_tiling=change.get("draw_tiling", False),
        )
    )
    budget = change.get("budget_gb")
    if CUDA:
        torch.cuda.empty_cache()
        total = torch.cuda.get_device_properties(0).total_memory
        torch.cuda.set_per_process_memory_fraction(min(1.0, budget * 1e9 / total) if budget else 1.0)
    settings, refine = {}, change.get("refine_steps", args.refine_steps)
    prompt = args.library_prompt if change.get("prompt") == "library" else PROMPT
    if change.get("redraw"):
        settings, refine = {"redraw": RedrawSettings(noise=(args.library_noise,))}, 0
    # every_frame: the SDS steps render all of the clip's frames, as before the model's own frame count was shown
    every_frame = (
        mock.patch.object(sds_steps, "shown_frames", lambda *_: None) if change.get("every_frame") else contextlib.nullcontext()
    )
    try:
        with every_frame:
            end_to_end(
                prior, rig, args, change.get("draw_steps", args.draw_steps), refine, log, f"cogvideox/{name}", prompt, **settings
            )
    finally:
        if CUDA:
            torch.cuda.set_per_process_memory_fraction(1.0)


def part_cogvideox_kernels(prior, log, memory: MemoryOptions) -> None:
    """Each change on the piece it changes, the rest held: one transformer query (CFG batch 2, 49 × 480 × 720)
    per attention kernel, and the VAE's encode and decode of 49 × 480 × 720 whole-frame and tiled
    (seconds: the mean of 3 after a warm-up; peak GB). Through the adapter's own hooks."""
    from akd_blender.core.video_models.cogvideox import CogVideoXPrior

    device = prior.device
    text = prior.encode_text(PROMPT)
    text = replace(text, first_frame=torch.rand(3, prior.height, prior.width, device=device))
    shape = prior._latent_shape(prior.frames, prior.height, prior.width)
    latents = torch.randn(shape, device=device, dtype=prior.dtype)
    video = torch.rand(prior.frames, 3, prior.height, prior.width, device=device)

    def timed(label: str, run, **facts) -> None:
        with torch.no_grad():
            run()
            _sync()
            _reset_peak()
            start = time.perf_counter()
            for _ in range(3):
                run()
            _sync()
        log(
            {
                "bench": "cogvideox-kernels",
                "part": label,
                "seconds": (time.perf_counter() - start) / 3,
                "peak_gb": _peak_gb(),
                **facts,
            }
        )

    step = torch.tensor(500)
    for attention in ("default", "flash", "cudnn"):
        prior.set_memory(replace(memory, attention=attention))
        timed(f"transformer, attention {attention}", lambda: prior._predict(latents, step, text, True))
    for tiling in (False, True):
        prior.set_memory(replace(memory, vae_tiling=tiling))
        kind = "tiled" if tiling else "whole-frame"
        timed(f"VAE encode, {kind}", lambda: CogVideoXPrior._encode(prior, video))
        timed(f"VAE decode, {kind}", lambda: CogVideoXPrior._decode(prior, latents))
    prior.set_memory(memory)


def part_image_to_video(args, log, name: str) -> None:
    device = torch.device("cuda" if CUDA else "cpu")
    rig = load_character(args.rig)
    if name == "cogvideox":
        memory = MemoryOptions()
        build = build_cogvideox_i2v
    else:
        memory = MemoryOptions.lowest() if args.ti2v_memory == "lowest" else MemoryOptions()
        build = build_wan_ti2v
    _reset_peak()
    start = time.perf_counter()
    prior = build(device, memory, args.text_encoder, tiny=args.tiny)
    if name == "ti2v":
        frames, height, width = (int(v) for v in args.ti2v_size.split("x"))
        prior.frames, prior.height, prior.width = frames, height, width
    _sync()
    log(
        {
            "bench": name,
            "part": "build (random weights)",
            "seconds": time.perf_counter() - start,
            "peak_gb": _peak_gb(),
            "resident_gb": torch.cuda.memory_allocated() / 1e9 if CUDA else 0.0,
            "transformer_params_b": sum(p.numel() for p in prior.transformer.parameters()) / 1e9,
            "memory": args.ti2v_memory if name == "ti2v" else "default",
            "rig": rig.name,
        }
    )
    if name == "cogvideox":
        for variant in [v for v in args.variants.split(",") if v]:
            if variant == "kernels":
                part_cogvideox_kernels(prior, log, memory)
                continue
            try:
                run_variant(prior, rig, args, log, variant, memory)
            except Exception as exc:  # keep the other variants' figures
                log({"bench": f"cogvideox/{variant}", "event": "error", "error": f"{type(exc).__name__}: {exc}"[:500]})
                if CUDA:
                    torch.cuda.empty_cache()
    else:
        end_to_end(prior, rig, args, args.draw_steps, args.refine_steps, log, name)
    prior.free()
    if CUDA:
        torch.cuda.empty_cache()


def part_t2v_step(args, log) -> None:
    """The text-to-video CogVideoX-5B loop from the pose: seconds per step, render and optimiser included."""
    from akd_blender.core.distillation.sds_loop import distill
    from akd_blender.core.settings import DistillConfig
    from tests.bench.bench_priors import MODELS, NATIVE, build_prior

    device = torch.device("cuda" if CUDA else "cpu")
    if args.tiny:
        MODELS["cogvideox-5b"] = MODELS["cogvideox-5b"] | {"tiny": True}
        NATIVE["cogvideox"] = (9, 32, 32)
    rig = load_character(args.rig)
    prior = build_prior("cogvideox-5b", device, MemoryOptions())
    frames, height, width = NATIVE["cogvideox"]
    common = dict(
        frames=frames,
        height=height,
        width=width,
        device=device.type,
        preview_every=0,
        start="pose",
        redraw=RedrawSettings(noise=()),
    )
    distill(rig, PROMPT, DistillConfig(steps=1, render_backend=args.render_backend, **common), prior=prior)  # warm-up
    for reuse in (1, 4):
        _reset_peak()
        config = DistillConfig(steps=args.t2v_steps, target_reuse=reuse, render_backend=args.render_backend, **common)
        result = distill(rig, PROMPT, config, prior=prior)
        parts = ("pose", "render", "prior", "backward", "optimiser")
        per_step = {k: result.timings.get(k, 0.0) / args.t2v_steps for k in parts}
        log(
            {
                "bench": "t2v-step",
                "part": f"step, target reuse {reuse}",
                "video": f"{frames}x{height}x{width}",
                "seconds": sum(per_step.values()),
                "peak_gb": _peak_gb(),
                "steps": args.t2v_steps,
                "per_step": per_step,
            }
        )
    prior.free()


def main(argv: list[str] | None = None) -> list[dict]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=".")
    parser.add_argument("--rig", help="a RigAsset .npz (akd_blender.core.character.rig.save_rig); default: the procedural biped")
    parser.add_argument("--parts", default="cogvideox,ti2v,t2v-step")
    parser.add_argument("--draw-steps", type=int, default=50, help="steps of the drawing (the models' default: 50 DDIM)")
    parser.add_argument(
        "--solver", choices=("ddim", "dpmsolver++"), default="ddim", help="the drawing's solver where a variant sets none"
    )
    parser.add_argument(
        "--variants",
        default="baseline",
        help=f"comma-separated CogVideoX jobs, run in order on one built model: {', '.join(COGVIDEOX_VARIANTS)}, "
        "each with '+tiling' (every VAE encode and decode in tiles), and 'kernels' (the attention kernels and the "
        "VAE's tiling on their own pieces)",
    )
    parser.add_argument(
        "--library-prompt", default=LIBRARY_PROMPT, help="the library variants' prompt (a library motion of the rig's kind)"
    )
    parser.add_argument("--library-noise", type=float, default=0.5, help="the noise level of library-redraw's one round")
    parser.add_argument("--refine-steps", type=int, default=24, help="SDS steps after the fit")
    parser.add_argument("--guidance", type=float, default=6.0, help="CFG scale of the drawing")
    parser.add_argument(
        "--search-scales",
        type=lambda text: tuple(float(v) for v in text.split(",")),
        help="the pose search's sweep angles, radians, comma-separated (default: SearchSettings')",
    )
    parser.add_argument("--frames", type=int, help="clip frames (default: the model's clip at 24 fps, e.g. 147 for CogVideoX)")
    parser.add_argument("--ti2v-memory", choices=("lowest", "default"), default="lowest")
    parser.add_argument("--ti2v-size", default="121x704x1280", help="FRAMESxHEIGHTxWIDTH of Wan2.2-TI2V's clip")
    parser.add_argument("--t2v-steps", type=int, default=8, help="measured steps of the text-to-video loop per reuse setting")
    parser.add_argument("--text-encoder", choices=("full", "small"), default="full", help="random T5/UMT5-XXL or a 1-layer one")
    parser.add_argument("--render-backend", default="auto", choices=("auto", "torch", "nvdiffrast"))
    parser.add_argument("--tiny", action="store_true", help="tiny random models on the CPU (smoke test of this script)")
    args = parser.parse_args(argv)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    rows: list[dict] = []

    def log(row: dict) -> None:
        rows.append(row)
        print(json.dumps(row, default=float), flush=True)
        with open(out / "bench_i2v.jsonl", "a") as f:
            f.write(json.dumps(row, default=float) + "\n")

    if args.tiny:
        args.ti2v_size, args.text_encoder = "9x32x32", "small"
    log({"event": "device", "name": torch.cuda.get_device_name() if CUDA else "cpu", "torch": torch.__version__})
    for part in [p for p in args.parts.split(",") if p]:
        try:
            if part == "t2v-step":
                part_t2v_step(args, log)
            elif part in ("cogvideox", "ti2v"):
                part_image_to_video(args, log, part)
            else:
                raise ValueError(f"unknown part {part!r} (cogvideox, ti2v, t2v-step)")
        except Exception as exc:  # keep the other parts' figures
            log({"bench": part, "event": "error", "error": f"{type(exc).__name__}: {exc}"[:500]})
            if CUDA:
                torch.cuda.empty_cache()
    print(f"\n{'bench':26} {'part':34} {'video':14} {'seconds':>8} {'peak GB':>8}")
    for r in rows:
        if "part" in r:
            print(f"{r['bench']:26} {r['part']:34} {r.get('video', ''):14} {r['seconds']:8.2f} {r['peak_gb']:8.1f}")
    return rows


if __name__ == "__main__":
    main()


def test_bench_i2v_tiny_smoke(tmp_path):
    """CPU smoke of this script with tiny random models (the figures come from the GPU run)."""
    rows = main(
        [
            "--tiny",
            "--frames",
            "9",
            "--search-scales",
            "0.6",
            "--draw-steps",
            "2",
            "--refine-steps",
            "1",
            "--t2v-steps",
            "1",
            "--out",
            str(tmp_path),
        ]
    )
    assert not [r for r in rows if r.get("event") == "error"], rows
    totals = {r["bench"]: r for r in rows if r.get("part") == "total"}
    assert set(totals) == {"cogvideox/baseline", "ti2v"} and all(r["refine_steps"] == 1 for r in totals.values())
    parts = [r["part"] for r in rows if r.get("bench") == "cogvideox/baseline"]
    assert parts == ["text + first frame", "draw", "fit", "refine", "keys", "total"]
    assert sum(r.get("bench") == "t2v-step" for r in rows) == 2
