"""Host rules hold for every spelling of the host (real database, real web_fetch subjects)."""

from __future__ import annotations

import pytest

from app.core.hosts import canonical_host, canonical_host_pattern
from app.core.permissions.repository import RuleRepository
from app.core.permissions.rules import PermissionRule
from app.core.permissions.service import ToolPermissionService
from app.core.store.db import open_database

LOOPBACK_SPELLINGS = [
    "http://127.0.0.1/",
    "http://127.0.0.1./",
    "http://[::ffff:127.0.0.1]/",
    "http://[::FFFF:7F00:1]/",
    "http://[0:0:0:0:0:ffff:7f00:1]:8080/x",
    "http://2130706433/",
    "http://0x7f.1/",
    "http://0x7F000001/",
    "http://127.1/",
    "http://127.0.1/",
    "http://0177.0.0.1/",    # httpx refuses it; still seen (as a partial subject) by deny rules
    "http://0177.0.0.01/",
    "https://%31%32%37.0.0.1/",
    "http://１２７.０.０.１/",  # full-width digits, folded by IDNA mapping
]


@pytest.fixture
def db(fresh_data_dir):
    database = open_database(fresh_data_dir / "hosts.sqlite3")
    RuleRepository(database).replace_all([])  # no seed rules: each test writes its own table
    yield database
    database.close()


@pytest.fixture
def service(db, project):
    permissions = ToolPermissionService(db, project_root=project)
    yield permissions
    permissions.close()


def _add(db, decision: str, pattern: str, priority: int = 0) -> None:
    RuleRepository(db).add(PermissionRule(decision=decision, tool_name="web_fetch",  # type: ignore[arg-type]
                                          input_pattern=pattern, priority=priority))


def _decide(service, url: str):
    return service.decide("builtin", "web_fetch", {"url": url})


@pytest.mark.parametrize("url", LOOPBACK_SPELLINGS)
def test_deny_on_loopback_denies_every_spelling(db, service, url):
    _add(db, "allow", "*")
    _add(db, "deny", "127.0.0.1", priority=5)
    decision = _decide(service, url)
    assert decision.kind == "deny", (url, decision.subjects)
    assert decision.rule is not None and decision.rule.input_pattern == "127.0.0.1"


@pytest.mark.parametrize("url", ["http://[::1]/", "http://[0:0:0:0:0:0:0:1]/",
                                 "http://[0000::0001]:80/"])
def test_ipv6_spellings_meet_one_rule(db, service, url):
    _add(db, "deny", "::1")
    assert _decide(service, url).kind == "deny"


@pytest.mark.parametrize("pattern", ["example.com", "EXAMPLE.COM", "example.com.",
                                     "Example.Com."])
@pytest.mark.parametrize("url", ["https://example.com/", "https://EXAMPLE.com./a",
                                 "http://ExAmPlE.CoM:8443/x?y", "https://ｅｘａｍｐｌｅ.com/"])
def test_name_rules_hold_for_case_and_trailing_dot(db, service, pattern, url):
    _add(db, "deny", pattern)
    assert _decide(service, url).kind == "deny"


@pytest.mark.parametrize("pattern", ["bücher.de", "BÜCHER.de", "xn--bcher-kva.de",
                                     "XN--BCHER-KVA.DE."])
@pytest.mark.parametrize("url", ["https://bücher.de/", "https://BÜCHER.DE/",
                                 "https://xn--bcher-kva.de/"])
def test_international_names_match_in_either_form(db, service, pattern, url):
    _add(db, "deny", pattern)
    assert _decide(service, url).kind == "deny"


def test_rule_patterns_in_other_spellings_match(db, service):
    _add(db, "deny", "[::ffff:127.0.0.1]")
    _add(db, "deny", "*.EXAMPLE.org.")
    _add(db, "allow", "0x7f.0.0.2")
    assert _decide(service, "http://127.0.0.1/").kind == "deny"
    assert _decide(service, "https://a.example.org/").kind == "deny"
    assert _decide(service, "https://example.org/").kind == "ask"  # not a subdomain of itself
    assert _decide(service, "http://127.0.0.2/").kind == "allow"


def test_allow_is_not_widened_by_canonicalisation(db, service):
    _add(db, "allow", "example.com")
    assert _decide(service, "https://example.com/").kind == "allow"
    assert _decide(service, "https://example.com.evil.net/").kind == "ask"
    assert _decide(service, "https://www.example.com/").kind == "ask"
    # An httpx-refused URL is never auto-approved, whatever its host's canonical form.
    _add(db, "allow", "127.0.0.1")
    assert _decide(service, "http://0177.0.0.1/").kind == "ask"


@pytest.mark.parametrize("host, expected", [
    ("EXAMPLE.com.", "example.com"),
    ("[::ffff:7f00:1]", "127.0.0.1"),
    ("0:0:0:0:0:0:0:1", "::1"),
    ("[2001:DB8:0:0::1]", "2001:db8::1"),
    ("bücher.de", "xn--bcher-kva.de"),
    ("2130706433", "127.0.0.1"),
    ("0x7f.1", "127.0.0.1"),
    ("127.1", "127.0.0.1"),
    ("0177.0.0.1", "127.0.0.1"),
    ("10.0x10.0300", "10.16.0.192"),
    ("1.2.3.com", "1.2.3.com"),          # ends in a name: a domain, not an address
    ("localhost.", "localhost"),
])
def test_canonical_host(host, expected):
    assert canonical_host(host) == expected


@pytest.mark.parametrize("host", ["1.2.3.4.5", "256.0.0.1", "1.16777216", "09.1", "", "[:::1]"])
def test_invalid_numeric_hosts_are_refused(host):
    with pytest.raises(ValueError):
        canonical_host(host)


def test_invalid_pattern_keeps_its_old_meaning():
    assert canonical_host_pattern("Not_A.Host..") == "not_a.host.."
    assert canonical_host_pattern("10.*") == "10.*"
