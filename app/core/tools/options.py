"""Parse a program's argv the way the program itself does (getopt_long rules).

Why: the shell capability check refuses options that make an allowed program run another program
or write a file (``sort -o``, ``ssh -o ProxyCommand=...``). Matching option *spellings* misses
the other ways the same option can be written; GNU ``getopt_long`` (and git's parse-options,
and OpenSSH's BSD getopt) accept all of these:

- unique-prefix abbreviations of long options: ``--out=x`` is ``--output=x``; an ambiguous
  prefix is an error for the program, and is refused here;
- clustered short options: ``-vo x`` is ``-v -o x``; ``-uo x`` is ``-u -o x``;
- attached values: ``-ofile``, ``-vofile``, ``--output=file``;
- ``--`` ends the options: what follows is an operand even if it starts with ``-``;
- permutation: GNU programs take options after operands (``sort f -o x``) unless the program
  stops at the first operand (``+`` in its optstring: gawk, OpenSSH, ...).

So a checker parses once with the program's :class:`OptionTable` and decides on *canonical*
names (``--output``), never on how they were spelled. A table declared ``closed`` lists every
option the program has; an option it does not list is refused (fail closed). An open table only
lists what matters; an unknown short option is taken as a flag (if the program gives it a value,
that value is then read as more options or operands: stricter, never looser), an unknown long
option likewise.

Table syntax (one string, space separated entries)::

    "o|output= v|verbose color? F="

Names of one character are short options, longer names are long options; ``|`` joins names of
the same option. A trailing ``=`` means the option takes a value, ``?`` an optional value (GNU
``optional_argument``: only ``--color=x`` / ``-cx``, never the next word). The canonical name
is the first long name if there is one (``--output``), else the first short one (``-F``).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Literal

__all__ = [
    "OptionTable",
    "ParsedArgs",
    "ParsedOption",
    "parse_args",
]

ArgKind = Literal["none", "required", "optional"]


@dataclass(frozen=True)
class _Opt:
    canonical: str
    arg: ArgKind
    display: str  # every-day spelling for messages: "-o/--output"


@dataclass(frozen=True)
class ParsedOption:
    name: str  # canonical: "--output", or "-F" for an option without a long name
    value: str | None
    spelled: str  # the word (or cluster) it came from
    known: bool = True
    display: str = ""  # "-o/--output"; the canonical name when empty

    def __str__(self) -> str:
        return self.display or self.name


@dataclass
class ParsedArgs:
    options: list[ParsedOption] = field(default_factory=list)
    operands: list[str] = field(default_factory=list)
    error: str | None = None
    # Index into the input where option parsing stopped: the first operand of a program that
    # stops there (permute=False), or the word after an end marker; len(args) otherwise.
    stop: int = 0

    @property
    def ok(self) -> bool:
        return self.error is None

    def names(self) -> set[str]:
        return {o.name for o in self.options}

    def find(self, *names: str) -> ParsedOption | None:
        """The first option whose canonical name is one of ``names``."""
        for o in self.options:
            if o.name in names:
                return o
        return None

    def values(self, name: str) -> list[str]:
        return [o.value for o in self.options if o.name == name and o.value is not None]


class OptionTable:
    """One program's options and the parsing rules it follows."""

    def __init__(self, spec: str = "", *, closed: bool = True, permute: bool = True,
                 abbreviate: bool = True, long_only: bool = False,
                 negatable: bool = False, end_markers: Iterable[str] = ("--",)) -> None:
        """``permute``: options may follow operands (GNU default). ``long_only``: single-dash
        long options as in Go's flag package (``-toolexec=x``), no short clusters.
        ``negatable``: ``--no-NAME`` is accepted for every long option (git parse-options).
        ``end_markers``: words that end the options (git also has ``--end-of-options``)."""
        self.spec = spec
        self.end_markers = frozenset(end_markers)
        self.closed, self.permute = closed, permute
        self.abbreviate, self.long_only, self.negatable = abbreviate, long_only, negatable
        self.short: dict[str, _Opt] = {}
        self.long: dict[str, _Opt] = {}
        for entry in spec.split():
            arg: ArgKind = "none"
            if entry.endswith("="):
                arg, entry = "required", entry[:-1]
            elif entry.endswith("?"):
                arg, entry = "optional", entry[:-1]
            names = entry.split("|")
            longs = [n for n in names if len(n) > 1]
            shorts = [n for n in names if len(n) == 1]
            dash = "-" if long_only else "--"
            canonical = dash + longs[0] if longs else "-" + shorts[0]
            display = "/".join([*(f"-{c}" for c in shorts[:1]), *(dash + n for n in longs[:1])])
            opt = _Opt(canonical, arg, display)
            for n in names:
                (self.long if len(n) > 1 or long_only else self.short)[n] = opt

    def extended(self, spec: str, **changes: bool) -> OptionTable:
        """A table with more options (a subcommand adding to a common set)."""
        settings = {"closed": self.closed, "permute": self.permute,
                    "abbreviate": self.abbreviate, "long_only": self.long_only,
                    "negatable": self.negatable, **changes}
        return OptionTable(f"{self.spec} {spec}", end_markers=self.end_markers, **settings)

    # -- lookup -------------------------------------------------------------------------------

    def lookup_long(self, name: str) -> tuple[_Opt | None, str | None]:
        """(option, error) for a long name as written, following getopt_long's prefix rules."""
        exact = self.long.get(name)
        if exact is not None:
            return exact, None
        negated = None
        if self.negatable and name.startswith("no-"):
            negated = self.long.get(name[3:])
            if negated is not None:
                return _Opt("--no-" + negated.canonical[2:], "none", ""), None
        if not self.abbreviate or not name:
            return None, None
        found = {o.canonical: o for n, o in self.long.items() if n.startswith(name)}
        if self.negatable and name.startswith("no-"):
            found.update({"--no-" + o.canonical[2:]: _Opt("--no-" + o.canonical[2:], "none", "")
                          for n, o in self.long.items() if n.startswith(name[3:])})
        if len(found) == 1:
            return next(iter(found.values())), None
        if len(found) > 1:
            shown = ", ".join(sorted(found))
            return None, f"option '--{name}' is ambiguous (could be {shown})"
        return None, None


