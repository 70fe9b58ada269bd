"""Many jobs at once through Ray, an optional dependency (``pip install -r requirements-ray.txt``; never
bundled into the Blender extension).

1. :func:`ray_session` starts a local Ray (``ray.init()``, this machine's CPUs and GPUs) or joins a
   cluster at an address, and shuts down what it started;
2. :func:`run_tasks` runs one Ray task per item with its resource request (:class:`TaskResources`:
   CPUs, a GPU fraction, torch threads, retries when a worker process dies), shows a progress bar
   over the items and hands back each task's plain-data result in the items' order;
3. :func:`run_requests_ray` is that for :class:`~akd_blender.core.job.request.JobRequest` s: each task runs
   :func:`~akd_blender.core.job.worker.run_job` in its worker process (the prior is loaded once per
   worker and kept) and returns its terminal message (``Done`` with the JobResult, ``Failed``,
   ``Stopped``), as a serial run would give.

Results equal a serial run's for the same seeds: a task runs with the driver's torch thread count
unless told otherwise (CPU results depend on how a reduction is split over threads). NVLink multicast
is kept off in every worker (``NCCL_NVLS_ENABLE=0`` unless the user set it). Imports no torch and no
ray at module level.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, TypeVar

from ..assets import PACKAGE_DIR
from ..distillation.parallel import NVLS_VARIABLE, keep_nvls_off
from ..errors import InputError

__all__ = ["RAY_REQUIREMENT", "RayMissing", "TaskResources", "import_ray", "ray_session", "run_tasks", "run_requests_ray"]

RAY_REQUIREMENT = "ray==2.60.0"  # requirements-ray.txt pins the same

T = TypeVar("T")
R = TypeVar("R")


class RayMissing(InputError):
    """Ray is not installed in this Python (exit 2); the message says how to install it."""


def import_ray():
    """The ``ray`` module; :class:`RayMissing` naming the install command when it is not installed."""
    try:
        import ray
    except ImportError:
        raise RayMissing(
            f"--ray needs Ray, an optional dependency that is not installed in {sys.executable}: "
            f"pip install '{RAY_REQUIREMENT}' (or pip install -r requirements-ray.txt)"
        ) from None
    return ray


@dataclass(frozen=True)
class TaskResources:
    """What each task asks Ray for and how it runs.

    Attributes:
        num_cpus: CPUs per task (1.0; fractions allowed).
        num_gpus: GPUs per task (0.0; a fraction such as 0.125 lets 8 tasks share one GPU).
        threads: torch intra-op threads in the task (None: the driver's ``torch.get_num_threads()``,
            which makes CPU results equal to a serial run on the driver's machine).
        retries: how many times a task whose worker process died is run again (2); an error the task
            itself reports is not retried.
    """

    num_cpus: float = 1.0
    num_gpus: float = 0.0
    threads: int | None = None
    retries: int = 2

    def validate(self) -> None:
        """InputError naming the first bad field."""
        if not self.num_cpus > 0:
            raise InputError(f"--ray-cpus must be positive (got {self.num_cpus})")
        if self.num_gpus < 0:
            raise InputError(f"--ray-gpus must be at least 0 (got {self.num_gpus})")
        if self.threads is not None and self.threads < 1:
            raise InputError(f"--ray-threads must be at least 1 (got {self.threads})")
        if self.retries < 0:
            raise InputError(f"--ray-retries must be at least 0 (got {self.retries})")


@contextmanager
def ray_session(address: str | None = None, num_cpus: int | None = None, num_gpus: int | None = None) -> Iterator[Any]:
    """Ray for the ``with`` block: a local instance (``address`` None; ``num_cpus`` / ``num_gpus`` cap
    what it offers, None: all of this machine's) or the cluster at ``address`` (e.g. "ray://head:10001"
    or "auto"; its workers get this package through ``py_modules``; inputs and outputs must be on paths
    every node sees). Workers see ``NCCL_NVLS_ENABLE`` (0 unless the user set it) and, locally, this
    package on ``PYTHONPATH``. An already initialised Ray is used as it is and left running; one started
    here is shut down at the end. Raises :class:`RayMissing`."""
    ray = import_ray()
    if ray.is_initialized():
        yield ray
        return
    env = {NVLS_VARIABLE: keep_nvls_off()}
    kwargs: dict[str, Any] = {"log_to_driver": False, "include_dashboard": False}
    if address:
        runtime_env = {"env_vars": env, "py_modules": [str(PACKAGE_DIR)]}
        try:
            ray.init(address=address, runtime_env=runtime_env, **kwargs)
        except ConnectionError as exc:
            raise InputError(f"--ray: cannot connect to a Ray cluster at '{address}' ({' '.join(str(exc).split())})") from None
    else:
        paths = [str(PACKAGE_DIR.parent), *filter(None, os.environ.get("PYTHONPATH", "").split(os.pathsep))]
        env["PYTHONPATH"] = os.pathsep.join(dict.fromkeys(paths))
        # "local": always a new instance of this process's own, never a cluster found on the machine
        ray.init(address="local", num_cpus=num_cpus, num_gpus=num_gpus, runtime_env={"env_vars": env}, **kwargs)
    try:
        yield ray
    finally:
        ray.shutdown()


def _call(fn: Callable[[Any], Any], item: Any, threads: int) -> Any:
    """In the worker: ``fn(item)`` with ``threads`` torch intra-op threads."""
    import torch

    torch.set_num_threads(threads)
    return fn(item)


def run_tasks(
    fn: Callable[[T], R],
    items: Sequence[T],
    resources: TaskResources | None = None,
    *,
    lost: Callable[[str], R] | None = None,
    on_done: Callable[[int, R], None] | None = None,
    progress: bool = True,
    desc: str = "akd jobs",
) -> list[R]:
    """``[fn(item) for item in items]``, each call a Ray task asking for ``resources``, in the Ray of the
    surrounding :func:`ray_session` (a local one is started for the call when none is running).

    ``fn`` must be importable by the workers (a module-level function of this package) and should
    return plain data rather than raise. A task that Ray could not finish (its worker died more than
    ``resources.retries`` times, or ``fn`` raised) gives ``lost(one line naming why)`` (re-raised when
    ``lost`` is None). ``on_done(index, result)`` is called on this thread as each task finishes, in
    the order they finish; a tqdm bar over the tasks goes to stderr when ``progress``. Ctrl-C cancels
    the tasks still running and re-raises KeyboardInterrupt.
    """
    resources = resources or TaskResources()
    resources.validate()
    if not items:
        return []
    with ray_session() as ray:
        threads = resources.threads
        if threads is None:
            import torch

            threads = torch.get_num_threads()
        task = ray.remote(_call).options(
            num_cpus=resources.num_cpus, num_gpus=resources.num_gpus, max_retries=resources.retries, retry_exceptions=False
        )
        pending = {task.remote(fn, item, threads): i for i, item in enumerate(items)}
        results: list[Any] = [None] * len(items)
        import ray.exceptions
        from tqdm import tqdm

        bar = tqdm(total=len(items), desc=desc, unit="job", file=sys.stderr, dynamic_ncols=True, disable=not progress)
        try:
            while pending:
                finished, _ = ray.wait(list(pending), num_returns=1)
                for ref in finished:
                    index = pending.pop(ref)
                    try:
                        results[index] = ray.get(ref)
                    except ray.exceptions.RayError as exc:
                        if lost is None:
                            raise
                        results[index] = lost(_why(exc))
                    bar.update(1)
                    if on_done is not None:
                        with tqdm.external_write_mode(file=sys.stdout):  # lines printed above the bar
                            on_done(index, results[index])
        except KeyboardInterrupt:
            for ref in pending:
                ray.cancel(ref, force=True)
            raise
        finally:
            bar.close()
    return results


def _why(exc: BaseException) -> str:
    """One line for a task Ray could not finish: the exception's class and the first line of its text."""
    lines = [line for line in str(exc).splitlines() if line.strip()]
    return f"{type(exc).__name__}: {lines[0].strip() if lines else 'the task did not finish'}"


def _run_request(request) -> Any:
    from .worker import run_job

    return run_job(request, lambda message: None)


def _lost(line: str) -> Any:
    from .worker import Failed

    return Failed(f"internal error: {line}", 1)


def run_requests_ray(
    requests: Sequence[Any],
    resources: TaskResources | None = None,
    *,
    on_done: Callable[[int, Any], None] | None = None,
    progress: bool = True,
) -> list[Any]:
    """Run each :class:`~akd_blender.core.job.request.JobRequest` as a Ray task (:func:`run_tasks`); returns the
    terminal :mod:`~akd_blender.core.job.worker` message of each, in order: ``Done`` (``.result`` is the
    :class:`~akd_blender.core.job.request.JobResult`), ``Failed`` (a task Ray could not finish too: exit code 1)
    or ``Stopped``. Uses the Ray of the surrounding :func:`ray_session`, else starts a local one."""
    return run_tasks(_run_request, list(requests), resources, lost=_lost, on_done=on_done, progress=progress)
