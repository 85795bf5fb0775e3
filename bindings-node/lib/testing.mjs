// ESM entry of toolwire/testing: the same objects as the CommonJS one.
import testing from './testing.js'

export const { McpError, TestClient, connect } = testing
export default testing