def parse_args(table: OptionTable, args: Sequence[str]) -> ParsedArgs:
    """Split ``args`` (without the program name) into canonical options and operands."""
    return _ArgvParser(table, args).parse()


class _ArgvParser:
    """One run of :func:`parse_args`: the index of the word being read and the result so far.
    Reading an option returns the error the program would report for it (None: read)."""

    def __init__(self, table: OptionTable, args: Sequence[str]) -> None:
        self.table, self.args = table, args
        self.i = 0
        self.out = ParsedArgs(stop=len(args))

    def parse(self) -> ParsedArgs:
        table, args, out = self.table, self.args, self.out
        while self.i < len(args):
            word = args[self.i]
            if word in table.end_markers:
                out.operands.extend(args[self.i + 1:])
                out.stop = self.i + 1
                break
            if not word.startswith("-") or word == "-":
                if not table.permute:
                    out.operands.extend(args[self.i:])
                    out.stop = self.i
                    break
                out.operands.append(word)
            else:
                error = (self.read_long(word) if word.startswith("--") or table.long_only
                         else self.read_short_cluster(word))
                if error is not None:
                    out.error, out.stop = error, self.i
                    break
            self.i += 1
        return out

    def read_long(self, word: str) -> str | None:
        """``--name``, ``--name=value`` or ``--name value`` (one dash for a long_only table)."""
        table = self.table
        name, eq, value = (word.lstrip("-") if table.long_only else word[2:]).partition("=")
        opt, error = table.lookup_long(name)
        if error:
            return error
        if opt is None:
            if table.closed:
                return f"unknown option '{word.split('=', 1)[0]}'"
            dash = "-" if table.long_only else "--"
            self.out.options.append(ParsedOption(dash + name, value if eq else None, word, False))
            return None
        if opt.arg == "none" and eq:
            return f"option '{opt.canonical}' doesn't allow an argument"
        if opt.arg != "required" or eq:
            self.out.options.append(ParsedOption(opt.canonical, value if eq else None, word, True,
                                                 opt.display))
            return None
        if not self.read_value_word(opt, word):
            return f"option '{opt.canonical}' requires an argument"
        return None

    def read_short_cluster(self, word: str) -> str | None:
        """A cluster of short options: -abc, -ovalue, -vo value."""
        table, options = self.table, self.out.options
        for j in range(1, len(word)):
            ch = word[j]
            opt = table.short.get(ch)
            if opt is None:
                if table.closed:
                    return f"invalid option -- '{ch}'"
                options.append(ParsedOption("-" + ch, None, word, False))
            elif opt.arg == "none":
                options.append(ParsedOption(opt.canonical, None, word, True, opt.display))
            else:
                # The option's value: the rest of the cluster, else (required) the next word.
                rest = word[j + 1:]
                if rest or opt.arg == "optional":
                    options.append(ParsedOption(opt.canonical, rest or None, word, True,
                                                opt.display))
                elif not self.read_value_word(opt, word):
                    return f"option requires an argument -- '{ch}'"
                return None
        return None

    def read_value_word(self, opt: _Opt, spelled: str) -> bool:
        """Take the next word as ``opt``'s value; False when there is none."""
        if self.i + 1 >= len(self.args):
            return False
        self.i += 1
        self.out.options.append(ParsedOption(opt.canonical, self.args[self.i], spelled, True,
                                             opt.display))
        return True


