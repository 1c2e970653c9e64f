"""A real HTTP server on 127.0.0.1 with a per-test route table, for the web tools' tests.

Routes can be slow (before the headers or between chunks), redirect, stream huge bodies without
holding them in memory, and send any content type or charset. Every request is recorded so tests
can assert what reached the server (and what never did).

Also here: ``stub_resolver`` (maps fake public names to loopback without touching real DNS) and
``LoopbackOnlyBackend``, a socket layer that refuses anything but loopback — belt and braces so a
broken guard in a test can never send traffic off this machine.
"""

from __future__ import annotations

import datetime
import ipaddress
import ssl
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import httpcore

Body = bytes | str | Callable[["Request"], Iterable[bytes]]


@dataclass
class Route:
    status: int = 200
    body: Body = b""
    content_type: str | None = "text/html; charset=utf-8"
    headers: Mapping[str, str] = field(default_factory=dict)
    delay_s: float = 0.0        # wait before sending the status line
    chunk_delay_s: float = 0.0  # wait between streamed chunks
    send_length: bool = True    # Content-Length for bytes bodies


@dataclass(frozen=True)
class Request:
    method: str
    path: str      # without the query
    query: dict[str, list[str]]
    headers: dict[str, str]  # lower-cased names
    body: bytes

    @property
    def form(self) -> dict[str, list[str]]:
        return parse_qs(self.body.decode("utf-8", "replace"), keep_blank_values=True)


class FakeWebServer:
    """``tls``: a server-side SSL context (see ``make_tls_files``) to serve HTTPS instead."""

    def __init__(self, tls: ssl.SSLContext | None = None) -> None:
        self.scheme = "https" if tls else "http"
        self.routes: dict[str, Route] = {}
        self.requests: list[Request] = []
        self.bytes_sent: dict[str, int] = {}
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), self._handler_class())
        self._httpd.daemon_threads = True
        if tls is not None:
            self._httpd.socket = tls.wrap_socket(self._httpd.socket, server_side=True)
        self._thread = threading.Thread(target=self._httpd.serve_forever,
                                        kwargs={"poll_interval": 0.05}, daemon=True)

    # -- lifecycle -------------------------------------------------------------------------

    def __enter__(self) -> FakeWebServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()  # wakes slow handlers
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(timeout=5)

    @property
    def port(self) -> int:
        return int(self._httpd.server_address[1])

    def url(self, path: str = "/", host: str = "127.0.0.1") -> str:
        return f"{self.scheme}://{host}:{self.port}{path}"

    # -- routes ----------------------------------------------------------------------------

    def add(self, path: str, route: Route | None = None, **kwargs: Any) -> Route:
        route = route or Route(**kwargs)
        self.routes[path] = route
        return route

    def html(self, path: str, html: str, **kwargs: Any) -> Route:
        return self.add(path, body=html, **kwargs)

    def redirect(self, path: str, location: str, status: int = 302) -> Route:
        return self.add(path, status=status, body=b"", content_type=None,
                        headers={"Location": location})

    def stream(self, path: str, total_bytes: int, *, chunk: bytes = b"<p>" + b"x" * 8188 + b"</p>",
               prefix: bytes = b"<html><body>", content_type: str = "text/html",
               chunk_delay_s: float = 0.0) -> Route:
        """A body of ``total_bytes`` generated on the fly (never held in memory)."""
        def gen(_req: Request) -> Iterator[bytes]:
            yield prefix
            sent = len(prefix)
            while sent < total_bytes:
                piece = chunk[: total_bytes - sent]
                yield piece
                sent += len(piece)
        return self.add(path, body=gen, content_type=content_type, chunk_delay_s=chunk_delay_s)

    def hits(self, path: str) -> list[Request]:
        with self._lock:
            return [r for r in self.requests if r.path == path]

    # -- serving ---------------------------------------------------------------------------

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            timeout = 10

            def log_message(self, format: str, *args: Any) -> None:  # quiet test output
                pass

            def do_GET(self) -> None:
                server._serve(self)

            do_POST = do_GET
            do_HEAD = do_GET

        return Handler

    def _serve(self, h: BaseHTTPRequestHandler) -> None:
        parts = urlsplit(h.path)
        length = int(h.headers.get("Content-Length") or 0)
        body = h.rfile.read(length) if length else b""
        req = Request(h.command, parts.path, parse_qs(parts.query),
                      {k.lower(): v for k, v in h.headers.items()}, body)
        with self._lock:
            self.requests.append(req)
        route = self.routes.get(parts.path)
        h.close_connection = True
        if route is None:
            route = Route(status=404, body=f"<h1>Not found</h1><p>{parts.path}</p>")
        if route.delay_s and self._stop.wait(route.delay_s):
            return
        try:
            h.send_response(route.status)
            if route.content_type:
                h.send_header("Content-Type", route.content_type)
            for name, value in route.headers.items():
                h.send_header(name, value)
            h.send_header("Connection", "close")
            if callable(route.body):
                h.end_headers()
                sent = 0
                for piece in route.body(req):
                    if self._stop.is_set():
                        break
                    h.wfile.write(piece)
                    sent += len(piece)
                    with self._lock:
                        self.bytes_sent[parts.path] = sent
                    if route.chunk_delay_s and self._stop.wait(route.chunk_delay_s):
                        break
                return
            data = route.body.encode("utf-8") if isinstance(route.body, str) else route.body
            if route.send_length:
                h.send_header("Content-Length", str(len(data)))
            h.end_headers()
            if h.command != "HEAD":
                h.wfile.write(data)
            with self._lock:
                self.bytes_sent[parts.path] = len(data)
        except (BrokenPipeError, ConnectionResetError, ConnectionAbortedError):
            pass  # the client stopped reading: expected for capped and timed-out fetches


