// swift-tools-version:6.2
import PackageDescription

// A swift-openapi-runtime `ClientTransport` that sends a generated client's operations through a loader chain, in a
// package of its own so that the HTTP product keeps no dependencies.
//
// This package's own targets treat every warning as an error (the product's CI passes -warnings-as-errors on the
// command line, which would reach the dependencies here too).
let upcomingFeatures: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("InternalImportsByDefault"),
    .enableUpcomingFeature("MemberImportVisibility"),
    .treatAllWarnings(as: .error),
]

let package = Package(
    name: "HTTPOpenAPI",
    platforms: [.macOS(.v15), .iOS(.v18), .tvOS(.v18), .watchOS(.v11), .visionOS(.v2)],
    products: [
        .library(name: "HTTPOpenAPI", targets: ["HTTPOpenAPI"])
    ],
    dependencies: [
        .package(name: "HTTP", path: "../.."),
        .package(url: "https://github.com/apple/swift-openapi-runtime", from: "1.13.4"),
        .package(url: "https://github.com/apple/swift-http-types", from: "1.8.0"),
        // Tests only: the middleware the DocC article compares the transport with runs over this transport.
        .package(url: "https://github.com/apple/swift-openapi-urlsession", from: "1.4.0"),
    ],
    targets: [
        .target(
            name: "HTTPOpenAPI",
            dependencies: [
                .product(name: "HTTP", package: "HTTP"),
                .product(name: "OpenAPIRuntime", package: "swift-openapi-runtime"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
            ],
            swiftSettings: upcomingFeatures
        ),
        // Tests/HTTPOpenAPITests/Generated holds a client generated once from Document/httpbin.yaml and committed
        // (README.md says how to regenerate it): no generator plugin runs in a build.
        .testTarget(
            name: "HTTPOpenAPITests",
            dependencies: [
                "HTTPOpenAPI",
                .product(name: "HTTP", package: "HTTP"),
                .product(name: "HTTPAuth", package: "HTTP"),
                .product(name: "OpenAPIRuntime", package: "swift-openapi-runtime"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "OpenAPIURLSession", package: "swift-openapi-urlsession"),
            ],
            swiftSettings: upcomingFeatures
        ),
    ],
    swiftLanguageModes: [.v6]
)
