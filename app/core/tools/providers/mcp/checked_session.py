"""The SDK's client session as Tebiki runs it: an output-schema violation told apart from a
failed call, and the Tasks extension declared, with its status notifications going to the
task being followed (``mcp.task_follow``).

The SDK checks a tool's ``structuredContent`` against its declared ``outputSchema`` after the
answer arrived and raises a bare RuntimeError when it does not match, dropping the result: the
model was then told the server "could not run" a tool that ran (and may have changed
something). ``CheckedClientSession`` keeps the check and raises ``OutputSchemaMismatch`` with
the result instead, so the call can say what happened and give the text the tool returned.

This module imports the SDK at its top: only ``mcp.transport`` loads it, with the rest of the
SDK, off the GUI thread.
"""

from __future__ import annotations

from typing import Any

from mcp import ClientSession

from app.core.tools.providers.mcp.results import OutputSchemaMismatch
from app.core.tools.providers.mcp.task_follow import TaskWatch


class CheckedClientSession(ClientSession):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        # The tasks followed on this session, where their status notifications go.
        self.task_watch = TaskWatch()
        super().__init__(*args, **{**kwargs, **self.task_watch.session_options()})

    async def validate_tool_result(self, name: str, result: Any) -> None:
        try:
            await super().validate_tool_result(name, result)
        except RuntimeError as exc:
            raise OutputSchemaMismatch(str(exc), result) from exc
