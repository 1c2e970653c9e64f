"""Checkers of build tools and compilers (make, npm, cargo, go, cc)."""

from __future__ import annotations

import re

from app.core.tools.options import OptionTable
from app.core.tools.shell.policy._helpers import _RUNS, Checker, _parse, _refused

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

BUILD_CHECKERS: dict[str, Checker] = {
    "make": _check_make,
    "npm": _check_npm,
    "cargo": _check_cargo,
    "go": _check_go,
    "cc": _check_cc,
}
