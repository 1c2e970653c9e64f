"""grep_search: both backends (rg and Python), one output format, every parameter and error."""

from __future__ import annotations

import dataclasses
import os
import re
import shutil
import stat
from pathlib import Path

import pytest

from app.core.sandbox import Sandbox, SandboxStatus
from app.core.tools.base import RiskLevel, ToolCategory, ToolContext
from app.core.tools.builtin.grep_search import create
from app.core.tools.grep.python_backend import required_literal, run_python, search_text
from app.core.tools.grep.results import FileHits, Request
from app.core.tools.grep.rg_backend import parse_rg, rg_argv

RG = shutil.which("rg")
BACKENDS = ["python", pytest.param("rg", marks=pytest.mark.skipif(RG is None,
                                                                  reason="ripgrep missing"))]


@pytest.fixture(params=BACKENDS)
def backend(request: pytest.FixtureRequest) -> str:
    return request.param


def make_ctx(project: Path, backend: str, **cfg: object) -> ToolContext:
    return ToolContext(project_root=project,
                       tool_config={"grep_search": {"use_rg": backend == "rg", **cfg}})


@pytest.fixture
def ctx(project: Path, backend: str) -> ToolContext:
    return make_ctx(project, backend)


def put(root: Path, rel: str, text: str | bytes) -> Path:
    p = root / rel
    p.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(text, bytes):
        p.write_bytes(text)
    else:
        p.write_text(text)
    return p


async def grep(ctx: ToolContext, **args: object) -> str:
    r = await create().execute(args, ctx)
    assert not r.is_error, r.content
    return r.content


def body(text: str) -> list[str]:
    return text.splitlines()[1:]


async def test_content_mode_format(project: Path, ctx: ToolContext) -> None:
    put(project, "b.py", "import os\nx = foo()\n")
    put(project, "a.py", "foo = 1\nbar\nfoo()\n")
    out = await grep(ctx, pattern="foo")
    assert out.splitlines()[0] == ("Found 3 matching lines in 2 files for /foo/ in the working "
                                   "directory:")
    assert body(out) == ["a.py:1:foo = 1", "a.py:3:foo()", "b.py:2:x = foo()"]


async def test_context_lines_and_group_separators(project: Path, ctx: ToolContext) -> None:
    put(project, "a.txt", "".join(f"l{i}\n" for i in range(1, 13)).replace("l3\n", "hit\n")
        .replace("l10\n", "hit\n"))
    out = await grep(ctx, pattern="hit", context_lines=2)
    assert body(out) == ["a.txt-1-l1", "a.txt-2-l2", "a.txt:3:hit", "a.txt-4-l4", "a.txt-5-l5",
                         "--", "a.txt-8-l8", "a.txt-9-l9", "a.txt:10:hit", "a.txt-11-l11",
                         "a.txt-12-l12"]


async def test_overlapping_context_is_merged(project: Path, ctx: ToolContext) -> None:
    put(project, "a.txt", "x\nhit\ny\nhit\nz\n")
    out = await grep(ctx, pattern="hit", context_lines=1)
    assert body(out) == ["a.txt-1-x", "a.txt:2:hit", "a.txt-3-y", "a.txt:4:hit", "a.txt-5-z"]


async def test_files_with_matches_and_count(project: Path, ctx: ToolContext) -> None:
    put(project, "a.txt", "foo\nfoo foo\nbar\n")
    put(project, "sub/b.txt", "foo\n")
    put(project, "c.txt", "nothing\n")
    out = await grep(ctx, pattern="foo", output_mode="files_with_matches")
    assert out.splitlines()[0].startswith("Found 2 files matching /foo/")
    assert body(out) == ["a.txt", "sub/b.txt"]
    out = await grep(ctx, pattern="foo", output_mode="count")
    assert out.splitlines()[0].startswith("Found 3 matching lines in 2 files")
    assert body(out) == ["a.txt:2", "sub/b.txt:1"]


async def test_case_insensitive(project: Path, ctx: ToolContext) -> None:
    put(project, "a.txt", "Hello\nHELLO\nhello\nhelo\n")
    assert len(body(await grep(ctx, pattern="hello"))) == 1
    out = await grep(ctx, pattern="hello", case_insensitive=True)
    assert len(body(out)) == 3 and "/hello/i" in out


