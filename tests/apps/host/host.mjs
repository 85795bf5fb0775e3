// The test host: the official MCP TypeScript SDK client (Streamable HTTP, same-origin /mcp, which
// the test server forwards to the toolwire server) and the official ext-apps AppBridge, showing a
// tool's view in a sandbox proxy of another origin, as the spec asks of web hosts. Bundled for the
// browser by esbuild (tests/apps/run).
import { AppBridge, PostMessageTransport } from '@modelcontextprotocol/ext-apps/app-bridge'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'

const UI = 'io.modelcontextprotocol/ui'
const MIME = 'text/html;profile=mcp-app'
const HOST = { name: 'toolwire-apps-test-host', version: '1.0.0' }
const query = new URLSearchParams(location.search)

function log(text) {
  document.getElementById('log').textContent += `${text}\n`
}

async function main() {
  // A host that renders views says so (the server hides its app-only tools otherwise).
  const client = new Client(HOST, { capabilities: { extensions: { [UI]: { mimeTypes: [MIME] } } } })
  await client.connect(new StreamableHTTPClientTransport(new URL('/mcp', location.href)))
  document.getElementById('server').textContent = JSON.stringify(client.getServerVersion())
  const { tools } = await client.listTools()
  const tool = tools.find((t) => t.name === query.get('tool'))
  const uri = tool?._meta?.ui?.resourceUri
  if (!uri?.startsWith('ui://')) throw new Error(`tool ${query.get('tool')} links to no view: ${JSON.stringify(tool)}`)
  const { contents } = await client.readResource({ uri })
  if (contents.length !== 1 || contents[0].mimeType !== MIME) throw new Error(`the view is not one ${MIME}: ${JSON.stringify(contents)}`)
  const view = contents[0]

  // The sandbox proxy, on another origin; it says when it is ready for the view.
  const iframe = document.createElement('iframe')
  iframe.setAttribute('sandbox', 'allow-scripts allow-same-origin')
  // The proxy's CSP (a response header) is made from the view's declared domains.
  iframe.src = `${query.get('sandbox')}&csp=${encodeURIComponent(JSON.stringify(view._meta?.ui?.csp ?? {}))}`
  const proxyReady = new Promise((resolve) => {
    window.addEventListener('message', function ready(event) {
      if (event.source === iframe.contentWindow && event.data?.method === 'ui/notifications/sandbox-proxy-ready') {
        window.removeEventListener('message', ready)
        resolve()
      }
    })
  })
  document.getElementById('view').append(iframe)
  await proxyReady

  const args = JSON.parse(query.get('arguments') ?? '{}')
  const bridge = new AppBridge(client, HOST, { serverTools: {}, serverResources: {}, logging: {} }, {
    hostContext: { theme: 'light', platform: 'web', displayMode: 'inline', availableDisplayModes: ['inline'] },
  })
  bridge.oninitialized = async () => {
    bridge.sendToolInput({ arguments: args })
    bridge.sendToolResult(await client.callTool({ name: tool.name, arguments: args }))
    document.body.dataset.state = 'shown'
  }
  await bridge.connect(new PostMessageTransport(iframe.contentWindow, iframe.contentWindow))
  // The bridge forwards a view's tools/call as it is; the spec has the host refuse tools whose
  // visibility leaves out "app".
  bridge.oncalltool = async (params) => {
    const called = tools.find((t) => t.name === params.name)
    const visibility = called?._meta?.ui?.visibility ?? ['model', 'app']
    if (!visibility.includes('app')) throw new Error(`${params.name} may not be called by a view`)
    return client.callTool(params)
  }
  await bridge.sendSandboxResourceReady({ html: view.text, csp: view._meta?.ui?.csp })
}

main().catch((error) => {
  document.body.dataset.state = 'failed'
  log(error?.stack ?? String(error))
})
