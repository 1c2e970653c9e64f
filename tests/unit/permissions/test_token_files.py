"""Ordinary project files that hold a well-known token: learnt when the project is opened."""

from __future__ import annotations

from pathlib import Path

from app.core.permissions.egress import SecretMatcher
from app.core.permissions.token_files import learn_token_files, token_file_paths
from app.core.sensitive_paths import SensitivePaths

TOKEN = "ghp_" + "R4nd0mV4lu3Th4tL00ksR34l1sT1cAbCd3fX"


def test_a_token_in_an_ordinary_file_is_learnt_and_its_file_remembered(tmp_path: Path) -> None:
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "deploy.py").write_text(f'TOKEN = "{TOKEN}"\n')
    (tmp_path / "README.md").write_text("no token here\n")
    (tmp_path / "node_modules" / "pkg").mkdir(parents=True)
    (tmp_path / "node_modules" / "pkg" / "fixture.js").write_text(f"'{TOKEN[:-1]}Y'\n")
    matcher = SecretMatcher()
    assert learn_token_files(matcher, tmp_path, SensitivePaths()) == 1
    assert token_file_paths(tmp_path) == ("src/deploy.py",)
    hits = matcher.scan("x=" + TOKEN.encode().hex())  # learnt: also found encoded
    assert hits and hits[0].source in ("src/deploy.py", "a GitHub token")


def test_a_project_without_tokens_remembers_no_file(tmp_path: Path) -> None:
    (tmp_path / "main.py").write_text("print('hi')\n")
    assert learn_token_files(SecretMatcher(), tmp_path, SensitivePaths()) == 0
    assert token_file_paths(tmp_path) == ()
