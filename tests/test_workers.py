"""Fixed thread counts: the main process and every worker of a pool use the threads they are given."""
from __future__ import annotations

import os

from threadpoolctl import threadpool_info, threadpool_limits

from gemenvs.workers import THREAD_VARIABLES, fix_threads, process_pool


def _blas_threads() -> list[int]:
    return [pool["num_threads"] for pool in threadpool_info() if pool["user_api"] == "blas"]


def _worker_report() -> tuple[list[int], dict[str, str | None]]:
    import numpy as np

    np.ones((64, 64)) @ np.ones((64, 64))  # (the BLAS is loaded and in use)
    return _blas_threads(), {var: os.environ.get(var) for var in THREAD_VARIABLES}


def test_fix_threads_sets_this_process_and_its_children(monkeypatch):
    for var in THREAD_VARIABLES:
        monkeypatch.delenv(var, raising=False)
    with threadpool_limits(limits=None):  # (restored on leaving)
        fix_threads(1)
        assert _blas_threads() and set(_blas_threads()) == {1}
        assert all(os.environ[var] == "1" for var in THREAD_VARIABLES)


def test_pool_workers_use_one_thread_each(monkeypatch):
    for var in THREAD_VARIABLES:
        monkeypatch.delenv(var, raising=False)
    with process_pool(2) as pool:
        reports = [f.result() for f in [pool.submit(_worker_report) for _ in range(4)]]
    for threads, variables in reports:
        assert threads and set(threads) == {1}
        assert set(variables.values()) == {"1"}
