// JSON Schemas from kotlinx.serialization descriptors, for typed tools (TypedTools.kt).
//
// Host-language code by nature: only Kotlin knows a class's SerialDescriptor. The engine
// compiles and checks the schemas as it does any other (a bad one fails at registration).
@file:OptIn(ExperimentalSerializationApi::class)

package dev.toolwire

import kotlinx.serialization.ExperimentalSerializationApi
import kotlinx.serialization.SerialInfo
import kotlinx.serialization.descriptors.PolymorphicKind
import kotlinx.serialization.descriptors.PrimitiveKind
import kotlinx.serialization.descriptors.SerialDescriptor
import kotlinx.serialization.descriptors.SerialKind
import kotlinx.serialization.descriptors.StructureKind
import kotlinx.serialization.descriptors.nonNullOriginal
import kotlinx.serialization.json.JsonElement
import kotlinx.serialization.json.JsonObject
import kotlinx.serialization.json.JsonPrimitive
import kotlinx.serialization.json.buildJsonObject
import kotlinx.serialization.json.put
import kotlinx.serialization.json.putJsonArray

/** The property's (or class's) `description` in the derived JSON Schema. */
@SerialInfo
@Target(AnnotationTarget.PROPERTY, AnnotationTarget.CLASS)
annotation class Description(val value: String)

/** `minimum`: a number property is at least [value]. */
@SerialInfo
@Target(AnnotationTarget.PROPERTY)
annotation class Minimum(val value: Double)

/** `maximum`: a number property is at most [value]. */
@SerialInfo
@Target(AnnotationTarget.PROPERTY)
annotation class Maximum(val value: Double)

/** `exclusiveMinimum`: a number property is greater than [value]. */
@SerialInfo
@Target(AnnotationTarget.PROPERTY)
annotation class ExclusiveMinimum(val value: Double)

/** `exclusiveMaximum`: a number property is less than [value]. */
@SerialInfo
@Target(AnnotationTarget.PROPERTY)
annotation class ExclusiveMaximum(val value: Double)

/** `minLength`: a string property has at least [value] characters. */
@SerialInfo
@Target(AnnotationTarget.PROPERTY)
annotation class MinLength(val value: Int)

/** `maxLength`: a string property has at most [value] characters. */
@SerialInfo
@Target(AnnotationTarget.PROPERTY)
annotation class MaxLength(val value: Int)

/** `pattern`: a string property matches the ECMA-262 [regex] (unanchored, as JSON Schema says). */
@SerialInfo
@Target(AnnotationTarget.PROPERTY)
annotation class Pattern(val regex: String)

/** `minItems`: a list or set property has at least [value] items. */
@SerialInfo
@Target(AnnotationTarget.PROPERTY)
annotation class MinItems(val value: Int)

/** `maxItems`: a list or set property has at most [value] items. */
@SerialInfo
@Target(AnnotationTarget.PROPERTY)
annotation class MaxItems(val value: Int)

/** A type the derivation cannot express: the message names the property. */
internal class SchemaException(message: String) : Exception(message)

/**
 * The JSON Schema (2020-12) of a @Serializable class, from its descriptor. Nested classes are
 * inlined, except recursive ones: those go to `$defs` (the root itself is `#`). With [closed],
 * objects say `additionalProperties: false` (input schemas: the arguments are decoded strictly).
 */
internal class SchemaDeriver private constructor(private val root: SerialDescriptor, private val closed: Boolean) {
    private val recursive = HashSet<SerialDescriptor>()
    private val defNames = HashMap<SerialDescriptor, String>()
    private val defs = LinkedHashMap<String, JsonObject?>()

    companion object {
        /** The object schema of [descriptor]; throws [SchemaException] for what it cannot say. */
        fun objectSchema(descriptor: SerialDescriptor, closed: Boolean): JsonObject {
            val root = descriptor.nonNullOriginal
            if (root.isInline || root.kind != StructureKind.CLASS && root.kind != StructureKind.OBJECT) {
                throw SchemaException("${root.serialName.simple()} is not a class with properties (its kind is ${root.kind}): the schema must be an object")
            }
            return SchemaDeriver(root, closed).derive()
        }

        private fun String.simple() = removeSuffix("?").substringAfterLast('.')
    }

