"""``python -m creditflow.conformance.sweep …`` and ``spark-submit …/sweep/__main__.py …``:
the ``creditflow`` command line, for runs where spark-submit launches the driver.

    ENTRY=$(python -c 'import creditflow.conformance.sweep as s; print(s.__path__[0])')
    spark-submit --master spark://head:7077 "$ENTRY/__main__.py" \\
        sweep my-sweep.toml --out /shared/sweeps/my-sweep
"""

from creditflow.conformance.cli import main

if __name__ == "__main__":
    main()
