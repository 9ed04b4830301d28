"""Fixed thread counts and worker pools: the same work and the same sums on a quiet or a busy machine.

Numerical libraries start as many threads as the machine has cores. Beside another process those
threads wait on each other (OpenBLAS spins while it waits), so a run on a busy machine can be many
times slower, and a sum split over a different number of threads may round differently. Every
process of a run therefore uses a fixed number of threads: :func:`fix_threads` in the main process
(``torch_threads`` of a training config), one in each worker of :func:`process_pool`.
"""
from __future__ import annotations

import multiprocessing as mp
import os
import sys
from concurrent.futures import ProcessPoolExecutor

#: the variables that OpenMP, MKL and OpenBLAS read when they load (what child processes inherit)
THREAD_VARIABLES = ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS")


def fix_threads(n: int = 1) -> None:
    """Use ``n`` threads in this process's BLAS and OpenMP pools (and torch's, if torch is loaded), and in the
    processes it starts from now on."""
    from threadpoolctl import threadpool_limits

    n = int(n)
    for var in THREAD_VARIABLES:
        os.environ[var] = str(n)
    threadpool_limits(limits=n)  # the libraries loaded already (numpy's OpenBLAS), which read the variables once
    torch = sys.modules.get("torch")
    if torch is not None:
        torch.set_num_threads(n)


def _start_worker(setup) -> None:
    """A worker's start: one thread (:func:`fix_threads`), then ``setup``'s function on its arguments."""
    fix_threads(1)
    if setup is not None:
        fn, args = setup
        fn(*args)


def process_pool(workers: int, context: str = "forkserver", setup: tuple | None = None) -> ProcessPoolExecutor:
    """A pool of ``workers`` processes, each with one BLAS / OpenMP / torch thread (:func:`fix_threads`), that
    first run ``setup`` (``(function, args)``, as :func:`gemenvs.core.entry.game_pool` does to register
    this process's games)."""
    return ProcessPoolExecutor(max_workers=workers, mp_context=mp.get_context(context),
                               initializer=_start_worker, initargs=(setup,))


__all__ = ["THREAD_VARIABLES", "fix_threads", "process_pool"]
