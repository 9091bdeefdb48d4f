"""Jobs on a Dask cluster: the workers of other hosts, behind the same ``WorkerPool`` as local ones.

    DaskPool("tcp://scheduler:8786")      workers started elsewhere (`dask worker ADDRESS
                                          --nthreads 1`, one per GPU, each with its own
                                          CUDA_VISIBLE_DEVICES)
    DaskPool("local", workers=N, pins)    a cluster of N processes on this host, worker i pinned
                                          to pins[i] before it touches CUDA

The runner (or the search) stays the only writer of results and the archive: a Dask task only
runs one job and returns its outcome and the place it ran (host and GPU). A job is submitted
when a worker can start it (as many in flight as the cluster has worker threads), so the
source may decide late or give :data:`~kernelwright.bench.pool.WAIT`. A job whose worker died
is rescheduled by Dask on another worker (``retries=1`` more for a job that raised), then
finished as an error: no finished result is lost, and a lost worker costs its job's time only.

Install with ``pip install 'kernelwright[distributed]'``; without it, ``LocalPool`` serves.
"""

from __future__ import annotations

import os
import socket
from collections.abc import Generator, Iterable, Sequence
from typing import Any

from kernelwright.bench.pool import Finished, StepJob, Wait, run_job
from kernelwright.bench.steps import StepOutcome
from kernelwright.errors import ConfigError

LOCAL = "local"


class DaskPool:
    """See the module docstring."""

    def __init__(self, address: str, workers: int = 1, pins: Sequence[str] | None = None,
                 connect_timeout_s: float = 30.0) -> None:
        try:
            from distributed import Client, LocalCluster
        except ImportError:
            raise ConfigError(
                "--scheduler needs Dask's distributed scheduler: pip install "
                "'kernelwright[distributed]'") from None
        self._cluster: Any = None
        if address == LOCAL:
            self._cluster = LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                                         dashboard_address=None, silence_logs=40)
            self.client: Any = Client(self._cluster)
            if pins and any(pins):
                self.client.run(_pin_by_name, list(pins))
        else:
            try:
                self.client = Client(address, timeout=f"{connect_timeout_s}s")
            except OSError as exc:
                raise ConfigError(f"--scheduler {address}: cannot connect ({exc})") from None

    @property
    def workers(self) -> int:
        """Jobs run at once: the cluster's worker threads (one per worker, as started)."""
        info = self.client.scheduler_info()["workers"]
        return max(1, sum(int(w.get("nthreads", 1)) for w in info.values()))

    def run(self, jobs: Iterable[StepJob | Wait]) -> Generator[Finished, None, None]:
        """See :class:`~kernelwright.bench.pool.WorkerPool`."""
        from distributed import as_completed

        source = iter(jobs)
        running: dict[Any, StepJob] = {}
        done = as_completed()
        exhausted = False
        try:
            while True:
                while not exhausted and len(running) < self.workers:
                    job = next(source, None)
                    if job is None or (isinstance(job, Wait) and not running):
                        exhausted = True
                        break
                    if isinstance(job, Wait):
                        break
                    future = self.client.submit(run_job_where, job, pure=False, retries=1)
                    running[future] = job
                    done.add(future)
                if not running:
                    return
                future = next(done)
                job = running.pop(future)
                try:
                    attempt, where = future.result()
                except Exception as exc:  # the worker died more than Dask allows, or the job
                    attempt, where = (f"the worker running this task failed: "  # raised
                                      f"{type(exc).__name__}: {exc}"[:2000], "?")
                yield Finished(job, attempt, where)
        finally:
            for future in running:
                future.cancel()

    def close(self) -> None:
        """Disconnect (and stop the local cluster this pool started)."""
        self.client.close()
        if self._cluster is not None:
            self._cluster.close()


def run_job_where(job: StepJob) -> tuple[StepOutcome | str, str]:
    """On a Dask worker: the job's outcome and where it ran (``host:cuda:<GPU>`` or
    ``host:<device>``)."""
    gpu = os.environ.get("CUDA_VISIBLE_DEVICES", "")
    where = f"{socket.gethostname()}:" + (f"cuda:{gpu}" if gpu else job.options.device)
    return run_job(job), where


def _pin_by_name(pins: list[str], dask_worker: Any = None) -> None:
    """Run on every worker of a local cluster (named 0, 1, ...): see only its GPU."""
    name = getattr(dask_worker, "name", 0)
    index = int(name) if isinstance(name, int) or str(name).isdigit() else 0
    gpu = pins[index % len(pins)]
    if gpu:
        os.environ["CUDA_VISIBLE_DEVICES"] = gpu
