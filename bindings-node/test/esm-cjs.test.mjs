// The package loads from ESM and CommonJS, and both give the same classes (one addon).
import assert from 'node:assert/strict'
import { createRequire } from 'node:module'
import { test } from 'node:test'

import * as esm from 'toolwire'

const require = createRequire(import.meta.url)

test('ESM and CommonJS entry points export the same objects', () => {
  const cjs = require('toolwire')
  for (const name of ['Server', 'Context', 'ToolwireError', 'text', 'image', 'audio', 'resourceLink', 'embeddedResource', 'LOG_LEVELS']) {
    assert.ok(esm[name] !== undefined, `ESM exports ${name}`)
    assert.equal(esm[name], cjs[name], `${name} is the same object`)
  }
  assert.equal(esm.default.Server, cjs.Server)
})

test('the type definitions name every export', async () => {
  const { readFile } = await import('node:fs/promises')
  const dts = await readFile(new URL('../index.d.ts', import.meta.url), 'utf8')
  for (const name of Object.keys(require('toolwire'))) {
    assert.match(dts, new RegExp(`export declare (class|function|const) ${name}\\b`), `index.d.ts declares ${name}`)
  }
})
