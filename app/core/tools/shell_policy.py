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
   ``rg --pre``, ``sed -i`` / ``w`` / ``e``, ``awk system()`` / ``-W exec``, ``sort -o``,
   ``tar --to-command``, ``ssh -o``, ``git tag -s``, ...).

Options are never matched by spelling. Each program's argv is parsed the way the program parses
it (:mod:`app.core.tools.options`: getopt_long abbreviations, short-option clusters, attached
values, ``--``, options after operands, git's ``--no-`` negations), and refusals are decided on
the canonical option names, so ``sort --o=x``, ``sort -uox`` and ``sort f --out x`` are all
``sort --output``. Where a program's option table is complete (``sort``, ``tee``, ``sed``,
``awk``, ``ssh``, ``git config``, the wrappers) an option it does not list is refused; elsewhere
an unknown option is read as a flag, which can only make more of the words look like options.
``git config`` is read-only by construction: only the read forms, with a bounded number of
names, are accepted.

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

from app.core.tools.options import (
    GIT_GLOBAL_TABLE,
    GIT_HARMLESS_GLOBALS,
    WRAPPER_TABLES,
    OptionTable,
    ParsedArgs,
    ParsedOption,
    parse_args,
    unwrap,
)
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
_WRAPPERS = frozenset(WRAPPER_TABLES)


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

def _check_wrapper(name: str, args: list[str], allowed: frozenset[str], in_pipeline: bool,
                   depth: int) -> list[str]:
    if depth >= _MAX_WRAPPER_DEPTH:
        return [f"`{name}` wrappers nested too deeply"]
    # Parsed exactly as the wrapper parses its argv, so the inner command checked here is the
    # one that runs (an option we cannot place is refused rather than guessed).
    unwrapped = unwrap(name, args)
    if unwrapped.error:
        if unwrapped.options.error:
            return [f"`{name}` option not supported here: {unwrapped.error} (the inner command "
                    f"of {name} is checked, so only its plain options are accepted)"]
        return [unwrapped.error]
    if not unwrapped.inner:
        return []
    problems = check_words(unwrapped.inner, allowed, in_pipeline=in_pipeline, _depth=depth + 1)
    return [f"inside `{name}`: {p}" for p in problems]


# --- option helpers -------------------------------------------------------------------------

def _parse(name: str, table: OptionTable, args: Sequence[str]) -> tuple[ParsedArgs, list[str]]:
    """Parse with ``table``; a parse error is itself a refusal (the program would reject it, or
    read it in a way we cannot predict)."""
    parsed = parse_args(table, args)
    if parsed.error:
        return parsed, [f"`{name}` option not supported here: {parsed.error}"]
    return parsed, []


def _refused(name: str, parsed: ParsedArgs, refused: Iterable[str], reason: str) -> list[str]:
    hit = parsed.find(*refused)
    return [f"`{name} {hit}` is not allowed: {reason}"] if hit is not None else []


def _simple(table: OptionTable, refused: Iterable[str],
            reason: str) -> Callable[[str, list[str]], list[str]]:
    """A checker that only refuses some options (by canonical name, whatever the spelling)."""
    names = tuple(refused)

    def check(name: str, args: list[str]) -> list[str]:
        parsed, problems = _parse(name, table, args)
        return problems or _refused(name, parsed, names, reason)
    return check


_RUNS = "it makes the program run other programs"
_WRITES = "it writes files outside the file tools' checks; use write_file / edit_file instead"

# --- per-program checks -------------------------------------------------------------------

_FIND_REFUSED = frozenset({"-exec", "-execdir", "-ok", "-okdir", "-delete", "-fprint",
                           "-fprint0", "-fprintf", "-fls"})


