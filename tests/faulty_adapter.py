"""An adapter that breaks the protocol in one chosen way, to test the driver's
AD-FAILURE handling: ``python tests/faulty_adapter.py MODE [N]``.

Modes: ``crash`` (exit 7 at the N-th process op), ``hang`` (stop answering at the
N-th), ``garbage`` (a non-JSON line), ``wrong-id``, ``bad-state`` (a state without
``blocked``), ``refuse`` (``ok:false`` to every process op), ``accept-all`` (answers
the unknown-op probe with ok:true), ``no-family`` (hello without credit_flow),
``extra-line`` (two lines for one request). Otherwise it is the Python template.
"""

from __future__ import annotations

import json
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "adapters"))
import python_template  # noqa: E402

MODE = sys.argv[1]
N = int(sys.argv[2]) if len(sys.argv) > 2 else 1


def main() -> None:
    adapter = python_template.Adapter()
    ops = 0
    buf = b""
    while chunk := os.read(0, 1 << 16):
        *lines, buf = (buf + chunk).split(b"\n")
        for line in lines:
            if not line.strip():
                continue
            req = json.loads(line)
            op = req.get("op")
            out = python_template.answer(adapter, line)
            if op == "hello" and MODE == "no-family":
                out = json.dumps({"id": req["id"], "ok": True, "name": "x", "families": []})
            elif op not in python_template.OPS_OF_FAMILY and op not in ("hello", "reset"):
                if MODE == "accept-all":
                    out = json.dumps({"id": req["id"], "ok": True})
            elif op in python_template.OPS_OF_FAMILY:
                ops += 1
                if ops >= N:
                    if MODE == "crash":
                        print("faulty adapter: crashing on purpose", file=sys.stderr)
                        sys.exit(7)
                    if MODE == "hang":
                        sys.stdout.flush()
                        time.sleep(3600)
                    if MODE == "garbage":
                        out = "this is not json"
                    if MODE == "wrong-id":
                        out = json.dumps({**json.loads(out), "id": 10**9})
                    if MODE == "bad-state":
                        resp = json.loads(out)
                        del resp["state"]["blocked"]
                        out = json.dumps(resp)
                    if MODE == "refuse":
                        out = json.dumps({"id": req["id"], "ok": False, "error": "no thanks"})
                    if MODE == "extra-line":
                        out = out + "\n" + out
            sys.stdout.write(out + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
