# scripts/lib.sh — what the repository's shell scripts share. Source it: . "$root/scripts/lib.sh"

# mvn_quiet ARGS...: Maven in batch mode, quiet, its output on stdout with the stray colour
# resets Maven 3.8 prints even in batch mode stripped. Its stdin is closed: a script that is a
# server's stdin (examples/run-demo) must not let Maven read what a client piped in.
mvn_quiet() { mvn -q -B "$@" </dev/null 2>&1 | sed 's/\x1b\[[0-9;]*m//g'; }

# free_gib: the GiB free on the file system of the current folder, one decimal.
free_gib() { df -P -k . | awk 'NR == 2 { printf "%.1f", $4 / 1048576 }'; }

# free_under GIB: true when under GIB GiB are free here.
free_under() { awk -v free="$(free_gib)" -v limit="$1" 'BEGIN { exit !(free < limit) }'; }

# build_rust_bins: the Rust demo and the load generator, in release, in one cargo run. Every
# script builds them this way: built alone, each would resolve its dependencies' features (tokio's
# `signal`, `process`) apart from the other's and have them compiled again.
# TOOLWIRE_RUST_BIN_DIR=DIR: both are built already in DIR (scripts/test-all: the debug build its
# Rust tests made, as the tests check behaviour, not speed); build_rust_bins only checks they are
# there, and the scripts run them from $rust_bin_dir.
toolwire_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# While scripts/test-all runs, it also names the folder in target/test-all/rust-bin-dir, with its
# process id: the MCP clients the tests start servers through pass only a few environment
# variables on to them (the SDKs' stdio transports), and examples/run-demo must find it anyway.
if [[ -z "${TOOLWIRE_RUST_BIN_DIR:-}" && -f "$toolwire_root/target/test-all/rust-bin-dir" ]]; then
  read -r test_all_pid test_all_bins <"$toolwire_root/target/test-all/rust-bin-dir" || true
  if [[ -n "${test_all_bins:-}" ]] && kill -0 "${test_all_pid:-0}" 2>/dev/null; then
    export TOOLWIRE_RUST_BIN_DIR="$test_all_bins"
  fi
fi
rust_bin_dir="${TOOLWIRE_RUST_BIN_DIR:-$toolwire_root/target/release}"
build_rust_bins() {
  if [[ -n "${TOOLWIRE_RUST_BIN_DIR:-}" ]]; then
    local bin
    for bin in toolwire-demo toolwire-loadgen; do
      [[ -x "$TOOLWIRE_RUST_BIN_DIR/$bin" ]] || { echo "TOOLWIRE_RUST_BIN_DIR: $TOOLWIRE_RUST_BIN_DIR has no $bin" >&2; return 1; }
    done
    return 0
  fi
  (cd "$toolwire_root" && cargo build --release --quiet --locked -p toolwire-demo -p toolwire-loadgen)
}
