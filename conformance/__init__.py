"""Checking models and implementations, one package per capability: ``inputs`` (every
file format read), ``explore`` (explicit-state search), ``symbolic`` (Z3), ``traces``
(ITF and pictures), ``differential`` (implementations against the model), ``sweep``
(Spark), and on top of the adapters ``cli`` and ``pytest_plugin``. See
``docs/architecture.md`` for the layering contract."""