    private fun derive(): JsonObject {
        findRecursive(root, ArrayList(), HashSet())
        val schema = classSchema(root, root.serialName.simple())
        if (defs.isEmpty()) return schema
        return JsonObject(schema + ("\$defs" to JsonObject(defs.mapValues { it.value!! })))
    }

    /** Marks the classes a depth-first walk comes back to: every cycle has one. */
    private fun findRecursive(d: SerialDescriptor, stack: MutableList<SerialDescriptor>, done: MutableSet<SerialDescriptor>) {
        val base = d.nonNullOriginal
        val isClass = base.kind == StructureKind.CLASS && !base.isInline
        if (isClass) {
            if (base in stack) {
                recursive += base
                return
            }
            if (!done.add(base)) return
            stack += base
        }
        if (base.kind is StructureKind || base.isInline) {
            for (i in 0 until base.elementsCount) findRecursive(base.getElementDescriptor(i), stack, done)
        }
        if (isClass) stack.removeAt(stack.size - 1)
    }

    private fun classSchema(d: SerialDescriptor, path: String): JsonObject = buildJsonObject {
        put("type", "object")
        description(d.annotations)?.let { put("description", it) }
        val required = ArrayList<String>()
        put("properties", buildJsonObject {
            for (i in 0 until d.elementsCount) {
                val name = d.getElementName(i)
                put(name, propertySchema(d, i, "$path.$name"))
                if (!d.isElementOptional(i)) required += name
            }
        })
        if (required.isNotEmpty()) putJsonArray("required") { required.forEach { add(JsonPrimitive(it)) } }
        if (closed) put("additionalProperties", false)
    }

    private fun propertySchema(parent: SerialDescriptor, i: Int, path: String): JsonObject {
        val element = parent.getElementDescriptor(i)
        val annotations = parent.getElementAnnotations(i)
        val inner = constrained(typeSchema(element.nonNullOriginal, path), annotations, path)
        val schema = if (element.isNullable) orNull(inner) else inner
        val text = description(annotations) ?: return schema
        return JsonObject(schema + ("description" to JsonPrimitive(text)))
    }

    /** The schema of a value of [d] (nullable or not) where no annotation applies. */
    private fun schemaOf(d: SerialDescriptor, path: String): JsonObject {
        val inner = typeSchema(d.nonNullOriginal, path)
        return if (d.isNullable) orNull(inner) else inner
    }

    private fun orNull(schema: JsonObject) = buildJsonObject {
        putJsonArray("anyOf") {
            add(schema)
            add(buildJsonObject { put("type", "null") })
        }
    }

    private fun typeSchema(d: SerialDescriptor, path: String): JsonObject {
        if (d.isInline) return schemaOf(d.getElementDescriptor(0), path)
        return when (val kind = d.kind) {
            PrimitiveKind.STRING -> type("string")
            PrimitiveKind.CHAR -> buildJsonObject {
                put("type", "string")
                put("minLength", 1)
                put("maxLength", 1)
            }
            PrimitiveKind.BOOLEAN -> type("boolean")
            PrimitiveKind.BYTE, PrimitiveKind.SHORT, PrimitiveKind.INT, PrimitiveKind.LONG -> type("integer")
            PrimitiveKind.FLOAT, PrimitiveKind.DOUBLE -> type("number")
            SerialKind.ENUM -> buildJsonObject {
                put("type", "string")
                putJsonArray("enum") { for (i in 0 until d.elementsCount) add(JsonPrimitive(d.getElementName(i))) }
            }
            StructureKind.LIST -> buildJsonObject {
                put("type", "array")
                put("items", schemaOf(d.getElementDescriptor(0), "$path[]"))
                // kotlin.collections.LinkedHashSet, HashSet: a set decodes duplicates away.
                if (d.serialName.endsWith("Set")) put("uniqueItems", true)
            }
            StructureKind.MAP -> {
                val key = d.getElementDescriptor(0)
                val keyKind = key.nonNullOriginal.kind
                if (keyKind != PrimitiveKind.STRING || key.isNullable) {
                    throw SchemaException("property $path is a map whose keys are ${key.serialName} (kind $keyKind): JSON object keys are strings, so only Map<String, …> has a schema")
                }
                buildJsonObject {
                    put("type", "object")
                    put("additionalProperties", schemaOf(d.getElementDescriptor(1), "$path[value]"))
                }
            }
            StructureKind.OBJECT -> buildJsonObject {
                put("type", "object")
                if (closed) put("additionalProperties", false)
            }
            StructureKind.CLASS -> classReference(d, path)
            SerialKind.CONTEXTUAL -> throw SchemaException(
                "property $path has a contextual serializer (${d.serialName}): its JSON shape is known only at run time; give it a @Serializable type",
            )
            is PolymorphicKind -> throw SchemaException(
                "property $path is polymorphic (${d.serialName}, ${if (kind == PolymorphicKind.SEALED) "sealed" else "open"}): typed tools derive no schema for class hierarchies; use a class with nullable properties, an enum, or a JSON Schema with Server.tool(definition)",
            )
            else -> throw SchemaException("property $path has a type of kind $kind (${d.serialName}), which has no JSON Schema here")
        }
    }

