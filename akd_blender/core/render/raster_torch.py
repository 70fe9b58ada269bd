"""Pure-torch rasteriser with nvdiffrast's interface: rasterize → interpolate → antialias.

Runs on any torch device (CPU, MPS, CUDA). The buffers follow nvdiffrast exactly, so the shading
code above is backend-agnostic and both backends give the same images:

- ``rast`` [N,H,W,4] = (u, v, z/w, triangle_id + 1); row 0 is NDC y = -1 (the *bottom* of the
  image), pixel (x, y) has its centre at NDC ((x + .5) / (W/2) - 1, (y + .5) / (H/2) - 1);
  ``triangle_id + 1 == 0`` means empty. ``u, v`` are perspective-correct barycentrics of vertices 0
  and 1 and are differentiable w.r.t. the clip-space positions; ``z/w`` is not (as in nvdiffrast).
- ``interpolate`` returns ``u·a0 + v·a1 + (1-u-v)·a2`` per pixel, zero where empty.
- ``antialias`` is nvdiffrast's analytic silhouette antialiasing (Laine et al. 2020, §4.3), ported
  from ``common/antialias.cu``: for neighbouring pixels with different triangles, the front one's
  silhouette edge crossing the segment between the pixel centres blends the two colours by the
  crossing position, which carries the gradient to the edge's vertex positions.

Visibility is found without gradients: each triangle's screen-space bounding box enumerates
candidate pixels (vectorised over all triangles and frames, in chunks that bound memory), edge
functions test coverage, and a scatter ``amin`` keeps the nearest depth (ties → larger triangle id).
Triangles with a vertex behind the eye (w ≤ 0) are skipped (no near-plane clipping).
"""

from __future__ import annotations

import numpy as np
import torch

__all__ = ["TorchRasterizer", "opposite_vertices"]


def opposite_vertices(faces: np.ndarray) -> np.ndarray:
    """For each triangle edge, the vertex opposite it in a neighbouring triangle.

    Edge ``k`` of triangle ``(v0, v1, v2)`` is the one opposite ``vk`` (``(v1,v2)``, ``(v2,v0)``,
    ``(v0,v1)``). Returns int64 [T,3]: the third vertex of another triangle sharing that edge, or -1
    for a boundary edge (nvdiffrast's topology hash; for non-manifold edges the first other one).
    """
    faces = np.asarray(faces, dtype=np.int64)
    t = len(faces)
    a = faces[:, [1, 2, 0]].reshape(-1)
    b = faces[:, [2, 0, 1]].reshape(-1)
    opp = faces.reshape(-1)  # corner k of triangle t is opposite edge k
    key = np.minimum(a, b) * (int(faces.max(initial=0)) + 1) + np.maximum(a, b)
    order = np.argsort(key, kind="stable")
    sk = key[order]
    out = np.full(3 * t, -1, dtype=np.int64)
    starts = np.flatnonzero(np.r_[True, sk[1:] != sk[:-1]])
    ends = np.r_[starts[1:], len(sk)]
    for s, e in zip(starts[ends - starts > 1], ends[ends - starts > 1]):
        group = order[s:e]
        for i, g in enumerate(group):
            other = group[1] if i == 0 else group[0]
            out[g] = opp[other]
    return out.reshape(t, 3)


