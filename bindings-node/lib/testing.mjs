// ESM entry of toolwire/testing: the same objects as the CommonJS one (required, not imported:
// see index.mjs).
import { createRequire } from 'node:module'

const testing = createRequire(import.meta.url)('./testing.js')

export const { McpError, TestClient, connect, replayVector } = testing
export default testing
