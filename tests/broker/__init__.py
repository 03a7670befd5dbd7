"""Tests against a real RabbitMQ broker (marker ``broker``; make test runs them in
its single-process pass)."""
