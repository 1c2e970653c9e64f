"""The programs refused outright, whatever the allowlist says, and the executor's builtins."""

from __future__ import annotations

# Handled inside the executor, never spawned.
BUILTINS = frozenset({"cd", "pwd"})

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

