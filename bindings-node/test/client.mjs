// A client driving a toolwire Server through Server.connect(), for tests.
import { spawn } from 'node:child_process'
import { once } from 'node:events'

export class Client {
  constructor(server) {
    this.frames = []
    this.waiters = []
    /** Every outbound message as the text that went out. */
    this.texts = []
    this.connection = server.connect((message) => {
      this.texts.push(message)
      const frame = JSON.parse(message)
      const waiter = this.waiters.shift()
      if (waiter) waiter(frame)
      else this.frames.push(frame)
    })
  }

  send(message) {
    this.connection.handleFrame(typeof message === 'string' ? message : JSON.stringify(message))
  }

  /** The next outbound frame (waits up to `ms`). */
  async recv(ms = 5000) {
    if (this.frames.length) return this.frames.shift()
    let timer
    const frame = new Promise((resolve) => this.waiters.push(resolve))
    const timeout = new Promise((_, reject) => {
      timer = setTimeout(() => reject(new Error(`no frame within ${ms} ms`)), ms)
    })
    try {
      return await Promise.race([frame, timeout])
    } finally {
      clearTimeout(timer)
    }
  }

  async initialize(version = '2025-11-25', capabilities = {}) {
    this.send({
      jsonrpc: '2.0', id: 0, method: 'initialize',
      params: { protocolVersion: version, capabilities, clientInfo: { name: 'node-test', version: '1' } },
    })
    const answer = await this.recv()
    this.send({ jsonrpc: '2.0', method: 'notifications/initialized' })
    return answer
  }

  call(id, name, args = {}, meta) {
    const params = { name, arguments: args }
    if (meta) params._meta = meta
    this.send({ jsonrpc: '2.0', id, method: 'tools/call', params })
  }

  async callResult(id, name, args = {}) {
    this.call(id, name, args)
    const answer = await this.recv()
    if (answer.id !== id) throw new Error(`expected the answer to ${id}, got ${JSON.stringify(answer)}`)
    return answer.result
  }

  /** Ends the input; returns whatever else was sent. */
  async finish() {
    await this.connection.shutdown()
    return this.frames.splice(0)
  }
}

/**
 * The JSON lines a child process writes to `stream` (its stdout), one at a time: `next()`
 * resolves with the next message when it arrives, or rejects after `ms` (and calls `onHang`,
 * e.g. to kill the child), so a server that never answers fails the test instead of hanging it.
 */
export function jsonLines(stream, { ms = 5000, onHang = () => {} } = {}) {
  const lines = []
  const waiters = []
  let buffered = ''
  stream.setEncoding('utf8').on('data', (chunk) => {
    buffered += chunk
    let i
    while ((i = buffered.indexOf('\n')) >= 0) {
      const line = JSON.parse(buffered.slice(0, i))
      buffered = buffered.slice(i + 1)
      const waiter = waiters.shift()
      if (waiter) waiter(line)
      else lines.push(line)
    }
  })
  return async function next() {
    if (lines.length) return lines.shift()
    let timer
    try {
      return await new Promise((resolve, reject) => {
        waiters.push(resolve)
        timer = setTimeout(() => {
          onHang()
          reject(new Error(`no message within ${ms} ms`))
        }, ms)
      })
    } finally {
      clearTimeout(timer)
    }
  }
}

/**
 * Runs `script` in a child `node -e` and resolves once it exits, with its exit code and all it
 * wrote: `{ code, stdout, stderr }`. `options` go to `spawn` (e.g. `env`); `input`, if given,
 * is written to its stdin, which is then closed.
 */
export async function runNodeScript(script, { input, ...options } = {}) {
  const child = spawn(process.execPath, ['-e', script], { stdio: [input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'], ...options })
  let stdout = ''
  let stderr = ''
  child.stdout.setEncoding('utf8').on('data', (chunk) => (stdout += chunk))
  child.stderr.setEncoding('utf8').on('data', (chunk) => (stderr += chunk))
  if (input !== undefined) child.stdin.end(input)
  const [code] = await once(child, 'exit')
  return { code, stdout, stderr }
}