    private fun classReference(d: SerialDescriptor, path: String): JsonObject {
        if (d !in recursive) return classSchema(d, path)
        if (d == root) return buildJsonObject { put("\$ref", "#") }
        var name = defNames[d]
        if (name == null) {
            val simple = d.serialName.simple()
            var candidate = simple
            var n = 2
            while (candidate in defs) candidate = "$simple${n++}"
            // Named before its schema is made: the schema refers to itself.
            defNames[d] = candidate
            defs[candidate] = null
            defs[candidate] = classSchema(d, simple)
            name = candidate
        }
        return buildJsonObject { put("\$ref", "#/\$defs/${name.replace("~", "~0").replace("/", "~1")}") }
    }

    private fun type(name: String) = buildJsonObject { put("type", name) }

    private fun description(annotations: List<Annotation>): String? =
        annotations.filterIsInstance<Description>().lastOrNull()?.value

    /** [schema] with the limits of [annotations]; a limit that does not fit the type fails. */
    private fun constrained(schema: JsonObject, annotations: List<Annotation>, path: String): JsonObject {
        val type = (schema["type"] as? JsonPrimitive)?.content
        val limits = LinkedHashMap<String, JsonElement>()
        fun need(annotation: Annotation, vararg types: String) {
            if (type !in types) {
                val what = type ?: "a value without a single type"
                throw SchemaException("property $path: @${annotation.annotationClass.simpleName} applies to ${types.joinToString(" or ")} properties, not to $what")
            }
        }
        for (annotation in annotations) {
            when (annotation) {
                is Minimum -> need(annotation, "integer", "number").also { limits["minimum"] = number(annotation.value) }
                is Maximum -> need(annotation, "integer", "number").also { limits["maximum"] = number(annotation.value) }
                is ExclusiveMinimum -> need(annotation, "integer", "number").also { limits["exclusiveMinimum"] = number(annotation.value) }
                is ExclusiveMaximum -> need(annotation, "integer", "number").also { limits["exclusiveMaximum"] = number(annotation.value) }
                is MinLength -> need(annotation, "string").also { limits["minLength"] = JsonPrimitive(annotation.value) }
                is MaxLength -> need(annotation, "string").also { limits["maxLength"] = JsonPrimitive(annotation.value) }
                is Pattern -> need(annotation, "string").also { limits["pattern"] = JsonPrimitive(annotation.regex) }
                is MinItems -> need(annotation, "array").also { limits["minItems"] = JsonPrimitive(annotation.value) }
                is MaxItems -> need(annotation, "array").also { limits["maxItems"] = JsonPrimitive(annotation.value) }
            }
        }
        return if (limits.isEmpty()) schema else JsonObject(schema + limits)
    }

    /** A whole number without its `.0` (`"minimum": 1`, as a hand-written schema has it). */
    private fun number(value: Double): JsonPrimitive =
        if (value == Math.rint(value) && kotlin.math.abs(value) < 9.007199254740992E15) JsonPrimitive(value.toLong()) else JsonPrimitive(value)
}