def _check_find(name: str, args: list[str]) -> list[str]:
    # find is not getopt: its expression may appear anywhere, even after "--", and its
    # predicates are exact single-dash words (no abbreviation, no clusters).
    for a in args:
        if a in _FIND_REFUSED:
            why = _RUNS if a.startswith(("-exec", "-ok")) else (
                "it deletes files" if a == "-delete" else _WRITES)
            return [f"`find {a}` is not allowed: {why}. List the files with find and act on "
                    "them with separate commands or tools"]
    return []


# Open tables list the refused options and the value-taking options we are sure of: an unknown
# option is read as a flag, so a value it may take is then scanned as options too (stricter).
_FD = OptionTable("x|exec= X|exec-batch= e|extension= t|type= E|exclude= d|max-depth= "
                  "c|color= j|threads= S|size=", closed=False)
_RG = OptionTable("pre= pre-glob= hostname-bin= e|regexp= f|file= g|glob= t|type= "
                  "T|type-not= m|max-count= A|after-context= B|before-context= C|context= "
                  "j|threads= M|max-columns= E|encoding= r|replace= d|max-depth= "
                  "engine= sort= sortr= color= colors= type-add= type-clear= ignore-file= "
                  "path-separator=", closed=False)
_TREE = OptionTable("o|output= R L= P= I= H= T= filelimit= timefmt= charset= sort= "
                    "fromfile? infofile= hintro= houtro=", closed=False)
_SORT = OptionTable(
    "b|ignore-leading-blanks c check? C d|dictionary-order f|ignore-case "
    "g|general-numeric-sort h|human-numeric-sort i|ignore-nonprinting k|key= m|merge "
    "M|month-sort n|numeric-sort o|output= r|reverse R|random-sort random-source= sort= "
    "s|stable S|buffer-size= t|field-separator= T|temporary-directory= u|unique "
    "V|version-sort z|zero-terminated batch-size= compress-program= debug files0-from= "
    "parallel= help version")
_UNIQ = OptionTable("c|count d|repeated D all-repeated? f|skip-fields= i|ignore-case "
                    "s|skip-chars= u|unique z|zero-terminated w|check-chars= group? help "
                    "version")
_TEE = OptionTable("a|append i|ignore-interrupts p output-error? help version")


def _check_uniq(name: str, args: list[str]) -> list[str]:
    parsed, problems = _parse(name, _UNIQ, args)
    if problems:
        return problems
    if len(parsed.operands) >= 2:
        return [f"`uniq INPUT OUTPUT` is not allowed: the second file is written; {_WRITES}"]
    return []


def _check_tee(name: str, args: list[str]) -> list[str]:
    parsed, problems = _parse(name, _TEE, args)
    if problems:
        return problems
    # Every operand is written, whatever it looks like: `-` is a file named "-" (POSIX), and a
    # word after `--` (`tee -- -link`) is a file even if it starts with a dash.
    if parsed.operands:
        return [f"`tee FILE` is not allowed: {_WRITES} (tee writes every file it is given)"]
    return []


def _check_dd(name: str, args: list[str]) -> list[str]:
    # dd's operands are KEY=VALUE words, not getopt options.
    for a in args:
        if a.startswith("of="):
            return [f"`dd of=` is not allowed: {_WRITES}"]
    return []


_TAR = OptionTable(
    "to-command= checkpoint-action= I|use-compress-program= rsh-command= "
    "F|info-script|new-volume-script= rmt-command= index-file= b|blocking-factor= "
    "C|directory= f|file= g|listed-incremental= H|format= K|starting-file= L|tape-length= "
    "N|newer|after-date= T|files-from= V|label= X|exclude-from=", closed=False)
_TAR_REFUSED = ("--to-command", "--checkpoint-action", "--use-compress-program",
                "--rsh-command", "--info-script", "--rmt-command", "--index-file")


