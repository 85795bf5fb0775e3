// The Swift getting-started server (docs/getting-started/swift.md includes it): generated
// bindings, parsed by tree-sitter-swift in `scripts/test-all swift-check`; no Swift compiler
// has built it (none exists on the machines this project is tested on).
import Foundation
import Toolwire

final class Greet: ToolHandler {
    func call(context: CallContext, argumentsJson: String) async throws -> ToolResult {
        let arguments = try JSONSerialization.jsonObject(with: Data(argumentsJson.utf8)) as? [String: Any]
        let name = arguments?["name"] as? String ?? ""
        return .text(text: "Hello, \(name)!")
    }
}

let server = try Server(name: "hello", version: "1.0.0")
try server.tool(
    definition: ToolDefinition(
        name: "greet",
        description: "Greets someone by name.",
        inputSchemaJson: #"{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}"#
    ),
    handler: Greet()
)
try await server.serveStdio() // until the client hangs up
