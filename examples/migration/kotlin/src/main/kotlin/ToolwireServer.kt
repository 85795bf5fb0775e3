// The same weather server with toolwire (dev.toolwire:toolwire).
import dev.toolwire.Description
import dev.toolwire.Maximum
import dev.toolwire.Minimum
import dev.toolwire.Server
import dev.toolwire.runStdio
import dev.toolwire.tool
import kotlinx.serialization.Serializable

@Serializable
data class ForecastArgs(@Description("City name") val city: String, @Minimum(1.0) @Maximum(7.0) val days: Int = 3)

@Serializable
data class Forecast(val city: String, val temperatures: List<Double>)

fun main() {
    val server = Server("weather", "1.0.0")
    server.tool("forecast", description = "Daily forecast for a city.") { _, args: ForecastArgs ->
        Forecast(args.city, List(args.days) { 20.0 + it })
    }
    server.runStdio()
}
