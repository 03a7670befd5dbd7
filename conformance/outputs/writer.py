"""The one output writer every command uses (OUT-NAME, OUT-ATOMIC, OUT-SYMLINK,
OUT-FAILURE).

* :func:`derived_path` turns a name that came from an input file (a graph's, a
  scenario's, an actor graph's, an adapter's) into one safe file name inside the output
  folder: no separator, no ``..``, no NUL or control character, bounded length; a name
  that had to be changed gets a short hash of the original so that two names that
  sanitise alike never share a file.
* :func:`write_atomic` writes a temporary file in the target's folder and renames it
  over the target: the file is complete or absent, and a symlink planted at the final
  path is *replaced* (rename never follows it), never written through.
* Every failure is an :class:`OutputError` whose ``str()`` is one line naming the path.

>>> safe_stem("cycle2")
'cycle2'
>>> safe_stem("../../etc/passwd").startswith("etc_passwd-")
True
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import tempfile
from pathlib import Path

from creditflow.conformance.outputs.streams import encoded

#: OUT-NAME: characters kept from an input-derived name (the suffix and hash come on top,
#: staying far below the usual 255-byte limit on one path component).
MAX_STEM = 96
_UNSAFE = re.compile(r"[^A-Za-z0-9._+=,@-]+")


class OutputError(Exception):
    """A file could not be written (OUT-FAILURE); ``str()`` is one line."""

    def __init__(self, path: str | Path, reason: str, payload: bytes | None = None) -> None:
        self.path = Path(path)
        self.reason = reason
        #: what could not be written (so that a trace can still be shown on stdout)
        self.payload = payload
        super().__init__(f"could not write {_show(str(path))}: {reason}")


def _show(text: str, limit: int = 160) -> str:
    """A path as one printable line (control characters escaped, length bounded)."""
    shown = text.encode("unicode_escape", "backslashreplace").decode("ascii")
    return shown if len(shown) <= limit else shown[: limit - 1] + "…"


def safe_stem(name: str) -> str:
    """OUT-NAME: ``name`` as one safe path component (without the suffix)."""
    stem = _UNSAFE.sub("_", name).strip("._")
    stem = stem[:MAX_STEM].rstrip("._")
    if stem == name and stem:
        return stem
    digest = hashlib.sha256(name.encode("utf-8", "surrogatepass")).hexdigest()[:10]
    return f"{stem or 'unnamed'}-{digest}"


def _umask() -> int:
    mask = os.umask(0o22)
    os.umask(mask)
    return mask


def derived_path(folder: str | Path, name: str, suffix: str = "") -> Path:
    """OUT-NAME: where an output named after ``name`` goes: always directly inside
    ``folder``. ``suffix`` is ours (``.itf.json``, ``.dot``), never from input."""
    return Path(folder) / (safe_stem(name) + suffix)


def write_atomic(path: str | Path, data: str | bytes) -> Path:
    """OUT-ATOMIC, OUT-SYMLINK: write ``data`` to ``path`` through a temporary file in
    the same folder and ``os.replace``; a symlink at ``path`` is replaced, not followed.
    Creates ``path``'s missing parent folders (the output folder, or the folders of a
    path the user gave). Raises :class:`OutputError` (OUT-FAILURE)."""
    target = Path(path)
    payload = encoded(data) if isinstance(data, str) else data
    tmp: str | None = None
    try:
        if "\x00" in str(target):
            raise OutputError(target, "the path contains a NUL character")
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
        except (FileExistsError, NotADirectoryError):
            blocker = next(
                (p for p in reversed(target.parents) if p.exists() and not p.is_dir()),
                target.parent,
            )
            raise OutputError(target, f"{_show(str(blocker))} is not a folder") from None
        if target.is_dir() and not target.is_symlink():
            raise OutputError(target, "it is a folder")
        if target.exists() and not target.is_symlink() and not target.is_file():
            # a device, FIFO or socket: renaming over it would replace it (OUT-ATOMIC)
            raise OutputError(target, "it is not a regular file")
        fd, tmp = tempfile.mkstemp(prefix=".cf-", suffix=".tmp", dir=target.parent)
        os.fchmod(fd, 0o666 & ~_umask())
        with os.fdopen(fd, "wb") as out:
            out.write(payload)
        os.replace(tmp, target)
        tmp = None
    except OutputError as exc:
        exc.payload = payload
        raise
    except OSError as exc:
        reason = exc.strerror or str(exc)
        if exc.filename and str(exc.filename) not in (str(target), tmp):
            reason += f" ({_show(str(exc.filename))})"  # e.g. the folder that mkdir needed
        raise OutputError(target, reason, payload) from None
    except ValueError as exc:  # e.g. "embedded null byte" from os functions
        raise OutputError(target, str(exc), payload) from None
    finally:
        if tmp is not None:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
    WRITTEN.append(target)
    return target


#: Every file written by this process, in order (shown when a command is interrupted).
WRITTEN: list[Path] = []
