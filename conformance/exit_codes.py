"""Exit codes shared by every ``creditflow`` command (documented in the README)."""

OK = 0  #: every property holds / conformant / proved
DIVERGENCE = 1  #: an implementation diverged from the model (conform, replay)
USAGE = 2  #: bad usage or bad input (graph, trace, config)
ADAPTER_FAILURE = 3  #: an adapter or implementation crashed, hung or broke the protocol
INCOMPLETE = 4  #: the search budget ran out before a verdict; nothing violated so far
DEADLOCK = 10  #: PROP-NO-DEADLOCK violated
VIOLATION = 12  #: another property violated

DESCRIPTIONS = {
    OK: "all properties hold",
    DIVERGENCE: "the implementation diverged from the model",
    USAGE: "bad usage or input",
    ADAPTER_FAILURE: "an adapter or implementation failed",
    INCOMPLETE: "search incomplete (budget exhausted), no violation found so far",
    DEADLOCK: "deadlock found",
    VIOLATION: "a property other than deadlock freedom is violated",
}
