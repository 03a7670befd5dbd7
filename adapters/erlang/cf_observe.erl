%% creditflow observe: the node side of `creditflow observe` (spec/observe.md, OBS-*).
%%
%% Loaded twice: into a hidden Erlang node on loopback (the *agent*, which talks to
%% Python over stdin/stdout and writes files) and into the RabbitMQ node it observes
%% (snapshot, tracer, watchdog, load processes). Written for RabbitMQ 3.10.8 / OTP 25;
%% `info/0' reports the versions so the driver can refuse others (OBS-CONNECT).
-module(cf_observe).

-export([agent/1, info/0, cf_pids/0, snapshot/2, snapshot/3, tracer_start/1, tracer_stop/1,
         load_start/1, load_stop/1, suspended_by_us/0, classify/3]).
-export([system_continue/3, system_terminate/4, system_code_change/4, load_loop/3]).

-define(SYS_TIMEOUT, 5000).
-define(BATCH, 2000).

%% ---------------------------------------------------------------- agent (hidden node)

%% OBS-CONNECT: one line per request on stdin, one answer line "@@CF@@ ok|error ..."
agent(Node) ->
    case agent_line() of
        eof -> halt(0);
        Line ->
            Reply = try agent_do(Node, string:lexemes(string:trim(Line), " "))
                    catch C:E:St -> {error, io_lib:format("~p:~p ~p", [C, E, lists:sublist(St, 3)])}
                    end,
            case Reply of
                {ok, Text} -> io:format("@@CF@@ ok ~s~n", [Text]);
                {error, Why} -> io:format("@@CF@@ error ~s~n",
                                          [string:replace(lists:flatten(io_lib:format("~s", [Why])), "\n", " ", all)])
            end,
            agent(Node)
    end.

agent_line() ->
    case io:get_line("") of
        eof -> eof;
        {error, _} -> eof;
        L -> L
    end.

agent_do(Node, ["info"]) ->
    case rpc:call(Node, ?MODULE, info, [], 30000) of
        {badrpc, R} -> {error, io_lib:format("~p", [R])};
        Info -> {ok, json(Info)}
    end;
agent_do(Node, ["snapshot", MaxPause, Out]) ->
    agent_do(Node, ["snapshot", MaxPause, Out, "0"]);
agent_do(Node, ["snapshot", MaxPause, Out, Hold]) ->
    case rpc:call(Node, ?MODULE, snapshot,
                  [self(), list_to_integer(MaxPause), list_to_integer(Hold)], 120000) of
        {badrpc, R} -> {error, io_lib:format("snapshot failed: ~p", [R])};
        {error, Why} -> {error, io_lib:format("snapshot failed: ~p", [Why])};
        Snap ->
            ok = file:write_file(Out, json(Snap)),
            {ok, "written"}
    end;
agent_do(Node, ["trace_start", Out]) ->
    Writer = spawn_link(fun() ->
                            {ok, Fd} = file:open(Out, [write, raw, binary,
                                                       {delayed_write, 1 bsl 20, 200}]),
                            writer_loop(Fd, 0)
                        end),
    case rpc:call(Node, ?MODULE, tracer_start, [Writer], 30000) of
        {ok, Tracer} ->
            put(cf_trace, {Tracer, Writer}),
            {ok, "tracing"};
        Other -> {error, io_lib:format("trace start failed: ~p", [Other])}
    end;
agent_do(Node, ["trace_stop"]) ->
    case erase(cf_trace) of
        undefined -> {error, "not tracing"};
        {Tracer, Writer} ->
            R = rpc:call(Node, ?MODULE, tracer_stop, [Tracer], 120000),
            Writer ! {close, self()},
            receive {closed, N} -> ok after 120000 -> N = -1 end,
            case R of
                {ok, Dropped} -> {ok, io_lib:format("~p ~p", [N, Dropped])};
                Other -> {error, io_lib:format("trace stop failed: ~p (~p events written)", [Other, N])}
            end
    end;
agent_do(Node, ["suspended"]) ->
    {ok, json(rpc:call(Node, ?MODULE, suspended_by_us, [], 30000))};
agent_do(Node, ["load_start", N]) ->
    {ok, json(rpc:call(Node, ?MODULE, load_start, [list_to_integer(N)], 60000))};
agent_do(Node, ["load_stop"]) ->
    {ok, json(rpc:call(Node, ?MODULE, load_stop, [0], 60000))};
agent_do(Node, ["eval", B64]) ->
    Text = binary_to_list(base64:decode(B64)),
    {ok, Toks, _} = erl_scan:string(Text),
    {ok, Exprs} = erl_parse:parse_exprs(Toks),
    case rpc:call(Node, erl_eval, exprs, [Exprs, []], 120000) of
        {value, V, _} -> {ok, json(local_pids(V, Node))};
        {badrpc, R} -> {error, io_lib:format("eval failed: ~p", [R])}
    end;
agent_do(_Node, Other) ->
    {error, io_lib:format("unknown request ~p", [Other])}.

%% Pids of the observed node written as that node writes them (<0.N.M>).
local_pids(P, Node) when is_pid(P), node(P) =:= Node ->
    [_, N, M] = string:lexemes(pid_to_list(P), "<.>"),
    list_to_binary(["<0.", N, ".", M, ">"]);
local_pids(L, Node) when is_list(L) -> [local_pids(E, Node) || E <- L];
local_pids(T, Node) when is_tuple(T) -> list_to_tuple(local_pids(tuple_to_list(T), Node));
local_pids(M, Node) when is_map(M) -> maps:map(fun(_, V) -> local_pids(V, Node) end, M);
local_pids(X, _) -> X.

%% The agent's writer: trace batches from the node's tracer, one JSON array per event.
writer_loop(Fd, N) ->
    receive
        {cf_events, Batch} ->
            ok = file:write(Fd, [[json(E), $\n] || E <- Batch]),
            writer_loop(Fd, N + length(Batch));
        {close, From} ->
            receive {cf_events, Batch} -> ok = file:write(Fd, [[json(E), $\n] || E <- Batch])
            after 0 -> Batch = [] end,
            ok = file:close(Fd),
            From ! {closed, N + length(Batch)}
    end.

%% ---------------------------------------------------------------- node information

info() ->
    {ok, Vsn} = application:get_key(rabbit, vsn),
    #{rabbit_version => list_to_binary(Vsn),
      otp_release => list_to_binary(erlang:system_info(otp_release)),
      node => atom_to_binary(node()),
      credit_flow_default_credit => spec(application:get_env(rabbit, credit_flow_default_credit)),
      msg_store_credit_disc_bound => spec(application:get_env(rabbit, msg_store_credit_disc_bound)),
      processes => erlang:system_info(process_count)}.

spec({ok, {I, M}}) -> [I, M];
spec(_) -> null.

%% ---------------------------------------------------------------- OBS-PROCESS

%% Every process whose dictionary holds credit_flow keys.
cf_pids() ->
    Me = self(),
    Direct = [P || P <- processes(), P =/= Me, is_cf(P)],
    %% peers named in credit keys that hold none themselves yet (e.g. a queue that was
    %% suspended before it took its first message)
    Peers = lists:usort([Q || P <- Direct, Q <- peers(P), is_pid(Q), node(Q) =:= node(),
                              is_process_alive(Q)]),
    Direct ++ (Peers -- Direct).

peers(P) ->
    case erlang:process_info(P, dictionary) of
        {dictionary, D} -> [K || {{credit_from, K}, _} <- D] ++ [K || {{credit_to, K}, _} <- D];
        undefined -> []
    end.

is_cf(P) ->
    case erlang:process_info(P, dictionary) of
        {dictionary, D} -> lists:any(fun cf_key/1, D);
        undefined -> false
    end.

cf_key({{credit_from, _}, _}) -> true;
cf_key({{credit_to, _}, _}) -> true;
cf_key({credit_blocked, _}) -> true;
cf_key({credit_deferred, _}) -> true;
cf_key(_) -> false.

%% ---------------------------------------------------------------- OBS-CUT snapshot

%% Suspend every credit-flow process with sys:suspend (each stops between two
%% messages), read it, resume it. A watchdog resumes everything if this process or
%% the client dies, or after MaxPause ms (OBS-WATCHDOG).
snapshot(Client, MaxPause) -> snapshot(Client, MaxPause, 0).

%% Hold > 0 keeps everything suspended that many ms before reading (to test the watchdog).
snapshot(Client, MaxPause, Hold) ->
    Self = self(),
    Pids = cf_pids(),
    Dog = spawn(fun() -> watchdog(Client, Self, MaxPause) end),
    T0 = erlang:monotonic_time(nanosecond),
    %% who is already suspended (by someone else: sys:suspend)? never resume those.
    %% (sys:get_status would copy each process's whole state: a queue's holds its messages)
    Where = [{P, erlang:process_info(P, current_function)} || P <- Pids],
    Pre = [P || {P, {current_function, {sys, suspend_loop, _}}} <- Where],
    Dead = [P || {P, undefined} <- Where],
    Mine = Pids -- (Pre ++ Dead),
    Dog ! {suspending, Mine},
    Susp = sys_all(Mine, suspend),
    Failed = [P || {P, R} <- Susp, R =/= {ok, ok}],
    T1 = erlang:monotonic_time(nanosecond),
    Hold > 0 andalso timer:sleep(Hold),
    Result = case Failed of
        [] ->
            Live = Pids -- Dead,
            States = buffers(Live),
            Procs = [read_process(P, proplists:get_value(P, States), lists:member(P, Pre))
                     || P <- Live, is_process_alive(P)],
            T2 = erlang:monotonic_time(nanosecond),
            {ok, Procs, T2};
        _ -> {error, {not_suspended, [pid_s(P) || P <- Failed]}}
    end,
    T3 = erlang:monotonic_time(nanosecond),
    _ = sys_all(Mine, resume),
    T4 = erlang:monotonic_time(nanosecond),
    Dog ! {done, Self},
    case Result of
        {ok, Ps, _} ->
            Ms = fun(T) -> T / 1000000 end,
            #{node => atom_to_binary(node()),
              info => info(),
              t_suspended => T1, t_resume => T3, t_start => T0, t_end => T4,
              pause_ms => Ms(T4 - T0), read_ms => Ms(T3 - T1),
              pre_suspended => [pid_s(P) || P <- Pre],
              processes => Ps};
        Err -> Err
    end.

%% Send one sys request to every pid at once and collect the replies.
sys_all(Pids, Req) ->
    Tagged = [begin
                  M = erlang:monitor(process, P),
                  P ! {system, {self(), M}, Req},
                  {P, M}
              end || P <- Pids],
    Deadline = erlang:monotonic_time(millisecond) + ?SYS_TIMEOUT,
    [{P, sys_reply(M, Deadline)} || {P, M} <- Tagged].

sys_reply(M, Deadline) ->
    Left = max(0, Deadline - erlang:monotonic_time(millisecond)),
    receive
        {M, Reply} -> erlang:demonitor(M, [flush]), {ok, Reply};
        {'DOWN', M, _, _, R} -> {error, {down, R}}
    after Left -> erlang:demonitor(M, [flush]), {error, timeout}
    end.

watchdog(Client, Worker, MaxPause) ->
    CM = erlang:monitor(process, Client),
    WM = erlang:monitor(process, Worker),
    watchdog_loop(CM, WM, [], erlang:monotonic_time(millisecond) + MaxPause).

watchdog_loop(CM, WM, Mine, Deadline) ->
    Left = max(0, Deadline - erlang:monotonic_time(millisecond)),
    receive
        {suspending, Ps} -> watchdog_loop(CM, WM, Ps, Deadline);
        {done, _} -> ok;
        {'DOWN', _, _, _, _} -> rescue(Mine)
    after Left -> rescue(Mine)
    end.

rescue(Ps) ->
    catch ets:new(cf_observe_rescued, [named_table, public]),
    [begin catch sys:resume(P, 1000), ok end || P <- Ps],
    catch ets:insert(cf_observe_rescued, {last, length(Ps), erlang:system_time(millisecond)}),
    ok.

%% Processes that are sys-suspended right now (for the tests: nothing left suspended).
suspended_by_us() ->
    [pid_s(P) || P <- cf_pids(), sys_status(P) =:= suspended].

sys_status(P) ->
    case catch sys:get_status(P, 1000) of
        {status, _, _, [_, S | _]} -> S;
        _ -> unknown
    end.

%% gen_server2's internal queue, module and (for msg_store) clients, read *inside* each
%% suspended process: a replace_state fun sends just these and throws, so sys keeps the
%% state unchanged and nothing large is copied (OBS-CUT step 3).
buffers(Pids) ->
    Me = self(),
    Fun = fun(S) -> Me ! {cf_state, self(), extract(S)}, throw(cf_observe_read) end,
    _ = sys_all(Pids, {replace_state, Fun}),
    [{P, receive {cf_state, P, X} -> X after 0 -> none end} || P <- Pids].

extract(GS2) when is_tuple(GS2), element(1, GS2) =:= gs2_state ->
    Cb = element(4, GS2),
    {[Msg || {_Prio, Msg} <- priority_queue:to_list(element(8, GS2))], element(5, GS2),
     msg_store_clients(Cb),
     case element(5, GS2) of
         rabbit_msg_store when is_tuple(Cb) -> list_to_binary(filename:basename(element(2, Cb)));
         _ -> none
     end};
extract(_) -> none.

read_process(P, StateReply, PreSuspended) ->
    {dictionary, D} = erlang:process_info(P, dictionary),
    {messages, Mailbox} = erlang:process_info(P, messages),
    {Buffer, Mod, Clients, StoreName} =
        case StateReply of
            {_, _, _, _} = X -> X;
            _ -> {[], undefined, #{}, none}
        end,
    Flight = classify(Buffer, buffer, Clients) ++ classify(Mailbox, mailbox, Clients),
    #{pid => pid_s(P),
      role_hint => role_hint(D, Mod, P),
      name => case StoreName of
                  none -> name(D, P);
                  _ -> StoreName
              end,
      module => term_s(Mod),
      pre_suspended => PreSuspended,
      credit_from => [[peer_s(K), V] || {{credit_from, K}, V} <- D],
      credit_to => [[peer_s(K), V] || {{credit_to, K}, V} <- D],
      blocked => [peer_s(B) || B <- get_d(credit_blocked, D, [])],
      deferred => [[peer_s(To), N] || {To, {bump_credit, {_, N}}} <- get_d(credit_deferred, D, [])],
      mailbox_len => length(Mailbox),
      buffer_len => length(Buffer),
      in_flight => Flight}.

get_d(K, D, Default) ->
    case lists:keyfind(K, 1, D) of
        {K, V} when is_list(V) -> V;
        _ -> Default
    end.

%% msg_store's #msstate.clients (3.10.8 layout: 18th element): CRef -> {CPid, _, _}
msg_store_clients(S) when is_tuple(S), element(1, S) =:= msstate, tuple_size(S) >= 18 ->
    case element(18, S) of
        M when is_map(M) -> M;
        _ -> #{}
    end;
msg_store_clients(_) -> #{}.

%% OBS-IN-FLIGHT: credit-carrying messages waiting in a process, in its mailbox or in
%% gen_server2's internal queue (OBS-DIFF-BUFFER); a mirror's delivery counts two debits
%% (OBS-DIFF-MIRROR).
classify(Msgs, Where, Clients) ->
    Counts = lists:foldl(
        fun(M, Acc) ->
            case kind(M, Clients) of
                skip -> Acc;
                {K, Peer, N} -> maps:update_with({K, Peer}, fun(X) -> X + N end, N, Acc)
            end
        end, #{}, Msgs),
    [[K, Peer, atom_to_binary(Where), N] || {{K, Peer}, N} <- maps:to_list(Counts)].

kind({bump_credit, {From, N}}, _) -> {<<"grant">>, peer_s(From), N};
kind({'$gen_cast', {method, _, _, flow}}, _) -> {<<"data">>, <<"reader?">>, 1};
kind({'$gen_cast', {deliver, D, SWP}}, _) when element(1, D) =:= delivery,
                                               element(7, D) =:= flow ->
    {<<"data">>, peer_s(element(4, D)), case SWP of true -> 2; _ -> 1 end};
kind({'$gen_cast', {write, CRef, _, flow}}, Clients) ->
    case maps:find(CRef, Clients) of
        {ok, {CPid, _, _}} -> {<<"data">>, peer_s(CPid), 1};
        _ -> {<<"data">>, <<"unknown-client">>, 1}
    end;
kind(_, _) -> skip.

role_hint(D, Mod, P) ->
    case lists:keyfind(process_name, 1, D) of
        {_, {M, _}} -> atom_to_binary(M);
        _ ->
            case {Mod, erlang:process_info(P, registered_name)} of
                {undefined, {registered_name, R}} -> atom_to_binary(R);
                {undefined, _} -> initial_call(D, P);
                {M, _} -> atom_to_binary(M)
            end
    end.

initial_call(D, P) ->
    case lists:keyfind('$initial_call', 1, D) of
        {_, {M, _, _}} -> atom_to_binary(M);
        _ ->
            case erlang:process_info(P, initial_call) of
                {initial_call, {M, _, _}} -> atom_to_binary(M);
                _ -> <<"other">>
            end
    end.

name(D, P) ->
    case lists:keyfind(process_name, 1, D) of
        {_, {_, {resource, <<"/">>, _Kind, Name}}} -> iolist_to_binary(["'", Name, "'"]);
        {_, {_, {resource, VHost, _Kind, Name}}} ->
            iolist_to_binary(["'", Name, "' in vhost '", VHost, "'"]);
        {_, {_, {ConnName, Ch}}} when is_binary(ConnName), is_integer(Ch) ->
            iolist_to_binary([ConnName, " channel ", integer_to_binary(Ch)]);
        {_, {_, N}} when is_binary(N) -> N;
        {_, {_, N}} -> term_s(N);
        _ ->
            case erlang:process_info(P, registered_name) of
                {registered_name, R} -> atom_to_binary(R);
                _ -> null
            end
    end.

%% ---------------------------------------------------------------- OBS-TRACE tracer

%% Start tracing credit_flow calls and bump_credit sends of every process, events to
%% Writer (a process on the agent node). The tracer dies with the writer (link), and
%% a dying tracer stops its tracing; its own cleanup also removes the patterns.
tracer_start(Writer) ->
    Parent = self(),
    T = spawn(fun() -> tracer_init(Parent, Writer) end),
    receive {T, started} -> {ok, T} after 10000 -> {error, tracer_timeout} end.

tracer_stop(T) ->
    M = erlang:monitor(process, T),
    T ! {stop, self()},
    receive
        {T, stopped, Dropped} -> erlang:demonitor(M, [flush]), {ok, Dropped};
        {'DOWN', M, _, _, R} -> {error, R}
    after 60000 -> {error, timeout}
    end.

patterns() ->
    Caller = [{'_', [], [{message, {caller}}]}],
    [{{credit_flow, send, 2}, true},
     {{credit_flow, ack, 2}, true},
     {{credit_flow, handle_bump_msg, 1}, true},
     {{credit_flow, peer_down, 1}, true},
     {{credit_flow, block, 1}, Caller},
     {{credit_flow, unblock, 1}, Caller},
     {{credit_flow, blocked, 0}, [{'_', [], [{message, {caller}}, {return_trace}]}]}].

tracer_init(Parent, Writer) ->
    process_flag(trap_exit, true),
    link(Writer),
    process_flag(priority, high),
    [erlang:trace_pattern(MFA, MS, [local]) || {MFA, MS} <- patterns()],
    erlang:trace_pattern(send, [{['_', {bump_credit, '_'}], [], []}], []),
    erlang:trace(all, true, [call, send, strict_monotonic_timestamp, {tracer, self()}]),
    erlang:trace(self(), false, [call, send]),
    Parent ! {self(), started},
    erlang:send_after(100, self(), flush),
    tracer_loop(Writer, [], 0).

tracer_cleanup() ->
    catch erlang:trace(all, false, [call, send]),
    [catch erlang:trace_pattern(MFA, false, [local]) || {MFA, _} <- patterns()],
    catch erlang:trace_pattern(send, true, []),
    ok.

tracer_loop(Writer, Acc, N) when N >= ?BATCH ->
    Writer ! {cf_events, lists:reverse(Acc)},
    tracer_loop(Writer, [], 0);
tracer_loop(Writer, Acc, N) ->
    receive
        flush ->
            case Acc of [] -> ok; _ -> Writer ! {cf_events, lists:reverse(Acc)} end,
            erlang:send_after(100, self(), flush),
            tracer_loop(Writer, [], 0);
        {stop, From} ->
            tracer_cleanup(),
            Ref = erlang:trace_delivered(all),
            receive {trace_delivered, all, Ref} -> ok after 10000 -> ok end,
            Rest = drain_trace([]),
            Writer ! {cf_events, lists:reverse(Acc, Rest)},
            From ! {self(), stopped, 0};
        {'EXIT', Writer, _} ->
            tracer_cleanup();
        {'EXIT', _, _} ->
            tracer_loop(Writer, Acc, N);
        T when element(1, T) =:= trace_ts ->
            case event(T) of
                skip -> tracer_loop(Writer, Acc, N);
                E -> tracer_loop(Writer, [E | Acc], N + 1)
            end;
        _ ->
            tracer_loop(Writer, Acc, N)
    end.

drain_trace(Acc) ->
    receive
        T when element(1, T) =:= trace_ts ->
            case event(T) of
                skip -> drain_trace(Acc);
                E -> drain_trace([E | Acc])
            end
    after 0 -> lists:reverse(Acc)
    end.

%% OBS-EVENT: [Time, Unique, Pid, Kind | Args]
event({trace_ts, P, call, {credit_flow, F, Args}, TS}) -> call_event(P, F, Args, undefined, TS);
event({trace_ts, P, call, {credit_flow, F, Args}, Caller, TS}) -> call_event(P, F, Args, Caller, TS);
event({trace_ts, P, return_from, {credit_flow, blocked, 0}, V, TS}) ->
    case erase({cf_pending, P}) of
        true -> ev(P, TS, <<"blocked?">>, [V]);
        _ -> skip
    end;
event({trace_ts, P, send, {bump_credit, {From, N}}, To, TS}) when From =:= P ->
    ev(P, TS, <<"grant">>, [peer_s(To), N]);
event(_) -> skip.

call_event(P, send, [To, {I, M}], _, TS) -> ev(P, TS, <<"send">>, [peer_s(To), I, M]);
call_event(P, ack, [To, {I, M}], _, TS) -> ev(P, TS, <<"ack">>, [peer_s(To), I, M]);
call_event(P, handle_bump_msg, [{From, N}], _, TS) -> ev(P, TS, <<"bump">>, [peer_s(From), N]);
call_event(P, peer_down, [Peer], _, TS) -> ev(P, TS, <<"peer_down">>, [peer_s(Peer)]);
call_event(P, block, [From], Caller, TS) -> ev(P, TS, <<"block">>, [peer_s(From), internal(Caller)]);
call_event(P, unblock, [From], Caller, TS) -> ev(P, TS, <<"unblock">>, [peer_s(From), internal(Caller)]);
call_event(P, blocked, [], Caller, _TS) ->
    case internal(Caller) of
        true -> skip;
        false -> put({cf_pending, P}, true), skip
    end;
call_event(_, _, _, _, _) -> skip.

internal({credit_flow, _, _}) -> true;
internal(_) -> false.

ev(P, {T, U}, Kind, Args) -> [T, U, pid_s(P), Kind | Args].

%% ---------------------------------------------------------------- load processes (benchmark)

%% N processes in a ring, each sending one credit-flow message to the next every 20 ms
%% and acking what it receives; they answer sys messages (so a snapshot can suspend them).
load_start(N) ->
    Parent = self(),
    Pids = [proc_lib:spawn(fun() -> load_init(Parent) end) || _ <- lists:seq(1, N)],
    Ring = lists:zip(Pids, tl(Pids) ++ [hd(Pids)]),
    [P ! {next, Next} || {P, Next} <- Ring],
    catch ets:new(cf_observe_load, [named_table, public]),
    ets:insert(cf_observe_load, {pids, Pids}),
    length(Pids).

load_stop(_) ->
    case catch ets:lookup(cf_observe_load, pids) of
        [{pids, Pids}] -> [exit(P, kill) || P <- Pids], ets:delete(cf_observe_load, pids), length(Pids);
        _ -> 0
    end.

load_init(Parent) ->
    receive {next, Next} -> ok end,
    erlang:send_after(rand:uniform(20), self(), tick),
    load_loop(Parent, [], Next).

load_loop(Parent, Deb, Next) ->
    receive
        {system, From, Req} -> sys:handle_system_msg(Req, From, Parent, ?MODULE, Deb, Next);
        tick ->
            case credit_flow:blocked() of
                false -> credit_flow:send(Next, {400, 200}), Next ! {load, self()};
                true -> ok
            end,
            erlang:send_after(20, self(), tick),
            load_loop(Parent, Deb, Next);
        {load, From} -> credit_flow:ack(From, {400, 200}), load_loop(Parent, Deb, Next);
        {bump_credit, Msg} -> credit_flow:handle_bump_msg(Msg), load_loop(Parent, Deb, Next);
        _ -> load_loop(Parent, Deb, Next)
    end.

system_continue(Parent, Deb, Next) -> load_loop(Parent, Deb, Next).
system_terminate(Reason, _, _, _) -> exit(Reason).
system_code_change(S, _, _, _) -> {ok, S}.

%% ---------------------------------------------------------------- terms as text, JSON

pid_s(P) when is_pid(P) -> list_to_binary(pid_to_list(P));
pid_s(X) -> term_s(X).

peer_s(P) when is_pid(P) -> pid_s(P);
peer_s(A) when is_atom(A) ->
    case whereis(A) of
        P when is_pid(P) -> pid_s(P);
        _ -> iolist_to_binary(["name:", atom_to_binary(A)])
    end;
peer_s(X) -> iolist_to_binary(["term:", term_s(X)]).

term_s(undefined) -> null;
term_s(A) when is_atom(A) -> atom_to_binary(A);
term_s(X) -> iolist_to_binary(io_lib:format("~0p", [X])).

json(X) -> iolist_to_binary(j(X)).

j(true) -> <<"true">>;
j(false) -> <<"false">>;
j(null) -> <<"null">>;
j(undefined) -> <<"null">>;
j(A) when is_atom(A) -> j(atom_to_binary(A));
j(I) when is_integer(I) -> integer_to_binary(I);
j(F) when is_float(F) -> float_to_binary(F, [{decimals, 6}, compact]);
j(B) when is_binary(B) -> [$", esc(B), $"];
j(P) when is_pid(P) -> j(pid_s(P));
j(M) when is_map(M) ->
    [${, lists:join($,, [[j(key(K)), $:, j(V)] || {K, V} <- maps:to_list(M)]), $}];
j(L) when is_list(L) -> [$[, lists:join($,, [j(E) || E <- L]), $]];
j(T) when is_tuple(T) -> j(tuple_to_list(T));
j(X) -> j(term_s(X)).

key(K) when is_atom(K) -> atom_to_binary(K);
key(K) when is_binary(K) -> K;
key(K) -> term_s(K).

esc(B) -> << <<(esc_c(C))/binary>> || <<C>> <= B >>.
esc_c($") -> <<"\\\"">>;
esc_c($\\) -> <<"\\\\">>;
esc_c(C) when C < 32 -> iolist_to_binary(io_lib:format("\\u~4.16.0b", [C]));
esc_c(C) -> <<C>>.