def stub_resolver(mapping: Mapping[str, Iterable[str]]):
    """An async resolver for ``NetGuard`` that knows only ``mapping`` and never touches DNS."""
    calls: list[str] = []

    async def resolve(host: str, port: int) -> list[ipaddress.IPv4Address | ipaddress.IPv6Address]:
        calls.append(host)
        try:
            answers = mapping[host.lower()]
        except KeyError:
            raise OSError(f"stub resolver: unknown host {host!r}") from None
        return [ipaddress.ip_address(a) for a in answers]

    resolve.calls = calls  # type: ignore[attr-defined]
    return resolve


class LoopbackOnlyBackend(httpcore.AsyncNetworkBackend):
    """Opens sockets to loopback addresses only; records every attempt."""

    def __init__(self) -> None:
        self.inner = httpcore.AnyIOBackend()
        self.attempts: list[tuple[str, int]] = []

    async def connect_tcp(self, host: str, port: int, timeout: float | None = None,
                          local_address: str | None = None,
                          socket_options: Iterable[Any] | None = None,
                          ) -> httpcore.AsyncNetworkStream:
        self.attempts.append((host, port))
        if not ipaddress.ip_address(host).is_loopback:
            raise httpcore.ConnectError(f"test backend: refusing non-loopback address {host}")
        return await self.inner.connect_tcp(host, port, timeout=timeout,
                                            local_address=local_address,
                                            socket_options=socket_options)

    async def connect_unix_socket(self, path: str, timeout: float | None = None,
                                  socket_options: Iterable[Any] | None = None,
                                  ) -> httpcore.AsyncNetworkStream:
        raise httpcore.ConnectError("test backend: no unix sockets")

    async def sleep(self, seconds: float) -> None:
        await self.inner.sleep(seconds)


def make_tls_files(directory: Path, hostnames: Iterable[str]) -> tuple[Path, ssl.SSLContext]:
    """A throwaway CA and a server certificate for ``hostnames``.

    Returns the CA file (point ``SSL_CERT_FILE`` at it) and a server-side SSL context.
    """
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    now = datetime.datetime.now(datetime.UTC)
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "Tebiki test CA")])
    ca_cert = (
        x509.CertificateBuilder().subject_name(ca_name).issuer_name(ca_name)
        .public_key(ca_key.public_key()).serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(days=1))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .add_extension(x509.KeyUsage(digital_signature=True, key_cert_sign=True, crl_sign=True,
                                     content_commitment=False, key_encipherment=False,
                                     data_encipherment=False, key_agreement=False,
                                     encipher_only=False, decipher_only=False), critical=True)
        .sign(ca_key, hashes.SHA256())
    )
    key = ec.generate_private_key(ec.SECP256R1())
    names = list(hostnames)
    cert = (
        x509.CertificateBuilder()
        .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, names[0])]))
        .issuer_name(ca_name).public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(days=1))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.SubjectAlternativeName([x509.DNSName(n) for n in names]),
                       critical=False)
        .sign(ca_key, hashes.SHA256())
    )
    pem = serialization.Encoding.PEM
    ca_file = directory / "ca.pem"
    ca_file.write_bytes(ca_cert.public_bytes(pem))
    cert_file = directory / "server.pem"
    cert_file.write_bytes(cert.public_bytes(pem))
    key_file = directory / "server.key"
    key_file.write_bytes(key.private_bytes(pem, serialization.PrivateFormat.PKCS8,
                                           serialization.NoEncryption()))
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert_file, key_file)
    return ca_file, context
