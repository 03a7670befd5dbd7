"""What every command shares at run time: the child processes we started (SIG-CHILDREN)
and the one signal policy (SIG-POLICY, SIG-Z3). Sits below every capability (like
``exit_codes``): the transport, the broker and Z3 use it; it imports none of them."""

from creditflow.conformance.runtime import children, signals
from creditflow.conformance.runtime.children import kill_all, stop_group, track
from creditflow.conformance.runtime.signals import Interrupted, note, on_interrupt, policy

__all__ = [
    "Interrupted",
    "children",
    "kill_all",
    "note",
    "on_interrupt",
    "policy",
    "signals",
    "stop_group",
    "track",
]
