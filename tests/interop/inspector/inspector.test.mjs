// The MCP Inspector CLI (npm @modelcontextprotocol/inspector --cli) against a toolwire demo
// server, over stdio and over Streamable HTTP. LANG from TOOLWIRE_DEMO_LANG (default rust).
// Run with Node >= 22.19 (tests/interop/inspector/run uses the pinned npm node@22).
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { execFile, spawn } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve, dirname } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";

const here = dirname(fileURLToPath(import.meta.url));
const root = resolve(here, "../../..");
const runDemo = join(root, "examples", "run-demo");
const lang = process.env.TOOLWIRE_DEMO_LANG ?? "rust";
const cli = join(here, "node_modules", ".bin", "mcp-inspector");
// The CLI keeps a catalog of servers; keep ours out of the home directory.
const env = { ...process.env, MCP_CATALOG_PATH: join(mkdtempSync(join(tmpdir(), "tw-insp-")), "mcp.json") };

async function inspect(...args) {
  const { stdout } = await promisify(execFile)(cli, ["--cli", ...args], { env, timeout: 120_000 });
  return JSON.parse(stdout);
}

let server;
let url;
before(async () => {
  server = spawn(runDemo, [lang, "--http", "0"], { stdio: ["ignore", "ignore", "pipe"] });
  let log = "";
  url = await new Promise((resolveUrl, reject) => {
    server.stderr.setEncoding("utf8");
    server.stderr.on("data", (chunk) => {
      log += chunk;
      const match = /listening on (http:\/\/\S+)\s/.exec(log); // a whole line, not half of one
      if (match) resolveUrl(match[1]);
    });
    server.on("exit", (code) => reject(new Error(`the demo exited (${code}):\n${log}`)));
  });
});
after(() => server?.kill("SIGTERM"));

for (const transport of ["stdio", "http"]) {
  const target = () => (transport === "stdio" ? [runDemo, lang] : [url]);

  test(`${transport}: tools/list`, async () => {
    const { tools } = await inspect(...target(), "--method", "tools/list");
    assert.deepEqual(tools.map((t) => t.name).sort(), ["add", "echo", "fail", "sleep"]);
  });

  test(`${transport}: tools/call with structured output`, async () => {
    const result = await inspect(...target(), "--method", "tools/call", "--tool-name", "add", "--tool-arg", "a=2", "b=3");
    assert.deepEqual(result.structuredContent, { sum: 5 });
  });

  test(`${transport}: tools/call echo`, async () => {
    const result = await inspect(...target(), "--method", "tools/call", "--tool-name", "echo", "--tool-arg", "text=hi there");
    assert.equal(result.content[0].text, "hi there");
  });
}
