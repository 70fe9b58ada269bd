"""Renderer figures: torch backend speed (CPU), and on CUDA: nvdiffrast build, PSNR between the two
backends on the same scene, inverse-rendering recovery with nvdiffrast, and the 49×480×720 ~20k
triangle forward+backward benchmark.

Run: ``python tests/bench/bench_render.py [--out DIR]`` (``make bench-render``); prints every figure
and writes them to DIR/bench_render.json (default bench_out/).
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import sys
import time
import traceback
from dataclasses import replace
from pathlib import Path

import numpy as np
import torch

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from akd_blender.core.character.kinematics import Skeleton  # noqa: E402
from akd_blender.core.character.procedural import biped  # noqa: E402
from akd_blender.core.character.rig import RigAsset  # noqa: E402
from akd_blender.core.character.rotations import rotvec_to_quat  # noqa: E402
from akd_blender.core.render import Renderer, make_cameras, root_path  # noqa: E402


def subdivide(rig: RigAsset, target_faces: int) -> RigAsset:
    """Midpoint 1→4 subdivision, then centroid 1→3 splits until ≈ target_faces; weights and
    colours of new vertices are their parents' means (no UVs)."""
    v, f, w, c = rig.vertices, rig.faces, rig.weights, rig.vertex_colors
    edges = np.sort(np.concatenate([f[:, [0, 1]], f[:, [1, 2]], f[:, [2, 0]]]), axis=1)
    uniq, inv = np.unique(edges, axis=0, return_inverse=True)
    mid = len(v) + inv.reshape(3, -1).T  # [T,3] midpoint of edges (01, 12, 20)
    v = np.concatenate([v, v[uniq].mean(1)])
    w = np.concatenate([w, w[uniq].mean(1)])
    c = np.concatenate([c, c[uniq].mean(1)])
    a, b, d = f.T
    m01, m12, m20 = mid.T
    f = np.concatenate([np.stack(t, 1) for t in ((a, m01, m20), (m01, b, m12), (m20, m12, d), (m01, m12, m20))])
    k = max(0, min(len(f), (target_faces - len(f)) // 2))
    cen = len(v) + np.arange(k)
    v = np.concatenate([v, v[f[:k]].mean(1)])
    w = np.concatenate([w, w[f[:k]].mean(1)])
    c = np.concatenate([c, c[f[:k]].mean(1)])
    a, b, d = f[:k].T
    f = np.concatenate([f[k:], np.stack([a, b, cen], 1), np.stack([b, d, cen], 1), np.stack([d, a, cen], 1)])
    return replace(
        rig,
        vertices=v,
        faces=f,
        weights=w.astype(np.float32),
        vertex_colors=c.astype(np.float32),
        mesh_offsets=np.array([0, len(v)]),
    )


def posed(rig: RigAsset, frames: int, device: str, seed: int = 0) -> torch.Tensor:
    """World vertices [F,V,3] of a smooth random motion (±0.4 rad) with a forward root drift."""
    g = torch.Generator().manual_seed(seed)
    keys = torch.randn(4, rig.num_bones, 3, generator=g) * 0.4
    t = torch.linspace(0, 1, frames)[:, None, None]
    rotvec = keys[0] * (1 - t) + keys[1] * t + 0.5 * torch.sin(6 * t) * keys[2]
    rot = rotvec_to_quat(rotvec)
    loc = torch.zeros(frames, rig.num_bones, 3)
    root = int(rig.root_indices[0])
    drift = torch.stack([torch.zeros(frames), -torch.linspace(0, 0.5, frames), torch.zeros(frames)], 1)
    loc[:, root] = drift @ torch.as_tensor(rig.rest_matrices[root, :3, :3], dtype=torch.float32)
    with torch.no_grad():
        return Skeleton(rig).to(device)((rot.to(device), loc.to(device)))


def time_fwd_bwd(renderer: Renderer, verts: torch.Tensor, cams, repeats: int = 5) -> float:
    """Median seconds of render + backward of a mean-square loss w.r.t. the vertices."""
    sync = torch.cuda.synchronize if verts.is_cuda else (lambda: None)
    times = []
    for i in range(repeats + 2):
        v = verts.detach().requires_grad_(True)
        sync()
        t0 = time.perf_counter()
        img = renderer.render(v, cams)
        img.square().mean().backward()
        sync()
        if i >= 2:
            times.append(time.perf_counter() - t0)
    return statistics.median(times)


def psnr(a: torch.Tensor, b: torch.Tensor) -> float:
    mse = float((a - b).square().mean())
    return float("inf") if mse == 0 else 10 * math.log10(1.0 / mse)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", default=str(ROOT / "bench_out"))
    args = parser.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    figures: dict = {"torch": torch.__version__, "cuda": torch.cuda.is_available(), "threads": torch.get_num_threads()}
    rig = biped()

    def section(name, fn):
        try:
            t0 = time.perf_counter()
            fn()
            print(f"[{name}] done in {time.perf_counter() - t0:.1f} s", flush=True)
        except Exception as exc:  # keep going: one failing figure must not hide the others
            traceback.print_exc()
            figures[name + "_error"] = f"{type(exc).__name__}: {exc}"

    def cpu_torch():
        verts = posed(rig, 16, "cpu")
        r = Renderer(rig, 128, 128, backend="torch", device="cpu")
        cams = make_cameras(rig, root_path(verts), 128, 128)
        s = time_fwd_bwd(r, verts, cams, repeats=3)
        figures["torch_cpu_16x128x128_fwd_bwd_s"] = s
        figures["torch_cpu_triangles"] = int(rig.faces.shape[0])
        print(f"torch backend, CPU ({torch.get_num_threads()} threads), 16x128x128, {rig.faces.shape[0]} tris: {s:.3f} s fwd+bwd")

    section("cpu_torch", cpu_torch)
    if torch.cuda.is_available():
        figures["gpu"] = torch.cuda.get_device_name()

        def build():
            from akd_blender.core.render.raster_nvdiffrast import load_nvdiffrast

            t0 = time.perf_counter()
            load_nvdiffrast()
            figures["nvdiffrast_load_s"] = time.perf_counter() - t0
            print(f"nvdiffrast plugin ready in {figures['nvdiffrast_load_s']:.1f} s")

        def agreement():
            verts = posed(rig, 8, "cuda")
            cams = make_cameras(rig, root_path(verts), 240, 360)
            a = Renderer(rig, 240, 360, backend="torch", device="cuda").render(verts, cams)
            b = Renderer(rig, 240, 360, backend="nvdiffrast", device="cuda").render(verts, cams)
            figures["psnr_rgb_db"] = psnr(a[:, :3], b[:, :3])
            figures["psnr_alpha_db"] = psnr(a[:, 3], b[:, 3])
            figures["pixels_differing_gt_0.1"] = float(((a - b).abs().amax(1) > 0.1).float().mean())
            print(
                f"torch vs nvdiffrast, 8x240x360: PSNR RGB {figures['psnr_rgb_db']:.2f} dB, alpha {figures['psnr_alpha_db']:.2f} dB"
            )
            np.save(out / "backends_torch_vs_nvdiffrast.npy", torch.stack([a[0], b[0]]).cpu().numpy())

        def recovery():
            from tests.core.test_render_recovery import recover

            for backend in ("nvdiffrast", "torch"):
                t0 = time.perf_counter()
                shift, angle = recover(backend, "cuda")
                figures[f"recovery_{backend}_cuda"] = {
                    "shift_over_height": shift,
                    "angle_deg": angle,
                    "s": time.perf_counter() - t0,
                }
                print(f"recovery with {backend} on CUDA: root off {shift:.4%} of height, rotation off {angle:.3f} deg")

        def benchmark():
            big = subdivide(rig, 20000)
            verts = posed(big, 49, "cuda")
            cams = make_cameras(big, root_path(verts), 480, 720)
            for backend in ("nvdiffrast", "torch"):
                r = Renderer(big, 480, 720, backend=backend, device="cuda")
                s = time_fwd_bwd(r, verts, cams, repeats=10 if backend == "nvdiffrast" else 3)
                figures[f"{backend}_cuda_49x480x720_fwd_bwd_s"] = s
                print(f"{backend} on CUDA, 49x480x720, {big.faces.shape[0]} tris: {s * 1000:.1f} ms fwd+bwd")
            figures["bench_triangles"] = int(big.faces.shape[0])
            figures["peak_gpu_gb"] = torch.cuda.max_memory_allocated() / 1e9

        section("build", build)
        section("agreement", agreement)
        section("recovery", recovery)
        section("benchmark", benchmark)
    (out / "bench_render.json").write_text(json.dumps(figures, indent=2))
    print(json.dumps(figures, indent=2))


if __name__ == "__main__":
    main()
