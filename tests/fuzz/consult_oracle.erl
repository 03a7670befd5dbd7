%% The oracle of the differential test of the config reader (IN-ERLANG-TERMS,
%% IN-CONFIG-KEYS): reads file paths, one per line, on stdin; for each prints one line:
%% "refused" when file:consult/1 refuses the file, "keys" when it reads it but the
%% IN-CONFIG-KEYS rule (written here in Erlang) refuses its shape, else
%% "ok D M" with D and M each "I,M" or "none" (credit_flow_default_credit,
%% msg_store_credit_disc_bound). One VM serves a whole test session.
-module(consult_oracle).
-export([main/0]).

main() ->
    loop().

loop() ->
    case io:get_line("") of
        eof ->
            halt(0);
        Line ->
            Path = string:trim(Line, trailing, "\n"),
            Answer =
                case file:consult(Path) of
                    {ok, Terms} -> keys(Terms);
                    {error, _} -> "refused"
                end,
            io:put_chars([Answer, "\n"]),
            loop()
    end.

keys([Top]) when is_list(Top) ->
    try apps(Top, none, none, false) of
        {D, M} -> io_lib:format("ok ~s ~s", [spec(D), spec(M)])
    catch
        throw:keys -> "keys"
    end;
keys(_) ->
    "keys".

apps([], D, M, _Seen) -> {D, M};
apps([{rabbit, _} | _], _, _, true) -> throw(keys);
apps([{rabbit, Settings} | Rest], none, none, false) when is_list(Settings) ->
    {D, M} = settings(Settings, none, none),
    apps(Rest, D, M, true);
apps([{App, _} | Rest], D, M, Seen) when is_atom(App), App =/= rabbit -> apps(Rest, D, M, Seen);
apps(_, _, _, _) -> throw(keys).

settings([], D, M) -> {D, M};
settings([{credit_flow_default_credit, V} | Rest], none, M) -> settings(Rest, credit(V), M);
settings([{msg_store_credit_disc_bound, V} | Rest], D, none) -> settings(Rest, D, credit(V));
settings([{credit_flow_default_credit, _} | _], _, _) -> throw(keys);
settings([{msg_store_credit_disc_bound, _} | _], _, _) -> throw(keys);
settings([{_, _} | Rest], D, M) -> settings(Rest, D, M);
settings(_, _, _) -> throw(keys).

%% IN-LIMITS: |credit| at most 1,000,000.
credit({I, M}) when is_integer(I), is_integer(M), abs(I) =< 1000000, abs(M) =< 1000000 -> {I, M};
credit(_) -> throw(keys).

spec(none) -> "none";
spec({I, M}) -> io_lib:format("~b,~b", [I, M]).
