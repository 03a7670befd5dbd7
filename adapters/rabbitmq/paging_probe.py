"""Erlang run on a real broker to observe (and force) a classic queue's paging state,
PG-OBSERVE.

The probe is evaluated on the node (``rabbitmqctl eval``). It runs a function *inside the
queue process* through ``rabbit_amqqueue:run_backing_queue/3`` so that a snapshot is
taken between two messages the queue handles, never in the middle of one:

* ``observe``: poll snapshots every 10 ms until the queue's ``len`` and pending-ack count
  equal what the client expects and five consecutive snapshots are identical (rates
  aside) — the queue has *settled* (PG-OBSERVE-SETTLED);
* ``target``: in one call inside the queue, snapshot, ``set_ram_duration_target(D)``,
  snapshot again — exactly one reduction pass separates the two (PG-OBSERVE-PASS); then
  settle as above.

It prints one line of JSON (``rabbit_json``). It reads ``#vqstate{}`` fields by position
(3.10.8's record layout, checked against ``tuple_size`` and known values; a mismatch is
reported as an error instead of wrong numbers).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any, cast

from creditflow.adapters.rabbitmq.broker import BrokerError

#: Field positions in RabbitMQ 3.10.8's ``#vqstate{}`` tuple (element 1 is the tag).
VQSTATE_SIZE = 46

_PROBE = r"""
VHost = <<"@VHOST@">>, QName = <<"@QUEUE@">>, Action = @ACTION@,
ExpLen = @EXPLEN@, ExpUnacked = @EXPUNACKED@,
{ok, Q} = rabbit_amqqueue:lookup(rabbit_misc:r(VHost, queue, QName)),
QPid = amqqueue:get_pid(Q),
Stores = [{<<"persistent">>, rabbit_vhost_msg_store:vhost_store_pid(VHost, msg_store_persistent)},
          {<<"transient">>, rabbit_vhost_msg_store:vhost_store_pid(VHost, msg_store_transient)}],
Null = fun(undefined) -> null; (infinity) -> <<"infinity">>; (X) -> X end,
Msg = fun(M) -> [element(2, M), case element(4, M) of undefined -> false; _ -> true end,
                 element(7, M) =:= rabbit_msg_store, element(8, M), element(5, M),
                 element(9, M) =:= queue_index] end,
Snap = fun(S) ->
    case {element(1, S), tuple_size(S), element(42, S)} of
        {vqstate, @SIZE@, default} -> ok;
        Other -> exit({unexpected_vqstate_layout, Other})
    end,
    Lq = fun(X) -> [Msg(M) || M <- lqueue:to_list(X)] end,
    Lt = fun(X) -> [Msg(M) || {_, M} <- gb_trees:to_list(X)] end,
    {delta, DS, DC, DT, DE} = element(4, S),
    {rates, RI, RO, RAI, RAO, _} = element(32, S),
    Blocked = case get(credit_blocked) of undefined -> []; Bs -> Bs end,
    #{<<"q1">> => Lq(element(2, S)), <<"q2">> => Lq(element(3, S)),
      <<"q3">> => Lq(element(5, S)), <<"q4">> => Lq(element(6, S)),
      <<"delta">> => [Null(DS), DC, DT, Null(DE)],
      <<"rpa">> => Lt(element(9, S)), <<"dpa">> => Lt(element(10, S)),
      <<"qpa">> => Lt(element(11, S)),
      <<"next_seq_id">> => element(7, S), <<"next_deliver_seq_id">> => element(8, S),
      <<"len">> => element(19, S), <<"bytes">> => element(20, S),
      <<"unacked_bytes">> => element(21, S), <<"persistent_count">> => element(22, S),
      <<"persistent_bytes">> => element(23, S), <<"target">> => Null(element(25, S)),
      <<"ram_msg_count">> => element(26, S), <<"ram_bytes">> => element(29, S),
      <<"rates">> => [RI, RO, RAI, RAO],
      <<"disk_reads">> => element(39, S), <<"disk_writes">> => element(40, S),
      <<"run_count">> => element(44, S), <<"waiting_bump">> => element(46, S),
      <<"messages_ram">> => rabbit_variable_queue:info(messages_ram, S),
      <<"backing_queue_status">> => maps:from_list(
          [{atom_to_binary(K, utf8), case V of {delta, A, B, C, D} -> [Null(A), B, C, Null(D)];
                                               _ -> Null(V) end}
           || {K, V} <- rabbit_variable_queue:info(backing_queue_status, S),
              lists:member(K, [q1, q2, delta, q3, q4, len, target_ram_count, next_seq_id])]),
      <<"credit">> => maps:from_list([{N, Null(get({credit_from, P}))} || {N, P} <- Stores]),
      <<"blocked">> => [N || B <- Blocked, {N, P} <- Stores, P =:= B]}
