"""Counterexample traces and pictures: ITF documents of credit networks and of the
accounts and alarm models (TRACE-*), DOT/SVG pictures of network states
(EXP-PICTURE), and the steps of a trace as data (TRACE-STEPS)."""
