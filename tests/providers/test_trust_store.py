"""One trust store for every HTTPS client (issue 23 item 6): the providers' httpx client and
MCP's streamable HTTP client (httpx2) accept and refuse the same certificates, against a real
HTTPS server on loopback with a certificate made for the test.

The old code gave the providers certifi's list and MCP the OS's: a certificate authority in one
list and not the other (a company's CA in the OS store; here, one put in certifi's file) was
trusted by one client and refused by the other.
"""

from __future__ import annotations

import datetime
import ipaddress
import ssl
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import certifi
import httpx
import httpx2
import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from vak_desktop.providers.client import http_client, trust_context
from vak_desktop.runtime.tools.mcp.connection import mcp_http_client


def _certificate(folder: Path) -> tuple[Path, Path]:
    """A self-signed certificate for 127.0.0.1 (its own authority) and its key, as PEM files."""
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "vak test authority")])
    now = datetime.datetime.now(datetime.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .add_extension(
            x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]),
            critical=False,
        )
        .sign(key, hashes.SHA256())
    )
    cert_file, key_file = folder / "cert.pem", folder / "key.pem"
    cert_file.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_file.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    return cert_file, key_file


class _Hello(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        self.send_response(200)
        self.send_header("Content-Length", "5")
        self.end_headers()
        self.wfile.write(b"hello")

    def log_message(self, format: str, *args: object) -> None:  # quiet
        pass


@pytest.fixture
def https(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    """A real HTTPS server on loopback: its URL and its certificate (not in any store)."""
    cert_file, key_file = _certificate(tmp_path)
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Hello)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert_file, key_file)
    server.socket = context.wrap_socket(server.socket, server_side=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"https://127.0.0.1:{server.server_address[1]}/", cert_file
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


async def _outcomes(url: str) -> tuple[str, str]:
    """What the providers' client and MCP's client each get from `url`: 'hello' or the error."""
    results = []
    async with http_client(timeout=10) as providers:
        try:
            results.append((await providers.get(url)).text)
        except httpx.ConnectError as exc:
            results.append("refused" if "CERTIFICATE_VERIFY_FAILED" in str(exc) else str(exc))
    async with mcp_http_client() as mcp:
        try:
            results.append((await mcp.get(url)).text)
        except httpx2.ConnectError as exc:
            results.append("refused" if "CERTIFICATE_VERIFY_FAILED" in str(exc) else str(exc))
    return results[0], results[1]


@pytest.fixture
def fresh_trust(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    for variable in ("SSL_CERT_FILE", "SSL_CERT_DIR"):
        monkeypatch.delenv(variable, raising=False)
    trust_context.cache_clear()
    yield
    trust_context.cache_clear()


async def test_a_certificate_only_certifi_lists_is_refused_by_every_client(
    https: tuple[str, Path], monkeypatch: pytest.MonkeyPatch, fresh_trust: None
) -> None:
    url, cert_file = https
    monkeypatch.setattr(certifi, "where", lambda: str(cert_file))  # certifi trusts it; the OS not
    assert await _outcomes(url) == ("refused", "refused")


@pytest.mark.skipif(
    sys.platform in ("win32", "darwin"), reason="their OS verifier ignores SSL_CERT_FILE"
)
async def test_a_certificate_in_the_os_store_is_trusted_by_every_client(
    https: tuple[str, Path], monkeypatch: pytest.MonkeyPatch, fresh_trust: None
) -> None:
    url, cert_file = https
    monkeypatch.setenv("SSL_CERT_FILE", str(cert_file))  # OpenSSL's store on Linux
    assert await _outcomes(url) == ("hello", "hello")
