"""Syndicate-style accounts (AC-*): actor graphs, the account rules, their properties,
and the transition system the explorer runs."""
