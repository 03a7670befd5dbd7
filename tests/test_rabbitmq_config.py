"""RabbitMQ config files in (IN-CONFIG, IN-ERLANG-TERMS, IN-CONFIG-KEYS, IN-RABBITMQ-CONF,
IN-CONFIG-DEFAULTS, IN-CREDIT-ROLES, IN-CREDIT-OVERRIDES): the settings read, the
credits each edge gets, and every malformed file refused in one line with its line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from creditflow.conformance.cli import main
from creditflow.conformance.inputs.erlang_terms import TermSyntaxError, parse_terms
from creditflow.conformance.inputs.graphs import load_preset
from creditflow.conformance.inputs.rabbitmq_config import (
    ConfigFileError,
    CreditOverrides,
    CreditSettings,
    apply_credit_settings,
    load_credit_config,
    parse_edge_credit,
    parse_role_credit,
)
from creditflow.model.credit.spec import CreditSpec
from creditflow.model.network.graph import GraphError


def credits(graph) -> dict[str, tuple[int, int]]:
    return {f"{e.sender}->{e.receiver}": tuple(e.credit) for e in graph.edges}


def write(tmp_path: Path, text: str, name: str = "advanced.config") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


#: RabbitMQ 3.10.8's own application environment for the two keys, in the shape of its
#: Makefile's PROJECT_ENV (comments included), as a user copies it into advanced.config.
REAL_DEFAULTS = """\
%% -*- mode: erlang -*-
[
 {rabbit,
  [
   %% see rabbitmq-server#114
   {msg_store_credit_disc_bound, {4000, 800}},
   {msg_store_io_batch_size, 4096},
   %% see rabbitmq-server#143,
   %% rabbitmq-server#949, rabbitmq-server#1098
   {credit_flow_default_credit, {400, 200}},
   {channel_operation_timeout, 15000},
   {autocluster,
     [{peer_discovery_backend, rabbit_peer_discovery_classic_config}]},
   {cluster_nodes, {[], disc}},
   {config_entry_decoder, [{passphrase, undefined}]},
   {vm_memory_high_watermark, {absolute, 15_000_000_000}}
  ]},
 {kernel, [{net_ticktime, 60}]},
 {rabbitmq_management, [{listener, [{port, 15672}, {ip, "127.0.0.1"}]}]}
].
"""


def test_real_default_shapes_give_the_defaults(tmp_path: Path) -> None:
    """IN-CONFIG-KEYS, IN-ERLANG-TERMS: RabbitMQ's own env shape is read, other keys and
    applications ignored; IN-CREDIT-ROLES: the queue->msg_store edge gets the store's."""
    settings = load_credit_config(write(tmp_path, REAL_DEFAULTS))
    assert settings.default_credit == CreditSpec(400, 200)
    assert settings.msg_store_credit == CreditSpec(4000, 800)
    graph = apply_credit_settings(
        load_preset("rabbitmq-publish").with_credit(CreditSpec(1, 1)), settings
    )
    assert credits(graph) == {
        "reader->channel": (400, 200),
        "channel->queue": (400, 200),
        "queue->msg_store": (4000, 800),
    }


def test_only_msg_store_bound_set(tmp_path: Path) -> None:
    """IN-CONFIG-DEFAULTS: the unset credit_flow_default_credit is 3.10.8's {400,200};
    IN-CREDIT-ROLES: both queues' edges into the store (fanout) get the file's bound."""
    path = write(tmp_path, "[{rabbit, [{msg_store_credit_disc_bound, {2, 0}}]}].\n")
    settings = load_credit_config(path)
    assert settings.default_credit is None and settings.msg_store_credit == CreditSpec(2, 0)
    graph = apply_credit_settings(load_preset("fanout"), settings)
    assert credits(graph) == {
        "channel->queue1": (400, 200),
        "channel->queue2": (400, 200),
        "queue1->store": (2, 0),
        "queue2->store": (2, 0),
    }


def test_both_keys_comments_and_other_apps(tmp_path: Path) -> None:
    """IN-CONFIG-KEYS: both keys read past comments, maps, binaries, strings and other
    applications; values credit_flow accepts but RabbitMQ 4.1's boot check refuses
    ({100,200}, negatives) are kept."""
    text = """% leading comment
[{kernel, [{inet_dist_listen_min, 16#FF_FF}]}, % trailing comment
 {rabbit, [{log, #{level => debug, "file" => <<"x.log"/utf8>>}},
           {credit_flow_default_credit, {100, 200}},  % M > I
           {msg_store_credit_disc_bound, {-5, 0}},
           {tags, ['quoted atom', $a, 1.5e3, [a | b]]}]}].
% done
"""
    settings = load_credit_config(write(tmp_path, text))
    assert settings.default_credit == CreditSpec(100, 200)
    assert settings.msg_store_credit == CreditSpec(-5, 0)


