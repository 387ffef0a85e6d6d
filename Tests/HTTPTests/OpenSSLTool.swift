import Foundation

/// The `openssl` command-line tool, when the machine has one: for tests that compare the package's pins with
/// OpenSSL's on certificates made during the run.
enum OpenSSLTool {
    /// The `openssl` executable on `PATH`, or `nil`.
    static let path: String? = {
        let directories = (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin").split(separator: ":")
        return directories.map { "\($0)/openssl" }.first { FileManager.default.isExecutableFile(atPath: $0) }
    }()

    static var isAvailable: Bool { path != nil }

    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    /// Runs a shell command line (`/bin/sh -c`) in `directory` and returns its standard output.
    ///
    /// - Throws: ``Failure`` with the standard error when the command exits with another status than 0.
    @discardableResult
    static func shell(_ commandLine: String, in directory: URL) throws -> Data {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = ["-c", commandLine]
        process.currentDirectoryURL = directory
        process.standardInput = FileHandle.nullDevice
        let output = Pipe()
        // Standard error goes to a file, so that reading standard output to its end is all the waiting needed.
        let errorFile = FileManager.default.temporaryDirectory.appendingPathComponent(
            "openssl-\(UUID().uuidString).txt")
        _ = FileManager.default.createFile(atPath: errorFile.path, contents: nil)
        let errors = try FileHandle(forWritingTo: errorFile)
        defer { try? FileManager.default.removeItem(at: errorFile) }
        process.standardOutput = output
        process.standardError = errors
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        try errors.close()
        guard process.terminationStatus == 0 else {
            throw Failure(
                description: "`\(commandLine)` exited with \(process.terminationStatus): "
                    + ((try? String(contentsOf: errorFile, encoding: .utf8)) ?? ""))
        }
        return data
    }

    /// The RFC 7469 pin of the PEM certificate in `file`, as OpenSSL computes it.
    static func pin(ofCertificateFile file: String, in directory: URL) throws -> String {
        let output = try shell(
            "openssl x509 -in '\(file)' -pubkey -noout | openssl pkey -pubin -outform der"
                + " | openssl dgst -sha256 -binary | openssl base64 -A",
            in: directory)
        return String(decoding: output, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// A new temporary folder; the caller removes it.
    static func temporaryDirectory() throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("trust-tests-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }
}
