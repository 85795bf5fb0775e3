// MCP Apps in a real browser: for each language named in TOOLWIRE_APPS_LANGS, that language's
// conformance server (which serves the greeter example, examples/apps) over Streamable HTTP; the
// host page of host/ (the official TypeScript SDK client and the official ext-apps AppBridge) in
// headless Chromium reads the tool's view, shows it through a sandbox proxy on another origin,
// sends it the tool's result, and the view calls the app-only tool back through the bridge. The
// test reads the view's DOM and keeps a screenshot in target/apps-screenshots/LANG.png. Every
// wait is for an event (a log line, a DOM state), each bounded.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { mkdirSync, readFileSync } from 'node:fs'
import http from 'node:http'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

import { chromium } from 'playwright-core'

const here = dirname(fileURLToPath(import.meta.url))
const root = join(here, '..', '..')
const WAIT_MS = 30_000
const langs = (process.env.TOOLWIRE_APPS_LANGS ?? 'rust').split(/[\s,]+/).filter(Boolean)
const browserPath = process.env.TOOLWIRE_CHROMIUM ?? '/usr/bin/chromium'

/** LANG's conformance server on a free port; resolves to its URL once it says it listens. */
function startServer(lang) {
  const child = spawn(join(root, 'examples', 'run-demo'), [lang, '--conformance', '--http', '0'], {
    stdio: ['ignore', 'ignore', 'pipe'],
  })
  let log = ''
  const url = new Promise((resolve, reject) => {
    // Building a binding first can take minutes; the test's own timeout bounds the wait.
    child.stderr.on('data', (chunk) => {
      log += chunk
      const found = /listening on (http:\/\/\S+\/mcp)/.exec(log)
      if (found) resolve(found[1])
    })
    child.on('exit', (code) => reject(new Error(`the ${lang} server exited (${code}):\n${log}`)))
  })
  return { child, url, log: () => log }
}

/** Serves `handler` on 127.0.0.1; resolves to its origin. */
function serve(handler) {
  const server = http.createServer(handler)
  return new Promise((resolve) => {
    server.listen(0, '127.0.0.1', () => resolve({ server, origin: `http://127.0.0.1:${server.address().port}` }))
  })
}

/** The CSP a view gets from its `_meta.ui.csp` (the spec's defaults where it says nothing). */
function viewCsp(csp = {}) {
  const list = (domains) => (domains ?? []).join(' ')
  return [
    "default-src 'none'",
    `script-src 'self' 'unsafe-inline' ${list(csp.resourceDomains)}`,
    `style-src 'self' 'unsafe-inline' ${list(csp.resourceDomains)}`,
    `img-src 'self' data: ${list(csp.resourceDomains)}`,
    `font-src 'self' ${list(csp.resourceDomains)}`,
    `media-src 'self' data: ${list(csp.resourceDomains)}`,
    `connect-src ${list(csp.connectDomains) || "'none'"}`,
    `frame-src ${list(csp.frameDomains) || "'none'"}`,
    `base-uri ${list(csp.baseUriDomains) || "'self'"}`,
    "object-src 'none'",
  ].join('; ')
}

/** The host page, its bundle, and /mcp forwarded to the toolwire server (one origin for the client). */
function hostHandler(mcpUrl) {
  const target = new URL(mcpUrl)
  return (req, res) => {
    const path = new URL(req.url, 'http://host').pathname
    if (path === '/') {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' })
      return res.end(readFileSync(join(here, 'host', 'index.html')))
    }
    if (path === '/host.js') {
      res.writeHead(200, { 'content-type': 'text/javascript; charset=utf-8' })
      return res.end(readFileSync(join(here, 'build', 'host.js')))
    }
    if (path === '/mcp') {
      const headers = { ...req.headers, host: target.host }
      const upstream = http.request(target, { method: req.method, headers }, (answer) => {
        res.writeHead(answer.statusCode, answer.headers)
        answer.pipe(res)
      })
      upstream.on('error', (error) => {
        res.writeHead(502)
        res.end(String(error))
      })
      return req.pipe(upstream)
    }
    res.writeHead(404)
    res.end()
  }
}

/** The sandbox proxy page, with the CSP its `csp` query asks for in a header. */
function sandboxHandler(req, res) {
  const url = new URL(req.url, 'http://sandbox')
  if (url.pathname !== '/sandbox.html') {
    res.writeHead(404)
    return res.end()
  }
  const csp = viewCsp(JSON.parse(url.searchParams.get('csp') || '{}'))
  res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'content-security-policy': csp, 'cache-control': 'no-store' })
  res.end(readFileSync(join(here, 'host', 'sandbox.html')))
}

for (const lang of langs) {
  test(`MCP Apps in Chromium: the greeter view against the ${lang} server`, { timeout: 15 * 60_000 }, async (t) => {
    const server = startServer(lang)
    t.after(() => server.child.kill())
    const mcpUrl = await server.url
    const host = await serve(hostHandler(mcpUrl))
    t.after(() => host.server.close())
    const sandbox = await serve(sandboxHandler)
    t.after(() => sandbox.server.close())
    assert.notEqual(host.origin, sandbox.origin, 'the sandbox proxy is on another origin')

    const browser = await chromium.launch({ executablePath: browserPath, args: ['--no-sandbox', '--disable-gpu'] })
    t.after(() => browser.close())
    const page = await browser.newPage({ viewport: { width: 640, height: 480 } })
    const consoleLines = []
    page.on('console', (message) => consoleLines.push(`${message.type()}: ${message.text()}`))
    page.on('pageerror', (error) => consoleLines.push(`pageerror: ${error.message}`))

    const query = new URLSearchParams({
      tool: 'say_hello',
      arguments: JSON.stringify({ name: 'Ada' }),
      sandbox: `${sandbox.origin}/sandbox.html?${new URLSearchParams({ host: host.origin })}`,
    })
    await page.goto(`${host.origin}/?${query}`)
    const view = page.frameLocator('#view iframe').frameLocator('iframe')
    const failed = page.locator('body[data-state=failed]')
    const explain = async () => `host log:\n${await page.locator('#log').textContent()}\nconsole:\n${consoleLines.join('\n')}\nserver:\n${server.log()}`

    // The tool's result reaches the view, or the host says why not: whichever comes first
    // (each wait settles, so the one that loses leaves no rejection behind).
    const greeting = view.locator('#greeting', { hasText: 'Hello, Ada!' })
    const first = await Promise.race([
      greeting.waitFor({ timeout: WAIT_MS }).then(() => 'shown', (error) => error.message),
      failed.waitFor({ timeout: WAIT_MS }).then(() => 'the host failed', () => 'neither shown nor failed'),
    ])
    if (first !== 'shown') assert.fail(`${first}\n${await explain()}`)

    // The view calls the app-only tool back through the host, and shows its answer.
    await view.locator('#shout').click({ timeout: WAIT_MS })
    await view.locator('#shouted', { hasText: 'HELLO, ADA!' }).waitFor({ timeout: WAIT_MS })
      .catch(async (error) => assert.fail(`${error.message}\n${await explain()}`))
    assert.equal(await view.locator('#shouted').textContent(), 'HELLO, ADA!')
    assert.equal(await page.locator('#view iframe').getAttribute('sandbox'), 'allow-scripts allow-same-origin')

    const shots = join(root, 'target', 'apps-screenshots')
    mkdirSync(shots, { recursive: true })
    await page.screenshot({ path: join(shots, `${lang}.png`) })
  })
}
