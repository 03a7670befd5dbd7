"""The normative creditflow spec (Markdown) and the preset process graphs.

This package only ships data: ``*.md`` (rules with stable ids) and ``graphs/*.json``
(presets). Use :func:`spec_dir` to find them from a wheel or an editable install.
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path


def spec_dir() -> Path:
    """The folder holding the spec files and ``graphs/``."""
    return Path(str(resources.files(__name__)))
