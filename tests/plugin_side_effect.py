"""A sweep checker plug-in whose import has a visible side effect (IN-PLUGIN tests):
importing it creates the file named by $CREDITFLOW_PLUGIN_MARKER."""

from __future__ import annotations

import os
from pathlib import Path

from creditflow.conformance.sweep.checkers import explore_checker

marker = os.environ.get("CREDITFLOW_PLUGIN_MARKER")
if marker:
    Path(marker).write_text("imported\n")

check = explore_checker
