// swift-tools-version:5.9
// The Swift package of toolwire. Before building, run ./build-xcframework.sh on a Mac: it
// generates Sources/Toolwire/Toolwire.swift from the Rust library and builds
// ToolwireFFI.xcframework (the static library, its C header and module map) for macOS and iOS.
import PackageDescription

let package = Package(
    name: "Toolwire",
    platforms: [.macOS(.v12), .iOS(.v15)],
    products: [
        .library(name: "Toolwire", targets: ["Toolwire"]),
        .executable(name: "toolwire-demo", targets: ["DemoServer"]),
    ],
    targets: [
        .binaryTarget(name: "ToolwireFFI", path: "ToolwireFFI.xcframework"),
        .target(name: "Toolwire", dependencies: ["ToolwireFFI"], path: "Sources/Toolwire"),
        .executableTarget(name: "DemoServer", dependencies: ["Toolwire"], path: "Examples/DemoServer"),
    ]
)
