#!/usr/bin/env escript
%%! -noinput
%% creditflow adapter for the REAL RabbitMQ `credit_flow` module (spec/adapter-protocol.md).
%%
%% Speaks the creditflow adapter protocol (AD-TRANSPORT): one JSON request per line on
%% stdin, exactly one JSON response per request on stdout, in request order. Every named
%% process is its own Erlang process that runs each operation INSIDE itself with the
%% installed `credit_flow` module (AD-RABBITMQ); nothing of RabbitMQ is copied here, the
%% module is loaded from the ebin directory given with `--ebin DIR`.
%%
%% Usage:
%%   escript credit_flow_adapter.escript --ebin /usr/lib/rabbitmq/lib/rabbitmq_server-3.10.8/plugins/rabbit_common-3.10.8/ebin
%%   erl -noshell -noinput -pa <dir with the compiled module> -run credit_flow_adapter main DIR
%%
%% How grants are intercepted (AD-RABBITMQ): `credit_flow` sends `{bump_credit, {Self, N}}`
%% with `To ! Msg`. The coordinator traces every actor's sends with a match spec that
%% passes only `{bump_credit, _}` and the actor's own `{cf_done, _}` report, which the
%% actor sends (to a sink process) after the operation. Trace messages of one traced
%% process reach the tracer in the order they were generated (signal order between one
%% sender and one receiver), so when `cf_done` arrives every grant of the operation has
%% arrived before it, in send order: no `erlang:trace_delivered/1` round trip is needed.
%% Grants that land in an actor's mailbox are dropped: the driver delivers them (or not)
%% with explicit `bump` operations.
%%
%% Input is read by a reader process that owns the stdin/stdout port and hands the
%% coordinator every complete line it holds at once, so the coordinator never does a
%% selective receive over piped input; the responses to one batch go out in one write.
-module(credit_flow_adapter).
-mode(compile).
-export([main/1]).
%% The JSON codec, shared with rabbit_fifo_adapter.erl (one JSON Lines codec per VM).
-export([decode/1, enc/1]).

-define(DEFAULT_SPEC, {400, 200}).   % CF-DEFAULTS: RabbitMQ 3.10.8's default credit spec
-define(OP_TIMEOUT, 10000).