@pytest.mark.parametrize("file_pattern, expected", [
    ("*.py", ["a.py", "src/deep/c.py"]),
    ("*.{py,md}", ["a.py", "b.md", "src/deep/c.py"]),
    ("src/**/*.py", ["src/deep/c.py"]),
    ("/a.py", ["a.py"]),
])
async def test_file_pattern(project: Path, ctx: ToolContext, file_pattern: str,
                            expected: list[str]) -> None:
    for rel in ("a.py", "b.md", "c.txt", "src/deep/c.py"):
        put(project, rel, "needle\n")
    out = await grep(ctx, pattern="needle", file_pattern=file_pattern,
                     output_mode="files_with_matches")
    assert body(out) == expected


async def test_path_limits_the_search(project: Path, ctx: ToolContext) -> None:
    put(project, "a/x.txt", "needle\n")
    put(project, "b/y.txt", "needle\n")
    assert body(await grep(ctx, pattern="needle", path="b")) == ["b/y.txt:1:needle"]
    assert body(await grep(ctx, pattern="needle", path="a/x.txt")) == ["a/x.txt:1:needle"]
    assert body(await grep(ctx, pattern="needle", path="./b/../a")) == ["a/x.txt:1:needle"]


async def test_path_outside_working_dir_is_absolute(project: Path, tmp_path: Path,
                                                    ctx: ToolContext) -> None:
    put(tmp_path, "other/z.txt", "needle\n")
    out = await grep(ctx, pattern="needle", path=str(tmp_path / "other"))
    assert body(out) == [f"{tmp_path / 'other' / 'z.txt'}:1:needle"]


async def test_head_limit_and_offset_pagination(project: Path, ctx: ToolContext) -> None:
    put(project, "a.txt", "".join(f"m{i}\n" for i in range(10)))
    out = await grep(ctx, pattern="m", head_limit=4)
    assert body(out)[:4] == ["a.txt:1:m0", "a.txt:2:m1", "a.txt:3:m2", "a.txt:4:m3"]
    assert "[Showing lines 1–4 of 10 (head_limit=4). Call again with offset=4" in out
    out = await grep(ctx, pattern="m", head_limit=4, offset=8)
    assert body(out) == ["a.txt:9:m8", "a.txt:10:m9"]
    out = await grep(ctx, pattern="m", offset=10)
    assert "offset 10 is past the end" in out
    for i in range(5):
        put(project, f"f{i}.txt", "m\n")
    out = await grep(ctx, pattern="m", output_mode="files_with_matches", head_limit=2, offset=1)
    assert body(out)[:2] == ["f0.txt", "f1.txt"] and "files 2–3 of 6" in out


async def test_output_size_limit(project: Path, backend: str) -> None:
    ctx = make_ctx(project, backend, max_output_chars=300)
    put(project, "a.txt", "".join(f"match {'x' * 50} {i}\n" for i in range(30)))
    out = await grep(ctx, pattern="match")
    assert "(the output size limit)" in out and len(out) < 700


async def test_gitignore_hidden_git_and_binary(project: Path, ctx: ToolContext) -> None:
    put(project, ".gitignore", "ignored/\n*.log\n")
    put(project, "ignored/a.txt", "needle\n")
    put(project, "x.log", "needle\n")
    put(project, ".hidden/h.txt", "needle\n")
    put(project, ".git/HEAD", "needle\n")
    put(project, "bin.dat", b"needle\x00\x01")
    put(project, "ok.txt", "needle\n")
    out = await grep(ctx, pattern="needle", output_mode="files_with_matches")
    assert body(out) == [".hidden/h.txt", "ok.txt"]


async def test_parent_gitignore_and_nested_gitignore(project: Path, backend: str) -> None:
    put(project, ".gitignore", "*.gen\n")
    put(project, "sub/.gitignore", "local.txt\n")
    put(project, "sub/a.gen", "needle\n")
    put(project, "sub/local.txt", "needle\n")
    put(project, "sub/keep.txt", "needle\n")
    put(project, "local.txt", "needle\n")
    ctx = make_ctx(project / "sub", backend)
    out = await grep(ctx, pattern="needle", output_mode="files_with_matches")
    assert body(out) == ["keep.txt"]
    ctx = make_ctx(project, backend)
    out = await grep(ctx, pattern="needle", output_mode="files_with_matches")
    assert body(out) == ["local.txt", "sub/keep.txt"]


