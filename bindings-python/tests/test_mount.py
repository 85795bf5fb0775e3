"""`server.mount(prefix, ...)`: another server's catalog under a prefix. A toolwire `Server` in
this process, and a server written with the official MCP Python SDK, spawned over stdio and
reached over Streamable HTTP: names and URIs prefixed, calls forwarded with their progress and
questions, this server's middleware applied, list changes followed, an upstream that dies in the
middle of a call reported and spawned again, an https server trusted through SSL_CERT_FILE."""

from __future__ import annotations

import asyncio
import contextlib
import datetime
import ipaddress
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from toolwire import CallNext, Context, Request, Server, TransportError
from toolwire.testing import connect

ROOT = Path(__file__).resolve().parents[2]
INTEROP = ROOT / "tests" / "interop" / "python"
SDK_UPSTREAM = INTEROP / "sdk_upstream.py"
sys.path.insert(0, str(INTEROP))

from logwatch import LogWatch  # noqa: E402


def names(tools: list[dict]) -> list[str]:
    return [tool["name"] for tool in tools]


def text(result: dict) -> str:
    return result["content"][0]["text"]


# --8<-- [start:inner]
def weather() -> Server:
    server = Server("weather")

    @server.tool()
    def forecast(city: str) -> str:
        """Tomorrow's weather in a city."""
        return f"sunny in {city}"

    @server.tool()
    async def slow_forecast(city: str, ctx: Context) -> str:
        """The weather, worked out in two steps."""
        await ctx.report_progress(1, 2, "looking")
        await asyncio.sleep(0)
        return f"rain in {city}"

    @server.resource("docs://readme")
    def readme() -> str:
        return "Weather for everyone."

    return server


gateway = Server("gateway")
gateway.mount("weather", weather())  # weather_forecast, docs://weather/readme, ...
# --8<-- [end:inner]


@pytest.mark.asyncio
async def test_a_server_in_this_process_is_mounted_under_a_prefix() -> None:
    inner = weather()
    outer = Server("gateway")
    seen: list[str] = []

    @outer.middleware
    async def record(request: Request, call_next: CallNext):
        if request.name:
            seen.append(request.name)
        return await call_next()

    mount = outer.mount("weather", inner)
    assert sorted(mount.registered()) == [
        "docs://weather/readme",
        "weather_forecast",
        "weather_slow_forecast",
    ]
    async with connect(outer) as client:
        assert names(await client.list_tools()) == ["weather_forecast", "weather_slow_forecast"]
        assert text(await client.call_tool("weather_forecast", {"city": "Oslo"})) == "sunny in Oslo"
        heard: list[str] = []
        result = await client.call_tool(
            "weather_slow_forecast", {"city": "Bergen"}, progress_callback=lambda p, t, m: heard.append(m)
        )
        assert text(result) == "rain in Bergen"
        assert heard == ["looking"]
        read = await client.read_resource("docs://weather/readme")
        assert read["contents"][0]["text"] == "Weather for everyone."
        assert seen == ["weather_forecast", "weather_slow_forecast", "docs://weather/readme"]

        # A tool added to the inner server appears, told as a list change.
        @inner.tool()
        def radar() -> str:
            return "clear"

        await client.wait_for_notification("notifications/tools/list_changed")
        while "weather_radar" not in names(await client.list_tools()):
            await client.wait_for_notification("notifications/tools/list_changed")
        assert text(await client.call_tool("weather_radar", {})) == "clear"

    mount.unmount()
    assert outer.tool_names() == []


@pytest.mark.asyncio
async def test_a_mounted_servers_async_code_runs_on_one_loop_with_its_lifespan() -> None:
    @contextlib.asynccontextmanager
    async def lifespan(server: Server):
        yield {"loop": asyncio.get_running_loop()}

    inner = Server("stations", lifespan=lifespan)

    @inner.tool()
    async def same_loop(ctx: Context) -> str:
        return str(asyncio.get_running_loop() is ctx.lifespan_context["loop"])

    @inner.resource("stations://loop")
    async def loop_resource() -> str:
        return str(asyncio.get_running_loop() is not None)

    outer = Server("gateway")
    mount = outer.mount("stations", inner)
    async with connect(outer) as client:
        assert text(await client.call_tool("stations_same_loop", {})) == "True"
        read = await client.read_resource("stations://stations/loop")
        assert read["contents"][0]["text"] == "True"
    await asyncio.to_thread(mount.unmount)


