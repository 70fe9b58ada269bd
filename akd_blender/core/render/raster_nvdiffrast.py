"""nvdiffrast raster operations (PyPI ``diffrp-nvdiffrast``) behind the same interface as
:class:`.raster_torch.TorchRasterizer`: one ``RasterizeCudaContext`` created once, then
rasterize → interpolate → antialias on CUDA tensors.

The CUDA plugin is compiled by ``torch.utils.cpp_extension`` on first use (1–2 minutes, cached in
``~/.cache/torch_extensions``). On torch ≥ 2.11 the freshly built module is not importable because
its build folder is not on ``sys.path``; :func:`load_nvdiffrast` adds that folder and retries.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys

import torch

__all__ = ["NvdiffrastRasterizer", "load_nvdiffrast", "nvdiffrast_available"]


def load_nvdiffrast():
    """Import ``nvdiffrast.torch`` and make sure its CUDA plugin loads; returns the module.

    Raises ImportError when nvdiffrast is not installed or its plugin cannot be built.
    """
    import nvdiffrast.torch as dr

    try:
        dr.ops._get_plugin()
    except ModuleNotFoundError as exc:  # torch ≥ 2.11: built, but the build folder is not on sys.path
        name = exc.name or ""
        if not name.startswith("nvdiffrast_plugin"):
            raise
        from torch.utils import cpp_extension

        build_dir = cpp_extension._get_build_directory(name, False)
        if build_dir not in sys.path:
            sys.path.insert(0, build_dir)
        importlib.invalidate_caches()
        dr.ops._get_plugin()
    return dr


def nvdiffrast_available() -> bool:
    """Whether CUDA is available and the nvdiffrast package can be imported (plugin not built here)."""
    if not torch.cuda.is_available():
        return False
    return importlib.util.find_spec("nvdiffrast") is not None


class NvdiffrastRasterizer:
    """nvdiffrast's CUDA rasteriser; buffers exactly as documented in :mod:`.raster_torch`."""

    name = "nvdiffrast"

    def __init__(self, device: torch.device | str = "cuda") -> None:
        self.dr = load_nvdiffrast()
        self.device = torch.device(device)
        self.ctx = self.dr.RasterizeCudaContext(device=self.device)

    def topology(self, faces: torch.Tensor):
        return self.dr.antialias_construct_topology_hash(faces.int().contiguous())

    def rasterize(self, pos: torch.Tensor, faces: torch.Tensor, resolution: tuple[int, int]) -> torch.Tensor:
        rast, _ = self.dr.rasterize(self.ctx, pos.float().contiguous(), faces.int().contiguous(), resolution=list(resolution))
        return rast

    def interpolate(self, attr: torch.Tensor, rast: torch.Tensor, faces: torch.Tensor) -> torch.Tensor:
        out, _ = self.dr.interpolate(attr.float().contiguous(), rast, faces.int().contiguous())
        return out

    def antialias(
        self, color: torch.Tensor, rast: torch.Tensor, pos: torch.Tensor, faces: torch.Tensor, topology
    ) -> torch.Tensor:
        return self.dr.antialias(
            color.contiguous(), rast, pos.float().contiguous(), faces.int().contiguous(), topology_hash=topology
        )