async def test_ignore_and_rgignore_files_are_honoured(project: Path, ctx: ToolContext) -> None:
    put(project, ".ignore", "a.txt\n")
    put(project, "sub/.rgignore", "b.txt\n")
    for rel in ("a.txt", "sub/b.txt", "sub/c.txt"):
        put(project, rel, "needle\n")
    out = await grep(ctx, pattern="needle", output_mode="files_with_matches")
    assert body(out) == ["sub/c.txt"]


async def test_file_pattern_overrides_gitignore_like_rg(project: Path, ctx: ToolContext) -> None:
    put(project, ".gitignore", "*.log\nbuild/\n")
    put(project, "x.log", "needle\n")
    put(project, "build/y.log", "needle\n")
    out = await grep(ctx, pattern="needle", file_pattern="*.log",
                     output_mode="files_with_matches")
    assert body(out) == ["x.log"]  # rg's --glob semantics: ignored folders stay ignored


async def test_symlinks_are_not_followed(project: Path, tmp_path: Path, ctx: ToolContext) -> None:
    put(tmp_path, "outside/secret.txt", "needle\n")
    put(project, "real.txt", "needle\n")
    os.symlink(tmp_path / "outside", project / "dirlink")
    os.symlink(project / "real.txt", project / "filelink.txt")
    out = await grep(ctx, pattern="needle", output_mode="files_with_matches")
    assert body(out) == ["real.txt"]


async def test_pattern_starting_with_dash_is_a_pattern(project: Path, ctx: ToolContext) -> None:
    put(project, "a.txt", "x --files y\n-v\n")
    assert body(await grep(ctx, pattern="--files")) == ["a.txt:1:x --files y"]
    assert body(await grep(ctx, pattern="-v")) == ["a.txt:2:-v"]


async def test_long_lines_are_cut(project: Path, ctx: ToolContext) -> None:
    put(project, "min.js", "var a=1;" * 200 + "needle\n")
    out = await grep(ctx, pattern="needle")
    assert "… [line truncated: 1606 characters]" in out


async def test_crlf_and_invalid_utf8(project: Path, ctx: ToolContext) -> None:
    put(project, "w.txt", b"one\r\nneedle caf\xe9\r\n")
    assert body(await grep(ctx, pattern="needle")) == ["w.txt:2:needle caf\ufffd"]


async def test_unicode_and_anchors(project: Path, ctx: ToolContext) -> None:
    put(project, "u.txt", "日本語 テキスト\nnaïve\n\nend\n")
    assert body(await grep(ctx, pattern="本語")) == ["u.txt:1:日本語 テキスト"]
    assert body(await grep(ctx, pattern=r"^\w+$")) == ["u.txt:2:naïve", "u.txt:4:end"]
    assert body(await grep(ctx, pattern="^$")) == ["u.txt:3:"]


async def test_matches_never_span_lines(project: Path, ctx: ToolContext) -> None:
    put(project, "a.txt", "foo\nbar\nfoo bar\n")
    assert body(await grep(ctx, pattern=r"foo\s+bar")) == ["a.txt:3:foo bar"]


async def test_no_matches_message(project: Path, ctx: ToolContext) -> None:
    put(project, "a.txt", "x\n")
    out = await grep(ctx, pattern="zzz")
    assert out.startswith("No matches for /zzz/ in the working directory.")


async def test_lookaround_works_on_both_backends(project: Path, ctx: ToolContext) -> None:
    put(project, "a.txt", "foobar\nfoobaz\n")
    assert body(await grep(ctx, pattern="foo(?=baz)")) == ["a.txt:2:foobaz"]


