import { ProtocolError, Server } from 'toolwire'

export const server = new Server({ name: 'guarded', version: '1.0.0' })
export const audit = []

server.tool('ping', () => 'pong')
server.tool('wipe', () => 'wiped')

server.middleware(async (request, next) => {
  // Before next(): decide. request.principal is the bearer token's subject over HTTP.
  if (request.name === 'wipe' && !['ada', 'grace'].includes(request.principal)) {
    throw new ProtocolError(-32001, 'Forbidden') // this JSON-RPC error instead of the call
  }
  const outcome = await next() // handled here; resolves once the answer is sent
  audit.push(`${request.method} ${request.name}: ${outcome.kind}`)
})
