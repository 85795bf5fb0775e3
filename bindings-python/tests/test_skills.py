"""The Skills extension (SEP-2640) and declared extensions, from Python: skills from code and from
a directory tree, refusals, reloads, and what a tool sees of the client's extensions."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import pytest
from conftest import Client
from toolwire import Context, RegistrationError, Server

SKILLS = "io.modelcontextprotocol/skills"


def skill_md(name: str, description: str = "Does things") -> str:
    return f"---\nname: {name}\ndescription: {description}\n---\n# {name}\n"


def request(client: Client, id: int, method: str, params: dict) -> dict:
    client.send({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
    return client.recv()


def digest(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()


# --8<-- [start:from-code]
def test_a_skill_from_code_is_listed_described_and_read() -> None:
    server = Server("skills")
    md = skill_md("invoices")
    server.add_skill("acme/invoices", md, {"templates/a.md": "# A\n", "logo.bin": b"\x00\xff"})
    client = Client(server)
    caps = client.initialize()["result"]["capabilities"]
    assert caps["extensions"][SKILLS] == {"directoryRead": True}
    listed = request(client, 1, "skills/list", {})["result"]["skills"]
    assert listed == [
        {
            "uri": "skill://acme/invoices/SKILL.md",
            "frontmatter": {"name": "invoices", "description": "Does things"},
            "resources": [
                {"uri": "skill://acme/invoices/SKILL.md", "digest": digest(md.encode()), "size": len(md)},
                {"uri": "skill://acme/invoices/logo.bin", "digest": digest(b"\x00\xff"), "size": 2},
                {"uri": "skill://acme/invoices/templates/a.md", "digest": digest(b"# A\n"), "size": 4},
            ],
        }
    ]
    blob = request(client, 2, "resources/read", {"uri": "skill://acme/invoices/logo.bin"})
    assert blob["result"]["contents"][0] == {
        "uri": "skill://acme/invoices/logo.bin",
        "mimeType": "application/octet-stream",
        "blob": "AP8=",
    }
    unknown = request(client, 3, "skills/get", {"uri": "skill://acme/SKILL.md"})
    assert unknown["error"]["code"] == -32602
    assert server.remove_skill("acme/invoices")
    assert not server.remove_skill("acme/invoices")


# --8<-- [end:from-code]


@pytest.mark.parametrize(
    ("path", "md", "files", "expected"),
    [
        ("pdf", skill_md("other"), {}, "must be its name"),
        ("pdf", "no frontmatter", {}, "frontmatter"),
        ("pdf", skill_md("pdf"), {"../escape.md": "x"}, "`.` and `..`"),
        ("pdf", skill_md("pdf"), {"/etc/passwd": "x"}, "must be relative"),
        ("Bad_Name", skill_md("Bad_Name"), {}, "lowercase"),
    ],
)
def test_what_the_spec_refuses_raises_a_registration_error_naming_it(path, md, files, expected) -> None:
    server = Server("skills")
    with pytest.raises(RegistrationError, match=expected):
        server.add_skill(path, md, files)


# --8<-- [start:tree]
def test_a_tree_is_loaded_reloaded_and_kept_inside_its_root(tmp_path: Path) -> None:
    root = tmp_path / "skills"
    (root / "pdf" / "templates").mkdir(parents=True)
    (root / "pdf" / "SKILL.md").write_text(skill_md("pdf"))
    (root / "pdf" / "templates" / "invoice.md").write_text("v1")
    server = Server("skills")
    assert server.load_skills(root) == 1
    client = Client(server)
    client.initialize()
    directory = request(client, 1, "resources/directory/read", {"uri": "skill://pdf"})["result"]["resources"]
    assert [(r["name"], r["mimeType"]) for r in directory] == [
        ("SKILL.md", "text/markdown"),
        ("templates", "inode/directory"),
    ]
    (root / "pdf" / "templates" / "invoice.md").write_text("v2")
    assert server.load_skills(str(root)) == 1
    assert client.recv()["method"] == "notifications/resources/list_changed"
    read = request(client, 2, "resources/read", {"uri": "skill://pdf/templates/invoice.md"})
    assert read["result"]["contents"][0]["text"] == "v2"
    outside = tmp_path / "secret.txt"
    outside.write_text("not yours")
    os.symlink(outside, root / "pdf" / "secret.txt")
    with pytest.raises(RegistrationError, match="leads out of the skills directory"):
        server.load_skills(root)
    still = request(client, 3, "resources/read", {"uri": "skill://pdf/templates/invoice.md"})
    assert still["result"]["contents"][0]["text"] == "v2", "a failed reload keeps what was served"
    with pytest.raises(RegistrationError, match="nowhere"):
        server.load_skills(tmp_path / "nowhere")


# --8<-- [end:tree]


# --8<-- [start:extensions]
def test_a_tool_sees_the_extensions_the_client_declared() -> None:
    server = Server("ext")
    server.declare_extension("com.example/widgets", {"colors": ["red"]})

    @server.tool()
    def which(ctx: Context) -> dict:
        return {"declared": ctx.client_extension("com.example/widgets")}

    client = Client(server)
    init = client.initialize(capabilities={"extensions": {"com.example/widgets": {"v": 2}}})
    assert init["result"]["capabilities"]["extensions"] == {"com.example/widgets": {"colors": ["red"]}}
    client.call(1, "which")
    assert client.recv()["result"]["structuredContent"] == {"declared": {"v": 2}}
    with pytest.raises(RegistrationError, match="vendor-prefix/name"):
        server.declare_extension("widgets")
    with pytest.raises(RegistrationError, match="declared by the engine"):
        server.declare_extension(SKILLS, {})


# --8<-- [end:extensions]


def test_a_watched_tree_is_served_again_when_it_changes(tmp_path: Path) -> None:
    (tmp_path / "pdf").mkdir()
    (tmp_path / "pdf" / "SKILL.md").write_text(skill_md("pdf"))
    server = Server("skills")
    assert server.watch_skills(tmp_path, interval=0.01) == 1
    client = Client(server)
    client.initialize()
    (tmp_path / "notes").mkdir()
    (tmp_path / "notes" / "SKILL.md").write_text(skill_md("notes"))
    # The wait is for the notification the watch's reload sends.
    assert client.recv()["method"] == "notifications/resources/list_changed"
    listed = request(client, 1, "skills/list", {})["result"]["skills"]
    assert [s["uri"] for s in listed] == ["skill://notes/SKILL.md", "skill://pdf/SKILL.md"]
    with pytest.raises(ValueError):
        server.watch_skills(tmp_path, interval=-1)
