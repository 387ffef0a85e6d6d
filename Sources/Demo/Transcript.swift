import Foundation
import HTTP

/// Prints a numbered section heading.
func section(_ number: Int, _ title: String) {
    print("\n\(number). \(title)")
    print(String(repeating: "─", count: title.count + 3))
}

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
