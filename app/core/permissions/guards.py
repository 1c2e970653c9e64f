"""Steps 2 and 3 of ``ToolPermissionService.decide``: the profile's mode answers where no rule
did, then the guards make the answer stricter (a sensitive path asks, a write to a persistence
path asks, the flow guard asks for egress after a secret was read, the egress check refuses an
input carrying a secret).
Data in, data out: the service passes the project, the sandbox and what is secret."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

from app.core.permission_mode import PermissionMode
from app.core.permissions.decision import PLAN_MODE_REFUSAL, Decision, DecisionContext
from app.core.permissions.egress import SecretMatcher, egress_refusal
from app.core.permissions.egress_history import egress_destination
from app.core.permissions.facts import CallFacts, call_facts
from app.core.permissions.flow import FlowLabel, FlowState
from app.core.permissions.provenance import ChosenValue
from app.core.permissions.provenance_values import destination, told_destination
from app.core.permissions.rules import DecisionKind
from app.core.sandbox import Sandbox
from app.core.sensitive_paths import SensitivePaths
from app.core.tools.base import ToolSpec, canonical_json

__all__ = ["apply_mode_and_guards"]


def apply_mode_and_guards(decision: Decision, spec: ToolSpec, tool_input: Mapping[str, Any],
                          complete: bool, paths: list[str], context: DecisionContext, *,
                          project: Path | None, sandbox: Sandbox, sensitive: SensitivePaths,
                          known_secrets: SecretMatcher) -> Decision:
    """The rules' ``decision`` for a call to ``spec``, with the mode and the guards applied.
    ``complete``: the input was fully understood; ``paths``: its resolved path subjects."""
    facts = call_facts(spec, tool_input, path_subjects=paths, project=project,
                       ctx=context.tool_context, sandbox=sandbox,
                       checkpoints=context.checkpoints, sensitive=sensitive)
    decision = replace(decision, facts=facts)
    mode = context.mode
    if mode is PermissionMode.PLAN and not facts.read_only:
        return decision.with_kind("deny", "plan mode: this call would change something",
                                  note=PLAN_MODE_REFUSAL)
    if decision.kind == "ask" and decision.rule is None:  # no rule decided
        decision = _by_mode(decision, mode, facts, complete)
    rule = decision.rule
    opted_out = rule is not None and rule.ignore_flow and decision.kind == "allow" and \
        not decision.decided_by
    flow = context.flow
    # The guards explain themselves whenever they apply, also to a call that asks anyway
    # (the person should know why this one matters), and turn an allow into an ask.
    if facts.sensitive and not opted_out:
        path, entry = facts.sensitive[0]
        decision = decision.with_kind(
            _raised(decision.kind), f"sensitive path: {path} (listed as {entry})",
            flow_reason=f"This call reads or writes {path}, which holds secrets "
                        f"(sensitive paths: {entry}).")
    if facts.persistence:
        decision = _persistence_guard(decision, facts)
    if facts.egress and not opted_out and flow is not None \
            and flow.has(FlowLabel.READ_SENSITIVE):
        decision = decision.with_kind(
            _raised(decision.kind),
            "flow guard: the conversation read a secret and this call sends data out",
            flow_reason=f"This conversation read {flow.sensitive_reads()}; this call "
                        f"sends data to {facts.destination}.")
    if flow is not None and flow.has(FlowLabel.UNTRUSTED):
        decision = _provenance_guard(decision, spec, tool_input, facts, flow)
    if facts.egress:
        text = canonical_json(tool_input)
        hits = known_secrets.scan(text)
        if flow is not None:
            hits = flow.secrets.scan(text) + hits
            # A secret split over several calls to one destination, joined.
            destination = egress_destination(spec.server_id, spec.name, tool_input)
            hits = hits or flow.egress.joined_hits(destination, tool_input, flow.secrets,
                                                   known_secrets)
        if hits:
            message = egress_refusal(hits)
            return decision.with_kind("deny", "secret egress check: the input carries a "
                                              "secret", note=message, flow_reason=message)
        if flow is not None and decision.kind == "allow":  # it goes out now
            flow.record_egress(destination, tool_input)
    return decision


def acts_for_content(spec: ToolSpec, facts: CallFacts) -> bool:
    """Could an injected value in this call's input do harm: does it send data out, or act
    through a tool whose effects Tebiki cannot see? Web searches go to the search provider
    the person configured; a third-party tool whose server says it only reads its own
    closed world is left to the flow guard (what it reads can leave only through another
    call, checked here)."""
    if spec.server_id == "builtin":
        return facts.egress and spec.name != "web_search"
    annotations = spec.annotations
    # Only a tool that says it reads, and only its own closed world (openWorldHint is true
    # unless said otherwise: a "read-only" fetch of any URL is a way out).
    return not (annotations.get("readOnlyHint") is True
                and annotations.get("destructiveHint") is not True
                and annotations.get("openWorldHint") is False)


def _provenance_guard(decision: Decision, spec: ToolSpec, tool_input: Mapping[str, Any],
                      facts: CallFacts, flow: FlowState) -> Decision:
    """Raise to ask a call whose arguments untrusted content may have chosen (module
    ``app.core.permissions.provenance``): a rule that allows the tool means "for what the
    person asks", never "for whatever a page asks"."""
    if decision.kind == "deny" or not acts_for_content(spec, facts):
        return decision
    # What a third-party tool does with its input nobody sees: its numbers may be amounts or
    # ids, and an identifier nobody wrote as it stands was put together by the model.
    chosen = flow.provenance.chosen_values(tool_input, verbatim_urls_ok=spec.needs_network,
                                           third_party=spec.server_id != "builtin")
    if not chosen and spec.needs_network:
        chosen = _unvouched_destination(tool_input, flow)
    if not chosen and spec.needs_network and spec.server_id != "builtin":
        chosen = _program_destinations(spec, tool_input, flow)
    if not chosen and spec.runs_programs and facts.egress and spec.server_id == "builtin":
        # A command with network sends wherever its code says: the destination is not an
        # argument that can be vouched for (a port spelt out in words, an address built in
        # code), so after untrusted content it is the person's to allow, whatever rule
        # allows the tool for their own commands. (A third-party tool's arguments are
        # judged above: its server, not a command line, decides where they go.)
        source = flow.sources_of(FlowLabel.UNTRUSTED)[0].source
        return _raise_to_ask(
            decision, "provenance guard: its programs may reach the network after untrusted "
                      f"content ({source})",
            "This command's programs may reach the network, and the conversation took in "
            f"untrusted content ({source}) that may have chosen where they send your data. "
            "Approve only if this is what you asked for.")
    if not chosen:
        return decision
    first = chosen[0]
    more = f" (and {len(chosen) - 1} more)" if len(chosen) > 1 else ""
    return _raise_to_ask(
        decision, f"provenance guard: {first.describe()}{more}",
        f"This call's arguments may have been chosen by untrusted content, not by you: "
        f"{'; '.join(c.describe() for c in chosen)}. Approve only if this is what you "
        "asked for.")


