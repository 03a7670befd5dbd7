%% What the Erlang halves of the AMQP adapters share (AD-AMQ-10, AD-AMQ-FIFO-STATE): the
%% JSON Lines loop on their port (AD-AMQ-TRANSPORT), the record layouts of an installed
%% beam, read from its debug_info, and a record tuple's field by name.
-module(cf_amqp_half).
-export([serve/4, records/2, get/5]).

%% One request per line from Port, answered by Handle(Line, St) -> {Out, St1}; blank
%% lines skipped; until eof. Event(Message, St) -> St1 takes any other message (none:
%% they stay in the mailbox).
serve(Port, St, Handle, Event) -> serve(Port, St, Handle, Event, <<>>).

serve(Port, St, Handle, Event, Partial) ->
    receive
        {Port, {data, {noeol, Chunk}}} ->
            serve(Port, St, Handle, Event, <<Partial/binary, Chunk/binary>>);
        {Port, {data, {eol, Chunk}}} ->
            Line = <<Partial/binary, Chunk/binary>>,
            case string:trim(Line) of
                <<>> -> serve(Port, St, Handle, Event, <<>>);
                _ ->
                    {Out, St1} = Handle(Line, St),
                    port_command(Port, Out),
                    serve(Port, St1, Handle, Event, <<>>)
            end;
        {Port, eof} -> ok;
        Other when is_function(Event, 2) -> serve(Port, Event(Other, St), Handle, Event, Partial)
    end.

%% Record name => field names, from Beam's debug_info (What names the beam in the error).
records(Beam, What) ->
    case beam_lib:chunks(Beam, [debug_info]) of
        {ok, {M, [{debug_info, {debug_info_v1, Backend, Data}}]}} ->
            {ok, Forms} = Backend:debug_info(erlang_v1, M, Data, []),
            maps:from_list([{Name, [field_name(F) || F <- Fields]}
                            || {attribute, _, record, {Name, Fields}} <- Forms]);
        _ -> throw({fatal, What ++ " has no debug_info: its state cannot be read"})
    end.

field_name({record_field, _, {atom, _, N}}) -> N;
field_name({record_field, _, {atom, _, N}, _}) -> N;
field_name({typed_record_field, F, _}) -> field_name(F).

%% Field of the Rec record Tuple, by the layout in Records (Owner names the application
%% in the error).
get(Rec, Field, Tuple, Records, Owner) ->
    Fields = maps:get(Rec, Records),
    element(index_of(Field, Fields, 2, Owner), Tuple).

index_of(F, [F | _], N, _) -> N;
index_of(F, [_ | R], N, Owner) -> index_of(F, R, N + 1, Owner);
index_of(F, [], _, Owner) -> throw({error, io_lib:format("this ~s has no field ~p", [Owner, F])}).
