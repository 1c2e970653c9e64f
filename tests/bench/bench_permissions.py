"""decide() on 10,000 rules vs the releio seed's algorithm, measured in the same run.

Seed algorithm (001 §3): on every call read all rules from SQLite ordered by priority, turn each
pattern into a regex, first match wins. Both must give the same answers on every query.
Prints `name: value` lines.
"""

from __future__ import annotations

import random
import re
import statistics
import tempfile
import time
from pathlib import Path

from app.core.permissions.repository import RuleRepository
from app.core.permissions.rules import PermissionRule
from app.core.permissions.service import ToolPermissionService
from app.core.store.db import open_database

N_RULES = 10_000
SERVERS = [f"server{i}" for i in range(50)] + ["builtin"]
VERBS = ["read", "write", "list", "delete", "create", "get", "update", "search", "run", "sync"]
NOUNS = [f"thing{i}" for i in range(40)]


def make_rules(rng: random.Random) -> list[PermissionRule]:
    rules = []
    for i in range(N_RULES):
        server = rng.choice(SERVERS) if rng.random() < 0.8 else None
        decision = rng.choice(["allow", "ask", "deny"])
        priority = rng.randint(-100, 100)
        if rng.random() < 0.6:
            rules.append(PermissionRule(decision=decision, server_id=server, priority=priority,
                                        tool_name=f"{rng.choice(VERBS)}_{rng.choice(NOUNS)}_{i}"))
        else:
            pattern = rng.choice([f"{rng.choice(VERBS)}_*", f"*_{rng.choice(NOUNS)}_*",
                                  f"{rng.choice(VERBS)}_{rng.choice(NOUNS)}*"])
            rules.append(PermissionRule(decision=decision, server_id=server, priority=priority,
                                        tool_pattern=pattern))
    rules.append(PermissionRule(decision="ask", priority=-1000))
    return rules


def seed_should_auto_approve(conn, server_id: str, tool_name: str) -> bool:
    """A faithful port of releio's ToolPermissionService.shouldAutoApprove."""
    rows = conn.execute(
        "SELECT server_id, tool_name, tool_pattern, auto_approve FROM tool_permission_rules"
        # Same tie order as Tebiki, so answers are comparable (the seed leaves ties open).
        " ORDER BY priority DESC, CASE decision WHEN 'deny' THEN 0 WHEN 'ask' THEN 1 ELSE 2 END,"
        " id").fetchall()
    for rule_server, rule_tool, rule_pattern, auto_approve in rows:
        if rule_server is not None and rule_server != server_id:
            continue
        if rule_tool is not None:
            if rule_tool == tool_name:
                return bool(auto_approve)
            continue
        if rule_pattern is not None:
            regex = re.compile("^" + re.escape(rule_pattern).replace(r"\*", ".*") + "$",
                               re.IGNORECASE)
            if regex.match(tool_name):
                return bool(auto_approve)
            continue
        return bool(auto_approve)
    return False


def main() -> None:
    rng = random.Random(42)
    with tempfile.TemporaryDirectory() as tmp:
        db = open_database(Path(tmp) / "bench.sqlite3")
        repo = RuleRepository(db)
        repo.replace_all(make_rules(rng))
        rule_names = [r.tool_name for r in repo.list() if r.tool_name]
        queries = []
        for _ in range(2000):
            server = rng.choice(SERVERS)
            name = rng.choice(rule_names) if rng.random() < 0.5 else \
                f"{rng.choice(VERBS)}_{rng.choice(NOUNS)}_x"
            queries.append((server, name))

        from app.core.tools.registry import ToolRegistry

        service = ToolPermissionService(db, registry=ToolRegistry())
        reloads = []
        for _ in range(5):  # what a rule edit costs: the repository triggers this reload
            start = time.perf_counter()
            service.reload()
            reloads.append(time.perf_counter() - start)

        # First pass: nearly every query is the first decision for its tool (nothing cached).
        ours, answers = [], []
        for server, name in queries:
            start = time.perf_counter()
            answers.append(service.should_auto_approve(server, name, {}))
            ours.append(time.perf_counter() - start)
        # Repeat queries are what a session looks like: the same tools are called again.
        warm = []
        for server, name in queries:
            start = time.perf_counter()
            service.should_auto_approve(server, name, {})
            warm.append(time.perf_counter() - start)

        seed, seed_answers = [], []
        for server, name in queries[:150]:
            start = time.perf_counter()
            seed_answers.append(seed_should_auto_approve(db.conn, server, name))
            seed.append(time.perf_counter() - start)
        same = sum(a == b for a, b in zip(answers[:150], seed_answers, strict=True))
        # The full answer check is cheap enough without timing.
        all_same = all(seed_should_auto_approve(db.conn, s, n) == a
                       for (s, n), a in zip(queries[150:400], answers[150:400], strict=True))
        db.close()

    seed_med = statistics.median(seed) * 1e6
    ours_med = statistics.median(ours) * 1e6
    warm_med = statistics.median(warm) * 1e6
    reload_ms = statistics.median(reloads) * 1e3
    print(f"permissions_rules: {N_RULES + 1}")
    print(f"permissions_seed_decide_median_us: {seed_med:.1f}")
    print(f"permissions_decide_median_us: {ours_med:.2f}")
    print(f"permissions_decide_warm_median_us: {warm_med:.2f}")
    print(f"permissions_rule_reload_after_edit_ms: {reload_ms:.1f}")
    print(f"permissions_speedup_vs_seed: {seed_med / ours_med:.0f}x")
    print(f"permissions_speedup_warm_vs_seed: {seed_med / warm_med:.0f}x")
    verdict = "all same" if all_same else "DIFFER"
    print(f"permissions_same_answers: {same}/150 timed, extra 250 {verdict}")
    if same != 150 or not all_same:
        raise SystemExit("answers differ from the seed algorithm")


