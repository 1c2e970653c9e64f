"""Learnt values of 12 to 14 bytes, which the index's aligned probe cannot promise to see, are
found whole at every alignment, by each of the three searches (app.core.permissions.
secret_short): one find each, the pattern over 2-byte units, and the second probe."""

from __future__ import annotations

import random
import string
import struct

import pytest
from hypothesis import given
from hypothesis import strategies as st

from app.core.permissions import secret_short
from app.core.permissions.egress import MIN_SECRET_LEN, SecretHit, SecretMatcher

RND = random.Random(1717)
ALNUM = string.ascii_letters + string.digits
# One count per search: a find each, the unit pattern, the second probe.
COUNTS = [2, secret_short.FEW_FINDS + 3, secret_short.UNIT_PATTERN_MAX + 5]
# In UTF-8, Arabic letters start with 0xD8-0xDB and Syriac ones with 0xDC-0xDF: at odd
# offsets, the high bytes of a UTF-16 surrogate pair ("\u0628\u0710" is D8 A8 DC 90).
SURROGATE_LEADS = "\u0628\u0710\u06ff\u0710"


def rand(n: int, alphabet: str = ALNUM) -> str:
    return "".join(RND.choice(alphabet) for _ in range(n))


def spans(matcher: SecretMatcher, text: str) -> list[tuple[int, int]]:
    return [(h.start, h.end) for h in matcher.scan(text) if h.kind == "learnt"]


def learn(values: list[str]) -> SecretMatcher:
    matcher = SecretMatcher()
    for value in values:
        assert matcher.add_secret(value, "pw")
    assert len(matcher._learnt._short) == len(values)  # all short: the case under test
    return matcher


@pytest.mark.parametrize("count", COUNTS)
def test_short_values_are_found_at_every_alignment(count: int) -> None:
    values = [rand(MIN_SECRET_LEN + i % 3) for i in range(count)]
    matcher = learn(values)
    for value in values[:3] + values[-3:]:
        for shift in range(9):
            text = "x" * shift + value + " tail"
            assert spans(matcher, text) == [(shift, shift + len(value))], (value, shift)
            assert spans(matcher, "x" * shift + value[1:] + " tail") == []
            assert spans(matcher, "x" * shift + value[:-1] + " tail") == []


@pytest.mark.parametrize("count", COUNTS)
def test_short_non_ascii_values_are_found_after_surrogate_making_bytes(count: int) -> None:
    # Values and text with bytes 0xD8-0xDF at odd and even offsets: read naively as UTF-16,
    # two of them would make one character and shift every unit after them.
    values = [rand(4) + RND.choice(SURROGATE_LEADS) + rand(1, "é日") + rand(4)
              for _ in range(count)]
    assert all(MIN_SECRET_LEN <= len(v.encode()) < 15 for v in values)
    matcher = learn(values)
    for value in values[:2] + values[-2:]:
        for shift in range(9):  # every alignment, after pairs at odd offsets
            before = "a" + SURROGATE_LEADS * 3 + "b" * shift
            text = before + value + " tail"
            start = len(before)
            hits = [h for h in matcher.scan(text) if h.kind == "learnt"]
            assert [(h.start, h.end) for h in hits] == [(start, start + len(value))], \
                (value, shift)


def test_an_alternative_that_is_a_prefix_of_another_does_not_hide_it() -> None:
    # "Q" + the first 11 bytes of the long value: read from its second byte, the short one's
    # units are the first units of the long one's, so both alternatives start at one place.
    longer = rand(14)
    shorter = "Q" + longer[:11]
    others = [rand(13) for _ in range(secret_short.FEW_FINDS + 2)]
    for order in ([shorter, longer], [longer, shorter]):
        matcher = learn(order + others)
        for shift in (0, 1, 2, 3):
            text = "y" * shift + longer + " tail"
            assert spans(matcher, text) == [(shift, shift + 14)], (order, shift)


def test_a_candidate_that_fails_does_not_hide_a_value_overlapping_it() -> None:
    # The first 12 bytes of a 13-byte value match its units but not the value; a 12-byte
    # value starts inside them, at 18 (an alignment the aligned probe misses).
    first = rand(13)
    second = first[10:12] + rand(10)
    matcher = learn([first, second] + [rand(13) for _ in range(secret_short.FEW_FINDS + 2)])
    text = "z" * 8 + first[:12] + second[2:] + " tail"
    assert text[18:30] == second and text[8:21] != first
    assert spans(matcher, text) == [(18, 30)]


def test_forgotten_short_values_leave_the_search() -> None:
    matcher = SecretMatcher(max_secrets=8)
    values = [rand(12) for _ in range(12)]
    for value in values:
        matcher.add_secret(value, "pw")
    assert spans(matcher, values[0] + " " + values[-1]) == [(13, 25)]


@given(st.text(min_size=8, max_size=64))
def test_no_window_of_utf8_text_is_a_nan(text: str) -> None:
    # What lets the second probe read windows as floats: a set never finds a NaN.
    data = text.encode("utf-8", "surrogatepass")
    for at in range(len(data) - 7):
        value = struct.unpack("<d", data[at:at + 8])[0]
        assert value == value, data[at:at + 8]


def test_hit_is_masked_and_named() -> None:
    value = rand(13)
    matcher = learn([value] + [rand(12) for _ in range(secret_short.FEW_FINDS + 1)])
    hits = [h for h in matcher.scan(f"curl -d p={value} x") if h.kind == "learnt"]
    assert hits and isinstance(hits[0], SecretHit) and value not in hits[0].masked
