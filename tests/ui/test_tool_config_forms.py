"""Every built-in tool's Configure… dialog is a form, never a raw JSON box; and the options the
forms offer are the ones the tools read."""

from __future__ import annotations

import asyncio

import pytest

from app.core.tools.base import ToolContext
from app.core.tools.default_registry import default_registry
from app.ui.dialogs.tool_config import ToolConfigDialog

REGISTRY = default_registry()
TOOL_NAMES = sorted(REGISTRY.names())


@pytest.mark.parametrize("name", TOOL_NAMES)
def test_every_registered_tool_gets_a_form(qtbot, project, name):
    tool = REGISTRY.get(name)
    assert tool is not None
    spec = tool.spec
    dialog = ToolConfigDialog(spec, dict(spec.default_config), project)
    qtbot.addWidget(dialog)
    assert "json" not in dialog.inputs, f"{name}: a raw JSON box instead of a form"
    assert dialog.inputs or dialog.no_options, f"{name}: neither options nor a word"
    dialog._try_accept()  # the defaults as shown save without a complaint
    assert dialog.config() is not None, dialog.error.text()


@pytest.mark.parametrize("name", ["read_file", "glob_search", "grep_search", "list_directory",
                                  "shell_jobs"])
def test_the_bare_tools_have_fields(name):
    tool = REGISTRY.get(name)
    assert tool is not None and tool.spec.config_fields, f"{name} declares no options"


def _saved(qtbot, project, name: str, key: str, value: int) -> dict:
    """The config the tool's Configure… form saves with ``key`` set to ``value``."""
    tool = REGISTRY.get(name)
    assert tool is not None
    dialog = ToolConfigDialog(tool.spec, {}, project)
    qtbot.addWidget(dialog)
    dialog.inputs[key].setValue(value)
    dialog._try_accept()
    config = dialog.config()
    assert config is not None, dialog.error.text()
    return config


def test_read_files_size_limit_from_the_form_is_the_one_the_tool_uses(qtbot, project):
    config = _saved(qtbot, project, "read_file", "max_file_bytes", 100)
    tool = REGISTRY.get("read_file")
    assert tool is not None
    (project / "big.txt").write_text("line\n" * 100)
    ctx = ToolContext(project_root=project, tool_config={"read_file": config})
    result = asyncio.run(tool.execute({"path": "big.txt"}, ctx))
    assert result.is_error and "100 bytes limit" in str(result.content)


def test_the_job_limit_from_shell_jobs_form_limits_shell_exec(qtbot, project, monkeypatch):
    import app.core.tools.shell.jobs as jobs

    config = _saved(qtbot, project, "shell_jobs", "max_running_jobs", 1)
    assert config == {"max_running_jobs": 1}
    ctx = ToolContext(project_root=project, tool_config={"shell_jobs": config})

    async def start_two() -> tuple:
        job_may_end = asyncio.Event()

        async def a_job_that_runs_until_told(*_args, **_kwargs):
            await job_may_end.wait()

        monkeypatch.setattr(jobs, "run_steps", a_job_that_runs_until_told)
        first = jobs.start_job(ctx, "make serve", project, {}, [])
        second = jobs.start_job(ctx, "make watch", project, {}, [])
        job_may_end.set()
        await asyncio.gather(*(job.task for job in ctx.session[jobs.SESSION_JOBS].values()))
        return first, second

    first, second = asyncio.run(start_two())
    assert not first.is_error
    assert second.is_error and "1 background jobs are already running" in second.content
