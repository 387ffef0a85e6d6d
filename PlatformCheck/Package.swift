// swift-tools-version:6.0
import PackageDescription

// Type-checks, on Linux, the product's code that only Apple platforms compile: the branches behind
// `canImport(Combine)`, `canImport(Security)` and `canImport(CryptoKit)`. A package of its own, so that the product
// stays free of dependencies. The product's own folders are linked in (Sources/HTTP → ../../Sources/HTTP, …) and
// compiled beside three stand-ins: `Combine` re-exports OpenCombine, `Security` and `CryptoKit` declare the part of
// Apple's SDK the product uses, with bodies that trap. Nothing here runs. See README.md.
// The product's settings, and its warnings as errors, as scripts/test.sh builds it (not for OpenCombine's own).
let upcomingFeatures: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("InternalImportsByDefault"),
    .enableUpcomingFeature("MemberImportVisibility"),
    .unsafeFlags(["-warnings-as-errors"]),
]

let package = Package(
    name: "PlatformCheck",
    dependencies: [
        .package(url: "https://github.com/OpenCombine/OpenCombine", from: "0.14.0")
    ],
    targets: [
        // The stand-ins for Apple's frameworks.
        .target(
            name: "Combine",
            dependencies: [.product(name: "OpenCombine", package: "OpenCombine")],
            swiftSettings: upcomingFeatures
        ),
        .target(name: "Security", swiftSettings: upcomingFeatures),
        .target(name: "CryptoKit", swiftSettings: upcomingFeatures),
        // The product's modules, their sources linked in, compiled with the stand-ins importable.
        .target(name: "HTTP", dependencies: ["Security", "CryptoKit"], swiftSettings: upcomingFeatures),
        .target(name: "HTTPAuth", dependencies: ["HTTP", "Security"], swiftSettings: upcomingFeatures),
        .target(name: "HTTPConnection", dependencies: ["HTTP", "Combine"], swiftSettings: upcomingFeatures),
        // Fails to compile when the Apple-only branches were left out.
        .target(
            name: "AppleOnlyWitness",
            dependencies: ["HTTP", "HTTPAuth", "HTTPConnection", "Combine", "Security"],
            swiftSettings: upcomingFeatures
        ),
        .target(name: "HTTPTestSupport", dependencies: ["HTTP"], swiftSettings: upcomingFeatures),
        .testTarget(
            name: "HTTPConnectionTests",
            dependencies: ["HTTP", "HTTPConnection", "HTTPTestSupport", "Combine"],
            swiftSettings: upcomingFeatures
        ),
        // Single test files with Apple-only branches, linked in with what they need, outside their (large) modules.
        .testTarget(
            name: "HTTPAuthAppleTests", dependencies: ["HTTP", "HTTPAuth", "HTTPTestSupport"],
            swiftSettings: upcomingFeatures),
        .testTarget(
            name: "HTTPAppleTests", dependencies: ["HTTP", "HTTPTestSupport"], swiftSettings: upcomingFeatures),
    ],
    swiftLanguageModes: [.v6]
)
