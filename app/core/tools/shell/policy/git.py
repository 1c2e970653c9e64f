"""The git checker: global options, subcommands, subcommand options and read-only config."""

from __future__ import annotations

from app.core.tools.options import (
    GIT_GLOBAL_TABLE,
    GIT_HARMLESS_GLOBALS,
    OptionTable,
    ParsedArgs,
    parse_args,
)
from app.core.tools.shell.policy._helpers import _RUNS, _WRITES, Checker

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


# Subcommands refused with one action word anywhere after them: subcommand -> (word, problem).
_GIT_REFUSED_ACTIONS = {
    "bisect": ("run", "`git bisect run` is not allowed: it runs a program for each step"),
    "worktree": ("add", "`git worktree add` is not allowed: it writes a work tree outside the "
                        "checks"),
    "bundle": ("create", f"`git bundle create` is not allowed: {_WRITES}"),
}


def _check_git(name: str, args: list[str]) -> list[str]:
    glob = parse_args(GIT_GLOBAL_TABLE, args)
    problems = _global_option_problems(glob)
    if problems or not glob.operands:
        return problems
    return _subcommand_problems(glob.operands[0], glob.operands[1:])


def _global_option_problems(glob: ParsedArgs) -> list[str]:
    if glob.error:
        return [f"git global option not supported here: {glob.error}"]
    for o in glob.options:
        if o.name not in GIT_HARMLESS_GLOBALS:
            why = _GIT_GLOBAL_REASONS.get(o.name, "is not supported here")
            return [f"`git {o}` is not allowed: it {why}"]
    return []


def _subcommand_problems(sub: str, rest: list[str]) -> list[str]:
    if sub in _GIT_REFUSED_SUBCOMMANDS:
        return [f"`git {sub}` is not allowed: {_GIT_REFUSED_SUBCOMMANDS[sub]}"]
    if sub not in _GIT_KNOWN:
        return [f"`git {sub}` is not a known git command (aliases are not allowed: they can run "
                "shell commands)"]
    if sub == "config":
        return _check_git_config(rest)
    refused_action = _GIT_REFUSED_ACTIONS.get(sub)
    if refused_action is not None and refused_action[0] in rest:
        return [refused_action[1]]
    return _subcommand_option_problems(sub, rest)


def _subcommand_option_problems(sub: str, rest: list[str]) -> list[str]:
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


GIT_CHECKERS: dict[str, Checker] = {"git": _check_git}
