"""What an MCP call names as files, for the sensitive-path guard and the flow labels: a
filesystem server reads what its input says, wherever it lies."""

from __future__ import annotations

from pathlib import Path

from app.core.tools.providers.mcp.tool_specs import named_paths, spec_for_tool


def test_absolute_home_uri_and_relative_paths_are_named(tmp_path: Path) -> None:
    home = str(Path.home())
    names = named_paths({"path": "/srv/other/.env", "uri": "file:///srv/x%20y/key.pem",
                         "more": {"files": ["~/notes.txt", "src/app.py", ".env"]}},
                        tmp_path)
    root = str(tmp_path.resolve())
    assert names == ["/srv/other/.env", "/srv/x y/key.pem", f"{home}/notes.txt",
                     f"{root}/src/app.py", f"{root}/.env"]


def test_words_urls_and_numbers_are_not_paths(tmp_path: Path) -> None:
    assert named_paths({"to": "dana@example.com", "body": "see /etc and more",
                        "url": "https://example.com/a/b", "amount": 100, "name": "report"},
                       tmp_path) == []


def test_only_a_server_outside_the_sandbox_names_its_paths() -> None:
    """Inside, it sees only what the sandbox shows it, like any program."""
    tool = {"name": "read_text_file", "inputSchema": {"type": "object"}}
    assert spec_for_tool("files", "files__read_text_file", tool).named_paths is named_paths
    sandboxed = spec_for_tool("files", "files__read_text_file", tool, runs_programs=True,
                              sandboxed=True)
    assert sandboxed.named_paths is None
