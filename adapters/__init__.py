"""Implementations under test and what starts them: the reference model as an adapter,
mutants, the real RabbitMQ (module, broker, paging, alarms), the Python template, the
Erlang escript, and the registry of adapters by name. Adapters import the driver side
(:mod:`creditflow.conformance.differential`), never the reverse."""
