"""Checkers of file-listing, sorting and archiving programs (find, sort, tee, tar, ...)."""

from __future__ import annotations

import re

from app.core.tools.options import OptionTable
from app.core.tools.shell.policy._helpers import _RUNS, _WRITES, Checker, _parse, _refused, _simple

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
_RG = OptionTable("pre= pre-glob= hostname-bin= z|search-zip e|regexp= f|file= g|glob= t|type= "
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
    # An archive named HOST:PATH is opened through rsh/ssh, however it is spelled: a plain
    # word, -f HOST:PATH, -fHOST:PATH, --file=HOST:PATH.
    archives = [o.value for o in parsed.options if o.name == "--file" and o.value]
    for a in [*archives, *(a for a in args if not a.startswith("-"))]:
        if _REMOTE_ARCHIVE.match(a):
            return [f"tar archive {a!r} looks like a remote host:path, which runs rsh/ssh; use a "
                    "local path (prefix it with ./)"]
    return []


_REMOTE_ARCHIVE = re.compile(r"^[^/.-][^/]*:")


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
def _check_sort(name: str, args: list[str]) -> list[str]:
    parsed, problems = _parse(name, _SORT, args)
    return (problems or _refused(name, parsed, ("--compress-program",), _RUNS)
            or _refused(name, parsed, ("--output",), _WRITES))


_FILE = OptionTable("C|compile m|magic-file= f|files-from= F|separator= e|exclude= "
                    "P|parameter=", closed=False)
_FD_REFUSED = ("--exec", "--exec-batch")
_RG_REFUSED = ("--pre", "--pre-glob", "--hostname-bin", "--search-zip")
# BSD base64 (macOS) writes its output file with -o/--output; GNU's has no such option.
_BASE64 = OptionTable("o|output= i|input= d|decode D b|break= w|wrap= e|encode h|help "
                      "ignore-garbage version", closed=False)

FILE_CHECKERS: dict[str, Checker] = {
    "find": _check_find,
    "fd": _simple(_FD, _FD_REFUSED, _RUNS),
    "fdfind": _simple(_FD, _FD_REFUSED, _RUNS),
    "rg": _simple(_RG, _RG_REFUSED, f"{_RUNS} (a preprocessor or decompressor)"),
    "base64": _simple(_BASE64, ("--output",), _WRITES),
    "tree": _simple(_TREE, ("--output", "-R"), _WRITES),
    "sort": _check_sort,
    "uniq": _check_uniq,
    "tee": _check_tee,
    "dd": _check_dd,
    "tar": _check_tar,
    "zip": _check_zip,
    "diff3": _check_diff_program,
    "sdiff": _check_diff_program,
    "file": _simple(_FILE, ("--compile",), _WRITES),
}
