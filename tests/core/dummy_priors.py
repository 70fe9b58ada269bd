"""Tiny random diffusers components of the REAL classes (diffusers' ``get_dummy_components`` pattern).

Seeded, every small dimension commented; nothing is downloaded: the tokenizer is a WordLevel
``tokenizers`` model built from an in-code vocabulary and wrapped in ``T5TokenizerFast``.
Reusable by other engineers' tests: ``cogvideox_pipeline()``, ``wan_pipeline()``, ``save_pipeline(pipe, dir)``.
"""

from __future__ import annotations

from pathlib import Path

import torch

WORDS = (
    "a the fox dog person man woman robot walks runs trots jumps waves dances forward left right arm leg slowly quickly".split()
)
TEXT_DIM = 32  # text encoder hidden size (d_model)
TEXT_LEN = 16  # tokens per prompt (CogVideoX: transformer.max_text_seq_length)


def tiny_tokenizer():
    """A T5 tokenizer whose Unigram vocabulary is WORDS (+ <pad>, </s>, <unk>, ▁), built offline."""
    from transformers import T5Tokenizer

    vocab = [("<pad>", 0.0), ("</s>", 0.0), ("<unk>", 0.0), ("\u2581", -2.0)] + [("\u2581" + w, -1.0) for w in WORDS]
    return T5Tokenizer(vocab=vocab, extra_ids=0)


def _t5_config(cls):
    return cls(
        vocab_size=len(WORDS) + 4,  # tiny vocabulary above
        d_model=TEXT_DIM,  # hidden size seen by the transformer's text projection
        d_kv=8,  # per-head size
        d_ff=37,  # feed-forward width
        num_layers=2,  # encoder blocks
        num_heads=4,  # attention heads
        relative_attention_num_buckets=8,  # small relative-position table
        decoder_start_token_id=0,
        pad_token_id=0,
        eos_token_id=1,
    )


def cogvideox_pipeline(seed: int = 0):
    """A CogVideoXPipeline of tiny random components (latent 4 channels, VAE ×8 spatial ×4 temporal)."""
    from diffusers import AutoencoderKLCogVideoX, CogVideoXDDIMScheduler, CogVideoXPipeline, CogVideoXTransformer3DModel
    from transformers import T5Config, T5EncoderModel

    torch.manual_seed(seed)
    transformer = CogVideoXTransformer3DModel(
        num_attention_heads=4,  # 4 heads
        attention_head_dim=8,  # × 8 = inner dim 32
        in_channels=4,  # = VAE latent channels
        out_channels=4,
        time_embed_dim=2,  # smallest timestep embedding
        text_embed_dim=TEXT_DIM,  # = T5 d_model
        num_layers=1,  # one block
        sample_width=2,  # preferred latent width  (16 px)
        sample_height=2,  # preferred latent height (16 px)
        sample_frames=9,  # preferred frames
        patch_size=2,  # 2×2 latent patches
        temporal_compression_ratio=4,
        max_text_seq_length=TEXT_LEN,  # prompt tokens
    )
    torch.manual_seed(seed)
    vae = AutoencoderKLCogVideoX(
        in_channels=3,
        out_channels=3,
        down_block_types=("CogVideoXDownBlock3D",) * 4,  # 4 levels → ×8 spatial
        up_block_types=("CogVideoXUpBlock3D",) * 4,
        block_out_channels=(8, 8, 8, 8),  # 8 channels everywhere
        latent_channels=4,  # latent channels
        layers_per_block=1,  # one resnet per level
        norm_num_groups=2,  # group norm groups (divides 8)
        temporal_compression_ratio=4,
    )
    scheduler = CogVideoXDDIMScheduler()  # v-prediction, SNR-shifted schedule (diffusers defaults)
    torch.manual_seed(seed)
    text_encoder = T5EncoderModel(_t5_config(T5Config))
    return CogVideoXPipeline(
        tokenizer=tiny_tokenizer(), text_encoder=text_encoder, vae=vae, transformer=transformer, scheduler=scheduler
    )


def wan_pipeline(seed: int = 0):
    """A WanPipeline of tiny random components (latent 16 channels, VAE ×8 spatial ×4 temporal, UMT5)."""
    from diffusers import AutoencoderKLWan, FlowMatchEulerDiscreteScheduler, WanPipeline, WanTransformer3DModel
    from transformers import UMT5Config, UMT5EncoderModel

    torch.manual_seed(seed)
    vae = AutoencoderKLWan(
        base_dim=3,  # first-level channels
        z_dim=16,  # latent channels (Wan's real value; latents_mean/std have 16 entries)
        dim_mult=[1, 1, 1, 1],  # 4 levels → ×8 spatial
        num_res_blocks=1,
        temperal_downsample=[False, True, True],  # ×4 temporal
    )
    torch.manual_seed(seed)
    transformer = WanTransformer3DModel(
        patch_size=(1, 2, 2),  # 2×2 latent patches
        num_attention_heads=2,  # 2 heads
        attention_head_dim=12,  # × 12 = inner dim 24
        in_channels=16,  # = VAE z_dim
        out_channels=16,
        text_dim=TEXT_DIM,  # = UMT5 d_model
        freq_dim=256,  # timestep frequency embedding (diffusers test value)
        ffn_dim=32,
        num_layers=2,
        cross_attn_norm=True,
        qk_norm="rms_norm_across_heads",
        rope_max_seq_len=32,
    )
    scheduler = FlowMatchEulerDiscreteScheduler(shift=7.0)
    torch.manual_seed(seed)
    text_encoder = UMT5EncoderModel(_t5_config(UMT5Config))
    return WanPipeline(
        tokenizer=tiny_tokenizer(), text_encoder=text_encoder, vae=vae, transformer=transformer, scheduler=scheduler
    )


