'use strict'
// Which prebuilt addon package serves this machine, and the error when it is missing.

// The platforms a prebuilt package is published for (scripts/dist, .github/workflows/release.yml).
const PLATFORMS = ['linux-x64-gnu', 'linux-arm64-gnu', 'linux-x64-musl', 'darwin-x64', 'darwin-arm64', 'win32-x64-msvc']

function isMusl() {
  if (process.platform !== 'linux') return false
  // glibc reports its version in Node's diagnostic report; musl has none.
  const report = typeof process.report?.getReport === 'function' ? process.report.getReport() : null
  return !report?.header?.glibcVersionRuntime
}

/** The name of this machine's platform package suffix, e.g. `linux-x64-gnu`. */
function platformName(platform = process.platform, arch = process.arch, musl = isMusl) {
  if (platform === 'linux') return `linux-${arch}-${(typeof musl === 'function' ? musl() : musl) ? 'musl' : 'gnu'}`
  if (platform === 'win32') return `win32-${arch}-msvc`
  return `${platform}-${arch}`
}

function missingPlatformError(name, cause) {
  const pkg = `@toolwire/${name}`
  const known = PLATFORMS.includes(name)
  const message = known
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

module.exports = { PLATFORMS, platformName, missingPlatformError }
