"""The executable model: pure, deterministic state machines with no I/O.

``credit_flow`` (the per-process RabbitMQ API, CF-*), ``graph`` and ``network``
(credit flow over a process graph, NET-*), ``network_properties`` (PROP-*).
"""
