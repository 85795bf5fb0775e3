#!/usr/bin/env node
// tests/interop/ts/delayed-first-answer.mjs DELAY_MS COMMAND [ARG ...]: runs COMMAND as an MCP
// server on stdio and holds back what it writes until DELAY_MS after the client's first bytes,
// then passes everything through. A server whose first answer comes late, as a slow start makes
// it, for the clients that probe and fall back. What the client writes reaches the server at once.
import { spawn } from "node:child_process";

const [delayArg, command, ...args] = process.argv.slice(2);
const delayMs = Number(delayArg);
if (!command || !Number.isInteger(delayMs) || delayMs < 0) {
  console.error("usage: delayed-first-answer.mjs DELAY_MS COMMAND [ARG ...]");
  process.exit(2);
}

const server = spawn(command, args, { stdio: ["pipe", "pipe", "inherit"] });
let held = [];
const release = () => {
  if (held === null) return;
  for (const chunk of held) process.stdout.write(chunk);
  held = null;
};
server.stdout.on("data", (chunk) => (held === null ? process.stdout.write(chunk) : held.push(chunk)));
process.stdin.once("data", () => setTimeout(release, delayMs));
process.stdin.pipe(server.stdin);
// A client that goes away mid-write closes the pipe: the server sees EOF, as it would directly.
server.stdin.on("error", () => {});
for (const signal of ["SIGTERM", "SIGINT"]) process.on(signal, () => server.kill(signal));
server.on("close", (code, signal) => {
  release();
  process.exitCode = code ?? (signal ? 1 : 0);
});
