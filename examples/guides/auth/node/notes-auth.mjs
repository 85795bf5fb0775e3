import { fileURLToPath } from 'node:url'

import { Server } from 'toolwire'

export const server = new Server({ name: 'notes', version: '1.0.0' })
// What your authorization server issued (in a real app: verify a JWT, or ask the server).
const tokens = new Map([
  ['secret-ada', { subject: 'ada', scopes: ['notes'] }],
  ['secret-guest', { subject: 'guest', scopes: [] }],
])

export function checkToken(token) {
  const grant = tokens.get(token)
  if (grant === undefined) return null // 401: invalid or expired
  if (!grant.scopes.includes('notes')) return { insufficientScope: 'notes' } // 403, naming it
  return grant // the subject is the caller's principal (middleware, per-principal limits)
}

server.tool('count_notes', () => '3')

export const authOptions = { tokenValidator: checkToken, authorizationServers: ['https://auth.example.com'] }

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const http = await server.serveHttp('127.0.0.1', 8000, authOptions)
  console.log(`serving ${http.url}`)
}
