// The Vercel AI SDK's MCP client (npm @ai-sdk/mcp) against a toolwire demo over stdio. It probes
// with server/discover and, when no answer has come within 1 s, falls back to initialize on the
// same pipe: served as the demo answers, and with the demo's first answer held back past the
// probe (delayed-first-answer.mjs), as a slow start would. LANG comes from TOOLWIRE_DEMO_LANG
// (default rust).
import { test } from "node:test";
import assert from "node:assert/strict";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { createMCPClient } from "@ai-sdk/mcp";
import { StdioMCPTransport } from "@ai-sdk/mcp/mcp-stdio";

const here = dirname(fileURLToPath(import.meta.url));
const runDemo = resolve(here, "../../../examples/run-demo");
const lang = process.env.TOOLWIRE_DEMO_LANG ?? "rust";
// Past the client's wait for the probe's answer (DEFAULT_PROTOCOL_DISCOVERY_TIMEOUT, 1 s).
const LATE_MS = 1500;

function connect(lateMs) {
  // The whole environment, not the transport's few default variables: run-demo reads ours
  // (scripts/test-all's TOOLWIRE_RUST_BIN_DIR among them).
  const env = { ...process.env };
  const transport = lateMs
    ? new StdioMCPTransport({
        command: process.execPath,
        args: [join(here, "delayed-first-answer.mjs"), String(lateMs), runDemo, lang],
        env,
      })
    : new StdioMCPTransport({ command: runDemo, args: [lang], env });
  return createMCPClient({ transport });
}

// What an AI SDK app does with the server: its tools as AI SDK tools, executed as a model's
// tool calls are.
async function useTools(client) {
  assert.equal(client.serverInfo.name, "toolwire-demo");
  const tools = await client.tools();
  assert.deepEqual(Object.keys(tools).sort(), ["add", "echo", "fail", "sleep"]);
  const echoed = await tools.echo.execute({ text: "héllo" }, { toolCallId: "1", messages: [] });
  assert.equal(echoed.content[0].text, "héllo");
  const sum = await tools.add.execute({ a: 2, b: 3 }, { toolCallId: "2", messages: [] });
  assert.deepEqual(sum.structuredContent, { sum: 5 });
  const failed = await client.callTool({ name: "fail", arguments: { message: "on purpose" } });
  assert.equal(failed.isError, true);
}

test("served as it answers: the probe's answer in time (2026-07-28), or initialize after it", async () => {
  const client = await connect(0);
  try {
    assert.ok(["2026-07-28", "2025-11-25"].includes(client.initializeResult.protocolVersion));
    await useTools(client);
  } finally {
    await client.close();
  }
});

test("the first answer late: the probe unanswered in time, initialize on the same pipe opens a handshake-era session", async () => {
  const client = await connect(LATE_MS);
  try {
    assert.equal(client.initializeResult.protocolVersion, "2025-11-25");
    await useTools(client);
  } finally {
    await client.close();
  }
});
