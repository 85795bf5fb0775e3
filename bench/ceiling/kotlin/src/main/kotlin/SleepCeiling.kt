// The load generator's slow-tool probe with no MCP and no second process: 64 coroutines, each
// calling `delay(10)` in a closed loop on Dispatchers.Default (where the Kotlin demo's suspended
// handlers resume), counted as the load generator counts calls (after half a phase unmeasured,
// as its slow phase). The share of the ideal 6,400 per second is the most a server whose slow
// tool sleeps with `delay` can reach on this machine.
// Prints one JSON line shaped like the load generator's `slow_tool` report.
package dev.toolwire.bench

import java.util.concurrent.atomic.AtomicLong
import kotlin.system.exitProcess
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.delay
import kotlinx.coroutines.joinAll
import kotlinx.coroutines.launch
import kotlinx.coroutines.runBlocking

const val CONCURRENCY = 64
const val SLEEP_MS = 10L

fun main(args: Array<String>) {
    val phaseMs = when {
        args.isEmpty() -> 3000L
        args.size == 2 && args[0] == "--phase-ms" -> args[1].toLongOrNull()
        else -> null
    } ?: run {
        System.err.println("usage: bench/ceiling/kotlin/run [--phase-ms MS]")
        exitProcess(2)
    }
    // Half a phase unmeasured first, as the load generator's slow phase (C2 compiles meanwhile).
    closedLoop(phaseMs / 2)
    val (calls, elapsedS) = closedLoop(phaseMs)
    val ideal = CONCURRENCY * 1000.0 / SLEEP_MS
    val rate = calls / elapsedS
    val efficiency = Math.round(rate / ideal * 1000) / 1000.0
    println(
        """{"runtime":"kotlinx.coroutines, Dispatchers.Default","slow_tool":{"concurrency":$CONCURRENCY,""" +
            """"sleep_ms":$SLEEP_MS,"calls_per_s":${Math.round(rate)},"ideal_calls_per_s":$ideal,"efficiency":$efficiency}}""",
    )
}

/** Calls made and seconds taken by [phaseMs] of the closed loop. */
fun closedLoop(phaseMs: Long): Pair<Long, Double> {
    val calls = AtomicLong()
    val start = System.nanoTime()
    val deadline = start + phaseMs * 1_000_000
    runBlocking {
        List(CONCURRENCY) {
            launch(Dispatchers.Default) {
                while (System.nanoTime() < deadline) {
                    calls.incrementAndGet()
                    delay(SLEEP_MS)
                }
            }
        }.joinAll()
    }
    return calls.get() to (System.nanoTime() - start) / 1e9
}
