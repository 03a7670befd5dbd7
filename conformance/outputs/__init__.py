"""The one output writer (OUT-*): safe file names derived from input names, atomic
writes that never follow a symlink at the final path, and one-line write failures."""

from creditflow.conformance.outputs.writer import (
    MAX_STEM,
    OutputError,
    derived_path,
    safe_stem,
    write_atomic,
)

__all__ = ["MAX_STEM", "OutputError", "derived_path", "safe_stem", "write_atomic"]
