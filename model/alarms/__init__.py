"""RabbitMQ memory and disk alarms (AL-*): the rules, their properties and the
transition system the explorer runs."""
