"""Runs a benchmark program twice in one process, then prints the seconds and the cluster
engine's counters of the second run (kernels compiled, caches warm) as one JSON line on
stderr (prefixed ``CLUSTER-STATS``), for benches/cluster.py.

    python -m hassium benches/cluster_probe.py PROGRAM [ARGS...]
"""

import json
import runpy
import sys
import time

import hassium

program, *args = sys.argv[1:]
sys.argv = [program, *args]
runpy.run_path(program, run_name="__main__")
hassium.flush()
before = hassium.stats()
start = time.perf_counter()
runpy.run_path(program, run_name="__main__")
hassium.flush()
seconds = time.perf_counter() - start
stats = hassium.stats()
# The second run's counters only.
first = before.get("engine", {}).get("extra", {})
extra = {
    k: v - first.get(k, 0) for k, v in stats.get("engine", {}).get("extra", {}).items()
}
extra["program_seconds"] = seconds
extra["flushes"] = stats.get("flushes", 0) - before.get("flushes", 0)
print("CLUSTER-STATS " + json.dumps(extra), file=sys.stderr)