def test_mount_refuses_what_it_cannot_mount() -> None:
    outer = Server("gateway")
    with pytest.raises(TypeError):
        outer.mount("x")
    with pytest.raises(TypeError):
        outer.mount("x", command="a", url="http://127.0.0.1:1/mcp")
    with pytest.raises(TypeError):
        outer.mount("x", object())  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="prefix"):
        outer.mount("a b", weather())
    with pytest.raises(TypeError, match="env= does not apply to url="):
        outer.mount("x", url="http://127.0.0.1:1/mcp", env={"A": "1"})
    with pytest.raises(TypeError, match="headers= does not apply to command="):
        outer.mount("x", command="python", headers={"A": "1"})
    with pytest.raises(TypeError, match="args= does not apply to a server"):
        outer.mount("x", weather(), args=["-v"])
    with pytest.raises(TransportError, match="cannot spawn"):
        outer.mount("x", command=["toolwire-no-such-program"])


async def drive_sdk_upstream(outer: Server, *, answers_elicitation: bool) -> None:
    async def answer(params: dict) -> dict:
        assert params["message"] == "Your name?"
        return {"action": "accept", "content": {"name": "Ada"}}

    async with connect(outer, elicitation=answer) as client:
        assert names(await client.list_tools()) == [
            "sdk_ask_name",
            "sdk_count",
            "sdk_die",
            "sdk_echo",
        ]
        assert text(await client.call_tool("sdk_echo", {"text": "hi"})) == "sdk echo: hi"
        heard: list[str] = []
        counted = await client.call_tool("sdk_count", {"n": 3}, progress_callback=lambda p, t, m: heard.append(m))
        assert text(counted) == "counted to 3"
        assert heard == ["step 1", "step 2", "step 3"]
        if answers_elicitation:
            assert text(await client.call_tool("sdk_ask_name", {})) == "hello, Ada"
        read = await client.read_resource("docs://sdk/readme")
        assert read["contents"][0]["text"] == "Read me, from the SDK."
        prompt = await client.get_prompt("sdk_brief", {"city": "Oslo"})
        assert prompt["messages"][0]["content"]["text"] == "Brief me on Oslo."
        # Completion of a mounted prompt's argument is the upstream's.
        completed = await client.complete({"type": "ref/prompt", "name": "sdk_brief"}, "city", "os")
        assert completed["values"] == ["Oslo", "Osaka"]


@pytest.mark.asyncio
@pytest.mark.parametrize("version", [None, "2025-11-25"])
async def test_a_spawned_official_sdk_server_is_proxied_in_either_era(version: str | None) -> None:
    outer = Server("gateway")
    # --8<-- [start:spawned]
    outer.mount("sdk", command=[sys.executable, str(SDK_UPSTREAM)], protocol_version=version)
    # --8<-- [end:spawned]
    # The SDK's `ctx.elicit` asks as a request, which a 2026-07-28 exchange has no channel for.
    await drive_sdk_upstream(outer, answers_elicitation=version is not None)


@pytest.mark.asyncio
async def test_a_spawned_official_sdk_server_that_dies_mid_call_is_spawned_again() -> None:
    outer = Server("gateway")
    outer.mount("sdk", command=[sys.executable, str(SDK_UPSTREAM)])
    async with connect(outer) as client:
        died = await client.call_tool("sdk_die", {})
        assert died["isError"] is True
        assert "went away before answering" in text(died)
        assert "sdk_upstream.py` (spawned)" in text(died)
        # The next call spawns it again.
        assert text(await client.call_tool("sdk_echo", {"text": "again"})) == "sdk echo: again"


