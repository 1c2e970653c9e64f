"""Adversarial commands: none may write a file through a redirect or run a program that is not
allowed. Each attack targets the marker file `M`; the assertion is on the real side effect."""

from __future__ import annotations

import tarfile
from pathlib import Path

import pytest

from app.core.tools.base import ToolContext
from app.core.tools.builtin.shell_exec import ShellExecTool

ALLOWED = ("ls", "cat", "head", "wc", "find", "grep", "tree", "echo", "printf", "sed", "awk",
           "sort", "uniq", "git", "timeout", "nice", "rg", "true", "false")

ATTACKS = [
    # redirections
    "echo x > M", "echo x >> M", "echo x >| M", "echo x &> M", "echo x &>> M", "echo x 2> M",
    "echo x 1>M", ">M echo x", "echo x >M", "ls 2>&1 >M", "echo x>M", "echo x 3>M",
    "cat <<EOF > M\nx\nEOF", "cat <<< x > M", "cat <<-EOF >M\n\tx\n\tEOF", "echo x |& cat > M",
    "printf x > M", "ls -la>>M", "echo x >\"M\"", "echo x >'M'", "echo x > ./M", "echo x > $PWD/M",
    # non-allowed programs in chains
    "touch M", "ls; touch M", "ls && touch M", "false || touch M", "ls | touch M",
    "ls & touch M", "ls\ntouch M", "ls\r\ntouch M", "ls\x00touch M", "ls;touch M",
    "ls\u2028touch M", "ls\u00a0;touch M", "ls;\u200btouch M", "ls \\\ntouch M",
    "ls #\ntouch M", '"ls" ; "touch" "M"', "l\\s; t\\ouch M", "to''uch M", "t\"ouch\" M",
    # substitutions / expansions
    "ls $(touch M)", "ls `touch M`", "ls <(touch M)", "ls >(touch M)", 'echo "$(touch M)"',
    "echo $(($(touch M)))", "ls ${x:-$(touch M)}", "$'touch' M", "$\"touch\" M",
    "${PATH:0:0}touch M", "echo {touch,M}", "ls ~root; touch M", "ls *; touch M",
    # grouping and control flow
    "(touch M)", "{ touch M; }", "if true; then touch M; fi", "for i in 1; do touch M; done",
    "while true; do touch M; break; done", "until false; do touch M; done", "f(){ touch M; }; f",
    "case x in x) touch M;; esac", "[[ -n x ]] && touch M", "! touch M", "time touch M",
    "coproc touch M", "((1)) && touch M",
    # builtins / wrappers / paths
    "eval touch M", "exec touch M", "command touch M", "builtin touch M", "env touch M",
    "A=1 touch M", "PATH=. ls", "LD_PRELOAD=/x ls", "sh -c 'touch M'", "bash -c 'touch M'",
    "echo M | xargs touch", "timeout 5 touch M", "timeout -s KILL 5 touch M", "nice touch M",
    "nice -n 1 timeout 3 sh -c 'touch M'", "nohup touch M", "/usr/bin/touch M",
    "./touch M", "source ./x", ". ./x", "export A=1; touch M", "echo touch M | sh",
    # option escapes of allowed programs
    "find . -exec touch M ;", "find . -execdir touch M +", "find . -ok touch M ;",
    "find . -fprint M", "find . -fprint0 M", "find . -fprintf M x", "find . -fls M",
    "find . -name x -o -exec touch M ;", "sed -n 'w M' f.txt", "sed 's/a/b/w M' f.txt",
    "sed -e p -e 'w M' f.txt", "sed '1e touch M' f.txt", "sed 's/.*/touch M/e' f.txt",
    "sed --expression='w M' f.txt", "sed -f script.sed f.txt", "sed -n '1W M' f.txt",
    "awk 'BEGIN{system(\"touch M\")}'", "awk 'BEGIN{print \"x\" > \"M\"}'",
    "awk 'BEGIN{print \"x\" >> \"M\"}'", "awk 'BEGIN{print \"touch M\" | \"sh\"}'",
    "awk 'BEGIN{\"touch M\" | getline}'", "awk -f prog.awk", "sort -o M f.txt",
    "sort --output=M f.txt", "sort --out=M f.txt", "sort -uo M f.txt",
    "sort --compress-program=touch -S 1 f.txt", "uniq f.txt M", "tree -o M", "tree -R -H x",
    "git diff --output=M", "git log --output=M", "git log --out=M", "git show -o M",
    "git -c core.pager='touch M' -p log", "git -c alias.x='!touch M' x",
    "git --config-env=core.pager=X -p log", "git difftool -x 'touch M'",
    "git rebase --exec 'touch M' HEAD", "git grep --open-files-in-pager='touch M' x",
    "git -p log", "git --paginate log", "git help log", "git config core.pager 'touch M'",
    "git format-patch -o M -1", "git archive -o M HEAD", "git bundle create M HEAD",
    "rg --pre touch x", "rg --pre=touch x .", "rg --pre-glob '*' --pre touch x",
    "tee M", "echo x | tee M", "dd if=f.txt of=M", "git apply --unsafe-paths x",
    "git maintenance start", "git checkout-index --prefix=M/ -a",
    # more redirect spellings
    "cat <>M", "echo x 1<>M", "echo x >&M", "exec 3>M", "echo x {fd}>M", "echo x > >(cat)",
    "ls -l | > M", "> M", "echo hi|&tee M", "echo a >\\\nM", "ls；touch M", "ls\\;touch M",
    "ls& touch M", "l\"s\"|touch M", "ls !(x); touch M", "echo $[1+2]; touch M",
]


