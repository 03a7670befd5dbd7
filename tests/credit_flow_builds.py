"""The builds of RabbitMQ's ``credit_flow`` the tests drive (issue #14, issue #19 point
4): Debian's installed 3.10.8 module, and a pre-3.8-like module without
``block/1``/``unblock/1`` compiled with ``erlc`` at test time into a copy of the
installed ebin folder.

The pre-3.8-like module is our own small Erlang code (written from the semantics of
spec/credit-flow.md, not RabbitMQ's source).
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

from creditflow.adapters.rabbitmq.module import locate_ebin

#: A credit_flow exporting the ops of a pre-3.8 module: send/2, ack/2,
#: handle_bump_msg/1, peer_down/1 (block and unblock exist, but only internally).
OLD_MODULE = r"""
-module(credit_flow).
-export([send/2, ack/2, handle_bump_msg/1, peer_down/1]).

send(Peer, {Initial, _More}) ->
    case get_or({credit_from, Peer}, Initial) of
        1 -> block(Peer), put({credit_from, Peer}, 0);
        C -> put({credit_from, Peer}, C - 1)
    end,
    ok.

ack(Peer, {_Initial, More}) ->
    case get_or({credit_to, Peer}, More) of
        1 -> grant(Peer, More), put({credit_to, Peer}, More);
        C -> put({credit_to, Peer}, C - 1)
    end,
    ok.

handle_bump_msg({Peer, N}) ->
    C = get_or({credit_from, Peer}, 0),
    put({credit_from, Peer}, C + N),
    case C =< 0 andalso C + N > 0 of
        true -> unblock(Peer);
        false -> ok
    end.

peer_down(Peer) ->
    unblock(Peer),
    erase({credit_from, Peer}),
    erase({credit_to, Peer}),
    ok.

grant(To, N) ->
    Msg = {bump_credit, {self(), N}},
    case get_or(credit_blocked, []) of
        [] -> To ! Msg;
        _ -> put(credit_deferred, [{To, Msg} | get_or(credit_deferred, [])])
    end.

block(Peer) ->
    case get_or(credit_blocked, []) of
        [] -> put(credit_blocked_at, erlang:monotonic_time());
        _ -> ok
    end,
    put(credit_blocked, [Peer | get_or(credit_blocked, [])]).

unblock(Peer) ->
    put(credit_blocked, get_or(credit_blocked, []) -- [Peer]),
    case get_or(credit_blocked, []) of
        [] ->
            [To ! Msg || {To, Msg} <- get_or(credit_deferred, [])],
            erase(credit_deferred),
            ok;
        _ -> ok
    end.

get_or(Key, Default) ->
    case get(Key) of
        undefined -> Default;
        V -> V
    end.
"""


def build_pre38_ebin(folder: Path, module: str = OLD_MODULE) -> Path:
    """Fill ``folder`` with a copy of the installed rabbit_common ebin whose
    credit_flow.beam is ``module`` (default :data:`OLD_MODULE`) compiled with
    ``erlc``; return it."""
    erlc = shutil.which("erlc")
    assert erlc is not None, "erlc is missing: scripts/setup.sh installs erlang-base"
    installed = locate_ebin()
    shutil.copy(installed / "rabbit_common.app", folder / "rabbit_common.app")
    source = folder / "credit_flow.erl"
    source.write_text(module, encoding="utf-8")
    subprocess.run([erlc, "-o", str(folder), str(source)], check=True, capture_output=True)
    return folder