def start_sdk_http(*tls: str) -> Iterator[str]:
    """The SDK server over http, or over https with `tls` (certificate and key files)."""
    process = subprocess.Popen(
        [sys.executable, str(SDK_UPSTREAM), *(["https", "0", *tls] if tls else ["http", "0"])],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    assert process.stderr
    stderr = process.stderr
    log = LogWatch(lambda: stderr)
    try:
        match = log.wait_for(r"running on https?://127\.0\.0\.1:(\d+)", 60)
        if match is None:
            raise RuntimeError(f"the SDK server did not start:\n{log.text()}")
        scheme = "https://localhost" if tls else "http://127.0.0.1"
        yield f"{scheme}:{match.group(1)}/mcp"
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()


@pytest.fixture(scope="module")
def sdk_http() -> Iterator[str]:
    yield from start_sdk_http()


@pytest.fixture
def sdk_http_alone() -> Iterator[str]:
    """A server of this test's own: it dies."""
    yield from start_sdk_http()


@pytest.mark.asyncio
@pytest.mark.parametrize("version", [None, "2025-11-25"])
async def test_an_official_sdk_server_over_http_that_dies_mid_call_fails_the_call(
    sdk_http_alone: str, version: str | None
) -> None:
    outer = Server("gateway")
    outer.mount("sdk", url=sdk_http_alone, protocol_version=version)
    async with connect(outer) as client:
        died = await client.call_tool("sdk_die", {})
        assert died["isError"] is True
        assert sdk_http_alone in text(died)
        # Nothing listens now: the next call fails at once, naming the upstream.
        gone = await client.call_tool("sdk_echo", {"text": "again"})
        assert gone["isError"] is True
        assert sdk_http_alone in text(gone)


@pytest.mark.asyncio
@pytest.mark.parametrize("version", [None, "2025-11-25"])
async def test_an_official_sdk_server_over_streamable_http_is_proxied_in_either_era(
    sdk_http: str, version: str | None
) -> None:
    outer = Server("gateway")
    # --8<-- [start:http]
    outer.mount("sdk", url=sdk_http, protocol_version=version)  # headers={"Authorization": ...} too
    # --8<-- [end:http]
    await drive_sdk_upstream(outer, answers_elicitation=version is not None)


def write_certificates(folder: Path, names: list[str]) -> tuple[Path, Path, Path]:
    """A CA of the test's own and a server certificate it signed for `names`: the CA, the
    certificate and its key, as PEM files."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

    now = datetime.datetime.now(datetime.timezone.utc)
    valid = (now - datetime.timedelta(hours=1), now + datetime.timedelta(days=1))
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "toolwire test CA")])
    ca = (
        x509.CertificateBuilder()
        .subject_name(ca_name)
        .issuer_name(ca_name)
        .public_key(ca_key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(valid[0])
        .not_valid_after(valid[1])
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .add_extension(x509.KeyUsage(True, False, False, False, False, True, True, False, False), critical=True)
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(ca_key.public_key()), critical=False)
        .sign(ca_key, hashes.SHA256())
    )
    key = ec.generate_private_key(ec.SECP256R1())
    alt_names: list[x509.GeneralName] = []
    for name in names:
        try:
            alt_names.append(x509.IPAddress(ipaddress.ip_address(name)))
        except ValueError:
            alt_names.append(x509.DNSName(name))
    leaf = (
        x509.CertificateBuilder()
        .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, names[0])]))
        .issuer_name(ca_name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(valid[0])
        .not_valid_after(valid[1])
        .add_extension(x509.SubjectAlternativeName(alt_names), critical=False)
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
        .add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()), critical=False)
        .sign(ca_key, hashes.SHA256())
    )
    paths = (folder / "ca.pem", folder / "server.pem", folder / "server-key.pem")
    paths[0].write_bytes(ca.public_bytes(serialization.Encoding.PEM))
    paths[1].write_bytes(leaf.public_bytes(serialization.Encoding.PEM))
    paths[2].write_bytes(
        key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    )
    return paths


@pytest.fixture(scope="module")
def sdk_https(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    """The SDK server over https, with the CA that signed its certificate."""
    ca, cert, key = write_certificates(tmp_path_factory.mktemp("tls"), ["localhost", "127.0.0.1"])
    for url in start_sdk_http(str(cert), str(key)):
        yield url, ca


@pytest.mark.asyncio
@pytest.mark.parametrize("version", [None, "2025-11-25"])
async def test_an_official_sdk_server_over_https_is_proxied_when_its_ca_is_trusted(
    sdk_https: tuple[str, Path], version: str | None, monkeypatch: pytest.MonkeyPatch
) -> None:
    url, ca = sdk_https
    assert url.startswith("https://localhost:")
    monkeypatch.delenv("SSL_CERT_DIR", raising=False)
    # Not trusted yet: no root read from SSL_CERT_FILE signed it (Mozilla's are tried instead).
    monkeypatch.setenv("SSL_CERT_FILE", str(ROOT / "tests" / "interop" / "python" / "requirements.txt"))
    with pytest.raises(TransportError, match="TLS handshake"):
        Server("gateway").mount("sdk", url=url, protocol_version=version)
    monkeypatch.setenv("SSL_CERT_FILE", str(ca))
    outer = Server("gateway")
    outer.mount("sdk", url=url, protocol_version=version)
    await drive_sdk_upstream(outer, answers_elicitation=version is not None)
