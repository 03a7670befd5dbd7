"""Counterexample traces and pictures: ITF documents of credit networks and of the
accounts and alarm models (TRACE-*), and DOT/SVG pictures of network states
(EXP-PICTURE)."""
