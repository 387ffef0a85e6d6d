// swift-tools-version:6.2
import PackageDescription

// The integrations demo: a generated OpenAPI client over the product's chain (HTTPOpenAPI's LoaderTransport), its
// loads logged through swift-log (HTTPLogging) and traced through swift-distributed-tracing (HTTPTracing). A package
// of its own, beside the integration packages it depends on by path, so that the product keeps no dependencies.
// `scripts/demo.sh` runs it after the product's demo, against the same local servers.
//
// Sources/IntegrationsDemo/Generated links the client generated once and committed for HTTPOpenAPI's tests
// (Integrations/OpenAPI/Tests/HTTPOpenAPITests/Generated, from Integrations/OpenAPI/Document/httpbin.yaml): no
// generator plugin runs in a build. This package's own target treats every warning as an error.
let upcomingFeatures: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("InternalImportsByDefault"),
    .enableUpcomingFeature("MemberImportVisibility"),
    .treatAllWarnings(as: .error),
]

let package = Package(
    name: "IntegrationsDemo",
    platforms: [.macOS(.v15), .iOS(.v18), .tvOS(.v18), .watchOS(.v11), .visionOS(.v2)],
    dependencies: [
        .package(name: "HTTP", path: "../.."),
        .package(name: "HTTPOpenAPI", path: "../OpenAPI"),
        .package(name: "HTTPObservability", path: "../Observability"),
        .package(url: "https://github.com/apple/swift-openapi-runtime", from: "1.13.4"),
        .package(url: "https://github.com/apple/swift-http-types", from: "1.8.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-distributed-tracing", from: "1.7.3"),
    ],
    targets: [
        .executableTarget(
            name: "IntegrationsDemo",
            dependencies: [
                .product(name: "HTTP", package: "HTTP"),
                .product(name: "HTTPOpenAPI", package: "HTTPOpenAPI"),
                .product(name: "HTTPLogging", package: "HTTPObservability"),
                .product(name: "HTTPTracing", package: "HTTPObservability"),
                .product(name: "OpenAPIRuntime", package: "swift-openapi-runtime"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
                .product(name: "InMemoryTracing", package: "swift-distributed-tracing"),
            ],
            swiftSettings: upcomingFeatures
        )
    ],
    swiftLanguageModes: [.v6]
)
