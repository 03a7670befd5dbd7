"""RabbitMQ's per-process ``credit_flow`` (CF-*): credit specifications and the pure
per-process API (send, ack, bump, block, unblock, peer_down), one implementation that
every other model calls."""