def save_pipeline(pipe, folder: str | Path) -> Path:
    """``save_pretrained`` the whole pipeline (model_index.json + components) into ``folder``."""
    folder = Path(folder)
    pipe.save_pretrained(folder)
    return folder


def cogvideox_i2v_pipeline(seed: int = 0):
    """A CogVideoXImageToVideoPipeline of tiny random components: as :func:`cogvideox_pipeline`, the
    transformer taking 2 × 4 latent channels (noisy + image latents) with learned positional embeddings
    (CogVideoX-5B-I2V's choice: the video must be the model's 16 × 16 pixels)."""
    from diffusers import CogVideoXImageToVideoPipeline, CogVideoXTransformer3DModel

    base = cogvideox_pipeline(seed)
    torch.manual_seed(seed)
    transformer = CogVideoXTransformer3DModel(
        num_attention_heads=2,  # 2 heads
        attention_head_dim=16,  # × 16 = inner dim 32 (rotary embeddings need head_dim / 8 even)
        in_channels=8,  # noisy latents (4) + image latents (4)
        out_channels=4,
        time_embed_dim=2,
        text_embed_dim=TEXT_DIM,
        num_layers=1,
        sample_width=2,  # latent 2 × 2 = 16 × 16 pixels
        sample_height=2,
        sample_frames=9,  # the model's clip: 9 frames
        patch_size=2,
        temporal_compression_ratio=4,
        max_text_seq_length=TEXT_LEN,
        use_rotary_positional_embeddings=True,
        use_learned_positional_embeddings=True,
    )
    return CogVideoXImageToVideoPipeline(
        tokenizer=base.tokenizer, text_encoder=base.text_encoder, vae=base.vae, transformer=transformer, scheduler=base.scheduler
    )


def wan_i2v_pipeline(seed: int = 0):
    """A WanImageToVideoPipeline of tiny random components (Wan2.1-I2V's layout): the transformer takes
    16 noisy + 4 mask + 16 condition channels and CLIP image tokens (a 2-layer CLIP vision model of width 4)."""
    from diffusers import WanImageToVideoPipeline, WanTransformer3DModel
    from transformers import CLIPImageProcessor, CLIPVisionConfig, CLIPVisionModelWithProjection

    base = wan_pipeline(seed)
    torch.manual_seed(seed)
    transformer = WanTransformer3DModel(
        patch_size=(1, 2, 2),
        num_attention_heads=2,
        attention_head_dim=12,  # inner dim 24
        in_channels=36,  # 16 noisy + 4 mask + 16 condition
        out_channels=16,
        text_dim=TEXT_DIM,
        freq_dim=256,
        ffn_dim=32,
        num_layers=2,
        cross_attn_norm=True,
        qk_norm="rms_norm_across_heads",
        rope_max_seq_len=32,
        image_dim=4,  # = CLIP hidden size
        added_kv_proj_dim=24,  # image tokens get their own key/value projections (= inner dim, as in Wan2.1-I2V)
    )
    torch.manual_seed(seed)
    image_encoder = CLIPVisionModelWithProjection(
        CLIPVisionConfig(
            hidden_size=4,
            projection_dim=4,
            num_hidden_layers=2,
            num_attention_heads=2,
            image_size=32,
            intermediate_size=16,
            patch_size=8,
        )
    )
    return WanImageToVideoPipeline(
        tokenizer=base.tokenizer,
        text_encoder=base.text_encoder,
        vae=base.vae,
        scheduler=base.scheduler,
        image_processor=CLIPImageProcessor(crop_size=32, size=32),
        image_encoder=image_encoder,
        transformer=transformer,
    )


def wan_ti2v_pipeline(seed: int = 0):
    """A WanPipeline with ``expand_timesteps`` of tiny random components (Wan2.2-TI2V-5B's layout:
    VAE ×16 spatial with 2 × 2 patches, 48 latent channels; transformer 48 → 48)."""
    from diffusers import AutoencoderKLWan, WanPipeline, WanTransformer3DModel

    base = wan_pipeline(seed)
    torch.manual_seed(seed)
    vae = AutoencoderKLWan(
        base_dim=3,
        z_dim=48,  # Wan2.2's latent channels
        in_channels=12,  # 3 × 2 × 2 patchified pixels
        out_channels=12,
        is_residual=True,
        patch_size=2,
        latents_mean=[0.0] * 48,
        latents_std=[1.0] * 48,
        dim_mult=[1, 1, 1, 1],
        num_res_blocks=1,
        scale_factor_spatial=16,
        scale_factor_temporal=4,
        temperal_downsample=[False, True, True],
    )
    torch.manual_seed(seed)
    transformer = WanTransformer3DModel(
        patch_size=(1, 2, 2),
        num_attention_heads=2,
        attention_head_dim=12,
        in_channels=48,
        out_channels=48,
        text_dim=TEXT_DIM,
        freq_dim=256,
        ffn_dim=32,
        num_layers=2,
        cross_attn_norm=True,
        qk_norm="rms_norm_across_heads",
        rope_max_seq_len=32,
    )
    return WanPipeline(
        tokenizer=base.tokenizer,
        text_encoder=base.text_encoder,
        vae=vae,
        scheduler=base.scheduler,
        transformer=transformer,
        expand_timesteps=True,
    )
