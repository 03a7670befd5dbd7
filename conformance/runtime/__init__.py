"""What every command shares at run time: the child processes we started (SIG-CHILDREN)
and the one signal policy (SIG-POLICY, SIG-Z3). Sits below every capability (like
``exit_codes``): the transport, the broker and Z3 use it; it imports none of them."""
