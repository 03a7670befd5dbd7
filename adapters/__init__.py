"""Drivers for implementations checked against the model."""
