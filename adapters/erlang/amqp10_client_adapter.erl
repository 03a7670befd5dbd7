%% The Erlang half of the `amqp10-client` adapter (spec/adapter-protocol-amqp.md,
%% AD-AMQ-10): RabbitMQ's AMQP 1.0 client `amqp10_client`, loaded from the installed
%% release's ebins (given as the first argument: the amqp10_client ebin, with
%% amqp10_common beside it), driven through its own API by a small application, one
%% request per line on stdin, one answer per line on stdout (JSON, with
%% credit_flow_adapter's codec). The Python half (adapters/amqp/amqp10_client.py) runs
%% the proton listener this client connects to, and speaks the adapter protocol.
%%
%% The frames the client sends and receives are read, in the order its session process
%% handles them, by Erlang tracing (AD-AMQ-10-FRAMES): `receive` on the session process
%% (the frame reader casts each decoded performative to it) and returns from
%% `amqp10_framing:encode_bin/1` (every performative it writes is encoded there).
%% Nothing of amqp10_client is copied; its records are read by name from the loaded
%% beam's debug_info.
%%
%%   erl -noshell -pa <compiled dir> -run amqp10_client_adapter main AMQP10_CLIENT_EBIN
-module(amqp10_client_adapter).
-export([main/1]).

-record(st, {port, info, records, tracer, conn, sock_port, sessions = #{}, links = #{},
             crashed = #{}, sent = 0, events = []}).

main(Args) ->
    case catch start(Args) of
        ok -> halt(0);
        {fatal, Message} ->
            io:format(standard_error, "amqp10_client_adapter: ~ts~n", [Message]),
            halt(3);
        Other ->
            io:format(standard_error, "amqp10_client_adapter: crashed: ~p~n", [Other]),
            halt(3)
    end.

start([Ebin | _]) ->
    process_flag(trap_exit, true),
    %% stdout is the protocol's: the client's log (a crashed session's report) stays off it
    ok = logger:set_primary_config(level, none),
    Info = load(Ebin),
    %% its #link{}, #state{} and the v1_0 performatives it includes
    Records = cf_amqp_half:records(code:which(amqp10_client_session),
                                      "amqp10_client_session.beam"),
    Tracer = spawn_link(fun() -> tracer([]) end),
    {module, _} = code:ensure_loaded(amqp10_framing),
    1 = erlang:trace_pattern({amqp10_framing, encode_bin, 1}, [{'_', [], [{exception_trace}]}],
                             [global]),
    Port = open_port({fd, 0, 1}, [binary, {line, 1 bsl 20}, eof]),
    loop(#st{port = Port, info = Info, records = Records, tracer = Tracer});
start([]) ->
    throw({fatal, "no amqp10_client ebin folder given"}).

%% The amqp10_client ebin and, beside it, amqp10_common (as the broker's code path has
%% them); then the application and its dependencies started.
load(Ebin) ->
    case filelib:is_regular(filename:join(Ebin, "amqp10_client_session.beam")) of
        false -> throw({fatal, io_lib:format("~ts holds no amqp10_client_session.beam", [Ebin])});
        true -> ok
    end,
    Plugins = filename:dirname(filename:dirname(filename:absname(Ebin))),
    Common = filelib:wildcard(filename:join([Plugins, "amqp10_common-*", "ebin"])),
    ok = code:add_pathsa(Common),
    true = code:add_patha(Ebin),
    case application:ensure_all_started(amqp10_client) of
        {ok, _} -> ok;
        {error, Why} -> throw({fatal, io_lib:format("cannot start amqp10_client: ~p", [Why])})
    end,
    Vsn = case file:consult(filename:join(Ebin, "amqp10_client.app")) of
              {ok, [{application, amqp10_client, Props}]} -> proplists:get_value(vsn, Props, "?");
              _ -> "?"
          end,
    Beam = code:which(amqp10_client_session),
    {ok, {amqp10_client_session, Md5}} = beam_lib:md5(Beam),
    #{<<"version">> => unicode:characters_to_binary(Vsn),
      <<"module">> => unicode:characters_to_binary(Beam),
      <<"md5">> => iolist_to_binary([io_lib:format("~2.16.0b", [B]) || <<B>> <= Md5]),
      <<"otp">> => unicode:characters_to_binary(erlang:system_info(otp_release))}.

%% A record's field by name, from the session beam's debug_info (cf_amqp_half).
get(Rec, Field, Tuple, #st{records = Records}) ->
    cf_amqp_half:get(Rec, Field, Tuple, Records, "amqp10_client").

%% -- the frame trace (AD-AMQ-10-FRAMES) ------------------------------------------------

%% A performative counts as sent once encode_bin/1 returned (the call is kept until
%% then: an encoding that raises sends nothing).
tracer(Acc) -> tracer(Acc, #{}).

tracer(Acc, Calls) ->
    receive
        {trace, Pid, 'receive', {'$gen_cast', {Perf, _Payload}}} when is_tuple(Perf) ->
            tracer([{received, Pid, Perf} | Acc], Calls);
        {trace, Pid, 'receive', {'$gen_cast', Perf}} when is_tuple(Perf) ->
            tracer([{received, Pid, Perf} | Acc], Calls);
        {trace, Pid, call, {amqp10_framing, encode_bin, [Perf]}} ->
            tracer(Acc, Calls#{Pid => Perf});
        {trace, Pid, return_from, {amqp10_framing, encode_bin, 1}, _} ->
            case maps:take(Pid, Calls) of
                {Perf, Calls1} when is_tuple(Perf) -> tracer([{sent, Pid, Perf} | Acc], Calls1);
                {_, Calls1} -> tracer(Acc, Calls1);
                error -> tracer(Acc, Calls)
            end;
        {trace, Pid, exception_from, {amqp10_framing, encode_bin, 1}, _} ->
            tracer(Acc, maps:remove(Pid, Calls));
        {take, From} ->
            From ! {frames, lists:reverse(Acc)},
            tracer([], Calls);
        _ -> tracer(Acc, Calls)
    end.

take_frames(#st{tracer = Tracer}) ->
    erlang:trace_delivered(all),
    receive {trace_delivered, all, _} -> ok after 1000 -> ok end,
    Tracer ! {take, self()},
    receive {frames, Frames} -> Frames after 5000 -> [] end.

-define(PERFS, ['v1_0.begin', 'v1_0.attach', 'v1_0.flow', 'v1_0.transfer',
                'v1_0.disposition', 'v1_0.detach', 'v1_0.end']).

%% AD-AMQ-FRAMES records; `channel` is the session's ordinal in the run (both ends
%% number the run's first session 0), `side` is given by the caller.
frame_records(Raw, St) ->
    lists:append([frame_record(Dir, Pid, Perf, St) || {Dir, Pid, Perf} <- Raw]).

frame_record(Dir, Pid, Perf, St = #st{sessions = Sessions}) ->
    Name = element(1, Perf),
    Channel = case [N || {_, #{pid := P, ordinal := N}} <- maps:to_list(Sessions), P =:= Pid] of
                  [N | _] -> N;
                  [] -> 0
              end,
    case lists:member(Name, ?PERFS) of
        false -> [];
        true -> frame_record(Dir, Channel, Name, Perf, St)
    end.

frame_record(Dir, Channel, Name, Perf, St) ->
    Fields = maps:get(Name, St#st.records),
    Values = maps:from_list(lists:zip(Fields, tl(tuple_to_list(Perf)))),
    case Name of
        _ when Name =:= 'v1_0.transfer', Dir =:= sent ->
            %% send_transfer/3 encodes the transfer once to size it (more unset), then
            %% once per frame with more set: only the latter are frames
            case maps:get(more, Values) of
                undefined -> [];
                _ -> [frame_map(Dir, Channel, Name, Values)]
            end;
        _ -> [frame_map(Dir, Channel, Name, Values)]
    end.

frame_map(Dir, Channel, Name, Values) ->
    <<"v1_0.", Short/binary>> = atom_to_binary(Name),
    Base = #{<<"dir">> => atom_to_binary(Dir), <<"channel">> => Channel, <<"frame">> => Short},
    maps:fold(fun(K, V, Acc) ->
                      case plain(K, V) of
                          skip -> Acc;
                          Plain -> Acc#{binary:replace(atom_to_binary(K), <<"_">>, <<"-">>, [global]) => Plain}
                      end
              end, Base, Values).

plain(role, true) -> <<"receiver">>;
plain(role, false) -> <<"sender">>;
plain(_, undefined) -> skip;
plain(_, true) -> true;
plain(_, false) -> false;
plain(_, {T, N}) when is_integer(N), T =/= binary -> N;
plain(name, {utf8, B}) -> B;
plain(_, _) -> skip.

%% ---------------------------------------------------------------------------------------

loop(St = #st{port = Port}) ->
    cf_amqp_half:serve(Port, St, fun handle_line/2, fun event/2).

handle_line(Line, St) ->
    case catch credit_flow_adapter:decode(Line) of
        Req when is_map(Req) ->
            case catch request(Req, St) of
                {ok, Body, St1} -> {answer(Body#{<<"ok">> => true}), St1};
                {error, Why} -> {answer(error_body(Why)), St};
                Crash -> {answer(error_body(io_lib:format("internal error: ~0P", [Crash, 40]))), St}
            end;
        _ -> {answer(error_body("invalid JSON request")), St}
    end.

error_body(Why) ->
    #{<<"ok">> => false, <<"error">> => unicode:characters_to_binary(Why)}.

answer(Body) -> [credit_flow_adapter:enc(Body), $\n].

%% -- the application: what it does on the client's events ------------------------------

%% The sending application sends what it holds when the link is `credited`; the
%% receiving application keeps every delivery unsettled; the sender counts what the
%% receiver settled (AD-AMQ-10-APP).
event({amqp10_event, {link, Ref, credited}}, St) ->
    with_ref(Ref, St, fun(Name, L) -> send_held(Name, L#{credited => maps:get(credited, L) + 1}, St) end);
event({amqp10_event, {link, Ref, credit_exhausted}}, St) ->
    with_ref(Ref, St, fun(Name, L) -> put_link(Name, L#{exhausted => maps:get(exhausted, L) + 1}, St) end);
event({amqp10_msg, Ref, Msg}, St) ->
    with_ref(Ref, St, fun(Name, L = #{held := Held, received := R}) ->
                              put_link(Name, L#{held => Held ++ [Msg], received => R + 1}, St)
                      end);
event({amqp10_disposition, {_State, Tag}}, St = #st{links = Links}) ->
    case [N || {N, #{tags := Tags}} <- maps:to_list(Links), lists:member(Tag, Tags)] of
        [Name | _] ->
            L = #{tags := Tags} = maps:get(Name, Links),
            St#st{links = Links#{Name => L#{tags => lists:delete(Tag, Tags)}}};
        [] -> St
    end;
event({'EXIT', Pid, Reason}, St = #st{crashed = C}) when Reason =/= normal ->
    St#st{crashed = C#{Pid => Reason}};
event(_Other, St) -> St.

with_ref(Ref, St = #st{links = Links}, Fun) ->
    case [{N, L} || {N, L = #{ref := R}} <- maps:to_list(Links), R =:= Ref] of
        [{Name, L} | _] -> Fun(Name, L);
        [] -> St
    end.

put_link(Name, L, St = #st{links = Links}) -> St#st{links = Links#{Name => L}}.

%% The sending application: hand the held messages to send_msg/2 in order until the
%% client answers {error, insufficient_credit}; then wait for `credited`.
send_held(Name, L = #{queued := 0}, St) -> put_link(Name, L, St);
send_held(Name, L = #{queued := Q, tags := Tags, ref := Ref, size := Size}, St = #st{sent = N}) ->
    Tag = integer_to_binary(N),
    Msg = amqp10_msg:new(Tag, binary:copy(<<"x">>, Size), false),
    case catch amqp10_client:send_msg(Ref, Msg) of
        ok ->
            send_held(Name, L#{queued => Q - 1, tags => Tags ++ [Tag]}, St#st{sent = N + 1});
        {error, insufficient_credit} ->
            put_link(Name, L#{refused => maps:get(refused, L) + 1}, St);
        Other ->
            put_link(Name, L#{last_error => fmt(Other)}, St)
    end.

fmt(T) -> unicode:characters_to_binary(io_lib:format("~0P", [T, 12])).

%% A field as JSON: numbers and booleans as they are, anything else (`undefined`) as null.
json(N) when is_integer(N); is_boolean(N) -> N;
json(undefined) -> null;
json(T) -> fmt(T).

%% -- requests from the Python half --------------------------------------------------------

request(#{<<"op">> := <<"hello">>}, St = #st{info = Info}) ->
    {ok, Info, St};
request(#{<<"op">> := <<"connect">>, <<"port">> := TcpPort} = Req, St0) ->
    St = close(St0),
    Config = #{address => "127.0.0.1", port => TcpPort, sasl => none,
               container_id => <<"creditflow-amqp10-client">>, notify => self(),
               max_frame_size => maps:get(<<"max_frame_size">>, Req, 1048576),
               outgoing_max_frame_size => maps:get(<<"max_frame_size">>, Req, 1048576)},
    case amqp10_client:open_connection(Config) of
        {ok, Conn} -> link(Conn), {ok, #{}, St#st{conn = Conn, sock_port = undefined}};
        Err -> throw({error, io_lib:format("open_connection: ~p", [Err])})
    end;
request(#{<<"op">> := <<"begin">>, <<"session">> := Name}, St = #st{conn = Conn, sessions = S, tracer = T}) ->
    maps:is_key(Name, S) andalso throw({error, "session exists"}),
    Flags = ['receive', call, {tracer, T}],
    erlang:trace(new_processes, true, Flags),
    Res = amqp10_client:begin_session(Conn),
    erlang:trace(new_processes, false, Flags),
    case Res of
        {ok, Pid} ->
            link(Pid),
            {ok, #{}, St#st{sessions = S#{Name => #{pid => Pid, ordinal => maps:size(S)}}}};
        Err -> throw({error, io_lib:format("begin_session: ~p", [Err])})
    end;
request(#{<<"op">> := <<"attach">>, <<"session">> := SName, <<"link">> := Name,
          <<"role">> := Role, <<"message_size">> := Size}, St = #st{sessions = S, links = Links}) ->
    #{pid := Pid} = maps:get(SName, S, #{pid => undefined}),
    Pid =:= undefined andalso throw({error, "no such session"}),
    maps:is_key(Name, Links) andalso throw({error, "link exists"}),
    Res = case Role of
              <<"sender">> -> amqp10_client:attach_sender_link(Pid, Name, Name, unsettled);
              <<"receiver">> -> amqp10_client:attach_receiver_link(Pid, Name, Name, unsettled)
          end,
    case Res of
        {ok, Ref} ->
            L = #{ref => Ref, role => Role, queued => 0, tags => [], held => [], size => Size,
                  session => SName, credited => 0, exhausted => 0, refused => 0,
                  received => 0, granted => 0, received_at_grant => 0},
            {ok, #{}, St#st{links = Links#{Name => L}}};
        Err -> throw({error, io_lib:format("attach: ~p", [Err])})
    end;
request(#{<<"op">> := <<"transfer">>, <<"link">> := Name}, St) ->
    L = #{queued := Q} = sender(Name, St),
    %% the application sends at once unless it already waits for `credited`
    case Q of
        0 -> {ok, #{}, send_held(Name, L#{queued => 1}, St)};
        _ -> {ok, #{}, put_link(Name, L#{queued => Q + 1}, St)}
    end;
%% The receiving application's grant: `credit` absolute (a credit window's one call), or
%% `add` n more than it believes it has: what it granted last less what arrived since
%% (the client tells it nothing else), AD-AMQ-10-APP.
request(#{<<"op">> := <<"flow">>, <<"link">> := Name, <<"drain">> := Drain} = Req, St) ->
    L = #{ref := Ref, received := R, granted := G, received_at_grant := RG} = receiver(Name, St),
    Credit = case Req of
                 #{<<"add">> := Add} -> max(0, G - (R - RG)) + Add;
                 #{<<"credit">> := C} -> C
             end,
    RenewWhen = case maps:get(<<"renew_when">>, Req, null) of
                    null -> never;
                    N when is_integer(N) -> N
                end,
    ok = amqp10_client:flow_link_credit(Ref, Credit, RenewWhen, Drain),
    {ok, #{}, put_link(Name, L#{granted => Credit, received_at_grant => R}, St)};
request(#{<<"op">> := <<"settle">>, <<"link">> := Name, <<"count">> := Count,
          <<"keep">> := Keep}, St) ->
    L = #{ref := Ref, held := Held} = receiver(Name, St),
    (Count < 1 orelse Keep < 0 orelse Keep + Count > length(Held))
        andalso throw({error, io_lib:format("link holds ~b unsettled deliveries: cannot keep ~b "
                                            "and settle ~b", [length(Held), Keep, Count])}),
    {Before, Rest} = lists:split(Keep, Held),
    {Now, After} = lists:split(Count, Rest),
    [ok = amqp10_client:accept_msg(Ref, M) || M <- Now],
    {ok, #{}, put_link(Name, L#{held => Before ++ After}, St)};
request(#{<<"op">> := <<"detach">>, <<"link">> := Name}, St = #st{links = Links}) ->
    #{ref := Ref} = maps:get(Name, Links, #{ref => undefined}),
    Ref =:= undefined andalso throw({error, "no such link"}),
    ok = amqp10_client:detach_link(Ref),
    {ok, #{}, St#st{links = maps:remove(Name, Links)}};
request(#{<<"op">> := <<"end">>, <<"session">> := Name}, St = #st{sessions = S}) ->
    #{pid := Pid} = maps:get(Name, S, #{pid => undefined}),
    Pid =:= undefined andalso throw({error, "no such session"}),
    ok = amqp10_client:end_session(Pid),
    {ok, #{}, St};
%% AD-AMQ-10-QUIESCE: the client is at rest once its socket took every byte the peer
%% wrote and no process of the VM has work queued; the answer says what it wrote.
request(#{<<"op">> := <<"idle">>, <<"received">> := Expected, <<"local_port">> := LPort}, St0) ->
    St = settle_events(St0),
    Sock = socket(LPort),
    wait_received(Sock, Expected, 2000),
    St1 = quiet(St, 50),
    {ok, Sent} = case Sock of
                     undefined -> {ok, 0};
                     _ -> case inet:getstat(Sock, [send_oct]) of
                              {ok, [{send_oct, N}]} -> {ok, N};
                              _ -> {ok, 0}
                          end
                 end,
    Frames = frame_records(take_frames(St1), St1),
    {ok, #{<<"sent">> => Sent, <<"frames">> => Frames, <<"state">> => state(St1)}, St1};
request(#{<<"op">> := <<"state">>}, St) ->
    {ok, #{<<"state">> => state(St)}, St};
request(#{<<"op">> := <<"close">>}, St) ->
    {ok, #{}, close(St)};
request(#{<<"op">> := Op}, _St) ->
    throw({error, io_lib:format("unknown op ~ts", [Op])}).

sender(Name, St) -> link_of(Name, <<"sender">>, St).
receiver(Name, St) -> link_of(Name, <<"receiver">>, St).

link_of(Name, Role, #st{links = Links}) ->
    case maps:get(Name, Links, undefined) of
        L = #{role := Role} -> L;
        _ -> throw({error, io_lib:format("no attached ~ts link ~ts", [Role, Name])})
    end.

close(St = #st{conn = undefined}) -> St;
close(St = #st{conn = Conn, sessions = S}) ->
    [unlink(P) || #{pid := P} <- maps:values(S)],
    unlink(Conn),
    catch amqp10_client:close_connection(Conn),
    _ = take_frames(St),
    flush_events(),
    St#st{conn = undefined, sessions = #{}, links = #{}, crashed = #{}}.

flush_events() ->
    receive
        {amqp10_event, _} -> flush_events();
        {amqp10_msg, _, _} -> flush_events();
        {amqp10_disposition, _} -> flush_events();
        {'EXIT', _, _} -> flush_events()
    after 0 -> ok
    end.

%% Handle every client event already in the mailbox.
settle_events(St) ->
    receive
        {amqp10_event, _} = E -> settle_events(event(E, St));
        {amqp10_msg, _, _} = E -> settle_events(event(E, St));
        {amqp10_disposition, _} = E -> settle_events(event(E, St));
        {'EXIT', _, _} = E -> settle_events(event(E, St))
    after 0 -> St
    end.

socket(LPort) ->
    Tcp = [P || P <- erlang:ports(), erlang:port_info(P, name) =:= {name, "tcp_inet"}],
    case [P || P <- Tcp, element(1, inet:sockname(P)) =:= ok,
               element(2, element(2, inet:sockname(P))) =:= LPort] of
        [S | _] -> S;
        [] -> undefined
    end.

wait_received(undefined, _, _) -> ok;
wait_received(_Sock, _Expected, Left) when Left =< 0 -> ok;
wait_received(Sock, Expected, Left) ->
    case inet:getstat(Sock, [recv_oct]) of
        {ok, [{recv_oct, N}]} when N >= Expected -> ok;
        {ok, _} -> timer:sleep(1), wait_received(Sock, Expected, Left - 1);
        _ -> ok
    end.

%% Every process idle (nothing queued, waiting) twice in a row, our own events handled.
quiet(St, 0) -> St;
quiet(St0, Tries) ->
    St = settle_events(St0),
    case busy() of
        false ->
            erlang:yield(),
            St1 = settle_events(St),
            case busy() of
                false -> St1;
                true -> quiet(St1, Tries - 1)
            end;
        true -> timer:sleep(1), quiet(St, Tries - 1)
    end.

busy() ->
    Me = self(),
    lists:any(fun(P) when P =:= Me -> false;
                 (P) ->
                      case erlang:process_info(P, [message_queue_len, status]) of
                          [{message_queue_len, 0}, {status, waiting}] -> false;
                          undefined -> false;
                          _ -> true
                      end
              end, processes()) orelse element(2, erlang:process_info(self(), message_queue_len)) > 0.

%% AD-AMQ-10-STATE: the client's own view (read from the session process) and the
%% application's counts.
state(St = #st{links = Links, sessions = S, crashed = Crashed}) ->
    Sessions = maps:map(fun(_, #{pid := Pid}) -> session_state(Pid, St) end, S),
    LinkStates = maps:map(
                   fun(_Name, L = #{ref := Ref, session := SName}) ->
                           #{pid := Pid} = maps:get(SName, S),
                           Own = link_state(Pid, Ref, St),
                           App = case L of
                                     #{role := <<"sender">>} ->
                                         #{<<"queued">> => maps:get(queued, L),
                                           <<"unsettled">> => length(maps:get(tags, L)),
                                           <<"credited_events">> => maps:get(credited, L),
                                           <<"insufficient_credit">> => maps:get(refused, L)};
                                     _ ->
                                         #{<<"unsettled">> => length(maps:get(held, L)),
                                           <<"received">> => maps:get(received, L),
                                           <<"credit_exhausted_events">> => maps:get(exhausted, L)}
                                 end,
                           maps:merge(Own, App)
                   end, Links),
    #{<<"links">> => LinkStates, <<"sessions">> => Sessions,
      <<"crashed">> => [fmt(R) || R <- maps:values(Crashed)]}.

session_state(Pid, St) ->
    case catch sys:get_state(Pid, 1000) of
        {'EXIT', _} -> #{<<"alive">> => false};
        {_Name, State} when is_tuple(State) ->
            maps:from_list([{atom_to_binary(F), json(get(state, F, State, St))}
                            || F <- [next_incoming_id, incoming_window, next_outgoing_id,
                                     remote_incoming_window]]
                           ++ [{<<"alive">>, true}]);
        _ -> #{<<"alive">> => false}
    end.

link_state(Pid, Ref, St) ->
    Handle = amqp10_client:link_handle(Ref),
    case catch sys:get_state(Pid, 1000) of
        {'EXIT', _} -> #{<<"attached">> => false};
        {_Name, State} when is_tuple(State) ->
            case maps:get(Handle, get(state, links, State, St), undefined) of
                undefined -> #{<<"attached">> => false};
                Link ->
                    #{<<"credit">> => json(get(link, link_credit, Link, St)),
                      <<"delivery_count">> => json(get(link, delivery_count, Link, St)),
                      <<"link_credit_unsettled">> => json(get(link, link_credit_unsettled, Link, St)),
                      <<"drain">> => get(link, drain, Link, St) =:= true,
                      <<"available">> => json(get(link, available, Link, St)),
                      <<"auto_flow">> => fmt(get(link, auto_flow, Link, St))}
            end;
        _ -> #{<<"attached">> => false}
    end.
