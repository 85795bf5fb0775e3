// Typed tools: @Serializable classes in and out, their JSON Schemas derived from the classes.
package dev.toolwire

import kotlinx.serialization.KSerializer
import kotlinx.serialization.SerializationException
import kotlinx.serialization.json.Json
import kotlinx.serialization.serializer
import kotlin.reflect.KClass
import kotlin.reflect.KType
import kotlin.reflect.typeOf

/**
 * Registers a tool whose arguments are a `@Serializable` class [A] and whose result is [R]:
 *
 * ```kotlin
 * @Serializable
 * data class ForecastArgs(@Description("City name") val city: String, @Minimum(1.0) @Maximum(7.0) val days: Int = 3)
 * @Serializable
 * data class Forecast(val city: String, val temperatures: List<Double>)
 *
 * server.tool("forecast", description = "Daily forecast") { context, args: ForecastArgs ->
 *     Forecast(args.city, List(args.days) { 20.0 + it })
 * }
 * ```
 *
 * The input schema is derived from [A]'s `SerialDescriptor`: `String`, integers (`integer`),
 * `Float`/`Double` (`number`), `Boolean`, enums (`enum` of their serial names), lists and sets
 * (`array`; sets `uniqueItems`), `Map<String, V>` (`additionalProperties`), nested classes
 * (inlined; recursive ones through `$defs`), nullable types (`anyOf` with `null`) and value
 * classes; a property with a default is not `required`; `@SerialName` names it; [Description],
 * [Minimum], [Maximum], [ExclusiveMinimum], [ExclusiveMaximum], [MinLength], [MaxLength],
 * [Pattern], [MinItems] and [MaxItems] add their keywords. Objects are closed
 * (`additionalProperties: false`), as the arguments are decoded strictly. A type the schema
 * cannot say (a polymorphic or sealed class, a contextual serializer, a map with other keys)
 * fails here with a [ToolwireException.Registration] naming the property.
 *
 * The engine checks the arguments against the schema (a violation is an `isError` result that
 * names its path, e.g. `/days`; the handler does not run), then the handler gets them decoded.
 * What it returns: a `String` is a text result, a [ToolResult] is the result as it is, `Unit`
 * is a result without content, and a `@Serializable` class is `structuredContent` (with its
 * JSON as text for older clients), described by an `outputSchema` derived from [R] as above
 * (MCP wants an object there: another serializable type fails at registration).
 *
 * The other parameters are those of [ToolDefinition]; the handler runs as with
 * [Server.tool]`(definition) { context, argumentsJson -> }`, which stays for JSON text.
 */
inline fun <reified A : Any, reified R : Any> Server.tool(
    name: String,
    description: String? = null,
    title: String? = null,
    annotations: ToolAnnotations? = null,
    timeoutMs: ULong? = null,
    maxConcurrency: UInt? = null,
    icons: List<Icon> = emptyList(),
    metaJson: String? = null,
    taskSupport: TaskSupport? = null,
    noinline handler: suspend (context: CallContext, arguments: A) -> R,
) {
    val definition = ToolDefinition(
        name = name,
        title = title,
        description = description,
        annotations = annotations,
        metaJson = metaJson,
        timeoutMs = timeoutMs,
        maxConcurrency = maxConcurrency,
        icons = icons,
        taskSupport = taskSupport,
    )
    val typed = TypedTool.of<A, R>(name, typeOf<A>(), A::class, typeOf<R>(), R::class)
    tool(typed.complete(definition)) { context, argumentsJson ->
        typed.run(argumentsJson) { handler(context, it) }
    }
}

/**
 * [tool] for a plain blocking handler, run on `Dispatchers.IO` as with
 * [Server.blockingTool]`(definition) { context, argumentsJson -> }`.
 */
inline fun <reified A : Any, reified R : Any> Server.blockingTool(
    name: String,
    description: String? = null,
    title: String? = null,
    annotations: ToolAnnotations? = null,
    timeoutMs: ULong? = null,
    maxConcurrency: UInt? = null,
    icons: List<Icon> = emptyList(),
    metaJson: String? = null,
    taskSupport: TaskSupport? = null,
    noinline handler: (context: CallContext, arguments: A) -> R,
) {
    val definition = ToolDefinition(
        name = name,
        title = title,
        description = description,
        annotations = annotations,
        metaJson = metaJson,
        timeoutMs = timeoutMs,
        maxConcurrency = maxConcurrency,
        icons = icons,
        taskSupport = taskSupport,
    )
    val typed = TypedTool.of<A, R>(name, typeOf<A>(), A::class, typeOf<R>(), R::class)
    blockingTool(typed.complete(definition)) { context, argumentsJson ->
        typed.runBlocking(argumentsJson) { handler(context, it) }
    }
}

