"""Exit codes shared by every ``creditflow`` command (documented in the README)."""

OK = 0  #: SCOPE-EXIT: the claim asked for is established (holds, conformant, proved)
DIVERGENCE = 1  #: an implementation diverged from the model (conform, replay)
USAGE = 2  #: bad usage or bad input (graph, trace, config)
ADAPTER_FAILURE = 3  #: an adapter or implementation crashed, hung or broke the protocol
INCOMPLETE = 4  #: SCOPE-EXIT: nothing violated, but the claim asked for is not established
#: OUT-FAILURE, OUT-STREAM: an output (a file, stdout, stderr) could not be written
OUTPUT_FAILED = 5
DEADLOCK = 10  #: PROP-NO-DEADLOCK violated
VIOLATION = 12  #: another property violated
INTERRUPTED = 130  #: SIG-POLICY: stopped by SIGINT (Ctrl-C)
INTERRUPTED_SIGTERM = 143  #: SIG-POLICY: stopped by SIGTERM (CI cancellation, timeout)

DESCRIPTIONS = {
    OK: "the claim asked for is established: every property holds for every supply (or for "
    "the supply asked), conformant, proved",
    DIVERGENCE: "the implementation diverged from the model",
    USAGE: "bad usage or input",
    ADAPTER_FAILURE: "an adapter or implementation failed",
    INCOMPLETE: "not established: no violation found, but a bounded search or budget found "
    "nothing, a solver gave up, only an example supply was decided when every supply "
    "was asked (SCOPE-EXIT), or a replay ran no trace (REPLAY-NOTHING-RAN)",
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


def replay_exit_code(
    *,
    bad_input: bool = False,
    adapter_failed: bool = False,
    diverged: bool = False,
    violated: bool = False,
    ran: int,
) -> int:
    """The exit code of every family's ``replay`` (the one place it is decided): 2 a bad
    trace or expectations file, 3 the adapter failed, 1 a divergence or an unexpected
    pass, 12 a property violated while the model agrees, 4 no trace ran (every one NOT
    RUN: REPLAY-NOTHING-RAN, NOT RUN is never a pass), else 0. ``ran``: the traces that
    were run (passed, failed, expected), not those not run."""
    if bad_input:
        return USAGE
    if adapter_failed:
        return ADAPTER_FAILURE
    if diverged:
        return DIVERGENCE
    if violated:
        return VIOLATION
    if ran == 0:
        return INCOMPLETE
    return OK
