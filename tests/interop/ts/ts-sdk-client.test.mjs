// The official MCP TypeScript SDK client (npm @modelcontextprotocol/sdk) against a toolwire
// demo server over stdio. LANG comes from TOOLWIRE_DEMO_LANG (default rust).
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve, dirname } from "node:path";
import { fileURLToPath } from "node:url";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { McpError } from "@modelcontextprotocol/sdk/types.js";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "../../..");
const runDemo = join(root, "examples", "run-demo");
const lang = process.env.TOOLWIRE_DEMO_LANG ?? "rust";

async function connect() {
  const log = join(mkdtempSync(join(tmpdir(), "tw-ts-")), "server.log");
  const transport = new StdioClientTransport({
    command: "bash",
    args: ["-c", `exec "${runDemo}" ${lang} 2>>"${log}"`],
    env: { ...process.env, TOOLWIRE_LOG: "toolwire=debug" },
  });
  const client = new Client({ name: "toolwire-interop-ts", version: "1.0.0" });
  await client.connect(transport);
  return { client, log };
}

test("handshake and tool list", async () => {
  const { client } = await connect();
  try {
    assert.equal(client.getServerVersion().name, "toolwire-demo");
    assert.ok(client.getInstructions());
    const { tools } = await client.listTools();
    assert.deepEqual(tools.map((t) => t.name).sort(), ["add", "echo", "fail", "sleep"]);
    const add = tools.find((t) => t.name === "add");
    assert.deepEqual(add.outputSchema.required, ["sum"]);
  } finally {
    await client.close();
  }
});

test("echo and add (structured output, checked by the SDK against outputSchema)", async () => {
  const { client } = await connect();
  try {
    const echo = await client.callTool({ name: "echo", arguments: { text: "héllo\nworld" } });
    assert.equal(echo.isError, undefined);
    assert.equal(echo.content[0].text, "héllo\nworld");
    const add = await client.callTool({ name: "add", arguments: { a: 1, b: 2 } });
    assert.deepEqual(add.structuredContent, { sum: 3 });
    assert.equal(add.content[0].text, '{"sum":3}');
  } finally {
    await client.close();
  }
});

test("progress notifications arrive, increasing", async () => {
  const { client } = await connect();
  try {
    const seen = [];
    const result = await client.callTool({ name: "sleep", arguments: { ms: 450 } }, undefined, {
      onprogress: (p) => seen.push(p),
    });
    assert.equal(result.content[0].text, "slept 450 ms");
    assert.ok(seen.length >= 3, JSON.stringify(seen));
    for (let i = 1; i < seen.length; i++) assert.ok(seen[i].progress > seen[i - 1].progress);
    assert.ok(seen.every((p) => p.total === 450));
  } finally {
    await client.close();
  }
});

test("fail and invalid arguments are isError results", async () => {
  const { client } = await connect();
  try {
    const fail = await client.callTool({ name: "fail", arguments: { message: "it broke" } });
    assert.equal(fail.isError, true);
    assert.equal(fail.content[0].text, "it broke");
    const bad = await client.callTool({ name: "sleep", arguments: { ms: -1 } });
    assert.equal(bad.isError, true);
    assert.match(bad.content[0].text, /^Invalid arguments for tool "sleep"/);
  } finally {
    await client.close();
  }
});

test("unknown tool is JSON-RPC -32602", async () => {
  const { client } = await connect();
  try {
    await assert.rejects(client.callTool({ name: "nope", arguments: {} }), (err) => {
      assert.ok(err instanceof McpError);
      assert.equal(err.code, -32602);
      return true;
    });
  } finally {
    await client.close();
  }
});

test("aborting a sleep cancels it on the server", async () => {
  const { client, log } = await connect();
  try {
    const abort = new AbortController();
    const call = client.callTool({ name: "sleep", arguments: { ms: 20000 } }, undefined, {
      signal: abort.signal,
    });
    setTimeout(() => abort.abort("test abort"), 300);
    await assert.rejects(call);
    await client.ping();
    let text = "";
    for (let i = 0; i < 50 && !text.includes("call cancelled by the client"); i++) {
      await new Promise((r) => setTimeout(r, 50));
      text = readFileSync(log, "utf8");
    }
    assert.match(text, /call cancelled by the client/);
  } finally {
    await client.close();
  }
});