# --- wrappers --------------------------------------------------------------------------------
# Programs that run an inner command given after their own options. All of them stop option
# parsing at their first operand ("+" in the optstring), so the inner command's own options are
# never theirs. Tables are closed: an option we do not know could take a value, and then the
# inner command would start somewhere else than we think.

WRAPPER_TABLES: dict[str, OptionTable] = {
    "timeout": OptionTable("k|kill-after= s|signal= v|verbose foreground preserve-status help "
                           "version", permute=False),
    "nice": OptionTable("n|adjustment= help version", permute=False),
    "nohup": OptionTable("help version", permute=False),
    "stdbuf": OptionTable("i|input= o|output= e|error= help version", permute=False),
    "ionice": OptionTable("c|class= n|classdata= t|ignore h|help V|version", permute=False),
}


@dataclass
class Unwrapped:
    """A wrapper's own options and the inner command it runs (empty: it runs none)."""

    options: ParsedArgs
    inner: list[str]
    error: str | None = None


def unwrap(name: str, args: Sequence[str]) -> Unwrapped:
    """Split a wrapper's argv (without its name) into its options and the inner command."""
    args = list(args)
    lead = 0
    if name == "nice":
        # coreutils nice takes the obsolete `-N` / `--N` / `-+N` adjustment before getopt.
        while lead < len(args) and len(args[lead]) > 1 and args[lead][0] == "-" and (
                args[lead][1:2].isdigit()
                or (args[lead][1:2] in "-+" and args[lead][2:3].isdigit())):
            lead += 1
    parsed = parse_args(WRAPPER_TABLES[name], args[lead:])
    if parsed.error:
        return Unwrapped(parsed, [], parsed.error)
    inner = parsed.operands
    if name == "timeout":
        if not inner:
            return Unwrapped(parsed, [], "timeout needs a duration and a command")
        inner = inner[1:]  # the duration
    if not inner and name not in ("nice", "ionice"):
        return Unwrapped(parsed, [], f"{name} needs a command")
    return Unwrapped(parsed, inner)


# --- git's global options (git.c handle_options) --------------------------------------------
# git matches these exactly; abbreviations are mapped here anyway so that a misspelling of a
# refused option is reported as that option (git itself would reject it).

GIT_GLOBAL_TABLE = OptionTable(
    "p|paginate P|no-pager no-replace-objects literal-pathspecs glob-pathspecs "
    "noglob-pathspecs icase-pathspecs no-optional-locks v|version h|help no-lazy-fetch "
    "no-advice bare C= c= config-env= exec-path? git-dir= work-tree= namespace= "
    "super-prefix= html-path man-path info-path list-cmds= attr-source=",
    permute=False)

# Harmless: they change neither what git does to which repository nor which programs it runs.
GIT_HARMLESS_GLOBALS = frozenset({
    "--no-pager", "--no-replace-objects", "--literal-pathspecs", "--glob-pathspecs",
    "--noglob-pathspecs", "--icase-pathspecs", "--no-optional-locks", "--version",
    "--no-lazy-fetch", "--no-advice",
})
