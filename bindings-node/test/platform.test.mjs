// The loader's choice of prebuilt package, and its error when that package is missing.
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { cpSync, mkdtempSync, rmSync } from 'node:fs'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { test } from 'node:test'
import { fileURLToPath } from 'node:url'

const require = createRequire(import.meta.url)
const { PLATFORMS, platformName, missingPlatformError, unloadableAddonError } = require('../lib/platform.js')
const here = dirname(fileURLToPath(import.meta.url))

test('each platform maps to its package name', () => {
  assert.equal(platformName('linux', 'x64', false), 'linux-x64-gnu')
  assert.equal(platformName('linux', 'arm64', false), 'linux-arm64-gnu')
  assert.equal(platformName('linux', 'x64', true), 'linux-x64-musl')
  assert.equal(platformName('darwin', 'arm64'), 'darwin-arm64')
  assert.equal(platformName('darwin', 'x64'), 'darwin-x64')
  assert.equal(platformName('win32', 'x64'), 'win32-x64-msvc')
  for (const name of ['linux-x64-gnu', 'linux-arm64-gnu', 'linux-x64-musl', 'darwin-x64', 'darwin-arm64', 'win32-x64-msvc']) {
    assert.ok(PLATFORMS.includes(name), name)
  }
  // This machine: glibc Linux on x64 in CI.
  if (process.platform === 'linux' && process.arch === 'x64') assert.equal(platformName(), 'linux-x64-gnu')
})

test('a missing platform package is named, with the command that installs it', () => {
  const err = missingPlatformError('linux-x64-gnu')
  assert.equal(err.code, 'TOOLWIRE_ADDON_MISSING')
  assert.match(err.message, /@toolwire\/linux-x64-gnu/)
  assert.match(err.message, /npm install @toolwire\/linux-x64-gnu/)
  const unknown = missingPlatformError('freebsd-x64')
  assert.match(unknown.message, /no prebuilt addon is published for this platform \(freebsd-x64/)
  assert.match(unknown.message, /npm run build/)
  // In a source checkout the addon is built, not installed.
  assert.match(missingPlatformError('linux-x64-gnu', undefined, { fromSource: true }).message, /npm run build/)
  const unloadable = unloadableAddonError('linux-x64-gnu', new Error('GLIBC_2.17 not found'))
  assert.equal(unloadable.code, 'TOOLWIRE_ADDON_UNLOADABLE')
  assert.match(unloadable.message, /@toolwire\/linux-x64-gnu does not load.*GLIBC_2\.17 not found.*glibc 2\.17/)
})

test('loading with no local addon and no platform package fails with that error', () => {
  // The package's JavaScript alone, as npm installs it when the optional dependency was skipped.
  const dir = mkdtempSync(join(tmpdir(), 'toolwire-loader-'))
  try {
    cpSync(join(here, '..', 'lib'), join(dir, 'lib'), { recursive: true })
    const env = { ...process.env }
    delete env.TOOLWIRE_NODE_ADDON
    const run = spawnSync(process.execPath, ['-e', `require(${JSON.stringify(join(dir, 'lib', 'native.js'))})`], {
      env,
      encoding: 'utf8',
    })
    assert.notEqual(run.status, 0)
    assert.match(run.stderr, new RegExp(`@toolwire/${platformName()}`))
    assert.match(run.stderr, /TOOLWIRE_ADDON_MISSING|is not installed|no prebuilt addon/)
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
})
