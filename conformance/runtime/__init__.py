"""What every command shares at run time: the child processes we started (SIG-CHILDREN)
and the one signal policy (SIG-POLICY, SIG-Z3)."""
