"""A hostile adapter for the hardening tests (AD-TRANSPORT-*):
``python hostile_adapter.py MODE [PIDFILE]``.

It answers ``hello``, the unknown-op probe and ``reset`` like the Python template, and
misbehaves from the first process op on (or at ``hello`` for the ``*-hello`` modes):

``no-newline`` writes bytes forever without a newline; ``trickle`` writes one byte
every 50 ms without a newline; ``blank-lines`` writes blank lines forever;
``huge-line`` writes a 10 MB line; ``deep`` answers with 100,000-deep nesting;
``huge-int`` answers with a 5,000-digit integer; ``non-object`` answers a list;
``wrong-types`` answers a state whose fields have the wrong types; ``escape`` writes
terminal escape sequences on stderr and exits; ``grandchild`` spawns a grandchild that
sleeps for an hour and then answers correctly; ``slow`` (with a grandchild) answers each
op after 0.2 s; ``hostile-name`` answers correctly under a name (and implementation
fields) full of terminal escapes, line breaks and a lone surrogate. With PIDFILE, it
writes its own pid and its grandchild's there.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "adapters"))
import python_template  # noqa: E402

MODE = sys.argv[1]
PIDFILE = sys.argv[2] if len(sys.argv) > 2 else None
#: OUT-TEXT: a name that must never reach a terminal raw
HOSTILE_NAME = "evil\x1b[2J\x1b]0;owned\x07\nsecond line\ud800"


def write(data: bytes) -> None:
    os.write(1, data)


def forever(data: bytes, pause: float = 0.0) -> None:
    while True:
        write(data)
        if pause:
            time.sleep(pause)


def misbehave(req: dict) -> str | None:
    """Do this mode's thing for ``req``; a response line to send, or ``None`` (normal)."""
    rid = req["id"]
    base = MODE.removesuffix("-hello")
    if base == "no-newline":
        forever(b"x" * 65536)
    if base == "trickle":
        forever(b"x", 0.05)
    if base == "blank-lines":
        forever(b"\n" * 1024, 0.001)
    if base == "huge-line":
        write(b'{"id":' + str(rid).encode() + b',"ok":true,"pad":"' + b"y" * 10_000_000 + b'"}\n')
        time.sleep(3600)
    if base == "deep":
        return f'{{"id":{rid},"ok":true,"state":{"[" * 100_000 + "]" * 100_000}}}'
    if base == "huge-int":
        return f'{{"id":{rid},"ok":true,"state":{{"credit_from":{{"a":{"9" * 5000}}}}}}}'
    if base == "non-object":
        return "[1, 2, 3]"
    if base == "wrong-types":
        return json.dumps(
            {
                "id": rid,
                "ok": True,
                "state": {"credit_from": [], "credit_to": 3, "blocked": {"x": 1}, "deferred": "no"},
                "emitted": 7,
            }
        )
    if base == "escape":
        sys.stderr.write("\x1b[2J\x1b[31mred alert\x1b]0;owned\x07\r\x1b[1Aevil\n")
        sys.stderr.flush()
        os._exit(9)
    return None


def main() -> None:
    grandchild = None
    if MODE in ("grandchild", "slow"):
        grandchild = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(3600)"])
    if PIDFILE:
        with open(PIDFILE + ".tmp", "w") as f:
            f.write(f"{os.getpid()} {grandchild.pid if grandchild else ''}\n")
        os.replace(PIDFILE + ".tmp", PIDFILE)
    adapter = python_template.Adapter()
    buf = b""
    while chunk := os.read(0, 1 << 16):
        *lines, buf = (buf + chunk).split(b"\n")
        for line in lines:
            if not line.strip():
                continue
            req = json.loads(line)
            op = req.get("op")
            out = None
            at_hello = MODE.endswith("-hello") and op == "hello"
            if at_hello or (op in python_template.OPS_OF_FAMILY and not MODE.endswith("-hello")):
                if MODE == "slow":
                    time.sleep(0.2)
                out = misbehave(req)
            if out is None:
                out = python_template.answer(adapter, line)
            if MODE == "hostile-name" and op == "hello":
                hello = json.loads(out)
                hello["name"] = HOSTILE_NAME
                hello["implementation"] = {"vsn\x1b[2J": HOSTILE_NAME}
                out = json.dumps(hello)
            write(out.encode() + b"\n")


if __name__ == "__main__":
    main()
