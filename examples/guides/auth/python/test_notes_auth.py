import asyncio
import json
import urllib.request
from typing import Any, Optional
from urllib.error import HTTPError

import pytest

from notes_auth import check_token, server

INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}},
}


def send(url: str, token: Optional[str] = None, body: Optional[dict] = None) -> tuple[int, Any, Any]:
    """One request with the standard library's client: (status, headers, JSON body or None)."""
    headers = {"content-type": "application/json", "accept": "application/json, text/event-stream"}
    if token is not None:
        headers["authorization"] = f"Bearer {token}"
    data = None if body is None else json.dumps(body).encode()
    try:
        with urllib.request.urlopen(urllib.request.Request(url, data=data, headers=headers)) as response:
            return response.status, response.headers, json.loads(response.read())
    except HTTPError as refused:
        return refused.code, refused.headers, None


@pytest.mark.asyncio
async def test_a_bearer_token_guards_the_endpoint() -> None:
    http = await server.serve_http(
        "127.0.0.1", 0, token_validator=check_token, authorization_servers=["https://auth.example.com"]
    )
    try:
        # No token: 401, and the challenge says where the metadata is.
        status, headers, _ = await asyncio.to_thread(send, http.url, None, INITIALIZE)
        assert status == 401
        metadata_url = headers["www-authenticate"].split('resource_metadata="')[1].split('"')[0]
        # The protected-resource metadata (RFC 9728) names the authorization server.
        _, _, metadata = await asyncio.to_thread(send, metadata_url)
        assert metadata["authorization_servers"] == ["https://auth.example.com"]

        # A token without the scope: 403, naming it.
        status, headers, _ = await asyncio.to_thread(send, http.url, "secret-guest", INITIALIZE)
        assert status == 403
        assert 'scope="notes"' in headers["www-authenticate"]

        # A good token: served.
        status, _, answer = await asyncio.to_thread(send, http.url, "secret-ada", INITIALIZE)
        assert status == 200
        assert answer["result"]["serverInfo"]["name"] == "notes"
    finally:
        http.stop()
        await http.wait()
