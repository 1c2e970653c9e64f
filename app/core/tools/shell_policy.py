"""The shell capability check: which parsed commands shell_exec may run at all.

Why: the allowlist in ``ToolContext.allowed_commands`` is a capability, so it must hold no matter
how a command is spelled. A command passes only if

1. the shell syntax module accepts it (no substitution, redirection, control flow, ...), and
2. every simple command's program is on the allowlist by *exact name* (``/usr/bin/ls`` and
   ``./ls`` are not ``ls``; an allowlist entry that itself contains ``/`` matches only that exact
   spelling), and
3. the program is not one that is refused outright (shells, eval-like builtins, privilege
   escalation, programs that run arbitrary other programs, pagers and editors), and
4. no known *option escape* of an allowed program is used: options that make it run another
   program or write files the model did not name as a write (``find -exec``, ``git -c``,
   ``rg --pre``, ``sed -i`` / ``w`` / ``e``, ``awk system()``, ``sort -o``, ``tar
   --to-command``, ...). GNU and git long options may be abbreviated, so refused long options
   are matched by prefix too.

Wrappers with a simple grammar (``timeout``, ``nice``, ``nohup``, ``stdbuf``, ``ionice``) have
their inner command checked by the same rules; other program runners are refused.

Limits, stated plainly: interpreters and build tools (``python``, ``node``, ``make``, ``npm run``,
``cargo``, ``pytest``) execute project code by design. Putting one on the allowlist grants what
that code can do; the policy only closes the command-line escapes it knows about.

``cd`` and ``pwd`` are handled by the executor itself (the working directory persists across
calls and must stay inside the project folder), so they need no allowlist entry.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field

from app.core.tools.shell_syntax import ParsedCommand, SimpleCommand, parse_command

__all__ = [
    "BUILTINS",
    "PolicyResult",
    "check_command",
    "check_words",
]

# Handled inside the executor, never spawned.
BUILTINS = frozenset({"cd", "pwd"})

_MAX_WRAPPER_DEPTH = 4

_SHELL = "shells re-interpret their arguments as commands; run the commands directly instead"
_META = ("is a shell builtin that evaluates or changes the shell itself; commands run without a "
         "shell here")
_ENV = "reading or changing environment variables is not allowed"
_PRIV = "privilege escalation is never allowed"
_RUNNER = ("runs other programs from its arguments or input, which cannot be checked; run the "
           "inner command directly")
_INTERACTIVE = ("is interactive (pager/editor) and can run commands; output is returned to you "
                "anyway — use cat/head/grep, or the edit_file tool")

# Refused even when someone put them on the allowlist: they defeat the whole check.
ALWAYS_REFUSED: dict[str, str] = {
    **{p: _SHELL for p in ("sh", "bash", "dash", "zsh", "ksh", "mksh", "ash", "fish", "csh",
                           "tcsh", "busybox", "pwsh", "powershell", "rbash", "yash", "elvish",
                           "nu", "xonsh")},
    **{p: _META for p in ("eval", "exec", "source", ".", "command", "builtin", "alias",
                          "unalias", "set", "shopt", "trap", "enable", "hash", "declare",
                          "typeset", "local", "readonly", "let", "type", "fc", "jobs", "fg",
                          "bg", "disown", "wait", "ulimit", "umask", "times", "caller",
                          "compgen", "complete", "mapfile", "readarray", "read", "getopts",
                          "shift", "return", "exit", "logout", "history", "pushd", "popd",
                          "dirs", "suspend")},
    **{p: _ENV for p in ("env", "printenv", "export", "unset", "setenv", "unsetenv")},
    **{p: _PRIV for p in ("sudo", "doas", "su", "pkexec", "runuser", "sg", "newgrp", "calife")},
    **{p: _RUNNER for p in ("xargs", "parallel", "chroot", "unshare", "nsenter", "setsid",
                            "flock", "watch", "strace", "ltrace", "gdb", "lldb", "script",
                            "expect", "setarch", "linux32", "linux64", "systemd-run", "at",
                            "batch", "crontab", "fakeroot", "proot", "firejail", "bwrap",
                            "dbus-run-session", "xvfb-run", "catchsegv", "valgrind", "perf",
                            "eatmydata", "chpst", "entr", "tmux", "screen", "socat", "npx",
                            "bunx", "pnpx", "open", "xdg-open", "osascript", "run-parts",
                            "start-stop-daemon", "daemonize", "stdbuf64", "prlimit",
                            "taskset", "chrt", "numactl", "cgexec", "sshpass",
                            "ssh-agent", "dbus-launch", "uvx", "pipx", "time", "coproc")},
    **{p: _INTERACTIVE for p in ("less", "more", "most", "pg", "man", "pager", "vi", "vim",
                                 "nvim", "view", "vimdiff", "ex", "ed", "red", "emacs", "nano",
                                 "pico", "joe", "mc", "info", "pinfo", "w3m", "lynx", "links",
                                 "elinks", "top", "htop", "sensible-pager", "sensible-editor",
                                 "editor", "visudo", "vipw")},
    "patch": "patch can feed ed scripts to ed, which runs commands; use the edit_file tool",
}

# Programs that run an inner command given after their own options: check the inner one.
_WRAPPERS = frozenset({"timeout", "nice", "nohup", "stdbuf", "ionice"})


@dataclass
class PolicyResult:
    parsed: ParsedCommand
    problems: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.parsed.ok and not self.problems

    def all_problems(self) -> list[str]:
        return [*self.parsed.problems, *self.problems]

    def error_message(self, allowed_commands: Iterable[str] = ()) -> str:
        """What the model reads when the command is refused: every reason and what to do."""
        if not self.parsed.ok:
            return self.parsed.error_message()
        allowed = ", ".join(sorted(set(allowed_commands))) or "(none)"
        lines = "\n".join(f"- {p}" for p in self.problems)
        return (f"The command was not run:\n{lines}\nAllowed programs: {allowed} (plus the "
                "builtins cd and pwd). Other programs can be enabled in the shell_exec tool's "
                "configuration by the user.")


def check_command(command: str | ParsedCommand, allowed_commands: Iterable[str]) -> PolicyResult:
    """Check a whole command line against the allowlist and the refusal tables."""
    parsed = command if isinstance(command, ParsedCommand) else parse_command(command)
    result = PolicyResult(parsed)
    allowed = frozenset(allowed_commands)
    for step in parsed.steps:
        cmds = step.pipeline.commands
        for cmd in cmds:
            for problem in check_words(cmd.words, allowed, in_pipeline=len(cmds) > 1):
                if problem not in result.problems:
                    result.problems.append(problem)
    return result


def check_simple(cmd: SimpleCommand, allowed_commands: Iterable[str]) -> list[str]:
    return check_words(cmd.words, frozenset(allowed_commands))


def check_words(words: Sequence[str], allowed: frozenset[str], *, in_pipeline: bool = False,
                _depth: int = 0) -> list[str]:
    """Problems of one simple command (empty list: it may run)."""
    if not words:
        return ["empty command"]
    program, args = words[0], list(words[1:])
    if program in BUILTINS:
        return _check_builtin(program, args, in_pipeline)
    if program in ALWAYS_REFUSED:
        return [f"`{program}` is not allowed: {program} {ALWAYS_REFUSED[program]}"
                if ALWAYS_REFUSED[program] in (_META, _INTERACTIVE)
                else f"`{program}` is not allowed: {ALWAYS_REFUSED[program]}"]
    if program not in allowed:
        if "/" in program:
            base = program.rstrip("/").rsplit("/", 1)[-1]
            hint = (f"; call it by its name `{base}` instead of a path" if base in allowed
                    else "")
            return [f"`{program}` is not on the allowed command list (programs are matched by "
                    f"exact name, a path is not the program's name){hint}"]
        return [f"`{program}` is not on the allowed command list"]
    # An explicitly allowlisted path (e.g. ./gradlew) is checked like the program it names.
    name = program.rstrip("/").rsplit("/", 1)[-1] if "/" in program else program
    if name in _WRAPPERS:
        return _check_wrapper(name, args, allowed, in_pipeline, _depth)
    checker = _CHECKERS.get(name)
    if checker is None:
        checker = _CHECKERS.get(_FAMILY.get(name, ""))
    return checker(name, args) if checker is not None else []


# --- builtins -----------------------------------------------------------------------------

def _check_builtin(program: str, args: list[str], in_pipeline: bool) -> list[str]:
    if in_pipeline:
        return [f"`{program}` cannot be part of a pipeline; use it on its own, e.g. "
                f"`{program} dir && ls`"]
    if program == "pwd":
        bad = [a for a in args if a not in ("-L", "-P")]
        return [f"pwd takes no arguments (got {bad[0]!r})"] if bad else []
    rest = args[1:] if args[:1] == ["--"] else args
    if len(rest) > 1:
        return ["cd takes one directory"]
    if rest and rest[0].startswith("-"):
        return [f"cd option {rest[0]!r} is not supported; give a directory inside the project"]
    return []


# --- wrappers -----------------------------------------------------------------------------

_WRAPPER_VALUE_OPTS: dict[str, frozenset[str]] = {
    "timeout": frozenset({"-s", "--signal", "-k", "--kill-after"}),
    "nice": frozenset({"-n", "--adjustment"}),
    "nohup": frozenset(),
    "stdbuf": frozenset({"-i", "-o", "-e", "--input", "--output", "--error"}),
    "ionice": frozenset({"-c", "--class", "-n", "--classdata"}),
}
_WRAPPER_FLAG_OPTS: dict[str, frozenset[str]] = {
    "timeout": frozenset({"--preserve-status", "--foreground", "-v", "--verbose"}),
    "nice": frozenset(),
    "nohup": frozenset(),
    "stdbuf": frozenset(),
    "ionice": frozenset({"-t", "--ignore"}),
}


def _check_wrapper(name: str, args: list[str], allowed: frozenset[str], in_pipeline: bool,
                   depth: int) -> list[str]:
    if depth >= _MAX_WRAPPER_DEPTH:
        return [f"`{name}` wrappers nested too deeply"]
    value_opts, flag_opts = _WRAPPER_VALUE_OPTS[name], _WRAPPER_FLAG_OPTS[name]
    i = 0
    while i < len(args):
        a = args[i]
        if a == "--":
            i += 1
            break
        if not a.startswith("-") or a == "-":
            break
        if name == "nice" and re.fullmatch(r"-\d+", a):
            i += 1
            continue
        opt = a.split("=", 1)[0]
        if opt in flag_opts:
            i += 1
        elif opt in value_opts:
            i += 1 if "=" in a else 2
        elif len(opt) > 2 and not opt.startswith("--") and opt[:2] in value_opts:
            i += 1  # -s9 / -n5: value attached
        else:
            return [f"`{name}` option {a!r} is not supported here (inner commands of {name} "
                    "are checked, so only its plain options are accepted)"]
    if name == "timeout":
        if i >= len(args):
            return ["timeout needs a duration and a command"]
        i += 1  # the duration
    inner = args[i:]
    if not inner:
        return [] if name in ("nice", "ionice") else [f"{name} needs a command"]
    problems = check_words(inner, allowed, in_pipeline=in_pipeline, _depth=depth + 1)
    return [f"inside `{name}`: {p}" for p in problems]


# --- option scanning helpers ----------------------------------------------------------------

def _long_hit(arg: str, refused: Iterable[str], min_len: int = 3) -> str | None:
    """The refused long option ``arg`` names, accepting unambiguous-prefix abbreviations."""
    if not arg.startswith("--") or arg == "--":
        return None
    name = arg.split("=", 1)[0]
    for opt in refused:
        if name == opt or (len(name) >= min_len and opt.startswith(name)):
            return opt
    return None


def _short_cluster_hit(arg: str, letters: str) -> str | None:
    """A refused short option inside a cluster like ``-Hx``."""
    if arg.startswith("-") and not arg.startswith("--") and len(arg) > 1:
        for ch in arg[1:]:
            if ch in letters:
                return "-" + ch
    return None


def _options(args: Sequence[str]) -> list[str]:
    """Arguments before a ``--`` end-of-options marker."""
    out = []
    for a in args:
        if a == "--":
            break
        out.append(a)
    return out


def _generic(refused_long: Sequence[str] = (), refused_short: str = "",
             refused_exact: Sequence[str] = (), reason: str = "",
             check_all_args: bool = False) -> Callable[[str, list[str]], list[str]]:
    def check(name: str, args: list[str]) -> list[str]:
        scan = args if check_all_args else _options(args)
        for a in scan:
            hit = (_long_hit(a, refused_long) or _short_cluster_hit(a, refused_short)
                   or (a if a in refused_exact or a.split("=", 1)[0] in refused_exact
                       else None))
            if hit:
                return [f"`{name} {hit}` is not allowed: {reason}"]
        return []
    return check


_RUNS = "it makes the program run other programs"
_WRITES = "it writes files outside the file tools' checks; use write_file / edit_file instead"

# --- per-program checks -------------------------------------------------------------------

_FIND_REFUSED = frozenset({"-exec", "-execdir", "-ok", "-okdir", "-delete", "-fprint",
                           "-fprint0", "-fprintf", "-fls"})


def _check_find(name: str, args: list[str]) -> list[str]:
    # find's expression may appear anywhere, even after "--".
    for a in args:
        if a in _FIND_REFUSED:
            why = _RUNS if a.startswith(("-exec", "-ok")) else (
                "it deletes files" if a == "-delete" else _WRITES)
            return [f"`find {a}` is not allowed: {why}. List the files with find and act on "
                    "them with separate commands or tools"]
    return []


def _check_fd(name: str, args: list[str]) -> list[str]:
    for a in _options(args):
        hit = _long_hit(a, ("--exec", "--exec-batch")) or _short_cluster_hit(a, "xX")
        if hit:
            return [f"`{name} {hit}` is not allowed: {_RUNS}"]
    return []


def _check_rg(name: str, args: list[str]) -> list[str]:
    for a in _options(args):
        hit = _long_hit(a, ("--pre", "--pre-glob", "--hostname-bin"), min_len=5)
        if hit:
            return [f"`rg {hit}` is not allowed: {_RUNS} (a preprocessor)"]
    return []


def _check_tree(name: str, args: list[str]) -> list[str]:
    for a in _options(args):
        hit = _long_hit(a, ("--output",)) or _short_cluster_hit(a, "oR")
        if hit:
            return [f"`tree {hit}` is not allowed: {_WRITES}"]
    return []


def _check_sort(name: str, args: list[str]) -> list[str]:
    for a in _options(args):
        if _long_hit(a, ("--compress-program",)):
            return [f"`sort --compress-program` is not allowed: {_RUNS}"]
        if _long_hit(a, ("--output",), min_len=4) or _short_cluster_hit(a, "o"):
            return [f"`sort -o` is not allowed: {_WRITES}"]
    return []


def _check_uniq(name: str, args: list[str]) -> list[str]:
    positional: list[str] = []
    i, options_done = 0, False
    while i < len(args):
        a = args[i]
        if options_done or not a.startswith("-") or a == "-":
            positional.append(a)
        elif a == "--":
            options_done = True
        elif a in ("-f", "-s", "-w"):
            i += 1  # the option's value
        i += 1
    if len(positional) >= 2:
        return [f"`uniq INPUT OUTPUT` is not allowed: the second file is written; {_WRITES}"]
    return []


def _check_tee(name: str, args: list[str]) -> list[str]:
    files = [a for a in args if not a.startswith("-") or a == "-"]
    if [f for f in files if f != "-"]:
        return [f"`tee FILE` is not allowed: {_WRITES}"]
    return []


def _check_dd(name: str, args: list[str]) -> list[str]:
    for a in args:
        if a.startswith("of="):
            return [f"`dd of=` is not allowed: {_WRITES}"]
    return []


def _check_tar(name: str, args: list[str]) -> list[str]:
    refused_long = ("--to-command", "--checkpoint-action", "--use-compress-program",
                    "--rsh-command", "--info-script", "--new-volume-script", "--rmt-command",
                    "--index-file")
    opts = _options(args)
    for idx, a in enumerate(opts):
        hit = _long_hit(a, refused_long)
        if not hit:
            if a.startswith("-"):
                hit = _short_cluster_hit(a, "IF")
            elif idx == 0:  # old-style cluster: `tar xIf prog archive`
                hit = _short_cluster_hit("-" + a, "IF")
        if hit:
            return [f"`tar {hit}` is not allowed: {_RUNS}"]
    for a in args:
        if re.match(r"^[^/.-][^/]*:", a) and not a.startswith("--"):
            return [f"tar archive {a!r} looks like a remote host:path, which runs rsh/ssh; use a "
                    "local path (prefix it with ./)"]
    return []


def _check_zip(name: str, args: list[str]) -> list[str]:
    for a in _options(args):
        hit = _long_hit(a, ("--unzip-command",)) or (a if a == "-TT" else None)
        if hit:
            return [f"`zip {hit}` is not allowed: {_RUNS}"]
    return []


def _check_diff_program(name: str, args: list[str]) -> list[str]:
    for a in _options(args):
        if _long_hit(a, ("--diff-program",)):
            return [f"`{name} --diff-program` is not allowed: {_RUNS}"]
    return []


def _check_net_copy(name: str, args: list[str]) -> list[str]:
    # ssh/scp/sftp/rsync: ProxyCommand/LocalCommand/-S/-e run local programs.
    for a in _options(args):
        hit = (_long_hit(a, ("--rsh", "--rsync-path", "--config"))
               or (a[:2] if a[:2] in ("-o", "-F", "-S") and name != "rsync" else None)
               or (a[:2] if name == "rsync" and a[:2] == "-e" else None)
               or (_short_cluster_hit(a, "e") if name == "rsync" else None))
        if hit:
            return [f"`{name} {hit}` is not allowed: {_RUNS} (proxy/remote-shell commands and "
                    "config files)"]
    return []


def _check_curl(name: str, args: list[str]) -> list[str]:
    for a in _options(args):
        hit = (_long_hit(a, ("--output", "--remote-name", "--remote-name-all", "--output-dir",
                             "--config", "--dump-header", "--cookie-jar", "--trace",
                             "--trace-ascii", "--libcurl", "--stderr", "--etag-save",
                             "--hsts", "--alt-svc"), min_len=5)
               or _short_cluster_hit(a, "oODcK"))
        if hit:
            return [f"`curl {hit}` is not allowed: {_WRITES}; output is returned to you (or use "
                    "web_fetch)"]
    return []


def _check_wget(name: str, args: list[str]) -> list[str]:
    opts = _options(args)
    to_stdout = False
    for i, a in enumerate(opts):
        hit = (_long_hit(a, ("--execute", "--output-file", "--append-output", "--config",
                             "--directory-prefix", "--save-cookies", "--warc-file",
                             "--input-file", "--post-file", "--body-file"))
               or (a[:2] if a[:2] in ("-e", "-o", "-a", "-P", "-i") else None))
        if hit:
            return [f"`wget {hit}` is not allowed: it runs wgetrc commands or writes files"]
        if a in ("-O-", "-qO-", "--output-document=-") or (
                a in ("-O", "-qO", "--output-document") and i + 1 < len(opts)
                and opts[i + 1] == "-"):
            to_stdout = True
        elif a.startswith(("-O", "--output-document")) or (a.startswith("-") and "O" in a
                                                             and not a.startswith("--")):
            return [f"`wget {a}` is not allowed: {_WRITES}; use `wget -O - URL` or web_fetch"]
    if not to_stdout:
        return [f"wget saves to a file by default, which is not allowed: {_WRITES}; use "
                "`wget -qO- URL` or the web_fetch tool"]
    return []


def _check_nc(name: str, args: list[str]) -> list[str]:
    for a in _options(args):
        hit = (_long_hit(a, ("--exec", "--sh-exec", "--lua-exec"))
               or _short_cluster_hit(a, "ec"))
        if hit:
            return [f"`{name} {hit}` is not allowed: {_RUNS}"]
    return []


def _check_make(name: str, args: list[str]) -> list[str]:
    for a in _options(args):
        if _long_hit(a, ("--eval",)) or a.startswith("-E"):
            return [f"`{name} --eval` is not allowed: it runs arbitrary recipes"]
        if re.match(r"^[A-Za-z_][A-Za-z0-9_.-]*\s*(\+|\?|::?|!)?=", a):
            return [f"`{name} {a}` is not allowed: variable overrides can replace the commands "
                    "a recipe runs (SHELL=, CC=, ...); run a target without overrides"]
    return []


def _check_npm(name: str, args: list[str]) -> list[str]:
    for a in _options(args):
        if _long_hit(a, ("--script-shell", "--shell", "--call", "--node-options")) or a == "-c":
            return [f"`{name} {a}` is not allowed: {_RUNS}"]
    sub = next((a for a in args if not a.startswith("-")), "")
    if sub in ("exec", "x", "dlx", "create", "init"):
        return [f"`{name} {sub}` is not allowed: it downloads and runs arbitrary packages"]
    if sub == "config" and any(a in ("set", "edit") for a in args):
        return [f"`{name} config set` is not allowed: it can change the shell scripts run with"]
    return []


def _check_cargo(name: str, args: list[str]) -> list[str]:
    for a in _options(args):
        if _long_hit(a, ("--config",)) or a.startswith("-Z"):
            return [f"`cargo {a}` is not allowed: config overrides can set programs to run "
                    "(target runners, linkers)"]
    return []


def _check_go(name: str, args: list[str]) -> list[str]:
    for a in _options(args):
        if a.split("=", 1)[0] in ("-toolexec", "--toolexec", "-exec", "--exec"):
            return [f"`go {a}` is not allowed: {_RUNS}"]
    return []


def _check_cc(name: str, args: list[str]) -> list[str]:
    for a in args:
        if a.startswith(("-wrapper", "-fplugin", "-specs", "--specs", "-B")):
            return [f"`{name} {a}` is not allowed: {_RUNS}"]
    return []


def _check_file(name: str, args: list[str]) -> list[str]:
    for a in _options(args):
        if _short_cluster_hit(a, "C") or _long_hit(a, ("--compile",)):
            return [f"`file -C` is not allowed: {_WRITES}"]
    return []


# sed: a small scanner over the script, refusing the commands/flags that run programs or write
# files (e, w, W, s///e, s///w). Unknown syntax is refused (fail closed).

_SED_SIMPLE = set("=dDgGhHlnNpPxzF{}!")


def _sed_script_problem(script: str) -> str | None:
    i, n = 0, len(script)

    def skip_ws(j: int) -> int:
        while j < n and script[j] in " \t;\n":
            j += 1
        return j

    def read_delimited(j: int, delim: str) -> int | None:
        """Index just after the closing delimiter, honouring backslash escapes."""
        while j < n:
            if script[j] == "\\":
                j += 2
                continue
            if script[j] == delim:
                return j + 1
            if script[j] == "\n":
                return None
            j += 1
        return None

    while True:
        i = skip_ws(i)
        if i >= n:
            return None
        # addresses: numbers, $, /re/, \cREc, ranges, steps, +N, ~N, and the trailing !
        while i < n:
            c = script[i]
            if c.isdigit() or c in "$,~+ \t!":
                i += 1
            elif c == "/":
                end = read_delimited(i + 1, "/")
                if end is None:
                    return "unterminated address"
                i = end
                while i < n and script[i] in "IM":
                    i += 1
            elif c == "\\" and i + 1 < n:
                end = read_delimited(i + 2, script[i + 1])
                if end is None:
                    return "unterminated address"
                i = end
            else:
                break
        if i >= n:
            return None
        cmd = script[i]
        i += 1
        if cmd in _SED_SIMPLE:
            continue
        if cmd == "#":
            while i < n and script[i] != "\n":
                i += 1
            continue
        if cmd in "s":
            if i >= n or script[i] in "\\\n":
                return "unsupported s delimiter"
            delim = script[i]
            end = read_delimited(i + 1, delim)
            end = read_delimited(end, delim) if end is not None else None
            if end is None:
                return "unterminated s command"
            i = end
            while i < n and script[i] not in ";\n}":
                if script[i] in "ew":
                    return f"the s///{script[i]} flag"
                if script[i] in "W":
                    return "the s///w flag"
                i += 1
            continue
        if cmd == "y":
            if i >= n:
                return "unterminated y command"
            delim = script[i]
            end = read_delimited(i + 1, delim)
            end = read_delimited(end, delim) if end is not None else None
            if end is None:
                return "unterminated y command"
            i = end
            continue
        if cmd in "aic":  # text to end of line (GNU one-liner form)
            while i < n and script[i] != "\n":
                if script[i] == "\\":
                    i += 1
                i += 1
            continue
        if cmd in "rR":  # read a file: a read, allowed
            while i < n and script[i] != "\n":
                i += 1
            continue
        if cmd in ":btTv":
            while i < n and script[i] not in ";\n":
                i += 1
            continue
        if cmd in "qQlL":
            while i < n and (script[i].isdigit() or script[i] in " \t"):
                i += 1
            continue
        if cmd in "wW":
            return f"the {cmd} command (writes a file)"
        if cmd == "e":
            return "the e command (runs a program)"
        return f"the command {cmd!r}"


def _check_sed(name: str, args: list[str]) -> list[str]:
    scripts: list[str] = []
    i, have_e = 0, False
    positional: list[str] = []
    while i < len(args):
        a = args[i]
        if a == "--":
            positional.extend(args[i + 1:])
            break
        if a.startswith("--"):
            opt = a.split("=", 1)[0]
            if _long_hit(a, ("--in-place",)):
                return [f"`sed -i` is not allowed: {_WRITES}"]
            if _long_hit(a, ("--file",)):
                return ["`sed -f FILE` is not allowed: the script must be visible on the command "
                        "line; use -e 'SCRIPT'"]
            if _long_hit(a, ("--expression",)):
                have_e = True
                if "=" in a:
                    scripts.append(a.split("=", 1)[1])
                elif i + 1 < len(args):
                    scripts.append(args[i + 1])
                    i += 1
            elif _long_hit(a, ("--line-length",)) and "=" not in a:
                i += 1
            elif opt not in ("--quiet", "--silent", "--regexp-extended", "--separate",
                             "--null-data", "--zero-terminated", "--unbuffered", "--posix",
                             "--debug", "--sandbox", "--follow-symlinks", "--binary",
                             "--line-length", "--help", "--version", "--expression"):
                return [f"sed option {a!r} is not supported here"]
            i += 1
            continue
        if a.startswith("-") and a != "-":
            j = 1
            while j < len(a):
                ch = a[j]
                if ch == "i":
                    return [f"`sed -i` is not allowed: {_WRITES}"]
                if ch == "f":
                    return ["`sed -f FILE` is not allowed: the script must be visible on the "
                            "command line; use -e 'SCRIPT'"]
                if ch in "el":
                    value = a[j + 1:]
                    if not value:
                        i += 1
                        value = args[i] if i < len(args) else ""
                    if ch == "e":
                        have_e = True
                        scripts.append(value)
                    break
                if ch not in "nrEsuzb":
                    return [f"sed option -{ch} is not supported here"]
                j += 1
            i += 1
            continue
        positional.append(a)
        i += 1
    if not have_e and positional:
        scripts.append(positional[0])
    for script in scripts:
        problem = _sed_script_problem(script)
        if problem:
            return [f"sed script {script[:40]!r} is not allowed: {problem} — only print/"
                    "substitute style scripts without e/w/W/s///e/s///w are accepted"]
    return []


# awk: the language can run programs (system(), "cmd" | getline, print | "cmd") and write files
# (print > "f"). A full parse is out of scope, so refuse the tokens those need.

_AWK_BAD = [
    (re.compile(r"\bsystem\s*\("), "system() runs a program"),
    (re.compile(r"\bgetline\b"), "getline can read from a program"),
    (re.compile(r"(?<!\|)\|(?!\|)"), "| pipes to or from a program (use || for logical or)"),
    (re.compile(r">(?!=)"), "> / >> write files (for comparisons write `b < a` instead of "
                            "`a > b`, or use >=)"),
    (re.compile(r"\bENVIRON\b"), "ENVIRON reads environment variables"),
    (re.compile(r"@load|@include"), "@load/@include load code"),
    (re.compile(r"\bPROCINFO\b"), "PROCINFO is not allowed"),
]


def _check_awk(name: str, args: list[str]) -> list[str]:
    program: str | None = None
    i = 0
    while i < len(args):
        a = args[i]
        if a == "--":
            if program is None and i + 1 < len(args):
                program = args[i + 1]
            break
        if a.startswith("-") and a != "-":
            if a[:2] in ("-f", "-E", "-l", "-i") or _long_hit(
                    a, ("--file", "--exec", "--load", "--include", "--source")):
                return [f"`{name} {a}` is not allowed: the awk program must be given inline "
                        "(files and extensions cannot be checked)"]
            if a[:2] in ("-F", "-v") and len(a) == 2:
                i += 2
                continue
            i += 1
            continue
        program = a
        break
    if program is None:
        return []
    for pattern, why in _AWK_BAD:
        if pattern.search(program):
            return [f"awk program not allowed: {why}"]
    return []


# git: the configuration, pager and external tools can all run programs, so global options are
# limited to harmless ones, subcommands to known built-ins, and subcommand options are screened.

_GIT_SAFE_GLOBALS = frozenset({
    "--no-pager", "-P", "--no-replace-objects", "--literal-pathspecs", "--glob-pathspecs",
    "--noglob-pathspecs", "--icase-pathspecs", "--no-optional-locks", "--version", "-v",
    "--no-lazy-fetch", "--no-advice",
})
_GIT_GLOBAL_REASONS = {
    "-c": "sets configuration, which can name programs to run",
    "--config-env": "sets configuration, which can name programs to run",
    "-p": "starts a pager, which can run commands",
    "--paginate": "starts a pager, which can run commands",
    "--exec-path": "changes where git finds its programs",
    "-C": "switches to another repository; cd into a folder inside the project instead",
    "--git-dir": "switches to another repository",
    "--work-tree": "switches to another work tree",
    "--namespace": "is not supported",
    "--html-path": "is not supported",
    "--man-path": "is not supported",
    "--info-path": "is not supported",
    "--list-cmds": "is not supported",
    "--super-prefix": "is not supported",
    "--attr-source": "is not supported",
}
_GIT_KNOWN = frozenset({
    "status", "diff", "log", "show", "branch", "tag", "add", "commit", "checkout", "switch",
    "restore", "reset", "rm", "mv", "stash", "fetch", "pull", "merge", "rebase", "cherry-pick",
    "revert", "blame", "annotate", "grep", "ls-files", "ls-tree", "rev-parse", "rev-list",
    "describe", "shortlog", "reflog", "remote", "config", "init", "clone", "cat-file",
    "show-ref", "for-each-ref", "whatchanged", "diff-tree", "diff-files", "diff-index",
    "merge-base", "name-rev", "count-objects", "fsck", "gc", "worktree", "notes", "apply",
    "format-patch", "am", "clean", "archive", "version", "check-ignore", "check-attr",
    "check-ref-format", "hash-object", "range-diff", "cherry", "show-branch", "ls-remote",
    "var", "verify-commit", "verify-tag", "sparse-checkout", "prune", "repack",
    "update-index", "write-tree", "read-tree", "commit-tree", "symbolic-ref", "update-ref",
    "stripspace", "mailinfo", "bundle", "bisect",
})
_GIT_REFUSED_SUBCOMMANDS = {
    "push": "pushing is never allowed (it publishes work; the person pushes themselves)",
    "send-pack": "pushing is never allowed",
    "difftool": "it runs external diff tools",
    "mergetool": "it runs external merge tools",
    "filter-branch": "its filters are shell commands",
    "filter-repo": "it runs callbacks",
    "submodule": "submodule commands can run configured commands (foreach, update=!cmd)",
    "help": "it opens man pages or a browser",
    "instaweb": "it starts a web server",
    "web--browse": "it starts a browser",
    "daemon": "it starts a server",
    "http-backend": "it is a server",
    "shell": "it is a restricted shell",
    "send-email": "it sends mail",
    "credential": "it handles credentials",
    "credential-store": "it handles credentials",
    "credential-cache": "it handles credentials",
    "upload-pack": "it is a transport program",
    "receive-pack": "it is a transport program",
    "upload-archive": "it is a transport program",
    "p4": "it runs p4", "svn": "it runs svn", "cvsimport": "it runs cvs",
    "archimport": "it runs tla", "quiltimport": "it runs quilt",
    "fast-import": "it writes arbitrary objects and marks files",
    "maintenance": "it registers scheduled jobs (cron/systemd)",
    "interpret-trailers": "trailer commands from the configuration run programs",
    "checkout-index": "it can write files outside the work tree (--prefix)",
    "gui": "it is interactive", "citool": "it is interactive", "gitk": "it is interactive",
}
_GIT_RUN_LONG = ("--ext-diff", "--textconv", "--exec", "--upload-pack", "--receive-pack",
                 "--open-files-in-pager", "--template", "--config", "--remote",
                 "--gpg-sign", "--trailer", "--interactive", "--edit-description")
_GIT_WRITE_LONG = ("--output", "--output-directory", "--separate-git-dir", "--unsafe-paths")
# Short options that run programs or write files, per subcommand (they mean other things
# elsewhere, e.g. `git add -u`).
_GIT_SHORT: dict[str, str] = {
    "diff": "o", "log": "o", "show": "o", "whatchanged": "o", "format-patch": "o",
    "archive": "o", "rebase": "xi", "fetch": "u", "pull": "u", "clone": "uc", "ls-remote": "u",
    "grep": "O", "commit": "S", "tag": "s", "merge": "S", "cherry-pick": "S", "revert": "S",
    "am": "S", "add": "ip", "checkout": "p", "reset": "p", "stash": "p", "restore": "p",
    "clean": "i",
}
_GIT_CONFIG_READ = frozenset({"--get", "--get-all", "--get-regexp", "--list", "-l",
                              "--show-origin", "--show-scope", "--null", "-z", "--name-only",
                              "--local", "--global", "--worktree", "--type", "--bool",
                              "--int", "--path", "--default", "--includes", "--no-includes",
                              "get", "list"})


def _check_git(name: str, args: list[str]) -> list[str]:
    i = 0
    while i < len(args) and args[i].startswith("-"):
        a = args[i]
        opt = a.split("=", 1)[0]
        if opt in _GIT_SAFE_GLOBALS:
            i += 1
            continue
        for refused, why in _GIT_GLOBAL_REASONS.items():
            if opt == refused or (refused.startswith("--") and len(opt) >= 4
                                  and refused.startswith(opt)) or (
                    refused in ("-c", "-C", "-p") and opt.startswith(refused) and len(opt) > 2
                    and not opt.startswith("--")):
                return [f"`git {refused}` is not allowed: it {why}"]
        return [f"git global option {a!r} is not supported here"]
    if i >= len(args):
        return []
    sub, rest = args[i], args[i + 1:]
    if sub in _GIT_REFUSED_SUBCOMMANDS:
        return [f"`git {sub}` is not allowed: {_GIT_REFUSED_SUBCOMMANDS[sub]}"]
    if sub not in _GIT_KNOWN:
        return [f"`git {sub}` is not a known git command (aliases are not allowed: they can run "
                "shell commands)"]
    if sub == "config":
        if not all(a in _GIT_CONFIG_READ or not a.startswith("-") for a in rest) or not any(
                a in _GIT_CONFIG_READ for a in rest):
            return ["`git config` may only read (--get, --get-regexp, --list): configuration "
                    "can name programs to run"]
        return []
    if sub == "bisect" and "run" in rest:
        return ["`git bisect run` is not allowed: it runs a program for each step"]
    if sub == "worktree" and "add" in rest:
        return ["`git worktree add` is not allowed: it writes a work tree outside the checks"]
    if sub == "bundle" and "create" in rest:
        return [f"`git bundle create` is not allowed: {_WRITES}"]
    shorts = _GIT_SHORT.get(sub, "")
    for a in _options(rest):
        hit = _long_hit(a, _GIT_RUN_LONG, min_len=4)
        if hit:
            return [f"`git {sub} {hit}` is not allowed: {_RUNS} (external tools, editors, "
                    "signing programs, transports or remotes)"]
        hit = _long_hit(a, _GIT_WRITE_LONG, min_len=4)
        if hit:
            return [f"`git {sub} {hit}` is not allowed: {_WRITES}"]
        hit = _short_cluster_hit(a, shorts) if shorts else None
        if hit:
            return [f"`git {sub} {hit}` is not allowed here: it runs a program, opens an "
                    "interactive prompt or writes a file outside the checks"]
        if sub == "commit" and a.split("=", 1)[0] in ("--patch", "-e", "--edit"):
            return [f"`git commit {a}` is not allowed: it is interactive; pass -m MESSAGE"]
    return []


_CHECKERS: dict[str, Callable[[str, list[str]], list[str]]] = {
    "find": _check_find,
    "fd": _check_fd,
    "fdfind": _check_fd,
    "rg": _check_rg,
    "tree": _check_tree,
    "sort": _check_sort,
    "uniq": _check_uniq,
    "tee": _check_tee,
    "dd": _check_dd,
    "tar": _check_tar,
    "zip": _check_zip,
    "diff3": _check_diff_program,
    "sdiff": _check_diff_program,
    "ssh": _check_net_copy,
    "scp": _check_net_copy,
    "sftp": _check_net_copy,
    "rsync": _check_net_copy,
    "curl": _check_curl,
    "wget": _check_wget,
    "nc": _check_nc,
    "ncat": _check_nc,
    "netcat": _check_nc,
    "make": _check_make,
    "npm": _check_npm,
    "cargo": _check_cargo,
    "go": _check_go,
    "cc": _check_cc,
    "file": _check_file,
    "sed": _check_sed,
    "awk": _check_awk,
    "git": _check_git,
}
# Other spellings of the same program.
_FAMILY: dict[str, str] = {
    "gsed": "sed", "gawk": "awk", "mawk": "awk", "nawk": "awk", "busybox-awk": "awk",
    "gmake": "make", "bsdtar": "tar", "gtar": "tar", "pnpm": "npm", "yarn": "npm",
    "bun": "npm", "gcc": "cc", "g++": "cc", "clang": "cc", "clang++": "cc", "c++": "cc",
    "gfind": "find", "gsort": "sort", "gtee": "tee",
}
