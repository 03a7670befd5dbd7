"""The real RabbitMQ: its ``credit_flow`` module in an Erlang VM, a private broker from
Debian's package, a hidden Erlang node on it, and the paging and alarm scenarios run
against that broker."""