def _tar_old_style(args: list[str]) -> list[str]:
    """`tar xIf prog archive` -> `-x -I prog -f archive`: each value-taking letter of the
    first-word cluster takes the next word, in order."""
    if not args or args[0].startswith("-"):
        return args
    out: list[str] = []
    values = iter(args[1:])
    used = 0
    for ch in args[0]:
        out.append("-" + ch)
        opt = _TAR.short.get(ch)
        if opt is not None and opt.arg == "required":
            value = next(values, None)
            if value is None:
                break
            out.append(value)
            used += 1
    return out + args[1 + used:]


def _check_tar(name: str, args: list[str]) -> list[str]:
    parsed, problems = _parse(name, _TAR, _tar_old_style(args))
    if problems:
        return problems
    hit = _refused(name, parsed, _TAR_REFUSED, _RUNS)
    if hit:
        return hit
    for a in args:
        if re.match(r"^[^/.-][^/]*:", a) and not a.startswith("--"):
            return [f"tar archive {a!r} looks like a remote host:path, which runs rsh/ssh; use a "
                    "local path (prefix it with ./)"]
    return []


# Info-ZIP zip has multi-letter short options (-TT, -tt, -df ...) that getopt cannot express,
# so -TT is found in any single-dash word; long options go through the table.
_ZIP = OptionTable("unzip-command=", closed=False)


def _check_zip(name: str, args: list[str]) -> list[str]:
    for a in args:
        if a == "--":
            break
        if a.startswith("-") and not a.startswith("--") and "TT" in a:
            return [f"`zip -TT` is not allowed: {_RUNS} ({a!r})"]
    parsed, problems = _parse(name, _ZIP, [a for a in args if not (
        a.startswith("-") and not a.startswith("--"))])
    return problems or _refused(name, parsed, ("--unzip-command",), _RUNS)


_DIFF3 = OptionTable("diff-program= L|label=", closed=False)
_SDIFF = OptionTable("diff-program= o|output= w|width= I|ignore-matching-lines= "
                     "tabsize=", closed=False)


def _check_diff_program(name: str, args: list[str]) -> list[str]:
    parsed, problems = _parse(name, _SDIFF if name == "sdiff" else _DIFF3, args)
    if problems:
        return problems
    return (_refused(name, parsed, ("--diff-program",), _RUNS)
            or _refused(name, parsed, ("--output",), _WRITES))


# OpenSSH uses BSD getopt: no long options, stops at the first operand. ssh then restarts
# option parsing after the host name, so `ssh host -o X=y` is an option too.
_SSH = OptionTable("1 2 4 6 A a C f G g K k M N n q s T t V v X x Y y B= b= c= D= E= e= F= "
                   "I= i= J= L= l= m= O= o= P= p= Q= R= S= W= w=", permute=False)
_SSH_REFUSED = ("-o", "-F", "-S", "-E", "-I")
_SCP = OptionTable("1 2 3 4 6 A B C O p q R r T v F= i= J= l= o= P= S= X= c= D=",
                   closed=False)
_SFTP = OptionTable("1 2 4 6 A a C f N p q r v B= b= c= D= F= i= J= l= o= P= R= s= S= X=",
                    closed=False)
_RSYNC = OptionTable("e|rsh= rsync-path= config= log-file= write-batch= only-write-batch= "
                     "f|filter= B|block-size= M|remote-option= T|temp-dir= exclude= "
                     "include= exclude-from= include-from= files-from=", closed=False)
_NET_REASON = f"{_RUNS} (proxy/remote-shell commands, config files, logs and batch files)"


def _check_net_copy(name: str, args: list[str]) -> list[str]:
    if name == "ssh":
        parsed, problems = _parse(name, _SSH, args)
        if problems:
            return problems
        options = list(parsed.options)
        if parsed.operands:
            again, problems = _parse(name, _SSH, parsed.operands[1:])
            if problems:
                return problems
            options += again.options
        hit = next((o for o in options if o.name in _SSH_REFUSED), None)
        return [f"`ssh {hit}` is not allowed: {_NET_REASON}"] if hit else []
    if name == "rsync":
        return _simple(_RSYNC, ("--rsh", "--rsync-path", "--config", "--log-file",
                                "--write-batch", "--only-write-batch"), _NET_REASON)(name, args)
    table = _SFTP if name == "sftp" else _SCP
    refused = ("-o", "-F", "-S", "-D", "-b") if name == "sftp" else ("-o", "-F", "-S", "-D")
    return _simple(table, refused, _NET_REASON)(name, args)


