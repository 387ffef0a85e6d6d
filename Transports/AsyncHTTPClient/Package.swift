// swift-tools-version:6.2
import PackageDescription

// A terminal loader over AsyncHTTPClient, in a package of its own so that the HTTP product keeps no dependencies.
// Servers (Vapor, Hummingbird, anything on SwiftNIO) use it in place of URLSessionLoader.
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
    name: "HTTPAsyncHTTPClient",
    platforms: [.macOS(.v15), .iOS(.v18), .tvOS(.v18), .watchOS(.v11), .visionOS(.v2)],
    products: [
        .library(name: "HTTPAsyncHTTPClient", targets: ["HTTPAsyncHTTPClient"]),
        // The product's demo over this transport: `scripts/demo.sh --transport asynchttpclient`.
        .executable(name: "AsyncHTTPClientDemo", targets: ["AsyncHTTPClientDemo"]),
    ],
    dependencies: [
        .package(name: "HTTP", path: "../.."),
        .package(url: "https://github.com/swift-server/async-http-client", from: "1.37.0"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-nio-ssl", from: "2.37.6"),
        .package(url: "https://github.com/apple/swift-nio-extras", from: "1.35.2"),
        // The platform's trust evaluation before a server-trust evaluator: chain, dates and name (RFC 5280).
        .package(url: "https://github.com/apple/swift-certificates", from: "1.21.1"),
        .package(url: "https://github.com/apple/swift-asn1", from: "1.7.4"),
    ],
    targets: [
        .target(
            name: "HTTPAsyncHTTPClient",
            dependencies: [
                .product(name: "HTTP", package: "HTTP"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOFoundationCompat", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "NIOTLS", package: "swift-nio"),
                .product(name: "NIOHTTPCompression", package: "swift-nio-extras"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
            ],
            swiftSettings: upcomingFeatures
        ),
        // Its files are the product's Sources/Demo (symbolic links) and a Transport.swift of its own.
        .executableTarget(
            name: "AsyncHTTPClientDemo",
            dependencies: [
                "HTTPAsyncHTTPClient",
                .product(name: "HTTP", package: "HTTP"),
                .product(name: "HTTPAuth", package: "HTTP"),
                .product(name: "HTTPConnection", package: "HTTP"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
            ],
            swiftSettings: upcomingFeatures
        ),
        .testTarget(
            name: "HTTPAsyncHTTPClientTests",
            dependencies: [
                "HTTPAsyncHTTPClient",
                .product(name: "HTTP", package: "HTTP"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
            ],
            swiftSettings: upcomingFeatures
        ),
    ],
    swiftLanguageModes: [.v6]
)
