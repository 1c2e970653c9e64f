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

from app.core.tools.shell.policy.core import (
    PolicyResult,
    check_command,
    check_simple,
    check_structure,
    check_words,
)
from app.core.tools.shell.policy.refused import ALWAYS_REFUSED, BUILTINS

__all__ = [
    "ALWAYS_REFUSED",
    "BUILTINS",
    "PolicyResult",
    "check_command",
    "check_simple",
    "check_structure",
    "check_words",
]
