// ESM entry: the same objects as the CommonJS one (one addon instance either way). Loaded with
// require, not `import ... from './index.js'`: importing CommonJS makes Node parse its whole
// source for export names first (cjs-module-lexer), 15-20 ms of every ESM program's start.
import { createRequire } from 'node:module'

const toolwire = createRequire(import.meta.url)('./index.js')

export const { Server, Mount, Context, InputRequired, ProtocolError, ToolError, HttpServer, ResourceNotFound, ToolwireError, text, image, audio, resourceLink, embeddedResource, LOG_LEVELS, ENGINE_LOG_LEVELS, completable, onEngineLog } = toolwire
export default toolwire
