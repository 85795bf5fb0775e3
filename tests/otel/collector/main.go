// Command otelcol-toolwire is a minimal OpenTelemetry Collector built for
// toolwire's end-to-end trace tests: an OTLP receiver (HTTP and gRPC) and the
// contrib file exporter, nothing else. It is written in the style of the
// OpenTelemetry Collector Builder (ocb) output.
package main

import (
	"log"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/confmap"
	"go.opentelemetry.io/collector/confmap/provider/envprovider"
	"go.opentelemetry.io/collector/confmap/provider/fileprovider"
	"go.opentelemetry.io/collector/otelcol"
)

func main() {
	info := component.BuildInfo{
		Command:     "otelcol-toolwire",
		Description: "Minimal OpenTelemetry Collector for toolwire trace tests",
		Version:     "0.161.0-toolwire",
	}

	set := otelcol.CollectorSettings{
		BuildInfo: info,
		Factories: components,
		ConfigProviderSettings: otelcol.ConfigProviderSettings{
			ResolverSettings: confmap.ResolverSettings{
				ProviderFactories: []confmap.ProviderFactory{
					envprovider.NewFactory(),
					fileprovider.NewFactory(),
				},
			},
		},
	}

	if err := otelcol.NewCommand(set).Execute(); err != nil {
		log.Fatal(err)
	}
}