def _same_sign(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    return torch.signbit(a) == torch.signbit(b)


class TorchRasterizer:
    """nvdiffrast-compatible raster operations in plain torch (see the module docstring).

    Args:
        max_pairs: most (triangle, pixel) candidates held at once; frames are processed in chunks
            below it (memory ≈ 60 bytes per candidate).
    """

    name = "torch"

    def __init__(self, max_pairs: int = 3_000_000) -> None:
        self.max_pairs = max_pairs

    def topology(self, faces: torch.Tensor) -> torch.Tensor:
        """Opposite-vertex table [T,3] (int64, faces' device) for :meth:`antialias`."""
        return torch.as_tensor(opposite_vertices(faces.cpu().numpy()), device=faces.device)

    # ------------------------------------------------------------------ rasterize
    @torch.no_grad()
    def _visibility(self, pos: torch.Tensor, faces: torch.Tensor, height: int, width: int):
        """Nearest triangle id [N,H,W] (int64, -1 empty) and its depth z/w [N,H,W].

        Vertices are projected once each; only triangles whose screen bounding box holds a pixel
        centre (most of a small character's triangles hold none) get edge functions and candidates."""
        n_img, device = pos.shape[0], pos.device
        num_t = faces.shape[0]
        p = pos.detach().float()
        w = p[..., 3]  # [N,V]
        w_ok = w > 1e-8
        inv_w = 1.0 / torch.where(w_ok, w, torch.ones_like(w))
        sx = (p[..., 0] * inv_w + 1.0) * (0.5 * width)  # continuous pixel coordinates [N,V]
        sy = (p[..., 1] * inv_w + 1.0) * (0.5 * height)
        xs = [sx[:, faces[:, k]] for k in range(3)]  # per corner [N,T]: elementwise min / max beat a reduction over 3
        ys = [sy[:, faces[:, k]] for k in range(3)]
        x0 = torch.ceil(torch.minimum(torch.minimum(xs[0], xs[1]), xs[2]) - 0.5).clamp_min_(0)
        x1 = torch.floor(torch.maximum(torch.maximum(xs[0], xs[1]), xs[2]) - 0.5).clamp_max_(width - 1)
        y0 = torch.ceil(torch.minimum(torch.minimum(ys[0], ys[1]), ys[2]) - 0.5).clamp_min_(0)
        y1 = torch.floor(torch.maximum(torch.maximum(ys[0], ys[1]), ys[2]) - 0.5).clamp_max_(height - 1)
        nx = (x1 - x0 + 1).clamp_min_(0).long()
        counts = nx * (y1 - y0 + 1).clamp_min_(0).long()  # [N,T]
        if not bool(w_ok.all()):  # a vertex behind the eye: its triangles are skipped
            counts = counts * w_ok[:, faces].all(-1)
        sel = torch.nonzero(counts.flatten()).squeeze(1)  # (image, triangle) pairs that may cover a pixel
        zbuf = torch.full((n_img * height * width,), float("inf"), device=device)
        best = torch.full((n_img * height * width,), -1, dtype=torch.long, device=device)
        if sel.numel():
            img = torch.div(sel, num_t, rounding_mode="floor")
            corner = faces[sel - img * num_t]  # [P,3]
            X0, X1, X2 = (x.flatten()[sel] for x in xs)
            Y0, Y1, Y2 = (y.flatten()[sel] for y in ys)
            zs = (p[..., 2] * inv_w)[img[:, None], corner]  # [P,3]
            # Edge functions l_k(c) = A_k cx + B_k cy + C_k, normalised so l0 + l1 + l2 = 1.
            area = (X1 - X0) * (Y2 - Y0) - (X2 - X0) * (Y1 - Y0)
            ok = (area.abs() > 1e-12) & ~((zs > 1).all(-1) | (zs < -1).all(-1))
            keep = torch.nonzero(ok).squeeze(1)
            sel, img = sel[keep], img[keep]
            X0, X1, X2, Y0, Y1, Y2, zs, area = (t[keep] for t in (X0, X1, X2, Y0, Y1, Y2, zs, area))
            inv_area = 1.0 / area
            a0, b0, c0 = (Y1 - Y2) * inv_area, (X2 - X1) * inv_area, (X1 * Y2 - X2 * Y1) * inv_area
            a1, b1, c1 = (Y2 - Y0) * inv_area, (X0 - X2) * inv_area, (X2 * Y0 - X0 * Y2) * inv_area
            # z is affine in the pixel centre too: z = Z2 + l0 (Z0 - Z2) + l1 (Z1 - Z2).
            dz0, dz1 = zs[:, 0] - zs[:, 2], zs[:, 1] - zs[:, 2]
            az, bz, cz = a0 * dz0 + a1 * dz1, b0 * dz0 + b1 * dz1, c0 * dz0 + c1 * dz1 + zs[:, 2]
            flat_x0, flat_y0 = x0.flatten()[sel], y0.flatten()[sel]
            coef = torch.stack([a0, b0, c0, a1, b1, c1, az, bz, cz, flat_x0, flat_y0, nx.flatten()[sel].float()], -1)  # [P,12]
            cnt = counts.flatten()[sel]
            tri = sel - img * num_t
            # Chunks of whole images below max_pairs candidates (pairs are image-major).
            per_image = torch.zeros(n_img, dtype=torch.long, device=device).index_add_(0, img, cnt).tolist()
            first = torch.searchsorted(img, torch.arange(n_img + 1, device=device)).tolist()
            start = 0
            while start < n_img:
                stop, total = start, 0
                while stop < n_img and (stop == start or total + per_image[stop] <= self.max_pairs):
                    total += per_image[stop]
                    stop += 1
                lo, hi = first[start], first[stop]
                if hi > lo:
                    self._scan(coef[lo:hi], cnt[lo:hi], img[lo:hi], tri[lo:hi], height, width, zbuf, best)
                start = stop
        tri_id = best.view(n_img, height, width)
        depth = torch.where(tri_id >= 0, zbuf.view(n_img, height, width), torch.zeros_like(zbuf.view(n_img, height, width)))
        return tri_id, depth

    @staticmethod
    def _scan(coef, cnt, img, tri, height, width, zbuf, best) -> None:
        """Rasterise candidate (image, triangle) pairs — their edge coefficients, bounding-box corner and
        width [P,12], bounding-box pixel counts [P], image and triangle indices [P] — into zbuf / best.

        A box of one pixel (most triangles of a small render) is tested at its corner directly; larger
        boxes are enumerated pixel by pixel."""
        found = []  # per kind of box: (pair index, pixel centre x, y, depth) of the covered pixels
        single = cnt == 1
        for pick, enumerate_pixels in ((torch.nonzero(single).squeeze(1), False), (torch.nonzero(~single).squeeze(1), True)):
            if pick.numel() == 0:
                continue
            if enumerate_pixels:
                counts = cnt[pick]
                rep = torch.repeat_interleave(torch.arange(pick.shape[0], device=cnt.device), counts)
                c = coef[pick][rep]
                # Pixel k of a box of width w: row k // w, column k % w, in floats (exact for these small integers).
                off = (torch.arange(rep.shape[0], device=rep.device) - (torch.cumsum(counts, 0) - counts)[rep]).float()
                row = torch.floor(off / c[:, 11])
                cx, cy = c[:, 9] + (off - row * c[:, 11]) + 0.5, c[:, 10] + row + 0.5
                rep = pick[rep]
            else:
                c, rep = coef[pick], pick
                cx, cy = c[:, 9] + 0.5, c[:, 10] + 0.5
            l0 = c[:, 0] * cx + c[:, 1] * cy + c[:, 2]
            l1 = c[:, 3] * cx + c[:, 4] * cy + c[:, 5]
            z = c[:, 6] * cx + c[:, 7] * cy + c[:, 8]
            inside = (l0 >= 0) & (l1 >= 0) & (l0 + l1 <= 1) & (z >= -1) & (z <= 1)
            found.append((rep[inside], cx[inside], cy[inside], z[inside]))
        if not found:
            return
        rep, cx, cy, z = (torch.cat(t) for t in zip(*found))
        key = (img[rep] * height + cy.long()) * width + cx.long()
        zbuf.scatter_reduce_(0, key, z, reduce="amin")  # nearest depth per pixel, then the largest id at it
        win = z <= zbuf[key]
        best.scatter_reduce_(0, key[win], tri[rep][win], reduce="amax")

    def rasterize(self, pos: torch.Tensor, faces: torch.Tensor, resolution: tuple[int, int]) -> torch.Tensor:
        """Clip-space positions [N,V,4] and faces [T,3] → rast [N,H,W,4] (u, v, z/w, id+1).

        ``u, v`` carry gradients to ``pos`` (perspective-correct barycentrics at the pixel centres).
        """
        height, width = resolution
        faces = faces.long()
        tri_id, depth = self._visibility(pos, faces, height, width)
        n_img = pos.shape[0]
        flat = torch.nonzero(tri_id.flatten() >= 0).squeeze(1)
        img = torch.div(flat, height * width, rounding_mode="floor")
        rem = flat - img * height * width
        py = torch.div(rem, width, rounding_mode="floor")
        px = rem - py * width
        tid = tri_id.flatten()[flat]
        vert = pos[img[:, None], faces[tid]]  # [M,3,4], differentiable
        xc = ((px.to(pos.dtype) + 0.5) / (0.5 * width) - 1.0)[:, None]
        yc = ((py.to(pos.dtype) + 0.5) / (0.5 * height) - 1.0)[:, None]
        ax = vert[..., 0] - xc * vert[..., 3]  # homogeneous 2D edge vectors (Olano & Greer)
        ay = vert[..., 1] - yc * vert[..., 3]
        b0 = ax[:, 1] * ay[:, 2] - ax[:, 2] * ay[:, 1]
        b1 = ax[:, 2] * ay[:, 0] - ax[:, 0] * ay[:, 2]
        b2 = ax[:, 0] * ay[:, 1] - ax[:, 1] * ay[:, 0]
        total = b0 + b1 + b2
        total = torch.where(total.abs() > 1e-20, total, torch.full_like(total, 1e-20))
        uv = torch.stack([b0 / total, b1 / total], -1)
        uv_full = pos.new_zeros(n_img * height * width, 2).index_copy(0, flat, uv)
        rest = torch.stack([depth.flatten(), (tri_id.flatten() + 1).to(pos.dtype)], -1).to(pos.dtype)
        return torch.cat([uv_full, rest], -1).view(n_img, height, width, 4)

    # ------------------------------------------------------------------ interpolate
    def interpolate(self, attr: torch.Tensor, rast: torch.Tensor, faces: torch.Tensor) -> torch.Tensor:
        """Attributes [V,C] or [N,V,C] at every pixel → [N,H,W,C] (zero where empty)."""
        n_img, height, width = rast.shape[:3]
        flat = torch.nonzero(rast.reshape(-1, 4)[:, 3] > 0).squeeze(1)
        out = self.interpolate_pixels(attr, rast, faces, flat)
        full = attr.new_zeros(n_img * height * width, attr.shape[-1]).index_copy(0, flat, out.to(attr.dtype))
        return full.view(n_img, height, width, -1)

    def interpolate_pixels(
        self, attr: torch.Tensor, rast: torch.Tensor, faces: torch.Tensor, pixels: torch.Tensor
    ) -> torch.Tensor:
        """Attributes [V,C] or [N,V,C] at covered pixels only: ``pixels`` [M] are flat indices into
        rast's N·H·W, each holding a triangle → [M,C]."""
        height, width = rast.shape[1:3]
        at = rast.reshape(-1, 4)[pixels]
        idx = faces.long()[at[:, 3].long() - 1]  # [M,3]
        if attr.dim() == 3:
            img = torch.div(pixels, height * width, rounding_mode="floor")
            vals = attr[img[:, None], idx]  # [M,3,C]
        else:
            vals = attr[idx]
        u, v = at[:, 0:1], at[:, 1:2]
        return u * vals[:, 0] + v * vals[:, 1] + (1.0 - u - v) * vals[:, 2]

    # ------------------------------------------------------------------ antialias
    def antialias(
        self, color: torch.Tensor, rast: torch.Tensor, pos: torch.Tensor, faces: torch.Tensor, topology: torch.Tensor
    ) -> torch.Tensor:
        """nvdiffrast's analytic antialiasing of ``color`` [N,H,W,C]; gradients to colour and ``pos``."""
        n_img, height, width, chans = color.shape
        faces = faces.long()
        tid = rast[..., 3].detach().long() - 1
        zz = rast[..., 2].detach()
        items = []
        for d in (0, 1):
            a, b = (tid[:, :, :-1], tid[:, :, 1:]) if d == 0 else (tid[:, :-1, :], tid[:, 1:, :])
            n, y, x = torch.nonzero(a != b, as_tuple=True)
            items.append((n, y, x, torch.full_like(n, d)))
        n, py, px, d = (torch.cat(t) for t in zip(*items))
        if n.numel() == 0:
            return color
        pix0 = (n * height + py) * width + px
        pix1 = pix0 + torch.where(d == 1, width, 1)
        t0, t1 = tid.flatten()[pix0], tid.flatten()[pix1]
        z0, z1 = zz.flatten()[pix0], zz.flatten()[pix1]
        # 1. The triangle in front (or the only one); coordinates relative to its own pixel.
        use1 = (t0 < 0) | ((t1 >= 0) & ~(z0 < z1))
        tri = torch.where(use1, t1, t0)
        ds = torch.where(use1, -1.0, 1.0).to(pos.dtype)
        qx = px + torch.where(use1, 1 - d, 0)
        qy = py + torch.where(use1, d, 0)
        vi = faces[tri]  # [M,3]
        op = topology[tri]
        op = torch.where(op < 0, vi, op)
        xh, yh = 0.5 * width, 0.5 * height
        fx = (qx.to(pos.dtype) + 0.5 - xh)[:, None]
        fy = (qy.to(pos.dtype) + 0.5 - yh)[:, None]
        sx = pos[..., 0] / pos[..., 3] * xh  # screen coordinates per vertex [N,V], differentiable
        sy = pos[..., 1] / pos[..., 3] * yh
        with torch.no_grad():
            sxd, syd = sx.detach(), sy.detach()
            ox = sxd[n[:, None], op] - fx
            oy = syd[n[:, None], op] - fy
            xd, yd = sxd[n[:, None], vi] - fx, syd[n[:, None], vi] - fy
            bb = (xd[:, 1] - xd[:, 0]) * (yd[:, 2] - yd[:, 0]) - (xd[:, 2] - xd[:, 0]) * (yd[:, 1] - yd[:, 0])
            wing = torch.stack(
                [
                    (xd[:, 1] - ox[:, 0]) * (yd[:, 2] - oy[:, 0]) - (xd[:, 2] - ox[:, 0]) * (yd[:, 1] - oy[:, 0]),
                    (xd[:, 2] - ox[:, 1]) * (yd[:, 0] - oy[:, 1]) - (xd[:, 0] - ox[:, 1]) * (yd[:, 2] - oy[:, 1]),
                    (xd[:, 0] - ox[:, 2]) * (yd[:, 1] - oy[:, 2]) - (xd[:, 1] - ox[:, 2]) * (yd[:, 0] - oy[:, 2]),
                ],
                -1,
            )
            silhouette = _same_sign(wing, bb[:, None])  # [M,3]
            # Only pairs whose front triangle has a silhouette edge can blend: the rest are dropped here.
            rim = torch.nonzero(silhouette.any(1)).squeeze(1)
        if rim.numel() == 0:
            return color
        n, vi, d, ds, pix0, pix1, silhouette = (t[rim] for t in (n, vi, d, ds, pix0, pix1, silhouette))
        x = sx[n[:, None], vi] - fx[rim]
        y = sy[n[:, None], vi] - fy[rim]
        # 2. Flip x/y for vertical neighbours so the pixel pair always lies along +x.
        down = (d == 1)[:, None]
        x, y = torch.where(down, y, x), torch.where(down, x, y)
        nxt, prv = [1, 2, 0], [2, 0, 1]
        ex, ey = x[:, prv] - x[:, nxt], y[:, prv] - y[:, nxt]  # edge k runs from vertex k+1 to k+2
        num = ds[:, None] * (x[:, nxt] * ey - y[:, nxt] * ex)
        with torch.no_grad():
            cross = ~_same_sign(y[:, nxt], y[:, prv])
            ratio = torch.where(cross, num / torch.where(cross, ey, torch.ones_like(ey)), torch.full_like(num, -torch.inf))
            di = torch.argmax(ratio, dim=1)
            rows = torch.arange(di.shape[0], device=di.device)
            good = cross[rows, di] & silhouette[rows, di] & (ey[rows, di].abs() >= ex[rows, di].abs())
        dc = num[rows, di] / torch.where(good, ey[rows, di], torch.ones_like(ey[rows, di]))
        eps = 0.0625
        good = good & (dc.detach() > -eps) & (dc.detach() < 1.0 + eps)
        # 3. Blend the pixel on the far side of the crossing towards its neighbour.
        alpha = ds[good] * (0.5 - dc[good].clamp(0.0, 1.0))
        flat = color.reshape(-1, chans)
        c0, c1 = flat[pix0[good]], flat[pix1[good]]
        target = torch.where(alpha.detach() > 0, pix0[good], pix1[good])
        out = flat.index_add(0, target, alpha[:, None].to(color.dtype) * (c1 - c0))
        return out.view(n_img, height, width, chans)
