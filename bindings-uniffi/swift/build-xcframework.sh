#!/usr/bin/env bash
# bindings-uniffi/swift/build-xcframework.sh — on a Mac with Xcode and rustup: builds the Rust
# library for macOS and iOS, generates the Swift sources, and assembles ToolwireFFI.xcframework
# next to Package.swift. Not run here (no Apple toolchain on Linux); see docs/languages/kotlin-swift.md, "Building on a Mac".
# Only build/include (the header and UniFFI's module map, with `use "Darwin"`) goes into the
# XCFramework; build/linux, which ./generate writes too, is the Linux build's module (Package.swift).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
targets=(aarch64-apple-darwin x86_64-apple-darwin aarch64-apple-ios aarch64-apple-ios-sim x86_64-apple-ios)
rustup target add "${targets[@]}"
for target in "${targets[@]}"; do
  (cd "$root" && cargo build --release -p toolwire-uniffi --target "$target")
done
# The bindings come from the host build of the same sources.
(cd "$root" && cargo build --release -p toolwire-uniffi -p toolwire-uniffi-bindgen)
"$here/generate" release

lib=libtoolwire_uniffi.a
out="$here/build"
mkdir -p "$out/macos" "$out/ios-simulator"
lipo -create "$root/target/aarch64-apple-darwin/release/$lib" "$root/target/x86_64-apple-darwin/release/$lib" \
  -output "$out/macos/$lib"
lipo -create "$root/target/aarch64-apple-ios-sim/release/$lib" "$root/target/x86_64-apple-ios/release/$lib" \
  -output "$out/ios-simulator/$lib"
rm -rf "$here/ToolwireFFI.xcframework"
xcodebuild -create-xcframework \
  -library "$out/macos/$lib" -headers "$out/include" \
  -library "$root/target/aarch64-apple-ios/release/$lib" -headers "$out/include" \
  -library "$out/ios-simulator/$lib" -headers "$out/include" \
  -output "$here/ToolwireFFI.xcframework"
echo "built $here/ToolwireFFI.xcframework; now: swift build (in $here)"
