import Foundation
import HTTP

/// Prints a section heading, numbered in the order the sections run.
func section(_ title: String) {
    let number = sectionNumber.withLock { number in
        number += 1
        return number
    }
    print("\n\(number). \(title)")
    print(String(repeating: "─", count: title.count + "\(number)".count + 2))
}

/// The number of the last section printed.
private let sectionNumber = Shared(0)

/// Prints a result on one line: the description of a response, or the error.
func show(
    _ result: HTTPResult,
    _ describe: (HTTPResponse) -> String = { "\($0.status), \($0.body.count) bytes" }
) {
    switch result {
    case .success(let response): print("   ✓ \(describe(response))")
    case .failure(let error): print("   ✗ \(error)")
    }
}

/// The response body as a JSON object (httpbin answers JSON).
func json(_ response: HTTPResponse) -> [String: Any] {
    (try? JSONSerialization.jsonObject(with: response.body)) as? [String: Any] ?? [:]
}

/// Prints a chain as it describes itself (`print(chain)`), indented under the section.
func show(chain: HTTPLoader) {
    print(chain.description.split(separator: "\n").map { "   " + $0 }.joined(separator: "\n"))
}

/// A progress bar on one line, redrawn in place: `[██████░░░░░░░░░░] 37%  12.0 of 32.0 MiB`.
func progressBar(_ progress: HTTPProgress) -> String {
    let fraction = progress.fractionCompleted ?? 0
    let filled = Int((fraction * 30).rounded(.down))
    let mebibytes = { (bytes: Int64) in String(format: "%.1f", Double(bytes) / 1_048_576) }
    let total = progress.totalBytesToReceive.map { " of \(mebibytes($0)) MiB" } ?? ""
    return "[" + String(repeating: "█", count: filled) + String(repeating: "░", count: 30 - filled) + "] "
        + String(format: "%3d%%", Int(fraction * 100)) + "  \(mebibytes(progress.bytesReceived))\(total)"
}

/// A value shared between the demo's tasks and callbacks, behind a lock. (The product's own `Locked` is `package`:
/// the demo also builds in the AsyncHTTPClient transport's package, outside this one.)
final class Shared<Value>: @unchecked Sendable {  // Sendable: `value` is only touched under `lock`
    private let lock = NSLock()
    private var stored: Value

    init(_ value: Value) { stored = value }

    func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        lock.lock()
        defer { lock.unlock() }
        return try body(&stored)
    }

    var value: Value { withLock { $0 } }
}

/// `duration` in milliseconds, for a line: `"100.8 ms"`.
func milliseconds(_ duration: Duration) -> String {
    String(format: "%.1f ms", seconds(duration) * 1_000)
}

/// Whether standard output is a terminal, where a progress bar can be redrawn in place.
let isTerminal = isatty(STDOUT_FILENO) == 1

/// `duration` in seconds.
func seconds(_ duration: Duration) -> Double {
    Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
}

/// The DER bytes of each certificate in a PEM file (`-----BEGIN CERTIFICATE-----` blocks), for
/// `PublicKeyPinning.pin(forCertificate:)`.
func certificates(inPEMFile path: String) -> [Data] {
    let text = (try? String(contentsOfFile: path, encoding: .utf8)) ?? ""
    var certificates: [Data] = []
    var base64: String?
    for line in text.split(whereSeparator: \.isNewline) {
        if line.hasPrefix("-----BEGIN CERTIFICATE") {
            base64 = ""
        } else if line.hasPrefix("-----END CERTIFICATE") {
            if let encoded = base64, let der = Data(base64Encoded: encoded) { certificates.append(der) }
            base64 = nil
        } else if let encoded = base64 {
            base64 = encoded + line.trimmingCharacters(in: .whitespaces)
        }
    }
    return certificates
}
