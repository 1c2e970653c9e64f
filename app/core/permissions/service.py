"""ToolPermissionService: allow, ask or deny a tool call from the rule table, the profile's
permission mode and what the conversation has read.

``decide()`` goes in three steps, each only ever making the answer stricter except the mode,
which answers only where no rule did:

1. **Rules**, in priority order (a deny always wins).
2. **Mode** (``DecisionContext.mode``), for a call no rule decides: ``ask`` asks; ``auto``
   allows a call that is contained, reversible and sends nothing out (``facts.CallFacts``) and
   asks otherwise; ``plan`` runs reading calls only and refuses anything that changes state,
   whatever a rule says.
3. **Guards**: a read of a sensitive path asks, even inside the project and under an allow
   rule; after the conversation read a secret (``flow.FlowState``), a call that can send data
   out asks; and an outgoing input that carries a secret the conversation has seen (or a
   well-known token) is refused. An allow rule can opt out of the first two explicitly
   (``ignore_flow``); nothing opts out of the last.

Rules live in memory as an immutable index that is rebuilt whenever a ``RuleRepository`` on the
same connection writes (it notifies us), so ``decide()`` never touches the disk. The index
(app.core.permissions.rule_index) finds the rules that can apply to a tool without testing every
rule. The per-tool candidate lists are cached until the rules or the registry change.
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from app.core.permissions.conversation_rules import REMEMBERED_PREFIX, ConversationRules
from app.core.permissions.decision import (
    PLAN_MODE_REFUSAL,
    Decision,
    DecisionContext,
    SubjectDecision,
)
from app.core.permissions.egress import SecretMatcher
from app.core.permissions.guards import apply_mode_and_guards
from app.core.permissions.repository import RuleRepository
from app.core.permissions.rule_index import Candidate, RuleIndex, specialise
from app.core.permissions.rules import STRICTNESS
from app.core.sandbox import Sandbox, machine_sandbox
from app.core.sensitive_paths import SensitivePaths
from app.core.tools.base import SubjectError, SubjectKind, ToolSpec, canonical_json
from app.core.tools.containment import ProgramContainment, program_containment
from app.core.tools.registry import ToolRegistry

if TYPE_CHECKING:  # only annotations name the store
    from app.core.store.db import Database

# Decision and its context are defined in decision.py and re-exported: callers import them here.
__all__ = ["PLAN_MODE_REFUSAL", "Decision", "DecisionContext", "SubjectDecision",
           "ToolPermissionService"]

log = logging.getLogger(__name__)

_MAX_CANDIDATE_CACHE = 4096


class ToolPermissionService:
    def __init__(
        self,
        db: Database,
        registry: ToolRegistry | None = None,
        project_root: str | os.PathLike[str] | None = None,
        sandbox: Sandbox | None = None,
        sensitive: SensitivePaths | None = None,
        known_secrets: SecretMatcher | None = None,
    ) -> None:
        if registry is None:
            from app.core.tools.default_registry import default_registry

            registry = default_registry()
        self.rules = RuleRepository(db)
        # "Remember for this conversation": in memory, never in the rules table.
        self.conversation_rules = ConversationRules()
        self.registry = registry
        self._project_root = Path(project_root).resolve() if project_root is not None else None
        # Whether a call's programs will run contained is a fact decisions can use.
        self.sandbox = sandbox if sandbox is not None else machine_sandbox()
        # Which paths are secrets (reads of them ask, and label the conversation).
        self.sensitive = sensitive if sensitive is not None else SensitivePaths(
            extra=self.sandbox.hidden)
        # Secrets on this machine the agent could reach without reading them through a tool
        # (a project's .env seen by a command, say): outgoing inputs are scanned for them too.
        self.known_secrets = known_secrets if known_secrets is not None else SecretMatcher()
        # Each folder's secrets are read once per process: set when that read has ended.
        # (folder, is home)
        self._secrets_read: dict[tuple[Path, bool], threading.Event] = {}
        self._lock = threading.Lock()
        self._index = RuleIndex([])
        self._index_generation = -1
        self._candidates: dict[tuple[str, str], tuple[Candidate, ...]] = {}
        self._candidates_key: tuple[int, int, Path | None] = (-1, -1, None)
        self._unsubscribe = self.rules.changes.subscribe(self.reload)
        self.reload()

    # -- public API ------------------------------------------------------------------------

    def should_auto_approve(self, server_id: str, tool_name: str, tool_input: Any) -> bool:
        return self.decide(server_id, tool_name, tool_input).kind == "allow"

    @property
    def project_root(self) -> Path | None:
        """The open project folder: relative rule patterns and ``{project}`` mean it."""
        return self._project_root

    @project_root.setter
    def project_root(self, value: str | os.PathLike[str] | None) -> None:
        with self._lock:  # compiled {project} patterns name the old folder
            self._project_root = Path(value).resolve() if value is not None else None

    def decide(self, server_id: str, tool_name: str, tool_input: Any,
               context: DecisionContext | None = None) -> Decision:
        server_id, tool_name = str(server_id), str(tool_name)
        spec = self._spec(server_id, tool_name)
        decision, complete, paths = self._decide_by_rules(server_id, tool_name, tool_input, spec)
        if decision.kind == "deny" or spec is None or not isinstance(tool_input, Mapping):
            return decision
        if decision.kind != "allow" and context is not None:
            remembered = self._remembered(server_id, tool_name, tool_input,
                                          context.conversation_id)
            if remembered is not None:
                decision, complete = remembered, True
        return self._refine(decision, spec, tool_input, complete, paths,
                            context or DecisionContext())

    def _decide_by_rules(self, server_id: str, tool_name: str, tool_input: Any,
                         spec: ToolSpec | None) -> tuple[Decision, bool, list[str]]:
        """The rules' answer, whether the input was fully understood, and the call's paths
        (for a tool whose subjects are paths)."""
        candidates = self._candidates_for(server_id, tool_name)
        if not candidates or all(c.input_matcher is None for c in candidates):
            # Every candidate matches every subject, so the first one decides the call.
            decision = Decision(candidates[0].rule.decision, candidates[0].rule) \
                if candidates else Decision("ask")
            if spec is None or spec.subject_kind != "path":
                return decision, True, []
            kind, subjects, complete = self._subjects(server_id, tool_name, tool_input)
            return decision, complete, subjects if kind == "path" else []

        kind_of_subjects, subjects, complete = self._subjects(server_id, tool_name, tool_input)
        decided: list[SubjectDecision] = []
        worst: SubjectDecision | None = None
        for subject in subjects:
            verdict = self._decide_subject(candidates, subject, kind_of_subjects)
            decided.append(verdict)
            if worst is None or STRICTNESS[verdict.kind] > STRICTNESS[worst.kind]:
                worst = verdict
        assert worst is not None  # _subjects always yields at least one subject
        paths = subjects if kind_of_subjects == "path" else []
        if not complete and worst.kind == "allow":
            return Decision("ask", worst.rule, tuple(decided),
                            note="The input could not be fully analysed, so it is not "
                                 "auto-approved."), False, paths
        return Decision(worst.kind, worst.rule, tuple(decided)), complete, paths

    def _remembered(self, server_id: str, tool_name: str, tool_input: Any,
                    conversation_id: int | None) -> Decision | None:
        """An allow from the rules remembered for this conversation when they allow every
        part of the call (fully understood); None otherwise (the stored rules' answer
        stands). Deny rules among them are not honoured here: only allows are remembered."""
        rules = [r for r in self.conversation_rules.rules_for(conversation_id)
                 if r.decision == "allow"]
        if not rules:
            return None
        with self._lock:
            project = self._project_root
        subject_kind = self._subject_kind(server_id, tool_name)
        candidates = tuple(specialise(rule, subject_kind, project)
                           for rule in RuleIndex(rules).rules_for(server_id, tool_name))
        if not candidates:
            return None
        kind, subjects, complete = self._subjects(server_id, tool_name, tool_input)
        if not complete:
            return None
        decided = tuple(self._decide_subject(candidates, subject, kind) for subject in subjects)
        if not decided or any(d.kind != "allow" for d in decided):
            return None
        rule = decided[0].rule
        assert rule is not None  # an allow always names the rule that gave it
        return Decision("allow", rule, decided,
                        decided_by=f"{REMEMBERED_PREFIX}: {rule.summary()}")

    def _refine(self, decision: Decision, spec: ToolSpec, tool_input: Mapping[str, Any],
                complete: bool, paths: list[str], context: DecisionContext) -> Decision:
        """Steps 2 and 3 (app.core.permissions.guards): the mode, then the guards."""
        return apply_mode_and_guards(
            decision, spec, tool_input, complete, paths, context, project=self._project_root,
            sandbox=self.sandbox, sensitive=self.sensitive, known_secrets=self.known_secrets)

    def start_learning_secrets(self, project_root: Path | None) -> None:
        """Begin ``learn_secrets`` in a worker thread, when a project is opened: the git
        history read takes seconds, and the first model call then usually finds it done
        (its own ``learn_secrets`` waits for a read still under way)."""
        if project_root is None:
            return
        with self._lock:
            if (Path(project_root).resolve(), False) in self._secrets_read:
                return
        threading.Thread(target=self.learn_secrets, args=(Path(project_root),),
                         name="learn-secrets", daemon=True).start()

    def learn_secrets(self, project_root: Path | None, home: Path | None = None) -> None:
        """Learn the machine's credential files and the project's secret files, also the
        ones its git history holds and the tokens in its ordinary files (each folder once per
        process), into ``known_secrets``.
        Returns when they are learnt, also when another thread is reading them (started by
        ``start_learning_secrets``), so what a call sends is scanned against all of them.
        Reads files and runs git: call it off the GUI thread and off the event loop."""
        from app.core.permissions.history_secrets import learn_history_secrets
        from app.core.permissions.secret_sources import learn_home_secrets, learn_project_secrets
        from app.core.permissions.token_files import learn_token_files

        home = Path(home if home is not None else Path.home()).resolve()
        folders = [(home, True)]
        if project_root is not None:
            folders.append((Path(project_root).resolve(), False))
        with self._lock:
            mine = {folder: threading.Event() for folder in folders
                    if folder not in self._secrets_read}
            self._secrets_read.update(mine)
            others = [self._secrets_read[folder] for folder in folders if folder not in mine]
        for (folder, is_home), read in mine.items():
            try:
                if is_home:
                    learn_home_secrets(self.known_secrets, home)
                else:
                    learn_project_secrets(self.known_secrets, folder, self.sensitive)
                    learn_history_secrets(self.known_secrets, folder, self.sensitive)
                    learn_token_files(self.known_secrets, folder, self.sensitive)
            except Exception:  # a guard's extra input: never fatal
                log.exception("learning the secrets of %s failed", folder)
            finally:
                read.set()
        for read in others:
            read.wait()  # bounded: the git read has a timeout, file reads are bounded

    def program_containment(self, server_id: str, tool_name: str) -> ProgramContainment | None:
        """Whether the programs a call to this tool starts run in a working sandbox (None: the
        tool is unknown)."""
        tool = self.registry.get(tool_name)
        if tool is None or tool.spec.server_id != server_id:
            return None
        return program_containment(tool.spec, self.sandbox)

    def reload(self) -> None:
        """Re-read the rule table (called by the repository after every write)."""
        with self._lock:
            generation = self.rules.changes.generation
            self._index = RuleIndex(self.rules.list())
            self._index_generation = generation

    def close(self) -> None:
        self._unsubscribe()

    # -- evaluation ------------------------------------------------------------------------

    def _decide_subject(self, candidates: tuple[Candidate, ...], subject: str,
                        kind: SubjectKind) -> SubjectDecision:
        relative = self._relative_form(subject) if kind == "path" else None
        for candidate in candidates:
            matcher = candidate.input_matcher
            if matcher is None or matcher(subject) or (
                    relative is not None and candidate.input_is_relative and matcher(relative)):
                return SubjectDecision(subject, candidate.rule.decision, candidate.rule)
        return SubjectDecision(subject, "ask", None)

    def _relative_form(self, path: str) -> str | None:
        project_root = self.project_root
        if project_root is None:
            return None
        prefix = str(project_root).rstrip("/") + "/"
        return path[len(prefix):] if path.startswith(prefix) else None

    def _subjects(self, server_id: str, tool_name: str,
                  tool_input: Any) -> tuple[SubjectKind, list[str], bool]:
        tool = self.registry.get(tool_name)
        spec = tool.spec if tool is not None and tool.spec.server_id == server_id else None
        if spec is None:
            return "text", [canonical_json(tool_input)], True
        try:
            if not isinstance(tool_input, Mapping):
                raise SubjectError("tool input is not an object")
            subjects = [s for s in spec.subjects(tool_input, self.project_root)
                        if isinstance(s, str)]
            complete = True
        except SubjectError as exc:
            subjects, complete = [s for s in exc.partial if isinstance(s, str)], False
        except Exception:  # malformed input: the tool itself will reject it
            subjects, complete = [], False
        if not subjects:
            # Keep evaluating (deny rules may still match the raw input), never auto-approve.
            return "text", [canonical_json(tool_input)], False
        return spec.subject_kind, subjects, complete

    # -- candidates ------------------------------------------------------------------------

    def _candidates_for(self, server_id: str, tool_name: str) -> tuple[Candidate, ...]:
        # decide() runs in worker threads (the agent parses commands off the event loop): the
        # lock keeps the index and its generation a consistent pair, and the cache coherent.
        with self._lock:
            return self._candidates_locked(server_id, tool_name)

    def _candidates_locked(self, server_id: str, tool_name: str) -> tuple[Candidate, ...]:
        index = self._index
        key = (self._index_generation, self.registry.generation, self._project_root)
        if key != self._candidates_key:
            self._candidates = {}
            self._candidates_key = key
        cached = self._candidates.get((server_id, tool_name))
        if cached is not None:
            return cached
        subject_kind = self._subject_kind(server_id, tool_name)
        result = tuple(specialise(rule, subject_kind, self._project_root)
                       for rule in index.rules_for(server_id, tool_name))
        if len(self._candidates) >= _MAX_CANDIDATE_CACHE:
            self._candidates.clear()
        self._candidates[(server_id, tool_name)] = result
        return result

    def _subject_kind(self, server_id: str, tool_name: str) -> SubjectKind:
        spec = self._spec(server_id, tool_name)
        return spec.subject_kind if spec is not None else "text"

    def _spec(self, server_id: str, tool_name: str) -> ToolSpec | None:
        tool = self.registry.get(tool_name)
        return tool.spec if tool is not None and tool.spec.server_id == server_id else None
