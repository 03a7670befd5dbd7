%% creditflow adapter for RabbitMQ's quorum-queue state machine `rabbit_fifo`
%% (spec/adapter-protocol-amqp.md, AD-AMQ-FIFO).
%%
%% Speaks the JSON Lines adapter protocol (AD-AMQ-TRANSPORT): one request per line on
%% stdin, one answer per request on stdout. The JSON codec is credit_flow_adapter's
%% (decode/1, enc/1), compiled next to this module. The machine is the installed
%% `rabbit_fifo` (loaded from the rabbit ebin given as the first argument, with ra and
%% rabbit_common beside it), driven by its own `init/1` and `apply/3`; nothing of it is
%% copied here. Its state is read through the record definitions of the loaded beam's
%% debug_info (field names, not positions), so another release's layout is read right.
%%
%%   erl -noshell -pa <compiled dir> -run rabbit_fifo_adapter main RABBIT_EBIN
-module(rabbit_fifo_adapter).
-export([main/1]).

-record(st, {port, fifo, index = 1, log = #{}, pids = #{}, names = #{}, cfg = #{},
             records = #{}, info = #{}}).

main(Args) ->
    case catch start(Args) of
        ok -> halt(0);
        {fatal, Message} ->
            io:format(standard_error, "rabbit_fifo_adapter: ~ts~n", [Message]),
            halt(3);
        Other ->
            io:format(standard_error, "rabbit_fifo_adapter: crashed: ~p~n", [Other]),
            halt(3)
    end.

start([Ebin | _]) ->
    Info = load(Ebin),
    Records = cf_amqp_half:records(code:which(rabbit_fifo), "rabbit_fifo.beam"),
    Port = open_port({fd, 0, 1}, [binary, {line, 1 bsl 20}, eof]),
    loop(#st{port = Port, info = Info, records = Records});
start([]) ->
    throw({fatal, "no rabbit ebin folder given"}).

%% The rabbit ebin and, beside it in the plugins folder, ra-*, rabbit_common-* and the
%% other deps (as the broker's code path has them).
load(Ebin) ->
    case filelib:is_regular(filename:join(Ebin, "rabbit_fifo.beam")) of
        false -> throw({fatal, io_lib:format("~ts holds no rabbit_fifo.beam", [Ebin])});
        true -> ok
    end,
    Plugins = filename:dirname(filename:dirname(filename:absname(Ebin))),
    Deps = [D || D <- filelib:wildcard(filename:join([Plugins, "*", "ebin"])),
                 filename:absname(D) =/= filename:absname(Ebin)],
    ok = code:add_pathsa(Deps),
    true = code:add_patha(Ebin),
    [case code:ensure_loaded(M) of
         {module, M} -> ok;
         {error, Why} -> throw({fatal, io_lib:format("cannot load ~p: ~p", [M, Why])})
     end || M <- [rabbit_fifo, rabbit_fifo_dlx, rabbit_fifo_index, lqueue, priority_queue]],
    Vsn = case file:consult(filename:join(Ebin, "rabbit.app")) of
              {ok, [{application, rabbit, Props}]} -> proplists:get_value(vsn, Props, "?");
              _ -> "?"
          end,
    {ok, {rabbit_fifo, Md5}} = beam_lib:md5(code:which(rabbit_fifo)),
    #{version => unicode:characters_to_binary(Vsn),
      module => unicode:characters_to_binary(code:which(rabbit_fifo)),
      md5 => iolist_to_binary([io_lib:format("~2.16.0b", [B]) || <<B>> <= Md5]),
      machine_version => rabbit_fifo:version(),
      exports => rabbit_fifo:module_info(exports),
      otp => unicode:characters_to_binary(erlang:system_info(otp_release))}.

%% A record's field by name, from the beam's debug_info (cf_amqp_half,
%% AD-AMQ-FIFO-STATE).
get(Rec, Field, Tuple, #st{records = Records}) ->
    cf_amqp_half:get(Rec, Field, Tuple, Records, "rabbit_fifo").

%% ---------------------------------------------------------------------------------------

loop(St = #st{port = Port}) ->
    cf_amqp_half:serve(Port, St, fun handle_line/2, none).

handle_line(Line, St) ->
    case catch credit_flow_adapter:decode(Line) of
        Req when is_map(Req) ->
            Id = maps:get(<<"id">>, Req, null),
            case catch request(Req, St) of
                {ok, Body, St1} -> {answer(Id, Body#{<<"ok">> => true}), St1};
                {error, Why} -> {answer(Id, error_body(Why)), St};
                Crash -> {answer(Id, error_body(io_lib:format("internal error: ~P", [Crash, 30]))), St}
            end;
        _ -> {answer(null, error_body("invalid JSON request")), St}
    end.

error_body(Why) ->
    #{<<"ok">> => false, <<"error">> => unicode:characters_to_binary(Why)}.

answer(null, Body) -> [credit_flow_adapter:enc(Body), $\n];
answer(Id, Body) -> [credit_flow_adapter:enc(Body#{<<"id">> => Id}), $\n].

-define(OPS, [<<"reset">>, <<"enqueue">>, <<"register_enqueuer">>, <<"checkout">>,
              <<"cancel">>, <<"settle">>, <<"return">>, <<"discard">>, <<"credit">>,
              <<"update_config">>, <<"state">>]).

%% AD-AMQ-FIFO-SETTINGS: the queue arguments `reset` and `update_config` take.
-define(DEFAULT_CFG, #{<<"max_length">> => null, <<"max_bytes">> => null,
                       <<"overflow">> => <<"drop_head">>, <<"delivery_limit">> => null}).

%% AD-AMQ-FIFO-HELLO
request(#{<<"op">> := <<"hello">>}, St = #st{info = Info}) ->
    {ok, #{<<"name">> => <<"rabbit-fifo">>,
           <<"version">> => maps:get(version, Info),
           <<"families">> => [<<"amqp">>],
           <<"ops">> => ?OPS,
           <<"settings">> => ?DEFAULT_CFG,
           <<"policy">> => policy(Info),
           <<"implementation">> =>
               #{<<"module">> => maps:get(module, Info), <<"md5">> => maps:get(md5, Info),
                 <<"machine_version">> => maps:get(machine_version, Info),
                 <<"otp">> => maps:get(otp, Info)}}, St};
request(Req = #{<<"op">> := <<"reset">>}, St = #st{pids = Pids}) ->
    [exit(P, kill) || P <- maps:values(Pids)],
    Cfg = settings(maps:get(<<"settings">>, Req, #{}), ?DEFAULT_CFG),
    Fifo = rabbit_fifo:init((config(Cfg))#{name => cf_fifo,
                                           queue_resource => {resource, <<"/">>, queue, <<"cf">>}}),
    St1 = St#st{fifo = Fifo, index = 1, log = #{}, pids = #{}, names = #{}, cfg = Cfg},
    {ok, #{<<"effects">> => [], <<"reply">> => null, <<"frames">> => [],
           <<"state">> => state_json(St1), <<"settings">> => Cfg}, St1};
request(#{<<"op">> := _}, #st{fifo = undefined}) ->
    throw({error, "reset first"});
request(#{<<"op">> := <<"state">>}, St) ->
    {ok, #{<<"effects">> => [], <<"reply">> => null, <<"frames">> => [],
           <<"state">> => state_json(St)}, St};
request(Req = #{<<"op">> := Op}, St) when is_binary(Op) ->
    {Cmd, St1} = command(Op, Req, St),
    apply_cmd(Cmd, St1);
request(_, _) -> throw({error, "a request needs an \"op\""}).

%% The model's policy parameters this release follows (AD-AMQ-FIFO-POLICY).
policy(Info) ->
    Exports = maps:get(exports, Info),
    Known = maps:get(machine_version, Info) =:= 2,
    #{<<"consumer_modes">> => [<<"credited">>, <<"simple_prefetch">>],
      %% What the tests pin for machine version 2 (3.10.x); other machine versions
      %% are not verified here and say so.
      <<"credit">> => #{<<"formula">> =>
                            case Known of
                                %% max(0, dc_rcv + credit - dc), no serial arithmetic
                                true -> <<"x-unwrapped">>;
                                false -> <<"x-unverified">>
                            end},
      <<"go_on_limit_removed">> => case Known of true -> false; false -> <<"x-unverified">> end,
      <<"low_watermark">> => 0.8,
      <<"x-credit-reply">> => <<"apply reply">>,
      <<"x-exports-credit">> => lists:member({make_credit, 4}, Exports)}.

settings(Given, Base) when is_map(Given) ->
    maps:fold(fun(K, V, Acc) ->
                      case maps:is_key(K, ?DEFAULT_CFG) of
                          true -> Acc#{K => V};
                          false -> throw({error, ["unknown setting ", K]})
                      end
              end, Base, Given);
settings(_, _) -> throw({error, "\"settings\" must be an object"}).

config(Cfg) ->
    Opt = fun(K) -> case maps:get(K, Cfg) of
                        null -> undefined;
                        N when is_integer(N), N >= 0 -> N;
                        _ -> throw({error, [K, " must be a non-negative integer or null"]})
                    end end,
    Overflow = case maps:get(<<"overflow">>, Cfg) of
                   <<"reject_publish">> -> reject_publish;
                   <<"drop_head">> -> drop_head;
                   _ -> throw({error, "overflow must be reject_publish or drop_head"})
               end,
    #{name => cf_fifo, queue_resource => {resource, <<"/">>, queue, <<"cf">>},
      dead_letter_handler => undefined, max_length => Opt(<<"max_length">>),
      max_bytes => Opt(<<"max_bytes">>), overflow_strategy => Overflow,
      delivery_limit => Opt(<<"delivery_limit">>)}.

%% A process standing for a named enqueuer or consumer.
pid(Name, St = #st{pids = Pids, names = Names}) ->
    case Pids of
        #{Name := P} -> {P, St};
        _ ->
            P = spawn(fun() -> receive stop -> ok end end),
            {P, St#st{pids = Pids#{Name => P}, names = Names#{P => Name}}}
    end.

str(Req, Key) ->
    case maps:get(Key, Req, undefined) of
        B when is_binary(B), B =/= <<>> -> B;
        _ -> throw({error, ["\"", Key, "\" must be a non-empty string"]})
    end.

int(Req, Key) ->
    case maps:get(Key, Req, undefined) of
        N when is_integer(N), N >= 0 -> N;
        _ -> throw({error, ["\"", Key, "\" must be a non-negative integer"]})
    end.

consumer_id(Req, St) ->
    Name = str(Req, <<"consumer">>),
    {P, St1} = pid(Name, St),
    {{Name, P}, St1}.

%% AD-AMQ-FIFO-OPS: the command an op applies.
command(<<"enqueue">>, Req, St) ->
    Body = <<"m">>,
    case maps:get(<<"enqueuer">>, Req, null) of
        null -> {rabbit_fifo:make_enqueue(undefined, undefined, Body), St};
        _ ->
            {P, St1} = pid(str(Req, <<"enqueuer">>), St),
            Seq = case maps:get(<<"seq">>, Req, null) of
                      null -> next_seqno(P, St1);
                      _ -> int(Req, <<"seq">>)
                  end,
            {rabbit_fifo:make_enqueue(P, Seq, Body), St1}
    end;
command(<<"register_enqueuer">>, Req, St) ->
    {P, St1} = pid(str(Req, <<"enqueuer">>), St),
    {rabbit_fifo:make_register_enqueuer(P), St1};
command(<<"checkout">>, Req, St) ->
    {Cid, St1} = consumer_id(Req, St),
    Mode = case maps:get(<<"mode">>, Req, undefined) of
               <<"credited">> -> credited;
               <<"simple_prefetch">> -> simple_prefetch;
               _ -> throw({error, "\"mode\" must be credited or simple_prefetch"})
           end,
    N = case Mode of
            credited -> maps:get(<<"credit">>, Req, 0);
            simple_prefetch -> int(Req, <<"prefetch">>)
        end,
    Meta = #{ack => true, prefetch => N, args => [], username => <<"cf">>},
    {rabbit_fifo:make_checkout(Cid, {auto, N, Mode}, Meta), St1};
command(<<"cancel">>, Req, St) ->
    {Cid, St1} = consumer_id(Req, St),
    {rabbit_fifo:make_checkout(Cid, cancel, #{}), St1};
command(Op, Req, St) when Op =:= <<"settle">>; Op =:= <<"return">>; Op =:= <<"discard">> ->
    {Cid, St1} = consumer_id(Req, St),
    Ids = msg_ids(Cid, Req, St1),
    Cmd = case Op of
              <<"settle">> -> rabbit_fifo:make_settle(Cid, Ids);
              <<"return">> -> rabbit_fifo:make_return(Cid, Ids);
              <<"discard">> -> rabbit_fifo:make_discard(Cid, Ids)
          end,
    {Cmd, St1};
command(<<"credit">>, Req, St) ->
    {Cid, St1} = consumer_id(Req, St),
    Credit = int(Req, <<"credit">>),
    Drain = maps:get(<<"drain">>, Req, false) =:= true,
    DelCnt = case maps:get(<<"delivery_count">>, Req, null) of
                 null -> throw({error, "\"delivery_count\" (the receiver's) is required"});
                 _ -> int(Req, <<"delivery_count">>)
             end,
    {rabbit_fifo:make_credit(Cid, Credit, DelCnt, Drain), St1};
command(<<"update_config">>, Req, St = #st{cfg = Cfg0}) ->
    Cfg = settings(maps:get(<<"settings">>, Req, #{}), Cfg0),
    {rabbit_fifo:make_update_config(config(Cfg)), St#st{cfg = Cfg}};
command(Op, _, _) -> throw({error, ["unknown op ", Op]}).

%% Checked-out ids of a consumer: the "msg_ids" given, or its "count" oldest.
msg_ids(Cid, Req, St) ->
    Checked = checked_ids(Cid, St),
    case maps:get(<<"msg_ids">>, Req, null) of
        L when is_list(L) -> L;
        null ->
            K = int(Req, <<"count">>),
            case K =< length(Checked) of
                true -> lists:sublist(Checked, K);
                false -> throw({error, io_lib:format("the consumer holds ~b, not ~b",
                                                     [length(Checked), K])})
            end
    end.

checked_ids(Cid, St = #st{fifo = Fifo}) ->
    case maps:get(Cid, get(rabbit_fifo, consumers, Fifo, St), undefined) of
        undefined -> [];
        Con -> lists:sort(maps:keys(get(consumer, checked_out, Con, St)))
    end.

next_seqno(P, St = #st{fifo = Fifo}) ->
    case maps:get(P, get(rabbit_fifo, enqueuers, Fifo, St), undefined) of
        undefined -> 1;
        E -> get(enqueuer, next_seqno, E, St)
    end.

%% AD-AMQ-FIFO-REPLY: apply/3 with ra's metadata; the reply, the effects, the state.
apply_cmd(Cmd, St = #st{fifo = Fifo0, index = Idx, log = Log}) ->
    Meta = #{index => Idx, term => 1, system_time => 1000 * Idx,
             machine_version => rabbit_fifo:version(), from => {self(), make_ref()}},
    {Fifo, Reply, Effects} = case rabbit_fifo:apply(Meta, Cmd, Fifo0) of
                                 {F, R, E} -> {F, R, E};
                                 {F, R} -> {F, R, []}
                             end,
    St1 = St#st{fifo = Fifo, index = Idx + 1, log = Log#{Idx => Cmd}},
    {ok, #{<<"effects">> => lists:append([effect(E, St1) || E <- Effects]),
           <<"reply">> => reply(Reply, St1), <<"frames">> => [],
           <<"state">> => state_json(St1)}, St1}.

name(P, #st{names = Names}) -> maps:get(P, Names, <<"?">>).

%% AD-AMQ-FIFO-EFFECTS: effects normalised to JSON; a log effect is resolved against the
%% commands applied (the Raft log), as ra does.
effect({send_msg, P, {delivery, CTag, Msgs}, _}, St) ->
    [#{<<"effect">> => <<"delivery">>, <<"consumer">> => CTag, <<"to">> => name(P, St),
       <<"msg_ids">> => [Id || {Id, _} <- Msgs],
       <<"delivery_counts">> => [header_count(H) || {_, {H, _}} <- Msgs]}];
effect({send_msg, P, {queue_status, S}, _}, St) ->
    [#{<<"effect">> => <<"queue_status">>, <<"enqueuer">> => name(P, St),
       <<"status">> => atom_to_binary(S)}];
effect({log, Idxs, Fun}, St) -> effect({log, Idxs, Fun, local}, St);
effect({log, Idxs, Fun, _}, St = #st{log = Log}) ->
    lists:append([effect(E, St) || E <- Fun([maps:get(I, Log) || I <- Idxs])]);
effect({monitor, process, P}, St) ->
    [#{<<"effect">> => <<"monitor">>, <<"process">> => name(P, St)}];
effect({mod_call, M, F, _}, _) ->
    [#{<<"effect">> => <<"mod_call">>, <<"call">> => iolist_to_binary(io_lib:format("~p:~p", [M, F]))}];
effect(E, _) ->
    Kind = if is_tuple(E) -> element(1, E); true -> E end,
    [#{<<"effect">> => <<"other">>, <<"kind">> => iolist_to_binary(io_lib:format("~p", [Kind]))}].

header_count(H) when is_map(H) -> maps:get(delivery_count, H, 0);
header_count(_) -> 0.

reply(ok, _) -> <<"ok">>;
reply(A, _) when is_atom(A) -> atom_to_binary(A);
reply({send_credit_reply, Ready}, _) ->
    #{<<"credit_reply">> => #{<<"available">> => Ready}};
reply({multi, [{send_credit_reply, Ready}, {send_drained, {CTag, N}}]}, _) ->
    #{<<"credit_reply">> => #{<<"available">> => Ready},
      <<"drained">> => #{<<"consumer">> => CTag, <<"credit">> => N}};
reply(Other, _) -> iolist_to_binary(io_lib:format("~0P", [Other, 12])).

%% AD-AMQ-FIFO-STATE: the machine's own state.
state_json(St = #st{fifo = Fifo}) ->
    Cons = get(rabbit_fifo, consumers, Fifo, St),
    Enqs = get(rabbit_fifo, enqueuers, Fifo, St),
    Cfg = get(rabbit_fifo, cfg, Fifo, St),
    Opt = fun(undefined) -> null; (V) -> V end,
    #{<<"ready">> => rabbit_fifo:query_messages_ready(Fifo),
      <<"total">> => rabbit_fifo:query_messages_total(Fifo),
      <<"consumers">> =>
          maps:from_list(
            [{Tag, consumer_json(C, St)} || {{Tag, _}, C} <- maps:to_list(Cons)]),
      <<"enqueuers">> =>
          maps:from_list(
            [{name(P, St), #{<<"next_seqno">> => get(enqueuer, next_seqno, E, St),
                             <<"blocked">> => get(enqueuer, blocked, E, St) =/= undefined}}
             || {P, E} <- maps:to_list(Enqs)]),
      <<"config">> =>
          #{<<"max_length">> => Opt(get(cfg, max_length, Cfg, St)),
            <<"overflow">> => atom_to_binary(get(cfg, overflow_strategy, Cfg, St)),
            <<"delivery_limit">> => Opt(get(cfg, delivery_limit, Cfg, St))}}.

consumer_json(C, St) ->
    CCfg = get(consumer, cfg, C, St),
    Checked = get(consumer, checked_out, C, St),
    #{<<"checked_out">> => map_size(Checked),
      <<"msg_ids">> => lists:sort(maps:keys(Checked)),
      <<"credit">> => get(consumer, credit, C, St),
      <<"delivery_count">> => get(consumer, delivery_count, C, St),
      <<"next_msg_id">> => get(consumer, next_msg_id, C, St),
      <<"status">> => atom_to_binary(get(consumer, status, C, St)),
      <<"mode">> => atom_to_binary(get(consumer_cfg, credit_mode, CCfg, St)),
      <<"lifetime">> => atom_to_binary(get(consumer_cfg, lifetime, CCfg, St))}.
