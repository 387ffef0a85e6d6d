// swift-tools-version:6.1
import PackageDescription

// Benchmarks for the HTTP package. A package of their own, so that the product stays free of dependencies:
// ordo-one/benchmark drives the detailed runs (time and allocations per request), swift-openapi-runtime and
// swift-openapi-urlsession are what the chain is compared with, AsyncHTTPClient is the other transport (the
// chain over Transports/AsyncHTTPClient against raw AsyncHTTPClient), Integrations/OpenAPI and
// Integrations/Observability are measured against swift-openapi-urlsession, swift-openapi-async-http-client and the
// chain without them, and BudgetReport measures the figures
// DESIGN.md budgets and prints them with PASS or FAIL. Run everything with scripts/bench.sh.
let upcomingFeatures: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("MemberImportVisibility"),
]

let package = Package(
    name: "HTTPBenchmarks",
    platforms: [.macOS(.v15), .iOS(.v18), .tvOS(.v18), .watchOS(.v11), .visionOS(.v2)],
    dependencies: [
        .package(name: "HTTP", path: ".."),
        .package(name: "HTTPAsyncHTTPClient", path: "../Transports/AsyncHTTPClient"),
        .package(name: "HTTPOpenAPI", path: "../Integrations/OpenAPI"),
        .package(name: "HTTPObservability", path: "../Integrations/Observability"),
        .package(url: "https://github.com/swift-server/async-http-client", from: "1.37.0"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
        .package(url: "https://github.com/ordo-one/benchmark", from: "1.38.1", traits: ["MallocInterposer"]),
        .package(url: "https://github.com/apple/swift-openapi-runtime", from: "1.13.4"),
        .package(url: "https://github.com/apple/swift-openapi-urlsession", from: "1.4.0"),
        .package(url: "https://github.com/apple/swift-http-types", from: "1.8.0"),
        .package(url: "https://github.com/swift-server/swift-openapi-async-http-client", from: "1.5.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-metrics", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-distributed-tracing", from: "1.7.3"),
    ],
    targets: [
        .target(name: "CMallocStats"),
        .target(
            name: "BenchmarkSupport",
            dependencies: [
                "CMallocStats",
                .product(name: "HTTP", package: "HTTP"),
                .product(name: "HTTPAuth", package: "HTTP"),
                .product(name: "HTTPConnection", package: "HTTP"),
                .product(name: "HTTPOpenAPI", package: "HTTPOpenAPI"),
                .product(name: "HTTPLogging", package: "HTTPObservability"),
                .product(name: "HTTPMetricsIntegration", package: "HTTPObservability"),
                .product(name: "HTTPTracing", package: "HTTPObservability"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
                .product(name: "OpenAPIAsyncHTTPClient", package: "swift-openapi-async-http-client"),
                .product(name: "OpenAPIRuntime", package: "swift-openapi-runtime"),
                .product(name: "OpenAPIURLSession", package: "swift-openapi-urlsession"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "HTTPAsyncHTTPClient", package: "HTTPAsyncHTTPClient"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ],
            swiftSettings: upcomingFeatures
        ),
        .executableTarget(
            name: "BudgetReport",
            dependencies: ["BenchmarkSupport"],
            swiftSettings: upcomingFeatures
        ),
    ],
    swiftLanguageModes: [.v6]
)

// The ordo-one/benchmark targets: one folder each under Benchmarks/.
for name in ["InProcess", "Loopback", "Parking"] {
    package.targets.append(
        .executableTarget(
            name: name,
            dependencies: [
                "BenchmarkSupport",
                .product(name: "Benchmark", package: "benchmark"),
            ],
            path: "Benchmarks/\(name)",
            swiftSettings: upcomingFeatures,
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
        )
    )
}
