#!/usr/bin/env node
'use strict'
// Builds the addon from source with cargo and puts it next to the package as toolwire.node, which
// lib/native.js loads before any prebuilt platform package: `npm run build`, for contributors.
// (Users get the prebuilt addon of their platform: scripts/dist, bindings-node/scripts/pack.js.)
// TOOLWIRE_NODE_PROFILE=debug builds a debug addon (faster to compile, slower to run).
const { execFileSync } = require('node:child_process')
const fs = require('node:fs')
const path = require('node:path')

const here = path.resolve(__dirname, '..')
const manifest = path.join(here, 'Cargo.toml')
const profile = process.env.TOOLWIRE_NODE_PROFILE === 'debug' ? 'debug' : 'release'
const cargo = process.env.CARGO || 'cargo'

function run(args, options = {}) {
  return execFileSync(cargo, args, { cwd: here, stdio: ['ignore', options.capture ? 'pipe' : 'inherit', 'inherit'], encoding: 'utf8' })
}

try {
  const metadata = JSON.parse(run(['metadata', '--format-version', '1', '--no-deps', '--manifest-path', manifest], { capture: true }))
  const args = ['build', '--manifest-path', manifest, '-p', 'toolwire-node']
  if (profile === 'release') args.push('--release')
  process.stderr.write(`toolwire: building the native addon (cargo ${args.join(' ')})\n`)
  run(args)
  const names = { linux: 'libtoolwire_node.so', darwin: 'libtoolwire_node.dylib', win32: 'toolwire_node.dll' }
  const built = path.join(metadata.target_directory, profile, names[process.platform] || names.linux)
  const target = path.join(here, 'toolwire.node')
  // Copy to a temporary name first: a running process may still have the old file mapped.
  const staging = `${target}.${process.pid}.tmp`
  fs.copyFileSync(built, staging)
  fs.renameSync(staging, target)
  process.stderr.write(`toolwire: built ${target}\n`)
} catch (err) {
  process.stderr.write(`toolwire: building the native addon failed: ${err.message}\n` +
    'toolwire needs a Rust toolchain (cargo) to build from source.\n')
  process.exit(1)
}