end,
Call = fun(Act) ->
    Ref = make_ref(), Self = self(),
    F = fun(Mod, S0) ->
        Reply = try
            B = Snap(S0),
            S1 = case Act of read -> S0; {target, D} -> Mod:set_ram_duration_target(D, S0) end,
            {ok, B, Snap(S1), S1}
        catch Class:Reason -> {error, {Class, Reason}, S0}
        end,
        case Reply of
            {ok, B1, A1, S2} -> Self ! {Ref, ok, B1, A1}, S2;
            {error, E, S3} -> Self ! {Ref, error, E, none}, S3
        end
    end,
    rabbit_amqqueue:run_backing_queue(QPid, rabbit_variable_queue, F),
    receive {Ref, ok, B2, A2} -> {B2, A2};
            {Ref, error, E2, _} -> exit({probe_failed, E2})
    after 10000 -> exit(probe_timeout)
    end
end,
Same = fun(X, Y) -> maps:remove(<<"rates">>, X) =:= maps:remove(<<"rates">>, Y) end,
Unacked = fun(X) -> length(maps:get(<<"rpa">>, X)) + length(maps:get(<<"dpa">>, X))
                    + length(maps:get(<<"qpa">>, X)) end,
Expected = fun(X) -> (ExpLen =:= any orelse maps:get(<<"len">>, X) =:= ExpLen) andalso
                     (ExpUnacked =:= any orelse Unacked(X) =:= ExpUnacked) end,
StoresIdle = fun() -> lists:all(fun({_, P}) ->
                  element(2, erlang:process_info(P, message_queue_len)) =:= 0 end, Stores) end,
Settle = fun Loop(Prev, Streak, Left) ->
    timer:sleep(10),
    {_, Now} = Call(read),
    Streak1 = case Prev =/= none andalso Same(Prev, Now) andalso Expected(Now)
                   andalso StoresIdle() of
                  true -> Streak + 1;
                  false -> 0
              end,
    if Streak1 >= 4 -> {settled, Now};
       Left =< 0 -> {unsettled, Now};
       true -> Loop(Now, Streak1, Left - 1)
    end
end,
{Before, Pass} = Call(Action),
{How, Settled} = Settle(none, 0, @POLLS@),
io:format("~s~n", [rabbit_json:encode(#{<<"before">> => Before, <<"pass">> => Pass,
                                        <<"settled">> => Settled,
                                        <<"how">> => atom_to_binary(How, utf8)})]),
ok.
"""


def _erl_binary_text(text: str) -> str:
    if not text or any(c in text for c in '"\\\n') or not text.isascii():
        raise BrokerError(f"unsupported name for the paging probe: {text!r}")
    return text


def _erl_duration(duration: float | None) -> str:
    if duration is None:
        return "infinity"
    return repr(float(duration)) if duration != int(duration) else str(int(duration))


def probe_expression(
    vhost: str,
    queue: str,
    duration: float | None | str = "read",
    expect_len: int | None = None,
    expect_unacked: int | None = None,
    polls: int = 1000,
) -> str:
    """The Erlang expression for one observation (``duration="read"``: observe only)."""
    target = cast("float | None", duration)  # a duration unless "read"
    action = "read" if duration == "read" else f"{{target, {_erl_duration(target)}}}"
    replacements = {
        "@VHOST@": _erl_binary_text(vhost),
        "@QUEUE@": _erl_binary_text(queue),
        "@ACTION@": action,
        "@EXPLEN@": "any" if expect_len is None else str(int(expect_len)),
        "@EXPUNACKED@": "any" if expect_unacked is None else str(int(expect_unacked)),
        "@SIZE@": str(VQSTATE_SIZE),
        "@POLLS@": str(int(polls)),
    }
    text = _PROBE
    for key, value in replacements.items():
        text = text.replace(key, value)
    return text


def check_snapshot(snapshot: dict[str, Any]) -> None:
    """The fields read by position must agree with RabbitMQ's own
    ``backing_queue_status`` (q1..q4, delta, len, target, next seq id); a disagreement
    means the record layout is not 3.10.8's and is a ``BrokerError``, not a diff."""
    bqs = snapshot["backing_queue_status"]
    ours = {key: len(snapshot[key]) for key in ("q1", "q2", "q3", "q4")}
    ours.update(
        delta=snapshot["delta"],
        len=snapshot["len"],
        target_ram_count=snapshot["target"],
        next_seq_id=snapshot["next_seq_id"],
    )
    for key, value in ours.items():
        if bqs.get(key) != value:
            raise BrokerError(
                f"paging probe: {key} read as {value!r} but "
                f"backing_queue_status says {bqs.get(key)!r}"
            )


def run_probe(evaluate: Callable[[str], str], expression: str) -> dict[str, Any]:
    """Evaluate a probe with ``evaluate`` (``PrivateBroker.eval`` or
    ``ErlangSession.eval``); its JSON object, every snapshot checked against
    ``backing_queue_status`` (``BrokerError`` otherwise)."""
    out = evaluate(expression)
    for line in out.splitlines():
        line = line.strip()
        if line.startswith("{"):
            try:
                document = json.loads(line)
            except json.JSONDecodeError as exc:
                raise BrokerError(f"paging probe printed malformed JSON: {exc}") from None
            for key in ("before", "pass", "settled"):
                check_snapshot(document[key])
            return document
    raise BrokerError(f"paging probe failed: {out.strip()[:400]}")
