"""Differential testing of implementations against the model (AD-*): the adapter
interface and protocol values, the one JSON Lines subprocess transport, Hypothesis
machines, ``conform``, ``replay``, shrinking, per-process traces, the regression corpus,
and the accounts and paging comparisons. Adapters import from here, never the reverse."""
