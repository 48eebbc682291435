"""The one place HTTP clients are built, so every request says who sends it.

Every request the app makes carries `User-Agent: vak-desktop/<version>` (servers and proxies
log it; a provider can tell our traffic apart). The adapters receive their client from the
caller (conventions: the network is swapped at one seam), so the callers — `app.py`, the CLI,
the embedded engine, MCP's streamable HTTP transport — build it here.

Every HTTPS connection, the providers' (httpx) and MCP's (httpx2, which the SDK uses), trusts
one store: the operating system's (`trust_context`), so a certificate authority the user's
company installed is trusted everywhere or nowhere (docs/decisions/0085-trust-store.md).
"""

from __future__ import annotations

import functools
import os
import ssl
import sys
from importlib import metadata
from typing import Any

import httpx

from vak_desktop.providers.cancel_safe import CancelSafeClient

# where Linux distributions keep the system's CA bundle, when OpenSSL's compiled-in paths (a
# bundle's libssl may come from another distribution) hold none: truststore's own list
_CA_FILES = (
    "/etc/ssl/certs/ca-certificates.crt",  # Debian, Ubuntu
    "/etc/pki/ca-trust/extracted/pem/tls-ca-bundle.pem",  # Fedora 44+, RHEL 11+
    "/etc/pki/tls/certs/ca-bundle.crt",  # Fedora, RHEL, CentOS
    "/etc/ssl/cert.pem",  # Alpine, Arch, BSD
    "/etc/ssl/ca-bundle.pem",  # SUSE
)


def app_version() -> str:
    """The installed package's version ("0+unknown" when run from an uninstalled tree)."""
    try:
        return metadata.version("vak-desktop")
    except metadata.PackageNotFoundError:
        return "0+unknown"


USER_AGENT = f"vak-desktop/{app_version()}"


def app_headers() -> dict[str, str]:
    """The headers every client of the app sends."""
    return {"User-Agent": USER_AGENT}


def http_client(**options: Any) -> httpx.AsyncClient:
    """An `httpx.AsyncClient` sending the app's User-Agent (options as httpx takes them), whose
    requests can be cancelled at any point without leaving a connection open
    (`cancel_safe.CancelSafeClient`)."""
    headers = {**app_headers(), **dict(options.pop("headers", None) or {})}
    options.setdefault("verify", trust_context())
    return CancelSafeClient(headers=headers, **options)


@functools.cache
def trust_context() -> ssl.SSLContext:
    """The operating system's trust store, for every HTTPS client of the app (one context,
    shared). Windows and macOS: their certificate verifier, through truststore. Linux: OpenSSL
    on the system's CA files (SSL_CERT_FILE / SSL_CERT_DIR first, as OpenSSL reads them), which
    is what truststore does there too, without its per-handshake reload."""
    if sys.platform in ("win32", "darwin"):
        import truststore

        return truststore.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    context = ssl.create_default_context()  # loads OpenSSL's default paths (and SSL_CERT_*)
    paths = ssl.get_default_verify_paths()
    if not (paths.cafile or (paths.capath and os.listdir(paths.capath))):
        found = next((path for path in _CA_FILES if os.path.isfile(path)), None)
        if found is not None:
            context.load_verify_locations(cafile=found)
    return context
