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
toolwire_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build_rust_bins() { (cd "$toolwire_root" && cargo build --release --quiet --locked -p toolwire-demo -p toolwire-loadgen); }