-record(st, {port, reader, sink, spec = ?DEFAULT_SPEC, pids = #{}, names = #{}, info}).

%% ---------------------------------------------------------------------------------------
%% start-up

main(Args) ->
    case catch start(Args) of
        ok -> halt(0);
        {fatal, Message} ->
            io:format(standard_error, "credit_flow_adapter: ~ts~n", [Message]),
            halt(3);
        Other ->
            io:format(standard_error, "credit_flow_adapter: crashed: ~p~n", [Other]),
            halt(3)
    end.

start(Args) ->
    Ebin = ebin_dir(Args),
    Info = load_credit_flow(Ebin),
    Self = self(),
    %% The reader opens (and so owns) the port itself: data that arrived while the
    %% port still belonged to another process would sit in that process's mailbox.
    Reader = spawn_link(fun() ->
                            Port = open_port({fd, 0, 1}, [binary, stream, eof]),
                            Self ! {port, Port},
                            reader(Port, Self, [], <<>>, false, none)
                        end),
    Port = receive {port, P} -> P end,
    Sink = spawn_link(fun sink/0),
    %% Pass only grants and the actors' completion reports to the tracer.
    erlang:trace_pattern(send, [{['_', {bump_credit, '_'}], [], []},
                                {['_', {cf_done, '_'}], [], []}], []),
    loop(#st{port = Port, reader = Reader, sink = Sink, info = Info}).

ebin_dir(["--ebin", Dir | _]) -> Dir;
ebin_dir([[C | _] = Dir]) when C =/= $- -> Dir;   % erl -run passes plain words only
ebin_dir([_ | Rest]) -> ebin_dir(Rest);
ebin_dir([]) ->
    case os:getenv("CREDITFLOW_RABBITMQ_EBIN") of
        false -> throw({fatal, "no --ebin DIR given (the rabbit_common ebin holding credit_flow.beam)"});
        Dir -> Dir
    end.

load_credit_flow(Ebin) ->
    Beam = filename:join(Ebin, "credit_flow.beam"),
    case filelib:is_regular(Beam) of
        false -> throw({fatal, io_lib:format("~ts not found", [Beam])});
        true -> ok
    end,
    true = code:add_patha(Ebin),
    case code:ensure_loaded(credit_flow) of
        {module, credit_flow} -> ok;
        {error, Why} -> throw({fatal, io_lib:format("cannot load ~ts: ~p", [Beam, Why])})
    end,
    Vsn = case file:consult(filename:join(Ebin, "rabbit_common.app")) of
              {ok, [{application, rabbit_common, Props}]} -> proplists:get_value(vsn, Props, "?");
              _ -> "?"
          end,
    Path = code:which(credit_flow),
    %% The beam's own identity (AD-RABBITMQ): its module checksum and vsn attribute, so
    %% that a copied ebin with another credit_flow.beam is not named by the .app alone.
    Md5 = case beam_lib:md5(Path) of
              {ok, {credit_flow, Digest}} -> md5_hex(Digest);
              _ -> <<"?">>
          end,
    BeamVsn = case beam_lib:version(Path) of
                  {ok, {credit_flow, Versions}} -> iolist_to_binary(io_lib:format("~p", [Versions]));
                  _ -> <<"?">>
              end,
    #{version => unicode:characters_to_binary(Vsn),
      module => unicode:characters_to_binary(Path),
      md5 => Md5,
      vsn => BeamVsn,
      ops => supported_ops(),
      otp => unicode:characters_to_binary(erlang:system_info(otp_release))}.

md5_hex(Bin) -> iolist_to_binary([io_lib:format("~2.16.0b", [B]) || <<B>> <= Bin]).

%% AD-CAPABILITIES: the ops whose credit_flow function the loaded module exports
%% (modules before RabbitMQ 3.8.0 have no block/1 and unblock/1).
supported_ops() ->
    Needs = [{<<"send">>, send, 2}, {<<"ack">>, ack, 2}, {<<"bump">>, handle_bump_msg, 1},
             {<<"block">>, block, 1}, {<<"unblock">>, unblock, 1},
             {<<"peer_down">>, peer_down, 1}],
    [Op || {Op, F, A} <- Needs, erlang:function_exported(credit_flow, F, A)] ++ [<<"state">>].

sink() ->
    receive _ -> sink() end.

%% ---------------------------------------------------------------------------------------
%% reader: owns the port, splits what it reads into lines, hands them out on request

reader(Port, Owner, Queue, Partial, Eof, Waiting) ->
    receive
        {Port, {data, Chunk}} ->
            {Queue1, Partial1} = split_lines(Chunk, Queue, Partial),
            reader_serve(Port, Owner, Queue1, Partial1, Eof, Waiting);
        {Port, eof} ->
            Queue1 = case Partial of
                         <<>> -> Queue;
                         _ -> [Partial | Queue]
                     end,
            reader_serve(Port, Owner, Queue1, <<>>, true, Waiting);
        {next, From} ->
            reader_serve(Port, Owner, Queue, Partial, Eof, From);
        _ ->
            reader(Port, Owner, Queue, Partial, Eof, Waiting)
    end.

%% Complete lines go onto the queue (newest first); the unfinished tail stays partial.
split_lines(Chunk, Queue, Partial) ->
    Data = case Partial of
               <<>> -> Chunk;
               _ -> <<Partial/binary, Chunk/binary>>
           end,
    Parts = binary:split(Data, <<"\n">>, [global]),
    [Tail | Lines] = lists:reverse(Parts),
    {Lines ++ Queue, Tail}.

reader_serve(Port, Owner, [], Partial, true, Waiting) when Waiting =/= none ->
    Waiting ! eof,
    reader(Port, Owner, [], Partial, true, none);
reader_serve(Port, Owner, [_ | _] = Queue, Partial, Eof, Waiting) when Waiting =/= none ->
    {Queue1, Partial1} = drain(Port, Queue, Partial),
    Waiting ! {lines, lists:reverse(Queue1)},
    reader(Port, Owner, [], Partial1, Eof, none);
reader_serve(Port, Owner, Queue, Partial, Eof, Waiting) ->
    reader(Port, Owner, Queue, Partial, Eof, Waiting).

%% Take every chunk that has already arrived, so that one batch answers many requests.
drain(Port, Queue, Partial) ->
    receive
        {Port, {data, Chunk}} ->
            {Queue1, Partial1} = split_lines(Chunk, Queue, Partial),
            drain(Port, Queue1, Partial1)
    after 0 ->
        {Queue, Partial}
    end.

%% ---------------------------------------------------------------------------------------
%% coordinator

loop(St = #st{reader = Reader}) ->
    Reader ! {next, self()},
    receive
        eof -> ok;
        {lines, Lines} -> loop(handle_lines(Lines, St, [], 0))
    end.

%% Answer the lines in order, writing the responses every ?WRITE_EVERY lines so that the
%% driver can compare early answers while later ones are computed.
-define(WRITE_EVERY, 128).
handle_lines([], St = #st{port = Port}, Acc, _) ->
    port_command(Port, lists:reverse(Acc)),
    St;
handle_lines(Lines, St = #st{port = Port}, Acc, ?WRITE_EVERY) ->
    port_command(Port, lists:reverse(Acc)),
    handle_lines(Lines, St, [], 0);
handle_lines([Line | Rest], St, Acc, N) ->
    case is_blank(Line) of
        true -> handle_lines(Rest, St, Acc, N);
        false ->
            {Response, St1} = handle_line(Line, St),
            handle_lines(Rest, St1, [Response | Acc], N + 1)
    end.

is_blank(<<>>) -> true;
is_blank(<<C, R/binary>>) when C =:= $\s; C =:= $\t; C =:= $\r -> is_blank(R);
is_blank(_) -> false.

handle_line(Line, St) ->
    case catch decode(Line) of
        Req when is_map(Req) ->
            Id = maps:find(<<"id">>, Req),
            case catch request(Req, St) of
                {ok, Body, St1} -> {respond(Id, [<<"\"ok\":true">> | Body]), St1};
                {error, Why} -> {error_response(Id, Why), St};
                Crash -> {error_response(Id, io_lib:format("internal error: ~p", [Crash])), St}
            end;
        {json_error, Why} -> {error_response(error, ["invalid JSON: ", Why]), St};
        _ -> {error_response(error, "a request must be a JSON object"), St}
    end.

respond({ok, Id}, Body) -> [<<"{\"id\":">>, enc(Id), $, , Body, <<"}\n">>];
respond(error, Body) -> [${, Body, <<"}\n">>].

error_response(Id, Why) ->
    respond(Id, [<<"\"ok\":false,\"error\":">>, enc_string(unicode:characters_to_binary(Why))]).

%% AD-HELLO, AD-RESET and the AD-OPS of family credit_flow.
request(#{<<"op">> := <<"hello">>}, St = #st{info = Info}) ->
    %% The .app's version names the folder, the md5 the beam actually loaded.
    Name = <<"rabbitmq credit_flow ", (maps:get(version, Info))/binary, " (beam md5 ",
             (binary:part(maps:get(md5, Info), 0, min(8, byte_size(maps:get(md5, Info)))))/binary,
             ")">>,
    {ok, [<<",\"name\":">>, enc_string(Name),
          <<",\"families\":[\"credit_flow\"],\"ops\":[">>,
          lists:join($,, [enc_string(Op) || Op <- maps:get(ops, Info)]),
          <<"],\"implementation\":{\"module\":">>,
          enc_string(maps:get(module, Info)), <<",\"md5\":">>, enc_string(maps:get(md5, Info)),
          <<",\"vsn\":">>, enc_string(maps:get(vsn, Info)),
          <<",\"app_version\":">>, enc_string(maps:get(version, Info)),
          <<",\"otp\":">>, enc_string(maps:get(otp, Info)),
          <<"}">>], St};
request(Req = #{<<"op">> := <<"reset">>}, St = #st{pids = Pids}) ->
    Spec = case maps:find(<<"spec">>, Req) of
               {ok, S} -> spec(S);
               error -> ?DEFAULT_SPEC
           end,
    _ = [exit(P, kill) || P <- maps:values(Pids)],
    {ok, [], St#st{spec = Spec, pids = #{}, names = #{}}};
request(Req = #{<<"op">> := Op}, St) when is_binary(Op) ->
    Kind = op_kind(Op),
    Proc = name(Req, <<"proc">>),
    {P, St1} = actor(Proc, St),
    {Call, St2} = call(Kind, Req, St1),
    P ! {op, Call, St2#st.sink},
    {Emitted, Dict} = collect(P, []),
    case Dict of
        {crashed, {not_exported, F, A}} ->
            throw({error, io_lib:format("this credit_flow module does not export ~p/~p", [F, A])});
        {crashed, Why} -> throw({error, io_lib:format("credit_flow crashed: ~p", [Why])});
        _ -> ok
    end,
    {ok, [<<",\"state\":">>, state_json(Dict, St2#st.names),
          <<",\"emitted\":">>, grants_json([{json_of(To, St2#st.names), N} || {To, N} <- Emitted])],
     St2};
request(#{<<"op">> := _}, _) -> throw({error, "\"op\" must be a string"});
request(_, _) -> throw({error, "a request needs an \"op\""}).

op_kind(<<"send">>) -> send;
op_kind(<<"ack">>) -> ack;
op_kind(<<"bump">>) -> bump;
op_kind(<<"block">>) -> block;
op_kind(<<"unblock">>) -> unblock;
op_kind(<<"peer_down">>) -> peer_down;
op_kind(<<"state">>) -> state;
op_kind(Op) -> throw({error, ["unknown op ", enc_string(Op)]}).

call(state, _Req, St) -> {state, St};
call(Kind, Req, St) ->
    {Peer, St1} = actor(name(Req, <<"peer">>), St),
    case Kind of
        send -> {{send, Peer, op_spec(Req, St1)}, St1};
        ack -> {{ack, Peer, op_spec(Req, St1)}, St1};
        bump ->
            case maps:find(<<"amount">>, Req) of
                {ok, N} when is_integer(N) -> {{bump, Peer, N}, St1};
                _ -> throw({error, "\"amount\" must be an integer"})
            end;
        _ -> {{Kind, Peer}, St1}
    end.

op_spec(Req, #st{spec = Default}) ->
    case maps:find(<<"spec">>, Req) of
        {ok, S} -> spec(S);
        error -> Default
    end.

spec([I, M]) when is_integer(I), is_integer(M) -> {I, M};
spec(_) -> throw({error, "\"spec\" must be [InitialCredit, MoreCreditAfter] (two integers)"}).

name(Req, Key) ->
    case maps:find(Key, Req) of
        {ok, N} when is_binary(N), N =/= <<>> -> N;
        _ -> throw({error, ["\"", Key, "\" must be a non-empty string"]})
    end.

%% The Erlang process of a named process, spawned and traced on first mention.
actor(Name, St = #st{pids = Pids, names = Names}) ->
    case Pids of
        #{Name := P} -> {P, St};
        _ ->
            P = spawn(fun actor_loop/0),
            1 = erlang:trace(P, true, [send]),
            {P, St#st{pids = Pids#{Name => P}, names = Names#{P => {Name, enc_string(Name)}}}}
    end.

%% A process's name as JSON text (encoded once, when the process is spawned).
json_of(Pid, Names) -> element(2, maps:get(Pid, Names)).

%% An actor runs each operation inside itself, then reports its process dictionary.
actor_loop() ->
    receive
        {op, Call, Sink} ->
            Report = case catch run(Call) of
                         %% AD-CAPABILITIES: an op whose function this module does not
                         %% export (hello leaves it out), said in one line.
                         {'EXIT', {undef, [{credit_flow, F, A, _} | _]}} ->
                             {crashed, {not_exported, F, length(A)}};
                         {'EXIT', Why} -> {crashed, Why};
                         _ -> get()
                     end,
            Sink ! {cf_done, Report},
            actor_loop();
        _Grant ->
            actor_loop()
    end.

run({send, Peer, Spec}) -> credit_flow:send(Peer, Spec);
run({ack, Peer, Spec}) -> credit_flow:ack(Peer, Spec);
run({bump, Peer, N}) -> credit_flow:handle_bump_msg({Peer, N});
run({block, Peer}) -> credit_flow:block(Peer);
run({unblock, Peer}) -> credit_flow:unblock(Peer);
run({peer_down, Peer}) -> credit_flow:peer_down(Peer);
run(state) -> ok.

%% Every grant the actor sent during the operation, in send order, then its report.
collect(P, Acc) ->
    receive
        {trace, P, send, {bump_credit, {P, N}}, To} -> collect(P, [{To, N} | Acc]);
        {trace, P, send_to_non_existing_process, {bump_credit, {P, N}}, To} ->
            collect(P, [{To, N} | Acc]);
        {trace, P, send, {cf_done, Report}, _} -> {lists:reverse(Acc), Report}
    after ?OP_TIMEOUT ->
        throw({error, "credit_flow did not finish the operation within 10 s"})
    end.

%% AD-RESPONSE: the process dictionary as the protocol's state object (credit_blocked_at
%% is time-dependent and left out).
state_json(Dict, Names) ->
    {From, To, Blocked, Deferred} = split(Dict, [], [], [], []),
    [<<"{\"credit_from\":">>, int_map(From, Names),
     <<",\"credit_to\":">>, int_map(To, Names),
     <<",\"blocked\":[">>, join([json_of(P, Names) || P <- Blocked]),
     <<"],\"deferred\":">>,
     grants_json([{json_of(P, Names), N} || {P, {bump_credit, {_, N}}} <- Deferred]),
     <<"}">>].

split([], F, T, B, D) -> {F, T, B, D};
split([{{credit_from, P}, V} | R], F, T, B, D) -> split(R, [{P, V} | F], T, B, D);
split([{{credit_to, P}, V} | R], F, T, B, D) -> split(R, F, [{P, V} | T], B, D);
split([{credit_blocked, L} | R], F, T, _, D) -> split(R, F, T, L, D);
split([{credit_deferred, L} | R], F, T, B, _) -> split(R, F, T, B, L);
split([_ | R], F, T, B, D) -> split(R, F, T, B, D).

int_map(Pairs, Names) ->
    Sorted = lists:sort([{maps:get(P, Names), V} || {P, V} <- Pairs]),
    [${, join([[Json, $:, integer_to_binary(V)] || {{_, Json}, V} <- Sorted]), $}].

%% Grants as [{"to":…,"amount":…},…]; ``To`` is already JSON text.
grants_json(Grants) ->
    [$[, join([[<<"{\"to\":">>, To, <<",\"amount\":">>, integer_to_binary(N), $}]
               || {To, N} <- Grants]), $]].

join([]) -> [];
join([H | T]) -> [H | [[$, , X] || X <- T]].

%% ---------------------------------------------------------------------------------------
%% a small JSON decoder (OTP 25 has no json module): objects -> maps with binary keys,
%% arrays -> lists, strings -> binaries, numbers, true/false/null -> atoms

decode(Bin) ->
    {Value, Rest} = value(ws(Bin)),
    case ws(Rest) of
        <<>> -> Value;
        _ -> throw({json_error, "trailing characters after the value"})
    end.

ws(<<C, R/binary>>) when C =:= $\s; C =:= $\t; C =:= $\n; C =:= $\r -> ws(R);
ws(B) -> B.

value(<<${, R/binary>>) -> object(ws(R), #{});
value(<<$[, R/binary>>) -> array(ws(R), []);
value(<<$", R/binary>>) -> string(R, []);
value(<<"true", R/binary>>) -> {true, R};
value(<<"false", R/binary>>) -> {false, R};
value(<<"null", R/binary>>) -> {null, R};
value(<<C, _/binary>> = B) when C =:= $-; C >= $0, C =< $9 -> number(B);
value(<<>>) -> throw({json_error, "unexpected end of input"});
value(_) -> throw({json_error, "unexpected character"}).

object(<<$}, R/binary>>, Acc) when map_size(Acc) =:= 0 -> {Acc, R};
object(<<$", R/binary>>, Acc) ->
    {Key, R1} = string(R, []),
    case ws(R1) of
        <<$:, R2/binary>> ->
            {Value, R3} = value(ws(R2)),
            case ws(R3) of
                <<$,, R4/binary>> -> object(ws(R4), Acc#{Key => Value});
                <<$}, R4/binary>> -> {Acc#{Key => Value}, R4};
                _ -> throw({json_error, "expected ',' or '}' in an object"})
            end;
        _ -> throw({json_error, "expected ':' after an object key"})
    end;
object(_, _) -> throw({json_error, "expected a string key in an object"}).

array(<<$], R/binary>>, []) -> {[], R};
array(B, Acc) ->
    {Value, R} = value(B),
    case ws(R) of
        <<$,, R1/binary>> -> array(ws(R1), [Value | Acc]);
        <<$], R1/binary>> -> {lists:reverse([Value | Acc]), R1};
        _ -> throw({json_error, "expected ',' or ']' in an array"})
    end.

string(B, Acc) -> string(B, 0, B, Acc).

%% Scan for the closing quote or a backslash; the plain run is taken as one sub-binary.
string(<<$", R/binary>>, N, B, Acc) ->
    <<Chunk:N/binary, _/binary>> = B,
    case Acc of
        [] -> {Chunk, R};
        _ -> {iolist_to_binary(lists:reverse([Chunk | Acc])), R}
    end;
string(<<$\\, R/binary>>, N, B, Acc) ->
    <<Chunk:N/binary, _/binary>> = B,
    escape(R, [Chunk | Acc]);
string(<<C, R/binary>>, N, B, Acc) when C >= 16#20 -> string(R, N + 1, B, Acc);
string(<<_, _/binary>>, _, _, _) -> throw({json_error, "control character in a string"});
string(<<>>, _, _, _) -> throw({json_error, "unterminated string"}).

escape(<<$", R/binary>>, Acc) -> string(R, [$" | Acc]);
escape(<<$\\, R/binary>>, Acc) -> string(R, [$\\ | Acc]);
escape(<<$/, R/binary>>, Acc) -> string(R, [$/ | Acc]);
escape(<<$b, R/binary>>, Acc) -> string(R, [$\b | Acc]);
escape(<<$f, R/binary>>, Acc) -> string(R, [$\f | Acc]);
escape(<<$n, R/binary>>, Acc) -> string(R, [$\n | Acc]);
escape(<<$r, R/binary>>, Acc) -> string(R, [$\r | Acc]);
escape(<<$t, R/binary>>, Acc) -> string(R, [$\t | Acc]);
escape(<<$u, H:4/binary, $\\, $u, L:4/binary, R/binary>>, Acc) ->
    Hi = hex(H), Lo = hex(L),
    if Hi >= 16#D800, Hi =< 16#DBFF, Lo >= 16#DC00, Lo =< 16#DFFF ->
           C = 16#10000 + ((Hi - 16#D800) bsl 10) + (Lo - 16#DC00),
           string(R, [<<C/utf8>> | Acc]);
       true ->
           string(<<$\\, $u, L/binary, R/binary>>, [codepoint(Hi) | Acc])
    end;
escape(<<$u, H:4/binary, R/binary>>, Acc) -> string(R, [codepoint(hex(H)) | Acc]);
escape(_, _) -> throw({json_error, "invalid escape in a string"}).

codepoint(C) when C >= 16#D800, C =< 16#DFFF -> throw({json_error, "lone surrogate in a string"});
codepoint(C) -> <<C/utf8>>.

hex(H) ->
    case catch binary_to_integer(H, 16) of
        N when is_integer(N) -> N;
        _ -> throw({json_error, "invalid \\u escape"})
    end.

number(<<$-, R/binary>>) ->
    case digits(R, 0, 0) of
        {N, 0, _} -> _ = N, throw({json_error, "invalid number"});
        {N, _, R1} -> fraction(R1, -N, <<$-, R/binary>>)
    end;
number(B) ->
    {N, _, R} = digits(B, 0, 0),
    fraction(R, N, B).

digits(<<C, R/binary>>, N, K) when C >= $0, C =< $9 -> digits(R, N * 10 + C - $0, K + 1);
digits(R, N, K) -> {N, K, R}.

%% An integer unless a fraction or an exponent follows; then re-read the text as a float.
fraction(<<C, _/binary>>, _, Start) when C =:= $.; C =:= $e; C =:= $E ->
    {Text, R} = number_chars(Start, []),
    case catch binary_to_float(normalise_float(Text)) of
        F when is_float(F) -> {F, R};
        _ -> throw({json_error, "invalid number"})
    end;
fraction(R, N, _) -> {N, R}.

number_chars(<<C, R/binary>>, Acc)
  when C >= $0, C =< $9; C =:= $-; C =:= $+; C =:= $.; C =:= $e; C =:= $E ->
    number_chars(R, [C | Acc]);
number_chars(R, Acc) -> {list_to_binary(lists:reverse(Acc)), R}.

%% binary_to_float/1 wants digits on both sides of a '.' and a '.' before an exponent.
normalise_float(Text) ->
    case binary:match(Text, <<".">>) of
        nomatch ->
            case re:split(Text, <<"[eE]">>, [{return, binary}]) of
                [Mant, Exp] -> <<Mant/binary, ".0e", Exp/binary>>;
                _ -> Text
            end;
        _ -> Text
    end.

%% ---------------------------------------------------------------------------------------
%% a small JSON encoder

enc(null) -> <<"null">>;
enc(true) -> <<"true">>;
enc(false) -> <<"false">>;
enc(N) when is_integer(N) -> integer_to_binary(N);
enc(F) when is_float(F) -> float_to_binary(F, [short]);
enc(B) when is_binary(B) -> enc_string(B);
enc(L) when is_list(L) -> [$[, join([enc(X) || X <- L]), $]];
enc(M) when is_map(M) ->
    [${, join([[enc_string(K), $:, enc(V)] || {K, V} <- lists:sort(maps:to_list(M))]), $}].

enc_string(B) ->
    case needs_escape(B) of
        false -> [$", B, $"];
        true -> [$", escape_chars(B, []), $"]
    end.

needs_escape(<<C, _/binary>>) when C < 16#20; C =:= $"; C =:= $\\ -> true;
needs_escape(<<_, R/binary>>) -> needs_escape(R);
needs_escape(<<>>) -> false.

escape_chars(<<>>, Acc) -> lists:reverse(Acc);
escape_chars(<<$", R/binary>>, Acc) -> escape_chars(R, [<<"\\\"">> | Acc]);
escape_chars(<<$\\, R/binary>>, Acc) -> escape_chars(R, [<<"\\\\">> | Acc]);
escape_chars(<<$\n, R/binary>>, Acc) -> escape_chars(R, [<<"\\n">> | Acc]);
escape_chars(<<$\r, R/binary>>, Acc) -> escape_chars(R, [<<"\\r">> | Acc]);
escape_chars(<<$\t, R/binary>>, Acc) -> escape_chars(R, [<<"\\t">> | Acc]);
escape_chars(<<$\b, R/binary>>, Acc) -> escape_chars(R, [<<"\\b">> | Acc]);
escape_chars(<<$\f, R/binary>>, Acc) -> escape_chars(R, [<<"\\f">> | Acc]);
escape_chars(<<C, R/binary>>, Acc) when C < 16#20 ->
    Hex = string:lowercase(integer_to_binary(C, 16)),
    Pad = binary:copy(<<"0">>, 4 - byte_size(Hex)),
    escape_chars(R, [<<"\\u", Pad/binary, Hex/binary>> | Acc]);
escape_chars(<<C, R/binary>>, Acc) -> escape_chars(R, [C | Acc]).
