"""The version matrix (spec/matrix.md, MATRIX-*): one ``conform`` per release of an
adapter's library, gathered into a typed table of findings × releases
(:class:`~creditflow.conformance.matrix.table.VersionMatrix`). This package owns the
table and the family hooks that turn one release's conform run into a
:class:`~creditflow.conformance.matrix.table.ReleaseResult` (AMQP:
:mod:`creditflow.conformance.matrix.amqp`); rendering is the CLI's
(``conformance/cli/matrix.py``), starting adapters is the adapters layer's.
"""
