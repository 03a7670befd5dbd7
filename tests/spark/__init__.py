"""Tests that share one Spark session or start a standalone Spark cluster (marker
``spark``; make test runs them in its single-process pass)."""
