"""eos_eapi: the live eAPI client against a real local HTTP(S) server answering JSON-RPC with real sample replies.

The server is ``http.server`` in a thread on 127.0.0.1 (port 0). It checks basic auth, answers
``runCmds`` with the corpus's captured replies, and a JSON-RPC error for commands it does not know
(the shape EOS uses: ``code`` 1002, ``message`` naming the command, per-command ``data[].errors``).
TLS cases use a self-signed certificate generated in the test.
"""

from __future__ import annotations

import shutil
import socket
import ssl
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest
from fake_eapi import PASSWORD, USER, EapiHandler, make_handler, serve
from fake_eapi import replies as sample_replies

from unifab.collect.eos_eapi import (
    ENV_PASSWORD,
    ENV_USERNAME,
    EapiAuthError,
    EapiClient,
    EapiCommandError,
    EapiError,
    EapiResponseError,
    EapiUnreachable,
    collect_eos,
)
from unifab.errors import UnifabError, UsageError
from unifab.parse.switch import eos_config, eos_json
from unifab.parse.switch.eos_json.records import EosQueueCounters


@pytest.fixture
def handler(samples: Path) -> Iterator[type[EapiHandler]]:
    yield make_handler(samples)


def _serve(handler: type[EapiHandler], tls: ssl.SSLContext | None = None) -> Iterator[int]:
    yield from serve(handler, tls)


@pytest.fixture
def port(handler: type[EapiHandler]) -> Iterator[int]:
    yield from _serve(handler)


def _client(port: int, **kwargs: Any) -> EapiClient:
    kwargs.setdefault("username", USER)
    kwargs.setdefault("password", PASSWORD)
    kwargs.setdefault("scheme", "http")
    return EapiClient("127.0.0.1", name="leaf01", port=port, timeout=5, **kwargs)


# --- success ---------------------------------------------------------------------------------------


def test_run_cmds_success(port: int, handler: type[EapiHandler], samples: Path) -> None:
    with _client(port) as client:
        interfaces, lldp = client.run_cmds(["show interfaces", "show lldp neighbors detail"])
        assert client.url == f"http://127.0.0.1:{port}/command-api"
    assert interfaces == sample_replies(samples)["show interfaces"]
    parsed = eos_json.lldp_neighbors_from(lldp)
    assert parsed.interfaces["Ethernet1"][0].system_name == "spine01"
    request = handler.requests[0]
    assert request["jsonrpc"] == "2.0"
    assert request["method"] == "runCmds"
    assert request["params"] == {
        "version": 1,
        "cmds": ["enable", "show interfaces", "show lldp neighbors detail"],
        "format": "json",
    }
    assert isinstance(request["id"], str)


def test_running_config_in_text_format(port: int, handler: type[EapiHandler]) -> None:
    with _client(port, enable=False) as client:
        text = client.running_config()
        version = client.show("show version")
    assert handler.requests[0]["params"] == {"version": 1, "cmds": ["show running-config"], "format": "text"}
    assert eos_config.parse(text).interface_qos["Ethernet2/5/1"].pfc_enabled == {3}
    assert version["modelName"] == "vEOS"


def test_credentials_from_environment(port: int) -> None:
    env = {ENV_USERNAME: USER, ENV_PASSWORD: PASSWORD}
    with EapiClient("127.0.0.1", port=port, scheme="http", env=env) as client:
        assert client.name == "127.0.0.1"
        assert client.show("show version")["version"] == "4.23.5M"


def test_collect_eos_writes_the_bundle_files(port: int, tmp_path: Path, samples: Path) -> None:
    with _client(port) as client:
        dest = collect_eos(client, tmp_path / "bundle")
    assert dest == tmp_path / "bundle" / "switches" / "leaf01" / "eos"
    assert sorted(p.name for p in dest.iterdir()) == [
        "running-config.txt",
        "show-interfaces-counters-queue-detail.json",
        "show-interfaces.json",
        "show-lldp-neighbors-detail.json",
        "show-version.json",
    ]
    queues = eos_json.parse((dest / "show-interfaces-counters-queue-detail.json").read_text())
    assert isinstance(queues.data, EosQueueCounters)
    assert queues.data.interfaces["Ethernet2"].multicast_dropped == {0: 0, 1: 4}
    replies = sample_replies(samples)
    assert (dest / "running-config.txt").read_text() == replies["show running-config"]
    assert eos_json.parse((dest / "show-interfaces.json").read_text()).data == eos_json.interfaces_from(
        replies["show interfaces"]
    )
    lldp = eos_json.parse((dest / "show-lldp-neighbors-detail.json").read_text())
    assert lldp.command == "show lldp neighbors detail"
    version = eos_json.parse((dest / "show-version.json").read_text())
    assert version.command == "show version"
    assert eos_config.parse((dest / "running-config.txt").read_text()).qos_profiles


# --- failures --------------------------------------------------------------------------------------


def test_wrong_password_is_an_auth_error(port: int, tmp_path: Path) -> None:
    with _client(port, password="wrong") as client, pytest.raises(EapiAuthError) as info:
        collect_eos(client, tmp_path)
    message = str(info.value)
    assert "leaf01" in message
    assert "HTTP 401" in message
    assert "'admin'" in message
    assert "wrong" not in message
    assert not (tmp_path / "switches").exists()


def test_no_credentials() -> None:
    with pytest.raises(EapiAuthError, match=ENV_USERNAME):
        EapiClient("10.0.0.1", env={})