@pytest.fixture
def setup(project: Path) -> tuple[ToolContext, Path]:
    (project / "f.txt").write_text("hello\n")
    (project / "script.sed").write_text("w M\n")
    (project / "prog.awk").write_text('BEGIN { print "x" > "M" }\n')
    (project / "x").write_text("touch M\n")
    with tarfile.open(project / "a.tar", "w") as tar:
        tar.add(project / "f.txt", arcname="f.txt")
    ctx = ToolContext(project_root=project, allowed_commands=ALLOWED, shell_timeout_s=10)
    return ctx, project


@pytest.mark.parametrize("attack", ATTACKS)
async def test_attack_has_no_side_effect(setup: tuple[ToolContext, Path], attack: str) -> None:
    ctx, project = setup
    result = await ShellExecTool().execute({"command": attack}, ctx)
    assert not (project / "M").exists(), f"{attack!r} wrote the marker: {result.content}"
    assert result.is_error, f"{attack!r} was not refused: {result.content}"
    assert (project / "f.txt").read_text() == "hello\n"


@pytest.mark.parametrize("attack", ["sed -i 's/hello/pwned/' f.txt", "sed -i.bak s/h/p/ f.txt",
                                    "sed --in-place s/h/p/ f.txt", "sed -ni s/h/p/p f.txt",
                                    "sed -E -i s/h/p/ f.txt"])
async def test_sed_in_place_refused(setup: tuple[ToolContext, Path], attack: str) -> None:
    ctx, project = setup
    result = await ShellExecTool().execute({"command": attack}, ctx)
    assert result.is_error
    assert (project / "f.txt").read_text() == "hello\n"


@pytest.mark.parametrize("harmless", ["echo x\\; touch M", "echo '; touch M'", "echo '$(touch M)'",
                                      "echo '> M'", "grep -r 'touch M' .",
                                      "find . -name 'M' -print", "sed -n 's/h/H/p' f.txt",
                                      "awk '{print $1}' f.txt", "sort f.txt | uniq",
                                      "git --version", "ls -la | wc -l && cat f.txt"])
async def test_quoted_metacharacters_are_data(setup: tuple[ToolContext, Path],
                                              harmless: str) -> None:
    ctx, project = setup
    result = await ShellExecTool().execute({"command": harmless}, ctx)
    assert not result.is_error, result.content
    assert not (project / "M").exists()