/** The schemas and the codecs of one typed tool (the non-inline part of [Server.tool]). */
@PublishedApi
internal class TypedTool<A : Any, R : Any> private constructor(
    private val tool: String,
    private val arguments: KSerializer<A>,
    private val returns: Returns<R>,
    private val inputSchemaJson: String,
    private val outputSchemaJson: String?,
) {
    /** How a handler's return value becomes a [ToolResult]. */
    sealed interface Returns<R> {
        class Text<R> : Returns<R>
        class Whole<R> : Returns<R>
        class Empty<R> : Returns<R>
        class Structured<R>(val serializer: KSerializer<R>) : Returns<R>
    }

    fun complete(definition: ToolDefinition) =
        definition.copy(inputSchemaJson = inputSchemaJson, outputSchemaJson = outputSchemaJson)

    suspend fun run(argumentsJson: String, handler: suspend (A) -> R): ToolResult {
        val decoded = try {
            json.decodeFromString(arguments, argumentsJson)
        } catch (e: IllegalArgumentException) {
            return invalid(e)
        }
        return encode(handler(decoded))
    }

    fun runBlocking(argumentsJson: String, handler: (A) -> R): ToolResult {
        val decoded = try {
            json.decodeFromString(arguments, argumentsJson)
        } catch (e: IllegalArgumentException) {
            return invalid(e)
        }
        return encode(handler(decoded))
    }

    // Rare: the engine checked the schema first; a value the schema allows and the class does
    // not (an integer past Int's range) gets here. (SerializationException is an
    // IllegalArgumentException.)
    private fun invalid(e: IllegalArgumentException): ToolResult =
        ToolResult.Error("Invalid arguments for tool $tool: ${e.message ?: e.javaClass.simpleName}")

    @Suppress("UNCHECKED_CAST")
    private fun encode(value: R): ToolResult = when (val kind = returns) {
        is Returns.Text -> ToolResult.Text(value as String)
        is Returns.Whole -> value as ToolResult
        is Returns.Empty -> ToolResult.Content(emptyList(), null, false, null)
        is Returns.Structured -> ToolResult.Structured(json.encodeToString(kind.serializer, value))
    }

    @PublishedApi
    internal companion object {
        /** Strict in (unknown keys fail), complete out (defaults are written). */
        val json = Json {
            ignoreUnknownKeys = false
            encodeDefaults = true
            explicitNulls = true
        }

        @Suppress("UNCHECKED_CAST")
        fun <A : Any, R : Any> of(tool: String, argumentsType: KType, argumentsClass: KClass<A>, resultType: KType, resultClass: KClass<R>): TypedTool<A, R> {
            fun refuse(what: String, detail: String): Nothing =
                throw ToolwireException.Registration("tool \"$tool\": cannot derive the $what schema: $detail")
            val arguments = (
                serializerOf(argumentsType) ?: refuse(
                    "input",
                    "${argumentsClass.simpleName} is not @Serializable (the arguments are a @Serializable class)",
                )
                ) as KSerializer<A>
            val input = try {
                SchemaDeriver.objectSchema(arguments.descriptor, closed = true)
            } catch (e: SchemaException) {
                refuse("input", e.message ?: "")
            }
            val returns: Returns<R> = when {
                resultClass == String::class -> Returns.Text()
                ToolResult::class.java.isAssignableFrom(resultClass.java) -> Returns.Whole()
                resultClass == Unit::class -> Returns.Empty()
                else -> Returns.Structured(
                    (serializerOf(resultType) ?: refuse(
                        "output",
                        "${resultClass.simpleName} is not @Serializable (return a String, a ToolResult, Unit or a @Serializable class)",
                    )) as KSerializer<R>,
                )
            }
            val output = (returns as? Returns.Structured)?.let {
                try {
                    SchemaDeriver.objectSchema(it.serializer.descriptor, closed = false)
                } catch (e: SchemaException) {
                    refuse("output", "${e.message} (structuredContent is an object: return a @Serializable class, a String, a ToolResult or Unit)")
                }
            }
            return TypedTool(tool, arguments, returns, input.toString(), output?.toString())
        }

        private fun serializerOf(type: KType): KSerializer<*>? =
            try {
                serializer(type)
            } catch (_: SerializationException) {
                null
            } catch (_: IllegalArgumentException) {
                null
            }
    }
}
