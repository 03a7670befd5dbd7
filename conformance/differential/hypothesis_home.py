"""Where Hypothesis keeps its files during a conform run (OUT-HYPOTHESIS), one
mechanism for every family's driver.

Hypothesis keeps caches (``constants/``, an example database) in its storage folder,
``./.hypothesis`` unless told otherwise. Every run of the op machines (the
``credit_flow`` family) and of the op search (:mod:`.op_search`: the ``amqp`` family's
link and queue ends, any family's alphabet) runs inside :func:`private_hypothesis_storage`:
a temporary folder, removed afterwards, so that ``conform`` writes nothing outside its
output folder."""

from __future__ import annotations

import contextlib
import tempfile
from collections.abc import Iterator


@contextlib.contextmanager
def private_hypothesis_storage() -> Iterator[None]:
    """OUT-HYPOTHESIS: Hypothesis's storage folder is a temporary one while inside;
    the previous setting is restored on the way out (nested uses are fine)."""
    # deferred: Hypothesis is loaded by the runs that draw, not by importing a driver
    from hypothesis import configuration as hypothesis_configuration

    previous = vars(hypothesis_configuration).get("__hypothesis_home_directory")
    with tempfile.TemporaryDirectory(prefix="creditflow-hypothesis-") as home:
        hypothesis_configuration.set_hypothesis_home_dir(home)
        try:
            yield
        finally:
            hypothesis_configuration.set_hypothesis_home_dir(previous)
