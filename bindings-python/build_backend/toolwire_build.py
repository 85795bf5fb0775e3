"""The build backend for toolwire's sdist: maturin's, refusing to build without a Rust toolchain.

maturin's backend downloads a whole Rust toolchain (~800 MB) into a temporary folder when no
`cargo` is on PATH, without asking. A user who meant to get a prebuilt wheel would wait minutes
for a compile they did not want; one without network access would see an unrelated error. This
backend says what is missing and how to get either a toolchain or a wheel instead.
"""

import os
import shutil

# Read by maturin's hooks when they run, not when imported: set before any hook is called.
os.environ.setdefault("MATURIN_NO_INSTALL_RUST", "1")

import maturin as _maturin  # noqa: E402

NO_RUST = (
    "toolwire: building from source needs a Rust toolchain (cargo {version}+) on PATH, and none "
    "was found.\n"
    "  - To install a prebuilt wheel instead: pip install --only-binary toolwire toolwire\n"
    "  - To build from source: install Rust (https://rustup.rs or your system's packages), "
    "then retry.\n"
    "toolwire does not download a toolchain for you."
)
RUST_VERSION = "1.88"


def _require_cargo() -> None:
    # CARGO may be a path or a name on PATH, as for cargo itself.
    if not shutil.which(os.environ.get("CARGO") or "cargo"):
        # The message, not a traceback: pip shows a hook's stderr.
        raise SystemExit(NO_RUST.format(version=RUST_VERSION))


def get_requires_for_build_wheel(config_settings=None):
    _require_cargo()
    return _maturin.get_requires_for_build_wheel(config_settings)


def get_requires_for_build_editable(config_settings=None):
    _require_cargo()
    # maturin's editable builds need what its wheel builds need.
    return _maturin.get_requires_for_build_wheel(config_settings)


def get_requires_for_build_sdist(config_settings=None):
    # maturin reads the crate graph with cargo to write an sdist too.
    _require_cargo()
    return _maturin.get_requires_for_build_sdist(config_settings)


def prepare_metadata_for_build_wheel(metadata_directory, config_settings=None):
    _require_cargo()
    return _maturin.prepare_metadata_for_build_wheel(metadata_directory, config_settings)


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    _require_cargo()
    return _maturin.build_wheel(wheel_directory, config_settings, metadata_directory)


def build_editable(wheel_directory, config_settings=None, metadata_directory=None):
    _require_cargo()
    return _maturin.build_editable(wheel_directory, config_settings, metadata_directory)


def build_sdist(sdist_directory, config_settings=None):
    _require_cargo()
    return _maturin.build_sdist(sdist_directory, config_settings)


if hasattr(_maturin, "prepare_metadata_for_build_editable"):

    def prepare_metadata_for_build_editable(metadata_directory, config_settings=None):
        _require_cargo()
        return _maturin.prepare_metadata_for_build_editable(metadata_directory, config_settings)
