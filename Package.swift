// swift-tools-version:6.0
import PackageDescription

let upcomingFeatures: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("InternalImportsByDefault"),
    .enableUpcomingFeature("MemberImportVisibility"),
]

let package = Package(
    name: "HTTP",
    platforms: [.macOS(.v15), .iOS(.v18), .tvOS(.v18), .watchOS(.v11), .visionOS(.v2)],
    products: [
        .library(name: "HTTP", targets: ["HTTP"]),
        .library(name: "HTTPAuth", targets: ["HTTPAuth"]),
        .library(name: "HTTPConnection", targets: ["HTTPConnection"]),
        .executable(name: "Demo", targets: ["Demo"]),
    ],
    dependencies: [],
    targets: [
        .target(name: "HTTP", swiftSettings: upcomingFeatures),
        .target(name: "HTTPAuth", dependencies: ["HTTP"], swiftSettings: upcomingFeatures),
        .target(name: "HTTPConnection", dependencies: ["HTTP"], swiftSettings: upcomingFeatures),
        .executableTarget(
            name: "Demo",
            dependencies: ["HTTP", "HTTPAuth", "HTTPConnection"],
            swiftSettings: upcomingFeatures
        ),
        .target(name: "HTTPTestSupport", dependencies: ["HTTP"], path: "Tests/HTTPTestSupport", swiftSettings: upcomingFeatures),
        .testTarget(name: "HTTPTests", dependencies: ["HTTP", "HTTPTestSupport"], swiftSettings: upcomingFeatures),
        .testTarget(
            name: "HTTPAuthTests",
            dependencies: ["HTTP", "HTTPAuth", "HTTPTestSupport"],
            swiftSettings: upcomingFeatures
        ),
        .testTarget(
            name: "HTTPConnectionTests",
            dependencies: ["HTTP", "HTTPConnection", "HTTPTestSupport"],
            swiftSettings: upcomingFeatures
        ),
    ],
    swiftLanguageModes: [.v6]
)
