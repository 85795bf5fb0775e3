// The demo server of the shared contract in Swift: echo, add, sleep, fail.
// Build it on a Mac after ./build-xcframework.sh: `swift run toolwire-demo`.
import Foundation
import Toolwire

let instructions = "Demo server: echo text, add two numbers, sleep with progress, or fail on purpose."

func objectSchema(_ properties: String, required: String) -> String {
    "{\"type\":\"object\",\"properties\":\(properties),\"required\":\(required),\"additionalProperties\":false}"
}

func arguments(_ json: String) throws -> [String: Any] {
    guard let object = try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any] else {
        throw ToolwireError.Handler(detail: "the arguments are not an object")
    }
    return object
}

final class Echo: ToolHandler {
    func call(context: CallContext, argumentsJson: String) async throws -> ToolResult {
        let text = try arguments(argumentsJson)["text"] as? String ?? ""
        return .text(text: text)
    }
}

final class Add: ToolHandler {
    func call(context: CallContext, argumentsJson: String) async throws -> ToolResult {
        let input = try arguments(argumentsJson)
        let sum = (input["a"] as? Double ?? 0) + (input["b"] as? Double ?? 0)
        // Whole sums are written as integers (3, not 3.0), as in every demo.
        let number = sum.rounded() == sum && abs(sum) < 9.0e15 ? String(Int64(sum)) : String(sum)
        return .structured(json: "{\"sum\":\(number)}")
    }
}

final class Sleep: ToolHandler {
    func call(context: CallContext, argumentsJson: String) async throws -> ToolResult {
        let ms = try arguments(argumentsJson)["ms"] as? Int ?? 0
        var done = 0
        // Progress counts 100 ms steps, so every language reports the same values.
        while done < ms {
            let step = min(100, ms - done)
            try await Task.sleep(nanoseconds: UInt64(step) * 1_000_000)
            done += step
            if done < ms {
                _ = context.progress(progress: Double(done), total: Double(ms), message: nil)
            }
        }
        return .text(text: "slept \(ms) ms")
    }
}


final class Fail: ToolHandler {
    func call(context: CallContext, argumentsJson: String) async throws -> ToolResult {
        let message = try arguments(argumentsJson)["message"] as? String ?? "failed"
        throw ToolwireError.Handler(detail: message)
    }
}

let server = try Server(
    name: "toolwire-demo",
    version: "0.1.0",
    instructions: instructions,
    config: ServerConfig(title: "toolwire demo (Swift)")
)
try server.tool(
    definition: ToolDefinition(
        name: "echo",
        description: "Returns the text it is given.",
        inputSchemaJson: objectSchema("{\"text\":{\"type\":\"string\"}}", required: "[\"text\"]")
    ),
    handler: Echo()
)
try server.tool(
    definition: ToolDefinition(
        name: "add",
        description: "Adds two numbers.",
        inputSchemaJson: objectSchema("{\"a\":{\"type\":\"number\"},\"b\":{\"type\":\"number\"}}", required: "[\"a\",\"b\"]"),
        outputSchemaJson: "{\"type\":\"object\",\"properties\":{\"sum\":{\"type\":\"number\"}},\"required\":[\"sum\"]}"
    ),
    handler: Add()
)
try server.tool(
    definition: ToolDefinition(
        name: "sleep",
        description: "Waits ms milliseconds, reporting progress every 100 ms when asked.",
        inputSchemaJson: objectSchema("{\"ms\":{\"type\":\"integer\",\"minimum\":0,\"maximum\":60000}}", required: "[\"ms\"]")
    ),
    handler: Sleep()
)
try server.tool(
    definition: ToolDefinition(
        name: "fail",
        description: "Fails with the given message.",
        inputSchemaJson: objectSchema("{\"message\":{\"type\":\"string\"}}", required: "[\"message\"]")
    ),
    handler: Fail()
)

do {
    try await server.serveStdio()
} catch let error as ToolwireError {
    FileHandle.standardError.write(Data("toolwire-demo: \(error)\n".utf8))
    exit(1)
}
