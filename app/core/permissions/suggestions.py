"""Rules the approval dialog offers under "Always allow": the whole tool, or something narrower."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from app.core.permissions.rules import PermissionRule
from app.core.tools.base import ToolSpec


@dataclass(frozen=True)
class RuleSuggestion:
    label: str
    rule: PermissionRule


def suggest_allow_rules(server_id: str, tool_name: str, tool_input: Mapping[str, Any],
                        spec: ToolSpec | None, working_dir: Path | None) -> list[RuleSuggestion]:
    """Narrowest first: a rule for this kind of input, then one for the whole tool."""
    suggestions: list[RuleSuggestion] = []
    narrow = _narrow_pattern(tool_input, spec, working_dir)
    if narrow is not None:
        pattern, what = narrow
        suggestions.append(RuleSuggestion(
            f"Always allow {tool_name} for {what}",
            PermissionRule(decision="allow", server_id=server_id, tool_name=tool_name,
                           input_pattern=pattern, priority=10,
                           description=f"Allowed from the approval dialog: {what}")))
    suggestions.append(RuleSuggestion(
        f"Always allow every {tool_name} call",
        PermissionRule(decision="allow", server_id=server_id, tool_name=tool_name, priority=10,
                       description="Allowed from the approval dialog")))
    return suggestions


def _narrow_pattern(tool_input: Mapping[str, Any], spec: ToolSpec | None,
                    working_dir: Path | None) -> tuple[str, str] | None:
    if spec is None or spec.subjects_fn is None:
        return None
    try:
        subjects = spec.subjects(tool_input, working_dir)
    except Exception:
        return None
    if len(subjects) != 1 or not subjects[0]:
        return None  # a chain needs every part allowed; one pattern cannot say that safely
    subject = subjects[0]
    if spec.subject_kind == "path":
        folder = os.path.dirname(subject)
        if working_dir is not None and (folder + "/").startswith(str(working_dir) + "/"):
            relative = os.path.relpath(folder, working_dir)
            if relative == ".":
                return "*", "files directly in the project folder"
            return f"{relative}/*", f"files directly in {relative}/"
        pattern = f"{folder.rstrip('/')}/*"
        return pattern, f"files directly in {folder.rstrip('/')}/"
    if spec.subject_kind == "host":
        return subject, f"the host {subject}"
    words = subject.split(" ")
    if len(words) == 1:
        return subject, f"exactly {subject!r}"
    keep = 2 if not words[1].startswith("-") else 1
    prefix = " ".join(words[:keep])
    return f"{prefix}*", f"commands starting with {prefix!r}"
