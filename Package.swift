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
        .executable(name: "Demo", targets: ["Demo"]),
    ],
    dependencies: [],
    targets: [
        .target(name: "HTTP", swiftSettings: upcomingFeatures),
        .executableTarget(name: "Demo", dependencies: ["HTTP"], swiftSettings: upcomingFeatures),
        .testTarget(name: "HTTPTests", dependencies: ["HTTP"], swiftSettings: upcomingFeatures),
    ],
    swiftLanguageModes: [.v6]
)
