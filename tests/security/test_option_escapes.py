"""Option escapes of allowlisted programs, spelled every way the program accepts.

Each group is one refused option (or form) and the spellings getopt_long / git parse-options /
OpenSSH getopt / awk -W accept for it: unique-prefix abbreviations, clusters, attached values,
``--opt=value``, options after operands, through wrappers. The policy must refuse all of them,
and must keep passing the ordinary commands at the end.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from app.core.tools.base import ToolContext
from app.core.tools.builtin.shell_exec import ShellExecTool
from app.core.tools.shell.policy import check_command

ALLOW = ("ls", "cat", "grep", "find", "tree", "sort", "uniq", "tee", "sed", "awk", "gawk",
         "mawk", "nawk", "git", "zip", "ssh", "scp", "sftp", "rsync", "curl", "wget", "tar",
         "rg", "fd", "nc", "make", "npm", "cargo", "go", "file", "sdiff", "diff3", "timeout",
         "nice", "nohup", "stdbuf", "ionice", "head", "wc", "echo", "base64")

# needle expected in the refusal -> spellings
ESCAPES: dict[str, list[str]] = {
    "--output": [  # sort -o FILE writes FILE
        "sort -o M f", "sort -oM f", "sort -uo M f", "sort -uoM f", "sort -ruo M f",
        "sort --output M f", "sort --output=M f", "sort --out=M f", "sort --o=M f",
        "sort --outp M f", "sort f -o M", "sort f --o=M", "sort -k1 f -uoM",
        "timeout 5 sort --o=M f", "nice -n 1 sort -uoM f", "nohup sort f --out M",
        "stdbuf -oL sort -o M f", "timeout -s KILL 5 nice sort -o M f",
    ],
    "--compress-program": [
        "sort --compress-program=sh f", "sort --compress-prog sh f", "sort --comp=sh f",
        "sort f --compress-program sh",
    ],
    "curl": [  # writes files
        "curl -o M https://e.com", "curl -oM https://e.com", "curl -sSLo M https://e.com",
        "curl -sSLoM https://e.com", "curl --out M https://e.com",
        "curl --output=M https://e.com", "curl https://e.com -o M", "curl -O https://e.com/M",
        "curl -sO https://e.com/M", "curl --remote-name https://e.com/M",
        "curl -K cfg https://e.com", "curl -sKcfg https://e.com", "curl --conf=cfg https://e",
        "curl -D M https://e.com", "curl --dump-h M https://e.com", "curl -c M https://e.com",
        "curl --cookie-j M https://e.com", "curl --trace M https://e.com",
        "curl --libc M https://e.com", "curl --output-dir d -O https://e.com/x",
        "curl -w '%output{M}' https://e.com",
    ],
    "ssh": [  # -o/-F/-S/-E/-I run programs, load code or write logs
        "ssh -o ProxyCommand=sh host", "ssh -oProxyCommand=sh host",
        "ssh -vo ProxyCommand=sh host", "ssh -vvo 'ProxyCommand=sh' host",
        "ssh -voProxyCommand=sh host", "ssh -F cfg host", "ssh -Fcfg host", "ssh -qF cfg host",
        "ssh -qFcfg host", "ssh host -o ProxyCommand=sh", "ssh host -qF cfg",
        "ssh -p 22 host -oLocalCommand=x", "ssh -S ctl host", "ssh -E log host",
        "ssh -I lib.so host", "ssh -Elog host", "scp -S sh a b", "scp -Ssh a b",
        "scp -o ProxyCommand=sh a b", "scp -rF cfg a b", "sftp -b batch host",
        "sftp -D /bin/sh host", "rsync -e sh a b", "rsync -ave sh a b", "rsync -avesh a b",
        "rsync --rsh=sh a b", "rsync --rs=sh a b", "rsync --rsync-path=sh a b",
        "rsync --log-file=M a b", "rsync --write-batch=M a b",
    ],
    "git config": [  # may only read, by construction
        "git config core.pager sh", "git config --local --bool core.pager value",
        "git config --bool core.pager value", "git config --get a b c",
        "git config --get-all a b c", "git config --get --add core.pager sh",
        "git config --add core.pager sh", "git config --unset user.name",
        "git config --replace-all a b", "git config --get --unset x",
        "git config --show-origin core.pager sh", "git config --show-scope a b",
        "git config --get --list", "git config --list x", "git config -l x",
        "git config --edit", "git config -e", "git config --get", "git config",
        "git config --li", "git config --get-r x", "git config set core.pager sh",
        "git config get a b", "git config list x", "git config unset user.name",
        "git config --rename-section a b", "git config -- core.pager sh",
        "git config --type=bool a b",
    ],
    "awk": [  # program files, extensions, -W exec
        "awk -f prog.awk", "awk -fprog.awk", "awk --file=prog.awk", "awk --fi prog.awk",
        "mawk -W exec prog.awk", "mawk -Wexec prog.awk", "mawk -W e prog.awk",
        "mawk -We prog.awk", "mawk -W ex prog.awk", "awk -W exec=prog.awk",
        "gawk -E prog.awk", "gawk -Eprog.awk", "gawk --exec prog.awk", "gawk --ex=prog.awk",
        "gawk -l lib", "gawk --load=lib 'BEGIN{}'", "gawk -i inc 'BEGIN{}'",
        "gawk --include inc 'BEGIN{}'", "gawk -W load=x 'BEGIN{}'", "nawk -f prog.awk",
        "gawk -o M 'BEGIN{}'", "gawk --pretty-print=M 'BEGIN{}'", "gawk -pM 'BEGIN{}'",
        "gawk --prof=M 'BEGIN{}'", "gawk -dM 'BEGIN{}'", "gawk --dump-var=M 'BEGIN{}'",
        "mawk -W bogus 'BEGIN{}'", "awk -e 'BEGIN{system(\"sh\")}'",
        "gawk --source='BEGIN{system(\"sh\")}'",
    ],
    "zip": [
        "zip -TT sh a.zip f", "zip -TTsh a.zip f", "zip -TT=sh a.zip f", "zip -T -TT=sh a.zip f",
        "zip -T -TT sh a.zip f", "zip a.zip f -TT sh", "zip --unzip-command sh a.zip f",
        "zip --unzip-command=sh a.zip f", "zip --unz=sh a.zip f", "zip -T --unzip-c sh a.zip f",
    ],
    "tee": [  # every operand is a file written; after `--` too
        "tee M", "tee -- -link", "tee -a -- -link", "tee -a M", "tee -", "tee -i M",
        "tee --append M", "tee -- M", "timeout 5 tee M", "nice -- tee -- -x",
        "tee --app M", "tee -p M",
    ],
    "git tag": [  # signing runs gpg.program; -e/-a without -m open an editor
        "git tag -s v1 -m x", "git tag -sm x v1", "git tag -asm x v1", "git tag --sign v1 -m x",
        "git tag --si v1 -m x", "git tag v1 -m x --sign", "git tag -u KEY v1 -m x",
        "git tag -uKEY v1 -m x", "git tag -auKEY v1 -m x", "git tag --local-user=KEY v1 -m x",
        "git tag --local-u KEY v1 -m x", "git tag --loc=KEY v1 -m x", "git tag -e v1 -m x",
        "git tag --edit v1 -m x", "git tag -a v1", "git tag --annotate v1",
        "git tag -f -a v1",
    ],
    "--gpg-sign": [  # commit/merge/rebase/... -S runs the signing program
        "git commit -S -m x", "git commit -Skey -m x", "git commit -am x -S",
        "git commit -aSm x", "git commit --gpg-sign -m x", "git commit --gpg-sign=key -m x",
        "git commit --gpg -m x", "git commit --gpg-s=key -m x", "git commit -m x --gpg",
        "git merge -S topic", "git merge --gpg-sign topic", "git merge topic --gpg",
        "git rebase -S main", "git rebase main --gpg-sign", "git cherry-pick -S x",
        "git cherry-pick --gpg x", "git revert -S x", "git am -S x", "git pull -S",
        "git commit-tree -S HEAD^{tree}", "git -P commit -S -m x",
        "git --no-pager merge --gpg-sign topic",
    ],
    "git run": [  # other program-running / writing git options in every spelling
        "git diff --ext-diff", "git diff --ext", "git log -p --ext-d", "git diff --textconv",
        "git diff --textc", "git rebase -x ls main", "git rebase -xls main",
        "git rebase --exec=ls main", "git rebase --exe ls main", "git rebase -ix ls main",
        "git rebase -i main", "git rebase --inter main", "git fetch -u sh origin",
        "git fetch -ush origin", "git fetch --upload-pack sh origin", "git fetch --upl=sh o",
        "git clone -c core.fsmonitor=sh a b", "git clone -qc core.fsmonitor=sh a b",
        "git clone --conf core.fsmonitor=sh a b", "git grep -O x", "git grep -Osh x",
        "git grep -nO x", "git grep --open=sh x", "git add -p", "git add -up",
        "git add --pat", "git add -i", "git add --inter", "git archive --rem=x HEAD",
        "git diff --out=M", "git diff --output M", "git log --output=M", "git log -oM",
        "git log --oneline -o M", "git format-patch -oM -1", "git format-patch --output-d=M",
        "git archive -oM HEAD", "git archive --output M HEAD", "git commit --trai 'a: b' -m x",
        "git commit -c HEAD", "git commit -e -m x", "git checkout -p", "git reset --pat",
        "git clean -i", "git clean -fi", "git branch --edit-desc",
        "git -c core.pager=sh log", "git -ccore.pager=sh log", "git -P -c a=b log",
        "git -Pc a=b log", "git --config-e=x=y log", "git --pag log", "git -Pp log",
        "git -C /tmp status", "git -C/tmp status", "git --git-d=/tmp status",
        "git --work=/ status", "git --exec-p=/tmp status", "git --names=x status",
    ],
    "sed": [
        "sed -i s/a/b/ f", "sed -ni p f", "sed -n -i p f", "sed -i.bak s/a/b/ f",
        "sed --in-place s/a/b/ f", "sed --in-pl=.bak s/a/b/ f", "sed --in s/a/b/ f",
        "sed p f -i", "sed -Ei s/a/b/ f", "sed -f script f", "sed -nf script f",
        "sed --file=script f", "sed --fi script f", "sed -fscript f",
        "sed -n --expr='w M' f", "sed -ne 'w M' f", "sed -e p -e'w M' f", "sed -nep -e 'w M' f",
    ],
    "other": [
        "uniq -c f M", "uniq f -c M", "uniq --count f M", "tree -o M", "tree -aoM",
        "tree --out=M", "tree -R", "tree -aR", "rg --pre cat x", "rg --pre=cat x",
        "rg x --pre cat", "rg --pre-g '*' --pre cat x", "rg --hostname-b x y", "fd -x ls",
        "fd -Hx ls", "fd -HX ls", "fd --exec ls", "fd --exec-b ls", "fd x --exec ls",
        "tar --to-command=sh -xf a.tar", "tar --to-com=sh -xf a.tar", "tar -I sh -xf a.tar",
        "tar -Ish -xf a.tar", "tar -xIsh -f a.tar", "tar xIf sh a.tar", "tar -xf a.tar -I sh",
        "tar --use-comp=sh -xf a.tar", "tar -F sh -cf a.tar f", "tar -cF sh -f a.tar f",
        "tar --info-scr=sh -cf a.tar f", "tar --new-volume-script=sh -cf a.tar f",
        "tar --checkpoint-act=exec=sh -cf a.tar f", "wget https://e.com",
        "wget -O M https://e.com", "wget -OM https://e.com", "wget -qOM https://e.com",
        "wget --output-doc=M https://e.com", "wget -qO- -o log https://e.com",
        "wget -qO- -olog https://e.com", "wget -qO- --exec x=y https://e.com",
        "wget -qO- -r https://e.com", "nc -e sh h 1", "nc -ve sh h 1", "nc -vesh h 1",
        "nc -c sh h 1", "nc --sh-ex=sh h 1", "make --eval='x:;sh'", "make --ev=x",
        "make -Ex", "make -kE x", "make CC=sh", "make test SHELL=/bin/sh",
        "npm --script-shell=sh run x", "npm --script=sh run x", "npm run x --scr=sh",
        "npm exec foo", "npm --prefix d exec foo", "cargo --config x build", "cargo --conf x b",
        "cargo -Zx build", "cargo build -Z x", "go test -exec=sh ./...",
        "go test -exec sh ./...", "go build --toolexec=sh ./...", "go build -toolexec sh .",
        "go test ./... -exec=sh", "go env -w GOFLAGS=-toolexec=sh", "file -C -m magic",
        # ripgrep's -z runs decompressors; tar opens HOST:PATH archives through rsh/ssh;
        # BSD base64 writes its -o file.
        "rg -z x", "rg --search-zip x", "rg -nz x", "rg --search-z x", "rg --pre-glob '*' x",
        "rg -zi x", "rg -iz x", "rg -uuuz x", "rg x -z", "rg --pre=x pat",
        "tar -xfhost:a.tar", "tar -xvfhost:/a.tar", "tar -xvzf user@host:a.tgz",
        "tar -xf a.tar --file=host:b", "tar -xO -fhost:a",
        "tar --file=host:a.tar -x", "tar -fhost:a.tar -x", "tar -f host:a.tar -x",
        "tar -xf user@host:/a.tar", "tar xf host:a.tar", "tar --fil=host:a.tar -x",
        "tar --rsh-command=/bin/sh -xf a.tar", "tar --rsh-c=sh -xf a.tar",
        "base64 -o M f", "base64 -oM f", "base64 --output=M f", "base64 --out M f",
        "base64 -d -o M f", "base64 -di f -o M", "base64 -Do M f",
        "file -zC -m magic", "file --comp -m magic", "sdiff -o M a b", "sdiff -oM a b",
        "sdiff --out=M a b", "diff3 --diff-p=sh a b c",
    ],
    "wrapper": [  # options a wrapper does not have: the inner command cannot be placed
        "timeout --weird 5 ls", "timeout -x 5 ls", "nice -x ls", "stdbuf -x ls",
        "ionice -p 1", "ionice -P 1 ls", "nohup -x ls", "timeout -s",
    ],
}
CASES = [(group, cmd) for group, cmds in ESCAPES.items() for cmd in cmds]

ORDINARY = [
    "git status", "git diff --stat", "git diff --stat HEAD~1", "git log --oneline -n 5",
    "git log -n5 --format=%h", "git log -Sfoo", "git log -S foo -p", "git log -L1,5:foo.c",
    "git log -G'x|o' --oneline", "git diff --text", "git diff -a", "git diff -O order.txt",
    "git diff --no-ext-diff", "git diff --no-textconv", "git log --output-indicator-new=x",
    "git show HEAD:README.md", "git branch -a", "git add -u", "git add -A .",
    "git commit -m 'msg'", "git commit -am 'msg'", "git commit -m '-S not an option'",
    "git commit --no-gpg-sign -m x", "git merge --no-edit topic", "git merge --no-ff topic",
    "git rebase main", "git tag", "git tag -l", "git tag v1", "git tag -a v1 -m x",
    "git tag --sort=-v:refname", "git tag -d v1", "git switch -c topic", "git stash list",
    "git stash push -m wip", "git fetch origin", "git grep -n foo", "git grep -e foo -- '*.py'",
    "git config --get user.name", "git config --get-all remote.origin.fetch",
    "git config --get-regexp '^user' x", "git config --list", "git config -l --show-origin",
    "git config --list --show-scope --name-only", "git config --global --get user.email",
    "git config -z --get user.name", "git config get user.name", "git config list",
    "git config get --show-origin user.name", "git -P log", "git --no-pager log",
    "git --version", "git log -- --output=x", "ls -la", "ls -la src", "grep -rn x .",
    "grep -rn 'def x' app", "sort -u f", "sort -k2 -n f", "sort -t, -k2 f",
    "uniq -c f", "uniq -f 1 f", "sed -n '1,5p' f", "sed -E 's/(x|y)/z/' f", "sed -n -e p f",
    "sed -ne p f", "sed --quiet p f", "awk '{print $1}' f", "awk -F, '{print $2}' f",
    "awk -v n=3 'NR <= n' f", "gawk -e '{print}' f", "tree -L 2", "tree -a -L 2 src",
    "rg -n x", "rg --type py foo", "rg -e -o x", "fd -e py", "find . -name '*.py' -type f",
    "curl -s https://x", "curl -sSL -H 'Accept: x' https://e.com",
    "curl -w '%{http_code}' https://e.com", "curl -X POST -d x https://e.com", "ssh -V",
    "ssh host uptime", "ssh host grep -o x f", "ssh -p 22 host ls -F", "tar -tf a.tar",
    "tar xf a.tar", "tar -tvf a.tar", "wget -qO- https://e.com", "wget -O - https://e.com",
    "nc -z host 80", "make test", "make -j4 build", "make -C sub test", "npm run build",
    "npm test", "cargo build --release", "go test ./...", "go env GOPATH", "file x",
    "rsync -av src/ dst/", "timeout 5 ls", "timeout -s KILL 10s git status", "nice -n 10 make",
    "nice -5 ls", "nohup ls", "stdbuf -oL grep x f", "ionice -c 3 ls", "ionice -c3 -n7 ls",
    "timeout 5 nice ls", "tee", "tee -a", "echo x | tee", "rg -i x", "rg -nw x src",
    "tar -xf ./host:a.tar", "tar -tf /abs/a.tar", "tar --file=a.tar -t", "base64 f",
    "base64 -d f", "base64 -w0 f",
]


def problems(command: str) -> str:
    result = check_command(command, ALLOW)
    assert not result.ok, f"{command!r} was allowed"
    return " ".join(result.all_problems())


@pytest.mark.parametrize(("group", "command"), CASES)
def test_every_spelling_is_refused(group: str, command: str) -> None:
    text = problems(command)
    if group.startswith("--"):
        # Decided on the canonical option, so the message names it whatever the spelling.
        assert group in text, text


@pytest.mark.parametrize("command", ORDINARY)
def test_ordinary_commands_still_pass(command: str) -> None:
    result = check_command(command, ALLOW)
    assert result.ok, result.all_problems()


# -- generated spellings --------------------------------------------------------------------


@st.composite
def _spelling(draw: st.DrawFn, program: str, flags: str, short: str, long: str,
              operands: tuple[str, ...]) -> str:
    """One way to spell `program <refused option> VALUE` among `operands`: a short option at
    the end of a cluster of harmless flags (value attached or next), or a unique prefix of the
    long option (value after `=` or next), placed before, between or after the operands."""
    if draw(st.booleans()):
        cluster = "".join(draw(st.lists(st.sampled_from(flags), max_size=3)))
        opt = [f"-{cluster}{short}M"] if draw(st.booleans()) else [f"-{cluster}{short}", "M"]
    else:
        prefix = long[:draw(st.integers(1, len(long)))]
        opt = [f"--{prefix}=M"] if draw(st.booleans()) else [f"--{prefix}", "M"]
    at = draw(st.integers(0, len(operands)))
    return " ".join([program, *operands[:at], *opt, *operands[at:]])


@settings(max_examples=300, deadline=None)
@given(st.one_of(
    _spelling("sort", "bdfgimnrsuz", "o", "output", ("f",)),
    _spelling("tree", "adfilps", "o", "output", (".",)),
    _spelling("wget", "qvcN", "o", "output-file", ("https://e.com",)),
    _spelling("sdiff", "abisW", "o", "output", ("a", "b")),
    _spelling("curl", "sSLkfiIv", "o", "output", ("https://e.com",)),
))
def test_generated_spellings_of_write_options_are_refused(command: str) -> None:
    assert not check_command(command, ALLOW).ok, command


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from("46AaCfGgKkMNnqsTtVvXxYy"), max_size=3).map("".join),
       st.sampled_from("oFSEI"), st.booleans(), st.booleans())
def test_generated_ssh_clusters_are_refused(flags: str, letter: str, attached: bool,
                                            after_host: bool) -> None:
    opt = [f"-{flags}{letter}X"] if attached else [f"-{flags}{letter}", "X"]
    words = ["ssh", "host", *opt] if after_host else ["ssh", *opt, "host"]
    assert not check_command(" ".join(words), ALLOW).ok, words


# -- the real side effect: nothing may be written through any spelling ----------------------

REAL = ["sort --o=M f.txt", "sort f.txt --out M", "sort -uoM f.txt", "sort -ruo M f.txt",
        "timeout 5 sort --output=M f.txt", "nice -n 1 sort -uoM f.txt", "tee -- -link",
        "echo x | tee -- -link", "echo x | tee -a -- -link", "echo x | tee M",
        "uniq f.txt M", "uniq -c f.txt M", "sed -n --expr='w M' f.txt", "sed -ne 'w M' f.txt",
        "awk -W exec prog.awk", "awk -Wexec prog.awk", "awk -W e prog.awk",
        "awk --exe prog.awk", "awk -fprog.awk", "tree -aoM", "tree --out=M"]


@pytest.fixture
def setup(project: Path) -> tuple[ToolContext, Path]:
    (project / "f.txt").write_text("hello\n")
    (project / "prog.awk").write_text('BEGIN { print "x" > "M" }\n')
    # A planted symlink whose name looks like an option: writing "through" it creates M.
    os.symlink(project / "M", project / "-link")
    ctx = ToolContext(project_root=project, allowed_commands=ALLOW, shell_timeout_s=10)
    return ctx, project


@pytest.mark.parametrize("attack", REAL)
async def test_no_spelling_writes_the_marker(setup: tuple[ToolContext, Path], attack: str) -> None:
    ctx, project = setup
    result = await ShellExecTool().execute({"command": attack}, ctx)
    assert not (project / "M").exists(), f"{attack!r} wrote the marker: {result.content}"
    assert result.is_error, f"{attack!r} was not refused: {result.content}"
    assert (project / "f.txt").read_text() == "hello\n"
