// The official MCP TypeScript SDK client (npm @modelcontextprotocol/sdk) against a toolwire
// demo server over Streamable HTTP. The server is `examples/run-demo LANG --http 0` (LANG from
// TOOLWIRE_DEMO_LANG, default rust); its URL is read from its stderr.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { join, resolve, dirname } from "node:path";
import { fileURLToPath } from "node:url";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { McpError } from "@modelcontextprotocol/sdk/types.js";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "../../..");
const runDemo = join(root, "examples", "run-demo");
const lang = process.env.TOOLWIRE_DEMO_LANG ?? "rust";

function startDemo(...flags) {
  const child = spawn(runDemo, [lang, "--http", "0", ...flags], {
    stdio: ["ignore", "ignore", "pipe"],
    env: { ...process.env, TOOLWIRE_LOG: "toolwire=debug" },
  });
  let log = "";
  const url = new Promise((resolveUrl, reject) => {
    child.stderr.setEncoding("utf8");
    child.stderr.on("data", (chunk) => {
      log += chunk;
      const match = /listening on (http:\/\/\S+)\s/.exec(log); // a whole line, not half of one
      if (match) resolveUrl(match[1]);
    });
    child.on("exit", (code) => reject(new Error(`the demo exited (${code}):\n${log}`)));
  });
  return { child, url, log: () => log };
}

let demo;
let stateless;
before(() => {
  demo = startDemo();
  stateless = startDemo("--stateless");
});
after(() => {
  demo.child.kill("SIGTERM");
  stateless.child.kill("SIGTERM");
});

async function connect(server = demo) {
  const client = new Client({ name: "toolwire-interop-ts-http", version: "1.0.0" });
  await client.connect(new StreamableHTTPClientTransport(new URL(await server.url)));
  return client;
}

test("handshake, session id and tool list", async () => {
  const client = await connect();
  try {
    assert.equal(client.getServerVersion().name, "toolwire-demo");
    assert.match(client.transport.sessionId, /^[0-9a-f]{32}$/);
    const { tools } = await client.listTools();
    assert.deepEqual(tools.map((t) => t.name).sort(), ["add", "echo", "fail", "sleep"]);
  } finally {
    await client.close();
  }
});

test("calls, isError results and protocol errors", async () => {
  const client = await connect();
  try {
    const echo = await client.callTool({ name: "echo", arguments: { text: "héllo\nworld" } });
    assert.equal(echo.content[0].text, "héllo\nworld");
    const add = await client.callTool({ name: "add", arguments: { a: 1, b: 2 } });
    assert.deepEqual(add.structuredContent, { sum: 3 });
    const fail = await client.callTool({ name: "fail", arguments: { message: "it broke" } });
    assert.equal(fail.isError, true);
    await assert.rejects(client.callTool({ name: "nope", arguments: {} }), (err) => {
      assert.ok(err instanceof McpError);
      assert.equal(err.code, -32602);
      return true;
    });
  } finally {
    await client.close();
  }
});

test("progress arrives on the call's SSE stream", async () => {
  const client = await connect();
  try {
    const seen = [];
    const result = await client.callTool({ name: "sleep", arguments: { ms: 450 } }, undefined, {
      onprogress: (p) => seen.push(p),
    });
    assert.equal(result.content[0].text, "slept 450 ms");
    assert.ok(seen.length >= 3, JSON.stringify(seen));
    for (let i = 1; i < seen.length; i++) assert.ok(seen[i].progress > seen[i - 1].progress);
  } finally {
    await client.close();
  }
});

test("aborting a sleep cancels it on the server", async () => {
  const client = await connect();
  try {
    const abort = new AbortController();
    const call = client.callTool({ name: "sleep", arguments: { ms: 20000 } }, undefined, {
      signal: abort.signal,
    });
    setTimeout(() => abort.abort("test abort"), 300);
    await assert.rejects(call);
    await client.ping();
    for (let i = 0; i < 50 && !demo.log().includes("call cancelled by the client"); i++) {
      await new Promise((r) => setTimeout(r, 50));
    }
    assert.match(demo.log(), /call cancelled by the client/);
  } finally {
    await client.close();
  }
});

test("terminating the session makes its id unknown (404)", async () => {
  const client = await connect();
  const url = await demo.url;
  const id = client.transport.sessionId;
  await client.transport.terminateSession();
  await client.close();
  const res = await fetch(url, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      "mcp-session-id": id,
    },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "ping" }),
  });
  assert.equal(res.status, 404);
});

test("many clients at once, each sees only its own answers", async () => {
  const clients = await Promise.all(Array.from({ length: 16 }, () => connect()));
  try {
    await Promise.all(
      clients.map(async (client, n) => {
        for (let i = 0; i < 25; i++) {
          const text = `client ${n} call ${i}`;
          const r = await client.callTool({ name: "echo", arguments: { text } });
          assert.equal(r.content[0].text, text);
        }
      }),
    );
  } finally {
    await Promise.all(clients.map((c) => c.close()));
  }
});

test("stateless server: no session id, calls work", async () => {
  const client = await connect(stateless);
  try {
    assert.equal(client.transport.sessionId, undefined);
    const r = await client.callTool({ name: "echo", arguments: { text: "alone" } });
    assert.equal(r.content[0].text, "alone");
  } finally {
    await client.close();
  }
});
