"""AMQP 1.0 flow control as a second family (AMQ-*, PROP-AMQ-*): serial numbers, link
and session endpoints, the policies as parameters, RabbitMQ 4's relay, the quorum-queue
end, a transition system over a topology and the properties.

Read next to ``spec/amqp.md``. Pure and deterministic: no I/O."""
