'use strict'
// Loads the native addon. In order:
//   1. TOOLWIRE_NODE_ADDON, a path (to try another build without copying it);
//   2. toolwire.node next to the package, built from source (`npm run build`, contributors);
//   3. the prebuilt addon of this platform, the optional dependency @toolwire/<platform>
//      (what `npm install toolwire` gives users: no Rust, no install script).
const fs = require('node:fs')
const path = require('node:path')

const { platformName, missingPlatformError, unloadableAddonError } = require('./platform')

function load() {
  const explicit = process.env.TOOLWIRE_NODE_ADDON
  const local = path.join(__dirname, '..', 'toolwire.node')
  const file = explicit || (fs.existsSync(local) ? local : null)
  if (file) {
    try {
      return require(file)
    } catch (err) {
      err.message =
        `toolwire: cannot load the native addon ${file} (rebuild it with \`npm run build\` in ` +
        `bindings-node): ${err.message}`
      throw err
    }
  }
  const name = platformName()
  try {
    return require(`@toolwire/${name}`)
  } catch (err) {
    // Only the package itself missing, not a file inside it (that is a broken install).
    if (err?.code === 'MODULE_NOT_FOUND' && String(err.message).includes(`Cannot find module '@toolwire/${name}'`)) {
      const fromSource = fs.existsSync(path.join(__dirname, '..', 'Cargo.toml'))
      throw missingPlatformError(name, err, { fromSource })
    }
    if (err?.code === 'ERR_DLOPEN_FAILED') throw unloadableAddonError(name, err)
    throw err
  }
}

module.exports = load()
