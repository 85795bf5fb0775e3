// ESM entry: the same objects as the CommonJS one (one addon instance either way).
import toolwire from './index.js'

export const { Server, Context, InputRequired, ProtocolError, ToolError, HttpServer, ResourceNotFound, ToolwireError, text, image, audio, resourceLink, embeddedResource, LOG_LEVELS, ENGINE_LOG_LEVELS, completable, onEngineLog } = toolwire
export default toolwire