def test_unset_everything_gives_defaults(tmp_path: Path) -> None:
    """IN-CONFIG-DEFAULTS: a config without the keys (and a valid rabbitmq.conf) gives
    {400,200} and {4000,800}."""
    for path in (
        write(tmp_path, "[{rabbit, []}].\n"),
        write(tmp_path, "# comment\nlisteners.tcp.default = 5672\n", "rabbitmq.conf"),
    ):
        settings = load_credit_config(path)
        assert (settings.effective_default, settings.effective_msg_store) == (
            CreditSpec(400, 200),
            CreditSpec(4000, 800),
        )


@pytest.mark.parametrize(
    ("text", "line", "problem"),
    [
        ("[{rabbit, [{credit_flow_default_credit, {400}}]}].", 1, "got a tuple of 1"),
        ("[{rabbit, [{credit_flow_default_credit, {400, 200, 1}}]}].", 1, "tuple of 3"),
        ("[{rabbit, [{credit_flow_default_credit, {400, a}}]}].", 1, "the atom a"),
        ("[{rabbit, [{credit_flow_default_credit, {4.0e2, 200}}]}].", 1, "the float 400.0"),
        ('[{rabbit, [{credit_flow_default_credit, "400,200"}]}].', 1, "got a string"),
        ("[{rabbit, [{credit_flow_default_credit, [400, 200]}]}].", 1, "got a list of 2"),
        ("[{rabbit, [{msg_store_credit_disc_bound, {2000000, 1}}]}].", 1, "IN-LIMITS"),
        (
            "[{rabbit,\n [{credit_flow_default_credit, {4, 2}},\n"
            " {credit_flow_default_credit, {4, 2}}]}].",
            3,
            "set twice",
        ),
        ("[{rabbit, []}, {rabbit, []}].", 1, "given twice"),
        ("[{rabbit, [credit_flow_default_credit]}].", 1, "{Key, Value}"),
        ("[{rabbit, {credit_flow_default_credit, {4, 2}}}].", 1, "must be a list"),
        ("[rabbit].", 1, "{Application, Settings}"),
        ('["/etc/rabbitmq/other.config"].', 1, "includes"),
        ("{rabbit, []}.", 1, "a list of {Application"),
        ("[{rabbit, []}]. [].", 1, "a second term"),
        ("[{rabbit, []}]", 1, "no full stop"),
        ("[{rabbit, []}].junk", 1, "followed by a blank"),
        ("[{rabbit, []}] junk.", 1, "expected a full stop"),
        ("[{rabbit,\n [{credit_flow_default_credit, {400, 200}}\n", 3, "ends too early"),
        ('[{rabbit, [{x, "abc}]}].', 1, "unterminated string"),
        ("[{rabbit, [{x, 'abc}]}].", 1, "unterminated quoted atom"),
        ("[{rabbit, [{x, <<1, a>>}]}].", 1, "binary segment"),
        ("[{rabbit, [{x, #{a => }}]}].", 1, "where a term was expected"),
        ("[{rabbit, [{x, #r{}}]}].", 1, "records are not terms"),
        ("[{rabbit, [{X, 1}]}].", 1, "variable"),
        ("[{rabbit, [{x, 1 2}]}].", 1, "expected ',' or '}'"),
        ("[{rabbit, [{x, 99999999999999999999}]}].", 1, "IN-INT"),
        ("[{rabbit, [{x, 37#1}]}].", 1, "base must be 2 to 36"),
        ("[{rabbit, [{x, 2#102}]}].", 1, "not a base-2 integer"),
        ("[{rabbit, [{x, 1.0e999}]}].", 1, "IN-FINITE"),
        ("[{rabbit, [{x, end}]}].", 1, "reserved word"),
        ("[{rabbit, [{x, 1 ; 2}]}].", 1, "unexpected character ';'"),
        ("%% only a comment\n", 1, "no term"),
        ("[" * 60 + "]" * 60 + ".", 1, "IN-DEPTH"),
    ],
)
def test_malformed_config_is_one_line_with_the_line(
    tmp_path: Path, text: str, line: int, problem: str
) -> None:
    """IN-CONFIG, IN-ONE-LINE: every malformed or ill-typed file is a ConfigFileError
    ``FILE:LINE: problem``."""
    path = write(tmp_path, text)
    with pytest.raises(ConfigFileError) as raised:
        load_credit_config(path)
    message = str(raised.value)
    assert "\n" not in message
    assert message.startswith(f"{path}:{line}: "), message
    assert problem in message, message