def test_unknown_command_is_a_command_error(port: int) -> None:
    with _client(port) as client, pytest.raises(EapiCommandError) as info:
        client.run_cmds(["show interfaces", "show bogus"])
    err = info.value
    assert err.code == 1002
    assert "show bogus" in err.error_message
    assert err.errors == ("Invalid input (at token 1: 'bogus')",)
    assert str(err).startswith("eAPI leaf01: command failed (JSON-RPC error 1002)")


def test_timeout_is_unreachable(port: int, handler: type[EapiHandler]) -> None:
    handler.delay_s = 1.0
    client = EapiClient(
        "127.0.0.1", name="leaf01", port=port, scheme="http", username=USER, password=PASSWORD, timeout=0.2
    )
    with client, pytest.raises(EapiUnreachable) as info:
        client.show("show version")
    assert "within 0.2s" in str(info.value)
    assert "leaf01" in str(info.value)


def test_connection_refused_is_unreachable() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        free = s.getsockname()[1]
    with _client(free) as client, pytest.raises(EapiUnreachable) as info:
        client.show("show version")
    assert "cannot connect" in str(info.value)
    assert f"127.0.0.1:{free}" in str(info.value)


@pytest.mark.parametrize(
    ("answer", "needle"),
    [
        ((500, b"oops"), "HTTP 500"),
        ((200, b"<html>"), "not JSON"),
        ((200, b'{"result": []}'), "JSON-RPC 2.0"),
        ((200, b'{"jsonrpc": "2.0", "id": "other", "result": [{}, {}]}'), "answered id 'other'"),
    ],
)
def test_invalid_responses(port: int, handler: type[EapiHandler], answer: tuple[int, bytes], needle: str) -> None:
    handler.raw_answer = answer
    with _client(port) as client, pytest.raises(EapiResponseError) as info:
        client.show("show version")
    assert needle in str(info.value)
    assert isinstance(info.value, EapiError)
    assert isinstance(info.value, UnifabError)


def test_wrong_result_count(port: int, handler: type[EapiHandler]) -> None:
    class Short(handler):  # type: ignore[valid-type,misc]
        def _send(self, status: int, body: bytes, content_type: str = "application/json") -> None:
            doc = orjson.loads(body) if status == 200 else None
            if isinstance(doc, dict) and "result" in doc:
                body = orjson.dumps({**doc, "result": doc["result"][:1]})
            super()._send(status, body, content_type)

    for p in _serve(Short):
        with _client(p) as client, pytest.raises(EapiResponseError, match="1 results for 2 commands"):
            client.show("show version")


def test_usage_errors(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="scheme"):
        EapiClient("h", scheme="ftp", username="u", password="p")
    with pytest.raises(UsageError, match="bundle directory"):
        EapiClient("h", name="../etc", username="u", password="p")
    with pytest.raises(UsageError, match="CA file"):
        EapiClient("h", username="u", password="p", verify=tmp_path / "missing.pem")


# --- TLS -------------------------------------------------------------------------------------------


def _self_signed(tmp: Path) -> tuple[Path, Path]:
    """A self-signed certificate for 127.0.0.1: with ``cryptography`` if installed, else the openssl CLI."""
    cert, key = tmp / "cert.pem", tmp / "key.pem"
    try:
        import datetime

        from cryptography import x509
        from cryptography.hazmat.primitives import hashes, serialization
        from cryptography.hazmat.primitives.asymmetric import ec
        from cryptography.x509.oid import NameOID
    except ImportError:
        openssl = shutil.which("openssl")
        if openssl is None:
            pytest.skip("TLS case needs a self-signed certificate: neither 'cryptography' nor openssl is installed")
        subprocess.run(
            [openssl, "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
             "-keyout", str(key), "-out", str(cert), "-days", "1", "-subj", "/CN=127.0.0.1",
             "-addext", "subjectAltName=IP:127.0.0.1", "-addext", "basicConstraints=critical,CA:TRUE"],
            check=True,
            capture_output=True,
        )  # fmt: skip
        return cert, key
    import ipaddress

    private = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")])
    now = datetime.datetime.now(datetime.UTC)
    certificate = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(private.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]), False)
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(private, hashes.SHA256())
    )
    cert.write_bytes(certificate.public_bytes(serialization.Encoding.PEM))
    key.write_bytes(
        private.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
        )
    )
    return cert, key


@pytest.fixture
def tls_port(handler: type[EapiHandler], tmp_path: Path) -> Iterator[tuple[int, Path]]:
    cert, key = _self_signed(tmp_path)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    for p in _serve(handler, context):
        yield p, cert


def test_https_with_ca_file(tls_port: tuple[int, Path]) -> None:
    p, cert = tls_port
    with _client(p, scheme="https", verify=cert) as client:
        assert client.url.startswith("https://")
        assert client.show("show version")["modelName"] == "vEOS"


def test_https_verifies_by_default(tls_port: tuple[int, Path]) -> None:
    p, _ = tls_port
    with _client(p, scheme="https") as client, pytest.raises(EapiUnreachable) as info:
        client.show("show version")
    assert "TLS handshake" in str(info.value)
    assert "leaf01" in str(info.value)


def test_https_without_verification_when_asked(tls_port: tuple[int, Path]) -> None:
    p, _ = tls_port
    with _client(p, scheme="https", verify=False) as client:
        assert client.run_cmds(["show version"])[0]["version"] == "4.23.5M"
