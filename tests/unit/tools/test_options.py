"""The getopt_long-style option parser the shell policy and permission subjects decide on."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from app.core.tools.options import (
    GIT_GLOBAL_TABLE,
    OptionTable,
    parse_args,
    unwrap,
)

# Shaped like GNU sort: -o/--output takes a value, --check an optional one.
SORT_LIKE = OptionTable("o|output= u|unique r|reverse k|key= check? compress-program= "
                        "debug")


def opts(table: OptionTable, *args: str) -> list[tuple[str, str | None]]:
    parsed = parse_args(table, args)
    assert parsed.error is None, parsed.error
    return [(o.name, o.value) for o in parsed.options]


@pytest.mark.parametrize("args", [
    ("-o", "x"), ("-ox",), ("--output", "x"), ("--output=x",), ("--out=x",), ("--o", "x"),
    ("--outp=x",), ("-uo", "x"), ("-uox",), ("-ruox",), ("f", "-o", "x"), ("f", "--out=x"),
])
def test_every_spelling_of_output_is_canonical(args: tuple[str, ...]) -> None:
    assert ("--output", "x") in opts(SORT_LIKE, *args)


def test_cluster_letters_before_the_value_option_are_flags() -> None:
    assert opts(SORT_LIKE, "-ruo", "x") == [("--reverse", None), ("--unique", None),
                                             ("--output", "x")]


def test_value_of_a_required_option_is_the_next_word_even_if_it_looks_like_an_option() -> None:
    parsed = parse_args(SORT_LIKE, ["-k", "-o", "f"])
    assert [(o.name, o.value) for o in parsed.options] == [("--key", "-o")]
    assert parsed.operands == ["f"]


def test_double_dash_ends_options() -> None:
    parsed = parse_args(SORT_LIKE, ["-u", "--", "-o", "x", "--output=y"])
    assert parsed.names() == {"--unique"}
    assert parsed.operands == ["-o", "x", "--output=y"]


def test_single_dash_is_an_operand() -> None:
    assert parse_args(SORT_LIKE, ["-"]).operands == ["-"]


def test_exact_long_name_wins_over_longer_ones() -> None:
    table = OptionTable("pre= pre-glob=", closed=False)
    assert opts(table, "--pre", "cat") == [("--pre", "cat")]
    assert opts(table, "--pre-g=x") == [("--pre-glob", "x")]


def test_ambiguous_prefix_is_an_error() -> None:
    table = OptionTable("output= output-dir=")
    parsed = parse_args(table, ["--out=x"])
    assert parsed.error is not None and "ambiguous" in parsed.error


def test_aliases_of_one_option_are_not_ambiguous() -> None:
    table = OptionTable("n|quiet|silent")
    assert opts(table, "--qui") == [("--quiet", None)]
    assert opts(table, "--s") == [("--quiet", None)]


def test_abbreviation_can_be_disabled() -> None:
    table = OptionTable("get get-all list", abbreviate=False)
    assert parse_args(table, ["--li"]).error is not None
    assert opts(table, "--get") == [("--get", None)]


def test_optional_value_only_attached() -> None:
    assert opts(SORT_LIKE, "--check", "f") == [("--check", None)]
    assert opts(SORT_LIKE, "--check=quiet") == [("--check", "quiet")]


def test_closed_table_refuses_unknown_options() -> None:
    assert parse_args(SORT_LIKE, ["-q"]).error is not None
    assert parse_args(SORT_LIKE, ["--bogus"]).error is not None
    assert parse_args(SORT_LIKE, ["-uq"]).error is not None


def test_flag_given_a_value_is_an_error() -> None:
    assert parse_args(SORT_LIKE, ["--debug=1"]).error is not None


def test_missing_value_is_an_error() -> None:
    assert parse_args(SORT_LIKE, ["-o"]).error is not None
    assert parse_args(SORT_LIKE, ["--output"]).error is not None


def test_open_table_reads_unknown_letters_as_flags() -> None:
    table = OptionTable("o|output=", closed=False)
    parsed = parse_args(table, ["-sSLo", "out", "url"])
    assert ("--output", "out") in [(o.name, o.value) for o in parsed.options]
    assert parsed.operands == ["url"]
    assert not parsed.options[0].known


def test_without_permutation_options_stop_at_the_first_operand() -> None:
    table = OptionTable("F= v=", permute=False)
    parsed = parse_args(table, ["-F,", "prog", "-v", "x"])
    assert parsed.names() == {"-F"}
    assert parsed.operands == ["prog", "-v", "x"]
    assert parsed.stop == 1


def test_negatable_long_options() -> None:
    table = OptionTable("gpg-sign? ext-diff", closed=False, negatable=True)
    assert opts(table, "--no-gpg-sign") == [("--no-gpg-sign", None)]
    assert opts(table, "--no-ext") == [("--no-ext-diff", None)]
    assert opts(table, "--gpg") == [("--gpg-sign", None)]


def test_git_end_of_options_marker() -> None:
    table = OptionTable("output=", closed=False, end_markers=("--", "--end-of-options"))
    parsed = parse_args(table, ["--end-of-options", "--output=x"])
    assert parsed.options == [] and parsed.operands == ["--output=x"]


def test_long_only_tables_take_single_dash_names() -> None:
    table = OptionTable("toolexec= exec=", closed=False, abbreviate=False, long_only=True)
    assert opts(table, "-toolexec=sh") == [("-toolexec", "sh")]
    assert opts(table, "--exec", "sh") == [("-exec", "sh")]


@pytest.mark.parametrize(("argv", "inner"), [
    (("timeout", "5", "ls"), ["ls"]),
    (("timeout", "-s", "KILL", "5", "ls", "-l"), ["ls", "-l"]),
    (("timeout", "-sKILL", "-k1", "5", "ls"), ["ls"]),
    (("timeout", "--sig=KILL", "5", "ls"), ["ls"]),
    (("timeout", "--", "5", "ls"), ["ls"]),
    (("timeout", "5", "rm", "-s", "x"), ["rm", "-s", "x"]),  # inner options are not its own
    (("nice", "-n", "5", "ls"), ["ls"]),
    (("nice", "-5", "ls"), ["ls"]),
    (("nice", "--5", "ls"), ["ls"]),
    (("nice", "-n5", "--", "ls"), ["ls"]),
    (("nohup", "ls"), ["ls"]),
    (("stdbuf", "-oL", "-e", "0", "ls"), ["ls"]),
    (("ionice", "-c3", "-t", "ls"), ["ls"]),
    (("nice",), []),
])
def test_unwrap_finds_the_inner_command(argv: tuple[str, ...], inner: list[str]) -> None:
    result = unwrap(argv[0], argv[1:])
    assert result.error is None
    assert result.inner == inner


@pytest.mark.parametrize("argv", [("timeout", "--weird", "5", "ls"), ("timeout",),
                                  ("nohup",), ("ionice", "-p", "1"), ("stdbuf", "-x", "ls"),
                                  ("timeout", "-s")])
def test_unwrap_refuses_what_it_cannot_place(argv: tuple[str, ...]) -> None:
    assert unwrap(argv[0], argv[1:]).error is not None


def test_git_globals_stop_at_the_subcommand() -> None:
    parsed = parse_args(GIT_GLOBAL_TABLE, ["-C", "dir", "-P", "commit", "-c", "x"])
    assert [(o.name, o.value) for o in parsed.options] == [("-C", "dir"), ("--no-pager", None)]
    assert parsed.operands == ["commit", "-c", "x"]


_WORDS = st.sampled_from(["-o", "-u", "-uo", "-ox", "--out", "--output=x", "--o", "--", "-",
                          "f", "x", "--check", "--check=q", "-k", "--deb", "--bogus", "-q"])


@settings(max_examples=300, deadline=None)
@given(st.lists(_WORDS, max_size=8))
def test_parse_never_raises_and_accounts_for_operands(args: list[str]) -> None:
    parsed = parse_args(SORT_LIKE, args)
    if parsed.error is None:
        # Every operand is a word of the input; nothing is invented.
        assert all(op in args for op in parsed.operands)
