#!/usr/bin/env bash
# Set up everything creditflow needs on a fresh Debian machine, idempotently:
# Debian packages (Erlang + RabbitMQ 3.10.8, a JDK for Spark, Graphviz), a virtualenv
# in .venv and the Python packages. Called by `make demo` and `make test`.
set -euo pipefail
cd "$(dirname "$0")/.."

need=()
command -v erl >/dev/null 2>&1 && command -v escript >/dev/null 2>&1 || need+=(erlang-base)
ls /usr/lib/rabbitmq/lib/rabbitmq_server-*/plugins/rabbit_common-*/ebin/credit_flow.beam \
    >/dev/null 2>&1 || need+=(rabbitmq-server)
# Spark 4 needs Java >= 17
java -version 2>&1 | grep -Eq 'version "(1[7-9]|[2-9][0-9])' || need+=(openjdk-17-jre-headless)
command -v dot >/dev/null 2>&1 || need+=(graphviz)
# The rhea adapter (AD-AMQ-RHEA) runs in Node.js; rhea itself comes from npm (below)
command -v node >/dev/null 2>&1 || need+=(nodejs)
command -v npm >/dev/null 2>&1 || need+=(npm)
# The nghttp2 adapter (AD-H2-NGHTTPD) runs Debian's nghttpd; nghttp2-client brings nghttp
command -v nghttpd >/dev/null 2>&1 || need+=(nghttp2-server)
command -v nghttp >/dev/null 2>&1 || need+=(nghttp2-client)
# python-qpid-proton has no wheel for every Python: its sdist builds with a C compiler
command -v cc >/dev/null 2>&1 || need+=(gcc)
"${PYTHON:-python3}" -c 'import os, sys, sysconfig
sys.exit(not os.path.exists(os.path.join(sysconfig.get_paths()["include"], "Python.h")))' \
    2>/dev/null || need+=(python3-dev)

if [ ${#need[@]} -gt 0 ]; then
    echo "setup: installing Debian packages: ${need[*]}" >&2
    SUDO=""
    [ "$(id -u)" -eq 0 ] || SUDO="sudo"
    # Keep the package's postinst from starting a system-wide broker: tests start
    # their own on loopback.
    added_policy=""
    if [ ! -e /usr/sbin/policy-rc.d ]; then
        printf '#!/bin/sh\nexit 101\n' | $SUDO tee /usr/sbin/policy-rc.d >/dev/null
        $SUDO chmod +x /usr/sbin/policy-rc.d
        added_policy=1
    fi
    $SUDO env DEBIAN_FRONTEND=noninteractive apt-get update -qq
    $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need[@]}"
    [ -z "$added_policy" ] || $SUDO rm -f /usr/sbin/policy-rc.d
fi

PYTHON="${PYTHON:-python3}"
"$PYTHON" -c 'import sys; sys.exit(sys.version_info < (3, 11))' || {
    echo "setup: creditflow needs Python >= 3.11 (found $("$PYTHON" --version))" >&2; exit 2; }
[ -x .venv/bin/python ] || "$PYTHON" -m venv .venv
.venv/bin/python -m pip install -q --upgrade pip
.venv/bin/python -m pip install -q -e '.[spark,broker,dev,amqp,http2]'
# AD-AMQ-VERSION: the pinned rhea into the per-version cache (~/.cache/creditflow/amqp)
.venv/bin/python -m creditflow.adapters.amqp.versions install rhea
# MATRIX-RELEASES: every release the docs' version matrices hold (creditflow matrix)
.venv/bin/python -m creditflow.adapters.amqp.versions install-matrix >/dev/null
# AD-H2-VERSION: every pinned HTTP/2 library imports and nghttpd and node run; the
# other releases the tests hold (the version matrix, docs/http2-adapters.md) are cached
.venv/bin/python -m creditflow.adapters.http2.versions check >/dev/null
.venv/bin/python -m creditflow.adapters.http2.versions install hypercorn@0.18.0 h2@4.1.0 \
    httpcore@1.0.5 node@20.18.0 node@20.19.0 node@22.23.5 >/dev/null
echo "setup: ready (.venv)" >&2
