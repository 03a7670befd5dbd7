"""Exit codes shared by every ``creditflow`` command (documented in the README)."""

OK = 0  #: every property holds / conformant / proved
DIVERGENCE = 1  #: an implementation diverged from the model (conform, replay)
USAGE = 2  #: bad usage or bad input (graph, trace, config)
ADAPTER_FAILURE = 3  #: an adapter or implementation crashed, hung or broke the protocol
INCOMPLETE = 4  #: the search budget ran out before a verdict; nothing violated so far
OUTPUT_FAILED = (
    5  #: OUT-FAILURE, OUT-STREAM: an output (a file, stdout, stderr) could not be written
)
DEADLOCK = 10  #: PROP-NO-DEADLOCK violated
VIOLATION = 12  #: another property violated
INTERRUPTED = 130  #: SIG-POLICY: stopped by SIGINT (Ctrl-C)
INTERRUPTED_SIGTERM = 143  #: SIG-POLICY: stopped by SIGTERM (CI cancellation, timeout)

DESCRIPTIONS = {
    OK: "all properties hold",
    DIVERGENCE: "the implementation diverged from the model",
    USAGE: "bad usage or input",
    ADAPTER_FAILURE: "an adapter or implementation failed",
    INCOMPLETE: "search incomplete (budget exhausted), no violation found so far and "
    "not every property proved (EXP-SETTLE)",
    OUTPUT_FAILED: "an output (a file, stdout or stderr) could not be written (after the "
    "verdict was printed)",
    DEADLOCK: "deadlock found",
    VIOLATION: "a property other than deadlock freedom is violated",
    INTERRUPTED: "interrupted by SIGINT (Ctrl-C)",
    INTERRUPTED_SIGTERM: "interrupted by SIGTERM",
}


def with_write_failure(verdict: int) -> int:
    """OUT-EXIT: the exit code when an output could not be written: the verdict's own
    code if it is not 0 (a CI gate fails either way and keeps the finding's meaning),
    else :data:`OUTPUT_FAILED`."""
    return verdict if verdict != OK else OUTPUT_FAILED
