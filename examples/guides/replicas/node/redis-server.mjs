// A redis-server of the tests' own, on a free loopback port (Debian's `redis-server` on PATH).
import { spawn } from 'node:child_process'
import net from 'node:net'

const freePort = () =>
  new Promise((resolve, reject) => {
    const probe = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = probe.address()
      probe.close(() => resolve(port))
    })
    probe.on('error', reject)
  })

const answers = (port) =>
  new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1')
    socket.setTimeout(500)
    socket.once('connect', () => socket.write('PING\r\n'))
    const done = (answered) => {
      socket.destroy()
      resolve(answered)
    }
    socket.once('data', (data) => done(data.toString().startsWith('+PONG')))
    socket.once('timeout', () => done(false))
    socket.once('error', () => done(false))
  })

/** Starts one: `{ url, stop() }`. */
export async function startRedis() {
  const port = await freePort()
  const child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], {
    stdio: ['ignore', 'ignore', 'inherit'],
  })
  const deadline = Date.now() + 10_000
  while (!(await answers(port))) {
    if (child.exitCode !== null || Date.now() > deadline) {
      child.kill()
      throw new Error('redis-server did not start')
    }
  }
  return { url: `redis://127.0.0.1:${port}/0`, stop: () => child.kill() }
}
