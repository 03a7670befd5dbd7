"""Adapters of the ``amqp`` family (spec/adapter-protocol-amqp.md, AD-AMQ-*): real AMQP 1.0
libraries (python-qpid-proton, rhea) behind the JSON Lines adapter protocol."""