def _raise_to_ask(decision: Decision, why: str, reason: str) -> Decision:
    """The provenance guard's ask, after whatever another guard said (the person reads
    both)."""
    if decision.flow_reason:  # another guard spoke first: the person reads both
        why, reason = f"{decision.decided_by}; {why}", f"{decision.flow_reason} {reason}"
    return decision.with_kind("ask", why, flow_reason=reason)


def _unvouched_destination(tool_input: Mapping[str, Any], flow: FlowState) -> list[ChosenValue]:
    """A URL the conversation never saw, to a destination (host and port) the person never
    named: untrusted content may have spelt it out in a way no literal match finds, and
    the URL carries whatever the model put in it."""
    url = tool_input.get("url")
    if not isinstance(url, str) or flow.provenance.seen_url(url):
        return []
    # Host and port: the person's docs on 127.0.0.1:8000 do not vouch for 127.0.0.1:9000.
    host = destination(url)
    if not host or flow.provenance.vouched(host):
        return []
    # A query carries data; so does any part of the URL after the person's files were read.
    # An address or a port is nothing a model knows by itself (unlike docs.python.org): it
    # was told it, maybe spelt out in words, and the path may carry what it read.
    carries = "?" in url or flow.has(FlowLabel.READ_OUTSIDE) or \
        flow.has(FlowLabel.READ_SENSITIVE) or told_destination(url)
    if not carries:
        return []
    return [ChosenValue("url", host, "no message of yours (a host untrusted content may "
                                     "have spelt out)")]


def _program_destinations(spec: ToolSpec, tool_input: Mapping[str, Any],
                          flow: FlowState) -> list[ChosenValue]:
    """A custom tool's command line, as its template renders the input: the URLs in it go
    where its parameters say, the template's own hosts are the person's (their
    tools.toml)."""
    template = spec.annotations.get("command")
    if spec.subjects_fn is None or not isinstance(template, str):
        return []
    try:
        command = " ".join(spec.subjects(tool_input, None))
    except Exception:  # not rendered: the tool refuses the input itself
        return []
    return flow.provenance.unnamed_destinations(command, template, tool_input)


def _persistence_guard(decision: Decision, facts: CallFacts) -> Decision:
    """A write to a path the person's tools run without being asked (folder-open tasks, git
    hooks, shell-entry and interpreter start-up hooks) is never run unasked: not by an allow
    rule, not by a rule that opts out of the flow guard, not in auto mode. A deny stays."""
    path, reason = facts.persistence[0]
    explained = (f"This call writes {path}: {reason}. The checkpoint could undo the change, "
                 "but not what runs before anyone looks at it.")
    if decision.kind not in ("ask", "deny"):
        return decision.with_kind("ask", f"persistence path: {path} ({reason})",
                                  flow_reason=explained)
    if decision.kind == "ask":  # asks anyway: the person should still know why it matters
        joined = f"{decision.flow_reason} {explained}" if decision.flow_reason else explained
        return replace(decision, flow_reason=joined)
    return decision


def _raised(kind: DecisionKind) -> DecisionKind:
    """What a guard makes of a decision: a person must see the call (reviewers do not decide
    about secrets), a deny stays a deny."""
    return "deny" if kind == "deny" else "ask"


def _by_mode(decision: Decision, mode: PermissionMode, facts: CallFacts,
             complete: bool) -> Decision:
    """The answer of ``mode`` for a call no rule decided."""
    if mode is PermissionMode.PLAN:
        if facts.read_only and not facts.outside:
            return decision.with_kind("allow", "plan mode: a read inside the project")
        return decision.with_kind("ask", f"plan mode: {facts.describe()}")
    if mode is PermissionMode.AUTO:
        if not complete:
            return decision.with_kind("ask", "auto mode: the input could not be fully "
                                             "analysed")
        if facts.contained and facts.reversible and not facts.egress:
            return decision.with_kind("allow", f"auto mode: {facts.describe()}")
        return decision.with_kind("ask", f"auto mode: {facts.describe()}")
    return decision
