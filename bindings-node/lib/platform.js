'use strict'
// Which prebuilt addon package serves this machine, and the error when it is missing.

// The platforms a prebuilt package is published for (scripts/dist, .github/workflows/release.yml).
const PLATFORMS = ['linux-x64-gnu', 'linux-arm64-gnu', 'linux-x64-musl', 'darwin-x64', 'darwin-arm64', 'win32-x64-msvc']

function isMusl() {
  if (process.platform !== 'linux') return false
  // musl's loader is named in its ldd; glibc reports its version in Node's diagnostic report.
  try {
    return require('node:fs').readFileSync('/usr/bin/ldd', 'utf8').includes('musl')
  } catch {
    // No readable ldd: ask the report (without its network section, slow with many sockets).
  }
  if (typeof process.report?.getReport !== 'function') return false
  process.report.excludeNetwork = true
  const header = process.report.getReport()?.header
  return Boolean(header) && !header.glibcVersionRuntime
}

/** The name of this machine's platform package suffix, e.g. `linux-x64-gnu`. */
function platformName(platform = process.platform, arch = process.arch, musl = isMusl) {
  if (platform === 'linux') return `linux-${arch}-${(typeof musl === 'function' ? musl() : musl) ? 'musl' : 'gnu'}`
  if (platform === 'win32') return `win32-${arch}-msvc`
  return `${platform}-${arch}`
}

function missingPlatformError(name, cause, { fromSource = false } = {}) {
  const pkg = `@toolwire/${name}`
  const known = PLATFORMS.includes(name)
  const message = fromSource
    ? `toolwire: no native addon: this is a source checkout (bindings-node), where the addon is ` +
      'built, not installed: run `npm run build` in bindings-node (needs a Rust toolchain).'
    : known
    ? `toolwire: the prebuilt addon for this platform (${name}) is not installed: the optional ` +
      `dependency ${pkg} is missing. npm skips optional dependencies under --omit=optional (or ` +
      `--no-optional), and a lockfile written on another platform may lack it. Reinstall with ` +
      `optional dependencies (\`npm install toolwire\`), or add it: \`npm install ${pkg}\`.`
    : `toolwire: no prebuilt addon is published for this platform (${name}; prebuilt: ` +
      `${PLATFORMS.join(', ')}). Build it from source with a Rust toolchain: in a clone of ` +
      'toolwire, `npm run build` in bindings-node, then point TOOLWIRE_NODE_ADDON at the built toolwire.node.'
  const err = new Error(message, { cause })
  err.code = 'TOOLWIRE_ADDON_MISSING'
  return err
}

/** The error when the platform package is there but its addon does not load (dlopen failed). */
function unloadableAddonError(name, cause) {
  const hint = name.endsWith('-gnu')
    ? ' The linux-*-gnu addons need glibc 2.17 or later; on musl (Alpine), install on that ' +
      'machine so npm picks @toolwire/linux-x64-musl.'
    : ''
  const err = new Error(`toolwire: the prebuilt addon @toolwire/${name} does not load on this machine: ${cause.message}.${hint}`, { cause })
  err.code = 'TOOLWIRE_ADDON_UNLOADABLE'
  return err
}

module.exports = { PLATFORMS, platformName, missingPlatformError, unloadableAddonError }
