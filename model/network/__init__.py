"""Credit flow over a process graph (NET-*): the graph, the readable network rules that
call the CF functions, and the properties every network state must satisfy (PROP-*).

Read next to ``spec/network.md`` and ``spec/properties.md``. The explorer's flat,
optimised encoding of the same semantics lives in :mod:`creditflow.conformance.explore`
and is checked against these rules."""
