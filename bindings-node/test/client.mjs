// A client driving a toolwire Server through Server.connect(), for tests.
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