_CURL = OptionTable(
    "o|output= O|remote-name remote-name-all output-dir= K|config= D|dump-header= "
    "c|cookie-jar= trace= trace-ascii= libcurl= stderr= etag-save= hsts= alt-svc= "
    "w|write-out= A|user-agent= b|cookie= C|continue-at= d|data= e|referer= E|cert= F|form= "
    "H|header= m|max-time= P|ftp-port= Q|quote= r|range= T|upload-file= t|telnet-option= "
    "u|user= U|proxy-user= x|proxy= X|request= y|speed-time= Y|speed-limit= z|time-cond= "
    "data-raw= data-binary= data-urlencode= url= connect-timeout= retry=", closed=False)
_CURL_REFUSED = ("--output", "--remote-name", "--remote-name-all", "--output-dir", "--config",
                 "--dump-header", "--cookie-jar", "--trace", "--trace-ascii", "--libcurl",
                 "--stderr", "--etag-save", "--hsts", "--alt-svc")


def _check_curl(name: str, args: list[str]) -> list[str]:
    parsed, problems = _parse(name, _CURL, args)
    if problems:
        return problems
    why = f"{_WRITES}; output is returned to you (or use web_fetch)"
    hit = _refused(name, parsed, _CURL_REFUSED, why)
    if hit:
        return hit
    # --write-out's %output{FILE} (curl 8.3+) writes a file.
    if any("output{" in v for v in parsed.values("--write-out")):
        return [f"`curl -w %output{{...}}` is not allowed: {why}"]
    return []


_WGET = OptionTable(
    "e|execute= o|output-file= a|append-output= config= P|directory-prefix= save-cookies= "
    "warc-file= i|input-file= post-file= body-file= O|output-document= r|recursive m|mirror "
    "p|page-requisites B|base= t|tries= T|timeout= w|wait= U|user-agent= header= "
    "user= password= post-data= method= body-data= l|level= A|accept= R|reject= "
    "D|domains= X|exclude-directories= I|include-directories= Q|quota=", closed=False)
_WGET_REFUSED = ("--execute", "--output-file", "--append-output", "--config",
                 "--directory-prefix", "--save-cookies", "--warc-file", "--input-file",
                 "--post-file", "--body-file", "--recursive", "--mirror", "--page-requisites")


def _check_wget(name: str, args: list[str]) -> list[str]:
    parsed, problems = _parse(name, _WGET, args)
    if problems:
        return problems
    hit = _refused(name, parsed, _WGET_REFUSED, "it runs wgetrc commands or writes files")
    if hit:
        return hit
    documents = [o for o in parsed.options if o.name == "--output-document"]
    bad = next((o for o in documents if o.value != "-"), None)
    if bad is not None:
        return [f"`wget {bad} {bad.value}` is not allowed: {_WRITES}; use `wget -O - URL` or "
                "web_fetch"]
    if not documents:
        return [f"wget saves to a file by default, which is not allowed: {_WRITES}; use "
                "`wget -qO- URL` or the web_fetch tool"]
    return []


# netcat variants disagree on which letters take values, so only the refused ones are declared.
_NC = OptionTable("e|exec= c|sh-exec= lua-exec= o|output= x|hex-dump=", closed=False)


def _check_nc(name: str, args: list[str]) -> list[str]:
    parsed, problems = _parse(name, _NC, args)
    if problems:
        return problems
    return (_refused(name, parsed, ("--exec", "--sh-exec", "--lua-exec"), _RUNS)
            or _refused(name, parsed, ("--output", "--hex-dump"), _WRITES))


