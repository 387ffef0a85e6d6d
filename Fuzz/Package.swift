// swift-tools-version:6.0
import PackageDescription

// libFuzzer targets for the HTTP package. A package of its own, so that the product stays free of dependencies and
// of fuzzing flags. Build and run them with scripts/fuzz.sh, which builds each target with
// `-Xswiftc -sanitize=fuzzer,address` (every Swift module, the product's included, is instrumented); without that
// flag they do not link, since libFuzzer's `LLVMFuzzerRunDriver` comes with it.
let upcomingFeatures: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("MemberImportVisibility"),
]

let package = Package(
    name: "HTTPFuzz",
    platforms: [.macOS(.v15), .iOS(.v18), .tvOS(.v18), .watchOS(.v11), .visionOS(.v2)],
    dependencies: [
        .package(name: "HTTP", path: "..")
    ],
    targets: [
        .target(name: "CLibFuzzer"),
        .target(
            name: "FuzzSupport",
            dependencies: ["CLibFuzzer", .product(name: "HTTP", package: "HTTP")],
            swiftSettings: upcomingFeatures
        ),
    ],
    swiftLanguageModes: [.v6]
)

// One executable per fuzz target; scripts/fuzz.sh names them by the part after "Fuzz", in lower case.
for (name, products) in [
    ("FuzzRequest", ["HTTP"]),
    ("FuzzHeaders", ["HTTP"]),
    ("FuzzRetryAfter", ["HTTP"]),
    ("FuzzToken", ["HTTP", "HTTPAuth"]),
    ("FuzzCURL", ["HTTP"]),
] {
    package.targets.append(
        .executableTarget(
            name: name,
            dependencies: ["FuzzSupport"] + products.map { .product(name: $0, package: "HTTP") },
            swiftSettings: upcomingFeatures
        )
    )
}
