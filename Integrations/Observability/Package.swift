// swift-tools-version:6.2
import PackageDescription

// Server observability for the HTTP product: one small module per API, so that an app links only what it uses.
//
// - HTTPLogging: swift-log — a Logger for PrintLoader's lines, and an HTTPEventObserver that logs each event with
//   structured metadata.
// - HTTPMetricsIntegration: swift-metrics — counters, timers and gauges for loads, attempts, the cache, circuit
//   breakers and the loaders' queues. (Not `HTTPMetrics`: that is the product's type of a transfer's metrics.)
// - HTTPTracing: swift-distributed-tracing — a client span per load and per attempt, and the trace context injected
//   into each request through the installed instrument.
//
// A package of its own so that the product keeps no dependencies; its own targets treat every warning as an error.
let upcomingFeatures: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("InternalImportsByDefault"),
    .enableUpcomingFeature("MemberImportVisibility"),
    .treatAllWarnings(as: .error),
]

let package = Package(
    name: "HTTPObservability",
    platforms: [.macOS(.v15), .iOS(.v18), .tvOS(.v18), .watchOS(.v11), .visionOS(.v2)],
    products: [
        .library(name: "HTTPLogging", targets: ["HTTPLogging"]),
        .library(name: "HTTPMetricsIntegration", targets: ["HTTPMetricsIntegration"]),
        .library(name: "HTTPTracing", targets: ["HTTPTracing"]),
    ],
    dependencies: [
        .package(name: "HTTP", path: "../.."),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-metrics", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-distributed-tracing", from: "1.7.3"),
    ],
    targets: [
        // The OpenTelemetry names and the bounded values the three modules share (package access only).
        .target(
            name: "HTTPObservabilityConventions",
            dependencies: [.product(name: "HTTP", package: "HTTP")],
            swiftSettings: upcomingFeatures
        ),
        .target(
            name: "HTTPLogging",
            dependencies: [
                "HTTPObservabilityConventions",
                .product(name: "HTTP", package: "HTTP"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: upcomingFeatures
        ),
        .target(
            name: "HTTPMetricsIntegration",
            dependencies: [
                "HTTPObservabilityConventions",
                .product(name: "HTTP", package: "HTTP"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
            ],
            swiftSettings: upcomingFeatures
        ),
        .target(
            name: "HTTPTracing",
            dependencies: [
                "HTTPObservabilityConventions",
                .product(name: "HTTP", package: "HTTP"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
                .product(name: "Instrumentation", package: "swift-distributed-tracing"),
            ],
            swiftSettings: upcomingFeatures
        ),
        // Deadlines for every await, and requests with planted secrets, for the three test targets.
        .target(
            name: "ObservabilityTestSupport",
            dependencies: [.product(name: "HTTP", package: "HTTP")],
            path: "Tests/ObservabilityTestSupport",
            swiftSettings: upcomingFeatures
        ),
        .testTarget(
            name: "HTTPLoggingTests",
            dependencies: [
                "HTTPLogging",
                "ObservabilityTestSupport",
                .product(name: "HTTP", package: "HTTP"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "InMemoryLogging", package: "swift-log"),
            ],
            swiftSettings: upcomingFeatures
        ),
        .testTarget(
            name: "HTTPMetricsIntegrationTests",
            dependencies: [
                "HTTPMetricsIntegration",
                "ObservabilityTestSupport",
                .product(name: "HTTPAuth", package: "HTTP"),
                .product(name: "HTTP", package: "HTTP"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
                .product(name: "MetricsTestKit", package: "swift-metrics"),
            ],
            swiftSettings: upcomingFeatures
        ),
        .testTarget(
            name: "HTTPTracingTests",
            dependencies: [
                "HTTPTracing",
                "ObservabilityTestSupport",
                .product(name: "HTTP", package: "HTTP"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
                .product(name: "Instrumentation", package: "swift-distributed-tracing"),
                .product(name: "InMemoryTracing", package: "swift-distributed-tracing"),
            ],
            swiftSettings: upcomingFeatures
        ),
    ],
    swiftLanguageModes: [.v6]
)