@pytest.mark.parametrize("args, fragment", [
    ({"pattern": "("}, "Invalid regular expression '('"),
    ({"pattern": "a[b"}, "Invalid regular expression"),
    ({}, "- pattern: required"),
    ({"pattern": ""}, "pattern: must be at least 1 characters long"),
    ({"pattern": "a\nb"}, "line break"),
    ({"pattern": "x", "path": "missing"}, "missing does not exist"),
    ({"pattern": "x", "path": "bin.dat"}, "binary file"),
    ({"pattern": "x", "output_mode": "lines"}, "output_mode: must be one of"),
    ({"pattern": "x", "context_lines": 99}, "at most 20"),
    ({"pattern": "x", "head_limit": 0}, "at least 1"),
    ({"pattern": "x", "offset": -3}, "at least 0"),
    ({"pattern": "x", "case_insensitive": "yes"}, "true or false"),
    ({"pattern": "x", "path": "a\x00"}, "NUL"),
    ({"pattern": "x", "glob": "*"}, "unknown property"),
])
async def test_errors(project: Path, ctx: ToolContext, args: dict, fragment: str) -> None:
    put(project, "bin.dat", b"x\x00y")
    r = await create().execute(args, ctx)
    assert r.is_error and fragment in r.content, r.content


async def test_python_timeout_reports_partial_results(project: Path) -> None:
    for i in range(600):
        put(project, f"d/f{i:03d}.txt", "needle\n")
    ctx = make_ctx(project, "python", timeout_s=0.0001)
    out = await grep(ctx, pattern="needle", output_mode="count")
    assert "Search incomplete (stopped at the 0.0001 s time limit)" in out


async def test_rg_timeout_kills_the_process(project: Path, tmp_path: Path) -> None:
    fake = tmp_path / "slow-rg"
    fake.write_text("#!/bin/sh\nexec sleep 30\n")
    fake.chmod(0o755)
    put(project, "a.txt", "needle\n")
    ctx = dataclasses.replace(make_ctx(project, "rg", rg_path=str(fake), timeout_s=0.3),
                              sandbox=Sandbox.off("the fake rg lives under /tmp"))
    out = await grep(ctx, pattern="needle")
    assert "stopped at the 0.3 s time limit" in out


async def test_required_rg_missing_is_an_error(project: Path, tmp_path: Path) -> None:
    ctx = make_ctx(project, "rg", rg_path=str(tmp_path / "no-such-rg"))
    r = await create().execute({"pattern": "x"}, ctx)
    assert r.is_error and "ripgrep (rg) is required" in r.content


