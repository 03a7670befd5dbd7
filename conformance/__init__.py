"""Checking models and implementations: the explorer, traces, pictures and the CLI."""