_MAKE = OptionTable("E|eval= C|directory= f|file|makefile= I|include-dir= o|old-file= "
                    "W|what-if|new-file|assume-new=", closed=False)


def _check_make(name: str, args: list[str]) -> list[str]:
    parsed, problems = _parse(name, _MAKE, args)
    if problems:
        return problems
    if parsed.find("--eval"):
        return [f"`{name} --eval` is not allowed: it runs arbitrary recipes"]
    for a in parsed.operands:
        if re.match(r"^[A-Za-z_][A-Za-z0-9_.-]*\s*(\+|\?|::?|!)?=", a):
            return [f"`{name} {a}` is not allowed: variable overrides can replace the commands "
                    "a recipe runs (SHELL=, CC=, ...); run a target without overrides"]
    return []


_NPM = OptionTable("script-shell= shell= c|call= node-options= prefix= C|dir= w|workspace= "
                   "filter=", closed=False)


def _check_npm(name: str, args: list[str]) -> list[str]:
    parsed, problems = _parse(name, _NPM, args)
    if problems:
        return problems
    hit = _refused(name, parsed, ("--script-shell", "--shell", "--call", "--node-options"),
                   _RUNS)
    if hit:
        return hit
    # Every operand is looked at, not only the first: an unknown option's value could make a
    # later word the real subcommand.
    for sub in parsed.operands:
        if sub in ("exec", "x", "dlx", "create", "init"):
            return [f"`{name} {sub}` is not allowed: it downloads and runs arbitrary packages"]
    if "config" in parsed.operands and any(a in ("set", "edit") for a in parsed.operands):
        return [f"`{name} config set` is not allowed: it can change the shell scripts run with"]
    return []


_CARGO = OptionTable("config= Z= C= p|package= j|jobs= target= F|features= manifest-path= "
                     "target-dir=", closed=False)


def _check_cargo(name: str, args: list[str]) -> list[str]:
    parsed, problems = _parse(name, _CARGO, args)
    if problems:
        return problems
    hit = parsed.find("--config", "-Z")
    if hit is not None:
        return [f"`cargo {hit}` is not allowed: config overrides can set programs to run "
                "(target runners, linkers)"]
    return []


# Go's flag package: -name or --name, value as -name=v or -name v, no clusters, no prefixes.
_GO = OptionTable("toolexec= exec= o= C= p= tags= run= ldflags= gcflags= overlay= modfile= "
                  "pkgdir= w u", closed=False, abbreviate=False, long_only=True)


def _check_go(name: str, args: list[str]) -> list[str]:
    parsed, problems = _parse(name, _GO, args)
    if problems:
        return problems
    hit = parsed.find("-toolexec", "-exec")
    if hit is not None:
        return [f"`go {hit.spelled}` is not allowed: {_RUNS}"]
    if parsed.operands[:1] == ["env"] and parsed.find("-w", "-u"):
        return ["`go env -w/-u` is not allowed: GOFLAGS and other settings written there can "
                "make later go commands run programs"]
    return []


def _check_cc(name: str, args: list[str]) -> list[str]:
    # Compiler drivers have their own single-dash, longest-match option grammar (-wrapper,
    # -fplugin=, -B<dir>), not getopt, so their refused spellings are matched as prefixes.
    for a in args:
        if a.startswith(("-wrapper", "-fplugin", "-specs", "--specs", "-B")):
            return [f"`{name} {a}` is not allowed: {_RUNS}"]
    return []


def _check_sort(name: str, args: list[str]) -> list[str]:
    parsed, problems = _parse(name, _SORT, args)
    return (problems or _refused(name, parsed, ("--compress-program",), _RUNS)
            or _refused(name, parsed, ("--output",), _WRITES))


_FILE = OptionTable("C|compile m|magic-file= f|files-from= F|separator= e|exclude= "
                    "P|parameter=", closed=False)