@pytest.mark.skipif(RG is None, reason="ripgrep missing")
async def test_ripgrep_config_cannot_inject_options(project: Path, tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    marker = tmp_path / "pwned"
    pre = tmp_path / "pre.sh"
    pre.write_text(f"#!/bin/sh\ntouch {marker}\ncat \"$1\"\n")
    pre.chmod(pre.stat().st_mode | stat.S_IXUSR)
    config = tmp_path / "rgrc"
    config.write_text(f"--pre={pre}\n--files\n")
    monkeypatch.setenv("RIPGREP_CONFIG_PATH", str(config))
    put(project, "a.txt", "needle\n")
    out = await grep(make_ctx(project, "rg"), pattern="needle")
    assert body(out) == ["a.txt:1:needle"]
    assert not marker.exists()


def test_rg_argv_is_hardened(project: Path) -> None:
    req = Request("-e", project, False, ".", "*.py", 2, True, "content", project, 5.0)
    argv = rg_argv("/usr/bin/rg", req)
    assert argv[1] == "--no-config"
    assert argv[-4:] == ["--regexp", "-e", "--", "."]
    assert not any(a.startswith("--pre") for a in argv)
    assert "--glob=*.py" in argv and argv.index("--glob=*.py") < argv.index("--glob=!.git")


# -- parity: the two backends give the same output on the same tree ----------------------

def build_varied_tree(root: Path) -> None:
    put(root, ".gitignore", "build/\n*.tmp\n!important.tmp\n")
    put(root, "build/gen.py", "def handler(): pass\n")
    put(root, "a.tmp", "handler\n")
    put(root, "important.tmp", "handler here\n")
    put(root, "src/app.py", "import os\n\ndef handler(event):\n    return event\n\n"
        "class Handler:\n    pass\n# TODO: handler cleanup\n")
    put(root, "src/util/strings.py", "".join(f"line {i} handler_{i % 3}\n" for i in range(40)))
    put(root, "src/util/.gitignore", "secret.py\n")
    put(root, "src/util/secret.py", "handler = 'secret'\n")
    put(root, "docs/readme.md", "# Handler docs\nUse `handler(event)`.\r\nCafé ünïcode handler\n")
    put(root, "docs/latin1.txt", b"caf\xe9 handler\n")
    put(root, "web/min.js", "x=1;" * 300 + "handler();\n")
    put(root, "web/app.ts", "export const handler = () => {}\n-v flag\n")
    put(root, ".config/settings.toml", "handler = true\n")
    put(root, "data/blob.bin", b"handler\x00\x01\x02")
    put(root, "empty.txt", "")
    put(root, "noeol.txt", "last handler")


PARITY_CASES = [
    {"pattern": "handler"},
    {"pattern": "handler", "case_insensitive": True},
    {"pattern": r"handler\(\w*\)", "context_lines": 1},
    {"pattern": "handler", "context_lines": 3, "head_limit": 15, "offset": 5},
    {"pattern": "handler", "output_mode": "files_with_matches"},
    {"pattern": "handler", "output_mode": "count"},
    {"pattern": "handler_[12]$", "output_mode": "count"},
    {"pattern": "^$", "path": "src"},
    {"pattern": "handler", "file_pattern": "*.{py,ts}"},
    {"pattern": "handler", "file_pattern": "*.tmp", "output_mode": "files_with_matches"},
    {"pattern": "handler", "path": "docs/readme.md"},
    {"pattern": "-v"},
    {"pattern": r"(?i)HANDLER\b"},
    {"pattern": "[Cc]afé", "context_lines": 2},
    {"pattern": "handler", "path": "src/util", "head_limit": 7},
    {"pattern": "zzz_nothing"},
]


@pytest.mark.skipif(RG is None, reason="ripgrep missing")
@pytest.mark.parametrize("args", PARITY_CASES, ids=lambda a: re.sub(r"\W+", "_", str(a))[:60])
async def test_backends_give_identical_output(project: Path, args: dict) -> None:
    build_varied_tree(project)
    out_rg = await grep(make_ctx(project, "rg"), **args)
    out_py = await grep(make_ctx(project, "python"), **args)
    assert out_rg == out_py


# -- internals -------------------------------------------------------------------------------

def test_required_literal() -> None:
    assert required_literal(r"handle_payment_\w+", False) == (b"handle_payment_", False)
    assert required_literal(r"\bfoo\d+barbaz", False) == (b"barbaz", False)
    assert required_literal("(?i)Hello", False) == (b"hello", True)
    assert required_literal("Hello", True) == (b"hello", True)
    assert required_literal("a|bcd", False) is None
    assert required_literal("x(abc)?y", False) is None
    assert required_literal(r"(ab)(cd)", False) == (b"abcd", False)
    assert required_literal(r"\d+", False) is None
    assert required_literal("(?i)straße", False) is None  # non-ASCII folding: no shortcut
    assert required_literal("(", False) is None


def test_parse_rg_heading_blocks_lazily() -> None:
    out = (b"./b.txt\x001-x\n2:hit\n3-y\n--\n9:hit\n\n"
           b"./a dir/a.txt\x0012:hit:with:colons\n")
    files = {f.path: f for f in parse_rg(out, "content", context=1)}
    b = files["b.txt"]
    assert (b.count, b.output_count()) == (2, 4)
    assert b.raw is not None  # not parsed until shown
    assert b.output_lines() == [(1, False, "x"), (2, True, "hit"), (3, False, "y"),
                                (9, True, "hit")]
    a = files["a dir/a.txt"]
    assert a.output_lines() == [(12, True, "hit:with:colons")] and a.count == 1
    assert [f.path for f in parse_rg(b"./x\x00y\x00", "files_with_matches")] == ["x", "y"]
    assert [(f.path, f.count) for f in parse_rg(b"./x\x003\n", "count")] == [("x", 3)]


def test_search_text_line_semantics() -> None:
    rx = re.compile(r"a\s+b", re.MULTILINE)
    assert search_text("a\nb\na  b\n", rx, "content", 0) == FileHits("", 1, [(3, True, "a  b")])
    rx = re.compile("x*", re.MULTILINE)
    hits = search_text("1\n2\n", rx, "count", 0)
    assert hits is not None and hits.count == 2  # every line, but no phantom line after the end
    assert search_text("", rx, "count", 0) is None


def test_run_python_directly_on_one_file(project: Path) -> None:
    f = put(project, "one.txt", "alpha\nbeta\n")
    req = Request("beta", f, True, "one.txt", None, 0, False, "content", project, 5.0)
    outcome = run_python(req)
    assert [(h.path, h.lines) for h in outcome.files] == [("one.txt", [(2, True, "beta")])]


def test_spec() -> None:
    spec = create().spec
    assert spec.name == "grep_search"
    assert spec.category is ToolCategory.READ_ONLY and spec.risk is RiskLevel.LOW
    assert spec.subject_kind == "path"
    assert spec.input_schema["additionalProperties"] is False
    assert spec.subjects({"pattern": "x"}, Path("/p")) == ["/p"]
    assert spec.subjects({"pattern": "x", "path": "/etc/../etc"}, Path("/p")) == ["/etc"]


# -- what a search reads: never a secret's content unless the call names the file ----------

SECRET_LINE = "DB_PASSWORD=hunter2-s3cr3t-value"


@pytest.mark.parametrize("mode", ["content", "count", "files_with_matches"])
async def test_files_with_secret_names_are_never_searched(project: Path, ctx: ToolContext,
                                                          mode: str) -> None:
    put(project, ".env", SECRET_LINE + "\n")
    put(project, "infra/terraform.tfstate", '{"password": "hunter2-s3cr3t-value"}\n')
    put(project, "deploy/.env.production", SECRET_LINE + "\n")
    put(project, "src/app.py", "password = os.environ['DB_PASSWORD']\n")
    for file_pattern in (None, ".env", "*.tfstate", ".env*"):
        args: dict[str, object] = {"pattern": "hunter2|DB_PASSWORD", "output_mode": mode}
        if file_pattern:
            args["file_pattern"] = file_pattern
        out = await grep(ctx, **args)
        # Not the value, and not even whether a secret file matched (count mode as an oracle).
        assert "s3cr3t-value" not in out
        assert "tfstate" not in out.split("[Files that hold")[0]
        assert "tfstate:" not in out and ".env:" not in out and ".env.production:" not in out
        assert "never searched" in out or file_pattern in (None, ".env*")


async def test_a_template_is_not_a_secret(project: Path, ctx: ToolContext, backend: str) -> None:
    put(project, ".env.example", "DB_PASSWORD=changeme\n")
    out = await grep(ctx, pattern="DB_PASSWORD", path=".env.example")
    assert "changeme" in out


async def test_a_secret_named_as_the_path_is_searched(project: Path, ctx: ToolContext) -> None:
    # The call names the file: the sensitive-path guard shows it to the person first.
    # Approved, the sandbox shows the file to that call (ripgrep runs in it).
    put(project, ".env", SECRET_LINE + "\n")
    shown = dataclasses.replace(ctx, revealed=(project / ".env",))
    out = await grep(shown, pattern="DB_PASSWORD", path=".env")
    assert "s3cr3t-value" in out


@pytest.mark.parametrize("mode", ["content", "count", "files_with_matches"])
async def test_the_persons_own_secret_names_are_never_searched(project: Path, backend: str,
                                                               mode: str) -> None:
    # "*.secret" added to the sensitive paths: hidden by the sandbox where there is one, and
    # left out by the search itself where there is none (no count as an oracle either).
    put(project, "conf/prod.secret", SECRET_LINE + "\n")
    put(project, "src/app.py", "password = os.environ['DB_PASSWORD']\n")
    ctx = dataclasses.replace(
        make_ctx(project, backend),
        sandbox=Sandbox(SandboxStatus.unavailable("test"), required=False,
                        secret_names=("*.secret", "[unclosed")))  # rg must not choke
    for file_pattern in (None, "*.secret"):
        args: dict[str, object] = {"pattern": "hunter2|DB_PASSWORD", "output_mode": mode}
        if file_pattern:
            args["file_pattern"] = file_pattern
        out = await grep(ctx, **args)
        assert "s3cr3t-value" not in out and "prod.secret:" not in out
        assert "prod.secret" not in out.split("[Files that hold")[0]
