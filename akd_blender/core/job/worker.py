"""A job on a worker thread that never touches Blender, and the messages it sends back.

1. main thread: the front end builds a :class:`~akd_blender.core.job.request.JobRequest`;
2. worker thread (or the caller's thread in background mode): :func:`run_job` runs it
   (:func:`~akd_blender.core.job.request.run_request`) and posts messages on a :class:`queue.Queue`:
   :class:`~akd_blender.core.progress.Progress` (as the stages report it), :class:`Preview`, and exactly one terminal message, :class:`Done`,
   :class:`Failed` or :class:`Stopped`;
3. main thread: :func:`drain` empties the queue (keeping only the newest progress/preview) and the
   front end applies the messages to Blender.

Imports no torch and no bpy at module level.
"""

from __future__ import annotations

import queue
import threading
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ..errors import AkdError, Cancelled
from ..progress import Callbacks, Progress
from .model_cache import free_gpu_memory
from .request import JobRequest, JobResult, run_request

__all__ = ["Progress", "Preview", "Done", "Failed", "Stopped", "Message", "Worker", "run_job", "drain"]


@dataclass(frozen=True)
class Preview:
    """The motion as it stands after ``step`` steps (a MotionClip placed on the timeline)."""

    clip: Any
    step: int


@dataclass(frozen=True)
class Done:
    """The job finished; ``result`` is a :class:`~akd_blender.core.job.request.JobResult`."""

    result: JobResult


@dataclass(frozen=True)
class Failed:
    """The job failed: one line for the user and the CLI exit code (2 input, 3 model, 1 internal);
    ``details``: the traceback of an internal error; ``error``: the user-facing error itself (an
    :class:`~akd_blender.core.errors.AkdError`; None for an internal error)."""

    message: str
    exit_code: int = 1
    details: str = ""
    error: AkdError | None = field(default=None, compare=False)  # exceptions compare by identity


@dataclass(frozen=True)
class Stopped:
    """The job was cancelled before it finished; nothing is to be written."""

    step: int = 0


Message = Progress | Preview | Done | Failed | Stopped
TERMINAL = (Done, Failed, Stopped)


def run_job(request: JobRequest, post: Callable[[Message], None], should_cancel: Callable[[], bool] | None = None) -> Message:
    """Run one job, posting :class:`Progress` / :class:`Preview` and then one terminal message.

    Never raises: errors become :class:`Failed` (exit code from ``AkdError.exit_code``, 1 for
    anything else, with the traceback in ``details``), cancellation becomes :class:`Stopped`.
    Returns the terminal message it posted. Touches no Blender data.
    """

    def on_preview(clip, step: int) -> None:
        post(Preview(clip, int(step)))

    preview = on_preview if request.config.preview_every else None
    callbacks = Callbacks(post, preview, should_cancel)
    try:
        message: Message = Done(run_request(request, callbacks))
    except Cancelled as exc:
        message = Stopped(step=getattr(exc, "step", 0))
    except AkdError as exc:
        message = Failed(one_line(exc), exc.exit_code, error=exc)
    except Exception as exc:  # an internal error: one line for the user, the traceback for logs
        message = Failed(f"internal error: {one_line(exc)}", 1, traceback.format_exc())
    post(message)
    return message


def one_line(exc: BaseException) -> str:
    """The exception's text on one line (its class name when it has none)."""
    text = " ".join(str(exc).split())
    return text or type(exc).__name__


class Worker:
    """Runs :func:`run_job` on a daemon thread; messages arrive in :attr:`queue`.

    ``cancel()`` asks the job to stop at its next step; the worker then posts :class:`Stopped` and
    frees GPU memory. ``run_sync()`` runs the same job on the calling thread (background mode).
    """

    def __init__(self, request: JobRequest) -> None:
        self.request = request
        self.queue: queue.Queue[Message] = queue.Queue()
        self.cancel_event = threading.Event()
        self.thread: threading.Thread | None = None

    def start(self) -> None:
        self.thread = threading.Thread(target=self._target, name="akd-distill", daemon=True)
        self.thread.start()

    def run_sync(self) -> Message:
        """Run on this thread; the messages are in :attr:`queue` afterwards. Returns the terminal one."""
        return self._target()

    def cancel(self) -> None:
        self.cancel_event.set()

    @property
    def alive(self) -> bool:
        return self.thread is not None and self.thread.is_alive()

    def join(self, timeout: float | None = None) -> None:
        if self.thread is not None:
            self.thread.join(timeout)

    def _target(self) -> Message:
        message = run_job(self.request, self.queue.put, self.cancel_event.is_set)
        if isinstance(message, Stopped | Failed):
            free_gpu_memory()
        return message


def drain(q: queue.Queue) -> list[Message]:
    """Everything waiting in ``q``, without blocking: only the newest :class:`Progress` and the
    newest :class:`Preview` are kept (older ones are stale), terminal messages always, in order."""
    items: list[Message] = []
    while True:
        try:
            items.append(q.get_nowait())
        except queue.Empty:
            break
    last_progress = max((i for i, m in enumerate(items) if isinstance(m, Progress)), default=-1)
    last_preview = max((i for i, m in enumerate(items) if isinstance(m, Preview)), default=-1)
    return [m for i, m in enumerate(items) if isinstance(m, TERMINAL) or i in (last_progress, last_preview)]