_FD_REFUSED = ("--exec", "--exec-batch")
_RG_REFUSED = ("--pre", "--pre-glob", "--hostname-bin")


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

_SED = OptionTable("n|quiet|silent e|expression= f|file= l|line-length= i|in-place? "
                   "E|r|regexp-extended s|separate z|null-data|zero-terminated u|unbuffered "
                   "b|binary debug posix sandbox follow-symlinks help version")


def _check_sed(name: str, args: list[str]) -> list[str]:
    parsed, problems = _parse(name, _SED, args)
    if problems:
        return problems
    if parsed.find("--in-place"):
        return [f"`sed -i` is not allowed: {_WRITES}"]
    if parsed.find("--file"):
        return ["`sed -f FILE` is not allowed: the script must be visible on the command line; "
                "use -e 'SCRIPT'"]
    scripts = parsed.values("--expression")
    if not parsed.find("--expression") and parsed.operands:
        scripts = [parsed.operands[0]]  # without -e, the first operand is the script
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

# The union of gawk's, mawk's and busybox awk's options. They stop at the program text (gawk's
# optstring starts with "+"). `-W NAME` is `--NAME` (gawk) or a mawk -W option; both may be
# abbreviated, so -W values are looked up in the same long-option table.
_AWK = OptionTable(
    "F|field-separator= f|file= v|assign= W= b|characters-as-bytes c|traditional C|copyright "
    "d|dump-variables? D|debug? e|source= E|exec= g|gen-pot h|help i|include= l|load= "
    "L|lint? n|non-decimal-data N|use-lc-numeric o|pretty-print? O|optimize p|profile? "
    "M|bignum P|posix r|re-interval s|no-optimize S|sandbox t|lint-old V|version k|csv "
    "Y Z|locale= dump interactive posix_space random= sprintf= usage",
    permute=False)
_AWK_NO_INLINE = ("--file", "--exec", "--include", "--load")
_AWK_WRITES = ("--dump-variables", "--debug", "--pretty-print", "--profile")


def _check_awk(name: str, args: list[str]) -> list[str]:
    parsed, problems = _parse(name, _AWK, args)
    if problems:
        return problems
    options = []
    for o in parsed.options:
        if o.name != "-W":
            options.append(o)
            continue
        wname = (o.value or "").split("=", 1)[0]
        wopt, error = _AWK.lookup_long(wname)
        if wopt is None:
            return [f"`{name} -W {o.value}` is not supported here: {error or 'unknown -W option'}"]
        options.append(ParsedOption(wopt.canonical, o.value, o.spelled, True, wopt.display))
    for o in options:
        if o.name in _AWK_NO_INLINE:
            return [f"`{name} {o}` is not allowed: the awk program must be given inline (files "
                    "and extensions cannot be checked)"]
        if o.name in _AWK_WRITES:
            return [f"`{name} {o}` is not allowed: {_WRITES}"]
    programs = [o.value for o in options if o.name == "--source" and o.value is not None]
    if not programs and parsed.operands:
        programs = [parsed.operands[0]]
    for program in programs:
        for pattern, why in _AWK_BAD:
            if pattern.search(program):
                return [f"awk program not allowed: {why}"]
    return []


# git: the configuration, pager and external tools can all run programs, so global options are
# limited to harmless ones, subcommands to known built-ins, and subcommand options are screened
# by canonical name after parsing them as git's parse-options does (unique-prefix
# abbreviations, --no-NAME negations, short clusters, attached values, options after operands,
# `--` / `--end-of-options`).

