"""Sweeps: deadlock and conservation verdicts across thousands of process graphs and
credit settings, computed on Apache Spark (spec/sweeps.md, ``SW-*``).

The modules, in pipeline order:

* :mod:`.sweepfile` reads the declarative sweep file (SW-FILE);
* :mod:`.families` generates the graph families with networkx (SW-FAMILIES, SW-SEED);
* :mod:`.features` measures each graph (SW-FEATURES);
* :mod:`.cases` expands graphs x credits x variants x workloads x checkers into cases
  with stable ids (SW-CASE, SW-CASE-ID);
* :mod:`.checkers` is the pluggable per-case checker registry (SW-CHECKER);
* :mod:`.worker` runs a batch of cases on an executor within budgets (SW-BUDGET);
* :mod:`.schema` fixes the Parquet row (SW-ROW);
* :mod:`.store` owns the output folder: part files, traces, resumption (SW-COMMIT,
  SW-TRACE, SW-RESUME);
* :mod:`.engine` distributes batches in waves and isolates failures (SW-ENGINE,
  SW-FAILURE); :mod:`.runners` are the engines (Spark; a process pool for the benchmark);
* :mod:`.spark` starts a quiet Spark session that works on a fresh machine;
* :mod:`.standalone` starts a real standalone master and workers on loopback, for the
  tests and benchmarks of the cluster path (SW-CLUSTER);
* :mod:`.driver` ties them together (:func:`~.driver.run_sweep`);
* :mod:`.report` (DuckDB), :mod:`.plots` (matplotlib) and :mod:`.page` summarise a sweep
  (SW-REPORT); :mod:`.replay` replays a trace corpus (SW-REPLAY).

Nothing here imports pyspark, pyarrow, duckdb or matplotlib at import time of this
package: the ``creditflow`` command line stays fast.
"""
