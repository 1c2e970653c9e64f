"""Fixtures for the review tests: loopback fake reviewers and a typical risky call."""

from __future__ import annotations

import pytest

from app.core.review import ReviewRequest
from tests.fakes.reviewer_server import reviewer_servers  # noqa: F401  (the fixture)


@pytest.fixture
def call() -> ReviewRequest:
    return ReviewRequest(
        tool_name="shell_exec", server_id="builtin",
        tool_input={"command": "rm -rf build/ && make release"},
        preview="$ rm -rf build/ && make release", deciding_rule="review: shell_exec *",
        flow_labels=("project",), contained=True, reversible=False,
        conversation_excerpt="user: please rebuild the release artefacts")
