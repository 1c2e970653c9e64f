"""The shell capability policy: exact-name allowlist, refused programs, wrappers, option escapes."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from app.core.tools.base import DEFAULT_ALLOWED_COMMANDS
from app.core.tools.shell.policy import ALWAYS_REFUSED, check_command

WIDE = ("ls", "cat", "head", "wc", "find", "grep", "tree", "echo", "git", "sed", "awk", "sort",
        "uniq", "tee", "timeout", "nice", "nohup", "stdbuf", "ionice", "rg", "fd", "tar", "make",
        "npm", "pnpm", "cargo", "go", "gcc", "curl", "wget", "ssh", "rsync", "nc", "dd", "zip",
        "diff3", "file", "python3", "pytest", "./gradlew", "bash", "xargs", "env", "less", "sudo")


def allowed(command: str, allow: tuple[str, ...] = WIDE) -> bool:
    return check_command(command, allow).ok


def refusal(command: str, allow: tuple[str, ...] = WIDE) -> str:
    result = check_command(command, allow)
    assert not result.ok, f"{command!r} was allowed"
    return " ".join(result.all_problems())


@pytest.mark.parametrize("command", [
    "ls", "ls -la src", "cat a b", "head -n 20 f", "wc -l f", "grep -rn 'def x' app",
    "find . -name '*.py' -type f", "tree -L 2", "ls | wc -l", "git status && git diff",
    "cat a; cat b", "grep -c x f || echo none",
])
def test_default_allowlist_allows_read_only_commands(command: str) -> None:
    defaults = (*DEFAULT_ALLOWED_COMMANDS, "echo", "git")
    assert allowed(command, defaults), check_command(command, defaults).all_problems()


@pytest.mark.parametrize("command", [
    "git status", "git diff --stat HEAD~1", "git log --oneline -n 5", "git show HEAD:README.md",
    "git branch -a", "git add -u", "git commit -m 'msg'", "git switch -c topic",
    "git config --get user.name", "git --no-pager log", "git ls-files", "git blame f",
    "git stash list", "git rev-parse HEAD", "git grep -n foo", "git fetch origin",
    "sed -n '1,10p' f", "sed 's/a/b/g;s/c/d/' f", "sed -E 's/(x|y)/z/2' f", "sed '$d' f",
    "sed -n '/start/,/end/p' f", "sed -e 's/a/b/' -e '/x/d' f", "sed 'y/abc/xyz/' f",
    "awk '{print $1}' f", "awk -F, '{s += $2} END {print s}' f", "awk -v n=3 'NR <= n' f",
    "awk '$1 >= 10 || $2 == \"x\"' f", "sort -u f", "sort -k2 -n f", "uniq -c f",
    "uniq -f 1 f", "tee", "rg -n pattern src", "rg --type py foo", "fd -e py",
    "tar -tf a.tar", "tar xf a.tar", "make test", "make -j4 build", "npm run build", "npm test",
    "pnpm run lint", "cargo test", "cargo build --release", "go test ./...", "gcc -O2 -c x.c",
    "curl -s https://example.com", "curl -sSL -H 'Accept: x' https://e.com",
    "wget -qO- https://example.com", "wget -O - https://example.com", "ssh host uptime",
    "rsync -av src/ dst/", "dd if=a bs=1 count=1", "file x", "python3 -m pytest",
    "pytest -q", "./gradlew build", "timeout 5 ls", "timeout -s KILL 10s git status",
    "nice -n 10 make", "nice -5 ls", "nohup ls", "stdbuf -oL grep x f", "ionice -c 3 ls",
    "timeout 5 nice ls", "cd src && ls", "cd", "cd -- src", "pwd", "pwd -P",
])
def test_allowed_with_wide_allowlist(command: str) -> None:
    assert allowed(command), check_command(command, WIDE).all_problems()


@pytest.mark.parametrize(("command", "needle"), [
    ("rm -rf x", "`rm` is not on the allowed command list"),
    ("ls && rm -rf /", "`rm`"),
    ("/bin/ls", "exact name"),
    ("./ls", "exact name"),
    ("../bin/ls", "exact name"),
    ("/usr/bin/git status", "call it by its name `git`"),
    ("gradlew build", "not on the allowed"),
    ("bash -c 'ls'", "shells"),
    ("bash script.sh", "shells"),
    ("env", "environment"),
    ("env ls", "environment"),
    ("xargs ls", "runs other programs"),
    ("less f", "interactive"),
    ("sudo ls", "privilege"),
    ("eval ls", "shell builtin"),
    ("exec ls", "shell builtin"),
    ("source x", "shell builtin"),
    (". x", "shell builtin"),
    ("command ls", "shell builtin"),
    ("builtin cd", "shell builtin"),
    ("printenv", "environment"),
    ("timeout 5 rm x", "inside `timeout`"),
    ("timeout 5 bash -c ls", "shells"),
    ("nice -n 1 timeout 2 nohup env ls", "environment"),
    ("timeout", "needs a duration"),
    ("timeout --weird 5 ls", "not supported"),
    ("nohup", "needs a command"),
    ("ionice -p 1", "not supported"),
    ("cd a | ls", "pipeline"),
    ("cd a b", "one directory"),
    ("cd -", "not supported"),
    ("pwd x", "no arguments"),
    ("find . -exec ls ;", "-exec"),
    ("find . -execdir ls ;", "-execdir"),
    ("find . -ok ls ;", "-ok"),
    ("find . -okdir ls ;", "-okdir"),
    ("find . -delete", "-delete"),
    ("find -- . -fprint x", "-fprint"),
    ("find . -fls x", "-fls"),
    ("fd -x ls", "-x"),
    ("fd -HX ls", "-X"),
    ("fd --exec ls", "--exec"),
    ("fd --exec-b ls", "--exec"),
    ("rg --pre cat x", "--pre"),
    ("rg --pre-glob '*' x", "--pre-glob"),
    ("rg --hostname-bin x y", "--hostname-bin"),
    ("tree -o out", "-o"),
    ("tree -R", "-R"),
    ("tree --output=x", "--output"),
    ("sort -o out f", "sort -o"),
    ("sort --compress-program=gzip f", "--compress-program"),
    ("sort --compress=gzip f", "--compress-program"),
    ("uniq a b", "uniq INPUT OUTPUT"),
    ("tee out", "tee FILE"),
    ("dd if=a of=b", "of="),
    ("tar --to-command=sh -xf a.tar", "--to-command"),
    ("tar --to-com=sh -xf a.tar", "--to-command"),
    ("tar --checkpoint=1 --checkpoint-action=exec=sh -cf a.tar f", "--checkpoint-action"),
    ("tar -I sh -xf a.tar", "-I"),
    ("tar xIf sh a.tar", "-I"),
    ("tar --use-compress-program=sh -xf a.tar", "--use-compress-program"),
    ("tar -F sh -cf a.tar f", "-F"),
    ("tar -xf host:a.tar", "remote"),
    ("zip -TT sh a.zip f", "-TT"),
    ("zip --unzip-command=sh a.zip f", "--unzip-command"),
    ("diff3 --diff-program=sh a b c", "--diff-program"),
    ("ssh -o ProxyCommand=sh host", "-o"),
    ("ssh -F cfg host", "-F"),
    ("rsync -e sh a b", "-e"),
    ("rsync --rsh=sh a b", "--rsh"),
    ("rsync --rsync-path=sh a b", "--rsync-path"),
    ("curl -o out https://e.com", "-o"),
    ("curl -O https://e.com/x", "-O"),
    ("curl --output out https://e.com", "--output"),
    ("curl -K cfg", "-K"),
    ("wget https://e.com", "saves to a file"),
    ("wget -O out https://e.com", "-O"),
    ("wget -e 'x=y' -O - https://e.com", "-e"),
    ("nc -e sh host 1", "-e"),
    ("nc -c sh host 1", "-c"),
    ("make CC=sh", "variable overrides"),
    ("make SHELL=/bin/sh test", "variable overrides"),
    ("make --eval='x:;sh'", "--eval"),
    ("npm exec foo", "downloads and runs"),
    ("npm x foo", "downloads and runs"),
    ("pnpm dlx foo", "downloads and runs"),
    ("npm --script-shell=sh run x", "--script-shell"),
    ("npm config set script-shell sh", "config set"),
    ("cargo --config 'target.x.runner=\"sh\"' run", "--config"),
    ("cargo -Zunstable-options build", "-Z"),
    ("go test -exec=sh ./...", "-exec"),
    ("go build -toolexec=sh ./...", "-toolexec"),
    ("gcc -wrapper sh,-c x.c", "-wrapper"),
    ("gcc -fplugin=x.so x.c", "-fplugin"),
    ("file -C -m magic", "-C"),
    ("sed -i s/a/b/ f", "sed -i"),
    ("sed -ni p f", "sed -i"),
    ("sed --in-place s/a/b/ f", "sed -i"),
    ("sed --in s/a/b/ f", "sed -i"),
    ("sed -f script f", "sed -f"),
    ("sed 'w out' f", "w command"),
    ("sed '/x/W out' f", "W command"),
    ("sed 's/a/b/w out' f", "s///w"),
    ("sed 's/a/b/gw out' f", "s///w"),
    ("sed 's/a/b/e' f", "s///e"),
    ("sed '1e ls' f", "e command"),
    ("sed -e p -e 'w out' f", "w command"),
    ("sed --expression='e ls' f", "e command"),
    ("sed 's|a|b|w out' f", "s///w"),
    ("sed 'k' f", "the command 'k'"),
    ("awk 'BEGIN{system(\"ls\")}'", "system()"),
    ("awk '{print > \"out\"}' f", "write files"),
    ("awk '{print >> \"out\"}' f", "write files"),
    ("awk '{print | \"sh\"}' f", "pipes"),
    ("awk 'BEGIN{\"ls\" | getline x}'", "getline"),
    ("awk 'BEGIN{while ((getline l < \"f\") > 0) print l}'", "getline"),
    ("awk 'BEGIN{print ENVIRON[\"HOME\"]}'", "ENVIRON"),
    ("awk -f prog.awk", "inline"),
    ("awk --load=x.so 'BEGIN{}'", "inline"),
    ("awk '@load \"x\"; BEGIN{}'", "@load"),
    ("git -c core.pager=sh log", "git -c"),
    ("git -ccore.pager=sh log", "git -c"),
    ("git --config-env=core.pager=X log", "--config-env"),
    ("git --config-e=core.pager=X log", "--config-env"),
    ("git -p log", "pager"),
    ("git --paginate log", "pager"),
    ("git --pag log", "pager"),
    ("git --exec-path=/tmp status", "--exec-path"),
    ("git --exec-path", "--exec-path"),
    ("git -C /tmp status", "another repository"),
    ("git --git-dir=/tmp/x status", "another repository"),
    ("git --work-tree=/ status", "work tree"),
    ("git --bogus status", "not supported"),
    ("git push", "never allowed"),
    ("git push --force origin main", "never allowed"),
    ("git st", "not a known git command"),
    ("git difftool", "external diff"),
    ("git mergetool", "external merge"),
    ("git filter-branch --tree-filter 'rm x'", "filters"),
    ("git submodule foreach ls", "submodule"),
    ("git help log", "man pages"),
    ("git config core.pager sh", "may only read"),
    ("git config --add core.pager sh", "may only read"),
    ("git config --unset user.name", "may only read"),
    ("git bisect run make", "bisect run"),
    ("git worktree add /tmp/x", "worktree add"),
    ("git diff --output=/tmp/x", "--output"),
    ("git diff --out=/tmp/x", "--output"),
    ("git log -o /tmp/x", "-o"),
    ("git format-patch -o /tmp/x -1", "-o"),
    ("git format-patch --output-directory=/tmp/x -1", "--output"),
    ("git diff --ext-diff", "--ext-diff"),
    ("git log -p --ext-d", "--ext-diff"),
    ("git diff --textconv", "--textconv"),
    ("git rebase -x ls main", "-x"),
    ("git rebase --exec=ls main", "--exec"),
    ("git rebase -i main", "-i"),
    ("git fetch --upload-pack=sh origin", "--upload-pack"),
    ("git fetch -u sh origin", "-u"),
    ("git clone --upload-pack=sh a b", "--upload-pack"),
    ("git clone -c core.fsmonitor=sh a b", "-c"),
    ("git clone --template=/tmp/t a b", "--template"),
    ("git ls-remote --upload-pack=sh origin", "--upload-pack"),
    ("git archive --remote=x HEAD", "--remote"),
    ("git archive -o x.tar HEAD", "-o"),
    ("git grep -O x", "-O"),
    ("git grep --open-files-in-pager=sh x", "--open-files-in-pager"),
    ("git commit -S -m x", "-S"),
    ("git commit --gpg-sign=x -m y", "--gpg-sign"),
    ("git commit --trailer 'x: y' -m z", "--trailer"),
    ("git add -p", "-p"),
    ("git add --interactive", "--interactive"),
    ("git bundle create x HEAD", "bundle create"),
])
def test_refused_with_reason(command: str, needle: str) -> None:
    assert needle in refusal(command)


def test_allowlisted_path_matches_only_exactly() -> None:
    assert allowed("./gradlew build")
    assert not allowed("gradlew build")
    assert not allowed("../gradlew build")
    assert not allowed("/abs/gradlew build")


def test_refused_programs_stay_refused_even_if_allowlisted() -> None:
    for program in ("bash", "sh", "env", "xargs", "eval", "sudo", "less", "vi", "patch"):
        assert program in ALWAYS_REFUSED
        assert not allowed(f"{program} x", (program,))


def test_syntax_problems_are_reported_by_the_policy() -> None:
    result = check_command("ls > out", WIDE)
    assert not result.ok and "redirection" in result.error_message()


def test_error_message_lists_allowed_programs() -> None:
    msg = check_command("rm x", ("ls", "cat")).error_message(("ls", "cat"))
    assert "Allowed programs: cat, ls" in msg and "`rm`" in msg


def test_every_part_of_a_chain_is_checked() -> None:
    result = check_command("ls && git status | wc -l; rm x || curl -o y z", WIDE)
    text = " ".join(result.problems)
    assert "`rm`" in text


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from([*WIDE, "-exec", "-o", "--output", "x", "&&", "|", ";", "'a b'",
                                 "--", "-c", "=", "A=1", "s/a/b/w", "-i", "5", "$x", ">",
                                 "--pre", "-p", "push", "config", "e", "'w x'"]),
                max_size=10).map(" ".join))
def test_policy_never_raises(command: str) -> None:
    result = check_command(command, WIDE)
    assert isinstance(result.ok, bool)
    if result.ok:
        assert result.parsed.commands
