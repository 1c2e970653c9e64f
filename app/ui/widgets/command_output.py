"""A command's result (shell_exec, shell_jobs) as the text a terminal would show.

Kept apart from the tool card that shows it: it is pure text formatting of a tool's JSON result
(no widgets), so it can be read and tested on its own, and any other view of a result can use it.
"""

from __future__ import annotations

import json


def readable_result(content: str) -> str | None:
    """A command's result (shell_exec, shell_jobs: a JSON object with stdout / stderr) as the
    text a terminal would show: the command, the exit code, then stdout and stderr as lines.
    None for any other result (shown as it is)."""
    if not content.startswith("{"):
        return None
    try:
        value = json.loads(content)
    except ValueError:
        return None
    if not isinstance(value, dict) or not ({"stdout", "stderr"} & value.keys()):
        return None
    lines: list[str] = []
    if isinstance(value.get("command"), str):
        lines.append(f"$ {value['command']}")
    facts = _facts(value)
    if facts:
        lines.append(" · ".join(facts))
    for stream in ("stdout", "stderr"):
        text = value.get(stream)
        if not isinstance(text, str):
            continue
        lines.append("")
        lines.append(f"── {stream} ──" if text else f"── {stream} (empty) ──")
        if text:
            lines.append(text.rstrip("\n"))
    return "\n".join(lines)


def _facts(value: dict[str, object]) -> list[str]:
    """"job 3 · running · exit code 0 · 120 ms · sandboxed · in src": what the result says
    about the run, in that order."""
    facts: list[str] = []
    if value.get("job_id"):
        facts.append(f"job {value['job_id']}")
    if value.get("status"):
        facts.append(str(value["status"]))
    if value.get("exit_code") is not None:
        facts.append(f"exit code {value['exit_code']}")
    if value.get("timed_out"):
        facts.append("timed out")
    if isinstance(value.get("duration_ms"), int):
        facts.append(f"{value['duration_ms']} ms")
    if value.get("sandboxed") is not None:
        facts.append("sandboxed" if value["sandboxed"] else "not sandboxed")
    if value.get("cwd"):
        facts.append(f"in {value['cwd']}")
    return facts