@pytest.mark.parametrize(
    ("text", "line"),
    [
        ("credit_flow_default_credit = {400, 200}\n", 1),
        ("# x\nrabbit.msg_store_credit_disc_bound = 4000\n", 2),
        ("listeners.tcp.default = 5672\nthis is not a setting\n", 2),
    ],
)
def test_rabbitmq_conf_refuses_credit_keys_and_bad_lines(
    tmp_path: Path, text: str, line: int
) -> None:
    """IN-RABBITMQ-CONF: neither credit key is a rabbitmq.conf setting; a line that is
    not ``key = value`` is refused with its line."""
    path = write(tmp_path, text, "rabbitmq.conf")
    with pytest.raises(ConfigFileError, match=rf"^{path}:{line}: "):
        load_credit_config(path)


def test_empty_and_binary_files_are_refused(tmp_path: Path) -> None:
    """IN-READ through IN-CONFIG: an empty or binary config file is one line."""
    empty = write(tmp_path, "  \n")
    with pytest.raises(ConfigFileError, match="empty file"):
        load_credit_config(empty)
    binary = tmp_path / "b.config"
    binary.write_bytes(b"[\x00].")
    with pytest.raises(ConfigFileError, match="binary"):
        load_credit_config(binary)
    with pytest.raises(ConfigFileError, match="no such file"):
        load_credit_config(tmp_path / "missing.config")


def test_erlang_term_values() -> None:
    """IN-ERLANG-TERMS: the values of each term syntax, with lines."""
    [term] = parse_terms(
        '[16#ff, 2#1010, 1_000, -3, +4, $a, $\\n, "a" "b", \'q\\x41\', 0.5,\n'
        ' <<>>, #{}, [1 | [2]], [1 | 2], "\\x{263A}\\101\\^G"].',
        "t",
    )
    values = [(t.kind, t.value) for t in term.items]
    assert values[:10] == [
        ("integer", 255),
        ("integer", 10),
        ("integer", 1000),
        ("integer", -3),
        ("integer", 4),
        ("integer", 97),
        ("integer", 10),
        ("string", "ab"),
        ("atom", "qA"),
        ("float", 0.5),
    ]
    assert [t.kind for t in term.items[10:14]] == ["binary", "map", "list", "improper-list"]
    assert term.items[10].line == 2
    assert term.items[12].value == term.items[12].items and len(term.items[12].items) == 2
    assert term.items[14].value == "\u263aA\x07"


def test_a_term_error_names_its_line() -> None:
    """IN-ERLANG-TERMS: the line of the problem, past comments and strings with newlines."""
    with pytest.raises(TermSyntaxError) as raised:
        parse_terms('% one\n[{a, "two\nlines"},\n {b, Var}].', "t")
    assert raised.value.line == 4


def test_overrides_by_role_then_edge() -> None:
    """IN-CREDIT-OVERRIDES: a role override sets every edge into that role (msg_store
    matches rabbit_msg_store), an edge override wins over it; without --config the
    graph's own credits stay elsewhere."""
    graph = load_preset("fanout")
    overrides = CreditOverrides(
        roles=(parse_role_credit("msg_store=4000,0"),),
        edges=(parse_edge_credit("queue2->store=7,3"), parse_edge_credit("channel->queue1=9,1")),
    )
    assert credits(apply_credit_settings(graph, None, overrides)) == {
        "channel->queue1": (9, 1),
        "channel->queue2": (3, 1),
        "queue1->store": (4000, 0),
        "queue2->store": (7, 3),
    }


@pytest.mark.parametrize(
    ("overrides", "problem"),
    [
        (CreditOverrides(roles=(("rabbit_reader", CreditSpec(1, 1)),)), "no edge leads into"),
        (
            CreditOverrides(edges=(("channel", "store", CreditSpec(1, 1)),)),
            "no edge channel->store",
        ),
        (CreditOverrides(edges=(("queue1", "store", CreditSpec(10**7, 1)),)), "IN-LIMITS"),
    ],
)
def test_bad_overrides_are_refused(overrides: CreditOverrides, problem: str) -> None:
    """IN-CREDIT-OVERRIDES: a role no edge leads into, a missing edge, a spec beyond
    IN-LIMITS."""
    with pytest.raises(GraphError, match=problem):
        apply_credit_settings(load_preset("fanout"), CreditSettings(), overrides)


