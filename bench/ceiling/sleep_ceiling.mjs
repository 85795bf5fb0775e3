// node sleep_ceiling.mjs [--phase-ms MS]
//
// The load generator's slow-tool probe with no MCP and no second process: 64 async loops, each
// awaiting `setTimeout(10)` from node:timers/promises (as the Node demo's sleep does), counted
// as the load generator counts calls (after half a phase unmeasured, as its slow phase). The
// share of the ideal 6,400 per second is the most a server whose slow tool sleeps on Node's
// timers can reach on this machine. Prints one JSON line shaped like the load generator's
// `slow_tool` report.
import { setTimeout as delay } from 'node:timers/promises'
import { performance } from 'node:perf_hooks'

const CONCURRENCY = 64
const SLEEP_MS = 10

const args = process.argv.slice(2)
let phaseMs = 3000
if (args.length === 2 && args[0] === '--phase-ms' && /^\d+$/.test(args[1])) {
  phaseMs = Number(args[1])
} else if (args.length !== 0) {
  console.error('usage: node sleep_ceiling.mjs [--phase-ms MS]')
  process.exit(2)
}

// Returns [calls, seconds] of `ms` of the closed loop.
async function closedLoop (ms) {
  const start = performance.now()
  const deadline = start + ms
  let calls = 0
  async function worker () {
    while (performance.now() < deadline) {
      calls++
      await delay(SLEEP_MS)
    }
  }
  await Promise.all(Array.from({ length: CONCURRENCY }, worker))
  return [calls, (performance.now() - start) / 1000]
}

// Half a phase unmeasured first, as the load generator's slow phase (V8 compiles meanwhile).
await closedLoop(phaseMs / 2)
const [calls, elapsedS] = await closedLoop(phaseMs)
const ideal = CONCURRENCY * 1000 / SLEEP_MS
const rate = calls / elapsedS
console.log(JSON.stringify({
  runtime: `node ${process.version} timers`,
  slow_tool: {
    concurrency: CONCURRENCY,
    sleep_ms: SLEEP_MS,
    calls_per_s: Math.round(rate),
    ideal_calls_per_s: ideal,
    efficiency: Math.round(rate / ideal * 1000) / 1000
  }
}))
