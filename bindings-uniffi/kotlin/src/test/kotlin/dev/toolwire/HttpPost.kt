package dev.toolwire

import kotlinx.serialization.json.Json
import kotlinx.serialization.json.JsonObject
import kotlinx.serialization.json.jsonObject
import java.net.URI
import java.net.http.HttpClient
import java.net.http.HttpRequest
import java.net.http.HttpResponse

// The HTTP tests' client side: a POST as an MCP client sends it, and the JSON-RPC message it got.

/** POSTs [body] to [url] with the headers an MCP client sends, and [headers] (name, value, …). */
internal fun post(url: String, body: String, vararg headers: String): HttpResponse<String> {
    val request = HttpRequest.newBuilder(URI(url))
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
    for (i in headers.indices step 2) request.header(headers[i], headers[i + 1])
    return HttpClient.newHttpClient().send(request.POST(HttpRequest.BodyPublishers.ofString(body)).build(), HttpResponse.BodyHandlers.ofString())
}

/** A JSON body, or the last message of an SSE body. */
internal fun message(response: HttpResponse<String>): JsonObject {
    val body = if (response.headers().firstValue("content-type").orElse("") == "text/event-stream") {
        response.body().lines().filter { it.startsWith("data: ") && it.length > 6 }.last().removePrefix("data: ")
    } else {
        response.body()
    }
    return Json.parseToJsonElement(body).jsonObject
}