_GIT_GLOBAL_REASONS = {
    "-c": "sets configuration, which can name programs to run",
    "--config-env": "sets configuration, which can name programs to run",
    "--paginate": "starts a pager, which can run commands",
    "--exec-path": "changes where git finds its programs",
    "-C": "switches to another repository; cd into a folder inside the project instead",
    "--git-dir": "switches to another repository",
    "--work-tree": "switches to another work tree",
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

# Long options refused in every subcommand that has them. `text` is listed so that the real
# option `--text` is not read as an abbreviation of `--textconv`.
_GIT_COMMON = OptionTable(
    "ext-diff textconv text exec= upload-pack= receive-pack= open-files-in-pager? template= "
    "config= remote= gpg-sign? trailer= interactive output= output-directory= "
    "separate-git-dir= unsafe-paths",
    closed=False, negatable=True, end_markers=("--", "--end-of-options"))
_GIT_RUN = frozenset({"--ext-diff", "--textconv", "--exec", "--upload-pack", "--receive-pack",
                      "--open-files-in-pager", "--template", "--config", "--remote",
                      "--gpg-sign", "--trailer", "--interactive", "--edit-description",
                      "--sign", "--local-user", "--edit", "--patch", "--reedit-message"})
_GIT_WRITE = frozenset({"--output", "--output-directory", "--separate-git-dir",
                        "--unsafe-paths", "-o"})
# Value-taking options of the diff/log family: declared so that `-Sfoo` or `-L1,5:foo.c` are
# read as one option with a value, not as a cluster of letters.
_GIT_DIFFISH = "o= S= G= O= I= L="
_GIT_SUB_SPECS: dict[str, str] = {
    **dict.fromkeys(("diff", "log", "show", "whatchanged", "diff-tree", "diff-files",
                     "diff-index", "range-diff", "shortlog"), _GIT_DIFFISH),
    "format-patch": "S= G= O= I= o|output-directory=",
    "archive": "o|output=",
    "rebase": "x|exec= i|interactive S|gpg-sign?",
    "fetch": "u|upload-pack=",
    "ls-remote": "u|upload-pack=",
    "pull": "u|upload-pack= S|gpg-sign?",
    "clone": "u|upload-pack= c|config=",
    "grep": "O|open-files-in-pager? e= f=",
    "commit": "S|gpg-sign? m|message= F|file= C|reuse-message= c|reedit-message= e|edit "
              "p|patch t|template=",
    "tag": "s|sign u|local-user= m|message= F|file= e|edit a|annotate",
    "merge": "S|gpg-sign? m|message= F|file=",
    "cherry-pick": "S|gpg-sign?", "revert": "S|gpg-sign?",
    "am": "S|gpg-sign? i|interactive",
    "commit-tree": "S|gpg-sign? m= F=",
    "add": "i|interactive p|patch e|edit",
    **dict.fromkeys(("checkout", "reset", "restore"), "p|patch"),
    "stash": "p|patch m|message=",
    "clean": "i|interactive",
    "branch": "edit-description",
}
_GIT_SUB_TABLES = {sub: _GIT_COMMON.extended(spec) for sub, spec in _GIT_SUB_SPECS.items()}

# git config may only read: these are the only options, and the action decides how many
# operands there may be (a read never takes a value to write). Abbreviations are not accepted,
# so no prefix can reach a writing option.
_GIT_CONFIG_SCOPES = ("local global system worktree f|file= blob= show-origin show-scope "
                      "z|null includes no-includes type= bool int bool-or-int path "
                      "expiry-date default= name-only")
_GIT_CONFIG_OLD = OptionTable(f"get get-all get-regexp l|list {_GIT_CONFIG_SCOPES}",
                              abbreviate=False, end_markers=("--", "--end-of-options"))
_GIT_CONFIG_ACTIONS = {"--get": (1, 2), "--get-all": (1, 2), "--get-regexp": (1, 2),
                       "--list": (0, 0)}
_GIT_CONFIG_NEW = {
    "get": (OptionTable(f"all regexp value= fixed-value url= {_GIT_CONFIG_SCOPES}",
                        abbreviate=False, end_markers=("--", "--end-of-options")), (1, 1)),
    "list": (OptionTable(_GIT_CONFIG_SCOPES, abbreviate=False,
                         end_markers=("--", "--end-of-options")), (0, 0)),
}
_GIT_CONFIG_HINT = ("`git config` may only read (--get NAME, --get-all NAME, --get-regexp REGEX, "
                    "--list, or `git config get|list`): configuration can name programs to run")


def _check_git_config(rest: list[str]) -> list[str]:
    if rest[:1] and rest[0] in _GIT_CONFIG_NEW:
        table, (low, high) = _GIT_CONFIG_NEW[rest[0]]
        parsed = parse_args(table, rest[1:])
        count = len(parsed.operands)
    else:
        parsed = parse_args(_GIT_CONFIG_OLD, rest)
        actions = [o.name for o in parsed.options if o.name in _GIT_CONFIG_ACTIONS]
        if parsed.error is None and len(set(actions)) != 1:
            return [_GIT_CONFIG_HINT]
        low, high = _GIT_CONFIG_ACTIONS[actions[0]] if actions else (0, 0)
        count = len(parsed.operands)
    if parsed.error:
        return [f"{_GIT_CONFIG_HINT} ({parsed.error})"]
    if not low <= count <= high:
        return [f"{_GIT_CONFIG_HINT} (this form takes {low} to {high} names/patterns, got "
                f"{count}; a further word would be a value to write)"]
    return []


def _check_git(name: str, args: list[str]) -> list[str]:
    glob = parse_args(GIT_GLOBAL_TABLE, args)
    if glob.error:
        return [f"git global option not supported here: {glob.error}"]
    for o in glob.options:
        if o.name in GIT_HARMLESS_GLOBALS:
            continue
        why = _GIT_GLOBAL_REASONS.get(o.name, "is not supported here")
        return [f"`git {o}` is not allowed: it {why}"]
    if not glob.operands:
        return []
    sub, rest = glob.operands[0], glob.operands[1:]
    if sub in _GIT_REFUSED_SUBCOMMANDS:
        return [f"`git {sub}` is not allowed: {_GIT_REFUSED_SUBCOMMANDS[sub]}"]
    if sub not in _GIT_KNOWN:
        return [f"`git {sub}` is not a known git command (aliases are not allowed: they can run "
                "shell commands)"]
    if sub == "config":
        return _check_git_config(rest)
    if sub == "bisect" and "run" in rest:
        return ["`git bisect run` is not allowed: it runs a program for each step"]
    if sub == "worktree" and "add" in rest:
        return ["`git worktree add` is not allowed: it writes a work tree outside the checks"]
    if sub == "bundle" and "create" in rest:
        return [f"`git bundle create` is not allowed: {_WRITES}"]
    parsed = parse_args(_GIT_SUB_TABLES.get(sub, _GIT_COMMON), rest)
    if parsed.error:
        return [f"`git {sub}` option not supported here: {parsed.error}"]
    for o in parsed.options:
        if not o.known:
            continue
        if o.name in _GIT_WRITE:
            return [f"`git {sub} {o}` is not allowed: {_WRITES}"]
        if o.name in _GIT_RUN:
            return [f"`git {sub} {o}` is not allowed: {_RUNS} (external tools, editors, "
                    "signing programs, transports, remotes or interactive prompts)"]
    if sub == "tag" and parsed.find("--annotate") and not parsed.find("--message", "--file"):
        return ["`git tag -a` without -m MESSAGE is not allowed: it opens an editor"]
    return []


_CHECKERS: dict[str, Callable[[str, list[str]], list[str]]] = {
    "find": _check_find,
    "fd": _simple(_FD, _FD_REFUSED, _RUNS),
    "fdfind": _simple(_FD, _FD_REFUSED, _RUNS),
    "rg": _simple(_RG, _RG_REFUSED, f"{_RUNS} (a preprocessor)"),
    "tree": _simple(_TREE, ("--output", "-R"), _WRITES),
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
    "file": _simple(_FILE, ("--compile",), _WRITES),
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