def _median_us(fn, calls, repeat: int = 5) -> float:
    times = []
    for _ in range(repeat):
        for args in calls:
            start = time.perf_counter()
            fn(*args)
            times.append(time.perf_counter() - start)
    return statistics.median(times) * 1e6


def modes_and_flow() -> None:
    """decide() on the built-in tools' real calls: the rules alone, decide() without a
    context, and with auto mode plus a conversation that read a secret and learnt 1,000
    secret values; same calls, same run. Goal: with mode and flow ≤ 1.2× without."""
    from app.core.permission_mode import PermissionMode
    from app.core.permissions.flow import FlowLabel, FlowState
    from app.core.permissions.service import DecisionContext
    from app.core.services import default_rules
    from app.core.tools.base import ToolContext
    from app.core.tools.default_registry import default_registry

    rng = random.Random(7)
    with tempfile.TemporaryDirectory() as tmp:
        project = Path(tmp) / "project"
        (project / "src").mkdir(parents=True)
        for i in range(20):
            (project / "src" / f"m{i}.py").write_text("x = 1\n")
        db = open_database(Path(tmp) / "bench.sqlite3")
        registry = default_registry()
        service = ToolPermissionService(db, registry=registry, project_root=project)
        service.rules.seed_defaults(default_rules(registry.specs()))
        calls = []
        for i in range(200):
            kind = i % 5
            if kind == 0:
                calls.append(("builtin", "read_file", {"path": f"src/m{i % 20}.py"}))
            elif kind == 1:
                calls.append(("builtin", "write_file", {"path": f"src/m{i % 20}.py",
                                                        "content": "y = 2\n"}))
            elif kind == 2:
                calls.append(("builtin", "web_fetch",
                              {"url": f"https://docs.example.org/page/{i}?q=python"}))
            elif kind == 3:
                calls.append(("builtin", "grep_search", {"pattern": f"def f{i}"}))
            else:
                calls.append(("builtin", "edit_file", {"path": f"src/m{i % 20}.py",
                                                       "old_string": "x", "new_string": "z"}))
        flow = FlowState()
        flow.add(FlowLabel.READ_SENSITIVE, "~/.aws/credentials", "read_file")
        alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
        for n in range(1000):
            flow.secrets.add_secret("".join(rng.choice(alphabet) for _ in range(32)),
                                    f"secret {n}")
        context = DecisionContext(mode=PermissionMode.AUTO, flow=flow, checkpoints=True,
                                  tool_context=ToolContext(project_root=project))
        for server, tool, tool_input in calls:  # warm the candidate cache for all three
            service.decide(server, tool, tool_input, context)

        spec_of = {name: registry.get(name).spec for name in  # type: ignore[union-attr]
                   {c[1] for c in calls}}
        rules_only = _median_us(lambda s, t, i: service._decide_by_rules(s, t, i, spec_of[t]),
                                calls)
        plain = _median_us(service.decide, calls)
        with_flow = _median_us(lambda s, t, i: service.decide(s, t, i, context), calls)
        # The same conversation after untrusted content: 200 KB of pages learnt, so the
        # provenance guard looks at every web_fetch's values (issue: decide ≤ 1.2× without).
        untrusted = FlowState()
        untrusted.add(FlowLabel.READ_SENSITIVE, "~/.aws/credentials", "read_file")
        untrusted.secrets = flow.secrets
        untrusted.add(FlowLabel.UNTRUSTED, "https://docs.example.org/", "web_fetch")
        words = [f"word{n} host{n}.example.net id{n:06d}" for n in range(20_000)]
        untrusted.provenance.learn_untrusted(" ".join(words)[:200_000], "web_fetch")
        untrusted.provenance.learn_vouched("Read https://docs.example.org/page/1?q=python")
        with_provenance_ctx = DecisionContext(mode=PermissionMode.AUTO, flow=untrusted,
                                              checkpoints=True,
                                              tool_context=ToolContext(project_root=project))
        with_provenance = _median_us(
            lambda s, t, i: service.decide(s, t, i, with_provenance_ctx), calls)
        db.close()
    print(f"permissions_builtin_calls_rules_only_median_us: {rules_only:.1f}")
    print(f"permissions_builtin_calls_decide_median_us: {plain:.1f}")
    print(f"permissions_builtin_calls_decide_auto_flow_1000_secrets_median_us: {with_flow:.1f}")
    print(f"permissions_mode_and_flow_vs_without: {with_flow / plain:.2f}x")
    print(f"permissions_mode_and_flow_vs_rules_only: {with_flow / rules_only:.2f}x")
    print(f"permissions_builtin_calls_decide_auto_provenance_median_us: {with_provenance:.1f}")
    print(f"permissions_provenance_vs_flow_only: {with_provenance / with_flow:.2f}x")


if __name__ == "__main__":
    main()
    modes_and_flow()