@pytest.mark.parametrize("text", ["a->b", "a->b=1", "a->b=1,x", "->b=1,1", "ab=1,1", "a->=1,1"])
def test_malformed_edge_override(text: str) -> None:
    """IN-CREDIT-OVERRIDES: ``SENDER->RECEIVER=I,M`` or a ValueError."""
    with pytest.raises(ValueError):
        parse_edge_credit(text)


def test_cli_config_and_overrides(tmp_path: Path) -> None:
    """IN-CONFIG on the command line: check under a config whose msg_store bound {2,0}
    never grants (CF-DISABLED's other side) finds the queue blocked forever; the same
    with the store's credit overridden back is deadlock-free; bad files and --credit
    with --config exit 2 with one line."""
    config = write(tmp_path, "[{rabbit, [{msg_store_credit_disc_bound, {2, 0}}]}].\n")
    runner = CliRunner()
    args = ["check", "rabbitmq-publish", "--publishes", "3", "--json", "--config", str(config)]
    out = tmp_path / "cex.itf.json"
    bad = runner.invoke(main, [*args, "--trace-out", str(out)])
    assert bad.exit_code == 10, bad.output
    report = json.loads(bad.stdout)
    assert report["deadlock"] is True and report["blocked_forever"] == ["queue"]
    embedded = json.loads(out.read_text())["#meta"]["creditflow"]["graph"]["edges"]
    assert {(e["source"], e["target"]): e["credit"] for e in embedded} == {
        ("reader", "channel"): [400, 200],
        ("channel", "queue"): [400, 200],
        ("queue", "msg_store"): [2, 0],
    }
    good = runner.invoke(main, [*args, "--role-credit", "msg_store=2,1"])
    assert good.exit_code == 0, good.output
    assert json.loads(good.stdout)["deadlock"] is False
    for extra in (["--credit", "1,1"], ["--edge-credit", "a->b=1,1"]):
        refused = runner.invoke(main, [*args, *extra])
        assert refused.exit_code == 2
        assert len(refused.stderr.strip().splitlines()) == 1
    broken = write(tmp_path, "[{rabbit, [{credit_flow_default_credit, {1}}]}].\n", "b.config")
    refused = runner.invoke(main, ["check", "rabbitmq-publish", "--config", str(broken)])
    assert refused.exit_code == 2
    assert refused.stderr.strip() == (
        f"creditflow: error: {broken}:1: credit_flow_default_credit must be "
        "{InitialCredit, MoreCreditAfter}, got a tuple of 1"
    )


def test_prove_and_synth_take_the_config(tmp_path: Path) -> None:
    """IN-CONFIG on prove and synth: under credit_flow_default_credit {3,1} prove's
    stalled-queue counterexample carries the file's credits; under
    msg_store_credit_disc_bound {2,0} synth finds that no InitialCredit helps the store
    edge, which never grants; a refused file exits 2 with its line; ``prove --symbolic``
    excludes --config."""
    runner = CliRunner()
    default = write(tmp_path, "[{rabbit, [{credit_flow_default_credit, {3, 1}}]}].\n", "d.config")
    proved = runner.invoke(
        main,
        ["prove", "stalled-queue", "--config", str(default), "--publishes", "10", "--json"]
        + ["--trace-out", str(tmp_path / "p.itf.json")],
    )
    assert proved.exit_code == 10, proved.output
    cex = json.loads(proved.stdout)["counterexample"]
    assert cex["processes"] == ["channel"]
    assert cex["credits"] == {"reader->channel": [3, 1], "channel->queue": [3, 1]}
    config = write(tmp_path, "[{rabbit, [{msg_store_credit_disc_bound, {2, 0}}]}].\n")
    common = ["rabbitmq-publish", "--config", str(config), "--publishes", "3", "--json"]
    synthesised = runner.invoke(main, ["synth", *common])
    assert synthesised.exit_code == 10, synthesised.output
    assert json.loads(synthesised.stdout)["status"] == "none"
    broken = write(tmp_path, "[{rabbit, [{msg_store_credit_disc_bound, {1, x}}]}].\n", "b.config")
    for command in ("prove", "synth"):
        refused = runner.invoke(main, [command, "stalled-queue", "--config", str(broken)])
        assert refused.exit_code == 2 and f"{broken}:1: " in refused.stderr
    refused = runner.invoke(main, ["prove", "fanout", "--symbolic", "--config", str(config)])
    assert refused.exit_code == 2 and "--symbolic" in refused.stderr
