"""`python -m evalpin.run.cluster_host N`: the `distributed.LocalCluster` of `local:N`.

The coordinator starts this with an allow-listed environment, so the N worker processes
never inherit its keys. It prints the scheduler address (bound to 127.0.0.1) on one line,
then holds the cluster until its stdin ends: the coordinator finished, or died (even by
`kill -9`), so no worker outlives the run.
"""

from __future__ import annotations

import logging
import sys

from evalpin.run.executors import ALLOWED_FAILURES


def main(argv: list[str]) -> int:
    import dask
    from distributed import LocalCluster

    workers = int(argv[0])
    # Graders wait on a sandboxed child: the statistical profiler would only take CPU
    # from it, and the memory the sandbox limits is the child's, not the worker's.
    dask.config.set(
        {
            "distributed.scheduler.allowed-failures": ALLOWED_FAILURES,
            "distributed.worker.profile.enabled": False,
        }
    )
    with LocalCluster(
        n_workers=workers,
        threads_per_worker=1,
        processes=True,
        host="127.0.0.1",
        scheduler_port=0,
        dashboard_address=None,
        memory_limit=0,
        silence_logs=logging.ERROR,
    ) as cluster:
        print(cluster.scheduler_address, flush=True)
        sys.stdin.buffer.read()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
