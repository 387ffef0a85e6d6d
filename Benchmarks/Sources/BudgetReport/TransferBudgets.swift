import BenchmarkSupport
import Foundation
import HTTP

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

// The transfer budgets: a 1 GiB download to disk and a 1 GiB upload from disk each raise the process's peak RSS
// by < 32 MiB, and the chain downloads at ≥ 0.9× the throughput of URLSession's own download task (curl beside
// them, for perspective). scripts/bench.sh serves the file (/download/1G.bin) and takes uploads (PUT /upload/…)
// from its nginx.
//
// Each transfer runs in a child process of its own (`BudgetReport --transfer KIND URL FILE`), so that its peak
// RSS is its own: the child warms up (a loader, a first request), resets the kernel's peak (/proc/self/clear_refs),
// transfers, and reports the bytes, the seconds and how far the peak rose above the warmed-up process.

/// What one child transfer measured.
struct TransferRun: Sendable {
    var bytes: Int64
    var seconds: Double
    /// How far the peak RSS rose during the transfer, above the warmed-up process; `nil` where the kernel does not
    /// say (no /proc).
    var peakRaise: Int64?
}

/// The transfers a child can run.
enum TransferKind: String, CaseIterable, Sendable {
    case chainDownload = "chain-download"
    case rawDownload = "raw-download"
    case curlDownload = "curl-download"
    case chainUpload = "chain-upload"
    case ahcChainDownload = "ahc-chain-download"
    case ahcRawDownload = "ahc-raw-download"
    case ahcChainUpload = "ahc-chain-upload"
    /// Issue 24's stream through `Connection` (``measureConnectionStream(baseURL:rounds:seed:)``); FILE is unused.
    case connectionStream = "connection-stream"
    case ahcConnectionStream = "ahc-connection-stream"
}

/// The path of the file scripts/bench.sh's nginx serves for the download budgets.
let transferFilePath = "/download/1G.bin"

/// Measures the transfer budgets: `rounds` rounds of the three downloads in a random order each, then one upload.
func measureTransfers(baseURL: URL, rounds: Int, seed: UInt64) async throws -> Section {
    let folder = FileManager.default.temporaryDirectory.appending(path: "http-bench-transfers-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: folder) }
    let source = baseURL.appending(path: String(transferFilePath.dropFirst()))

    var runs: [TransferKind: [TransferRun]] = [:]
    var generator = SeededGenerator(seed: seed)
    let downloads: [TransferKind] = [.chainDownload, .rawDownload, .curlDownload, .ahcChainDownload, .ahcRawDownload]
    for round in 0..<rounds {
        for kind in downloads.shuffled(using: &generator) {
            progress("transfers: round \(round + 1) of \(rounds), \(kind.rawValue)…")
            let destination = folder.appending(path: "\(kind.rawValue).bin")
            // Whatever the previous transfer left for the disk is written first, not during this one, which it
            // slowed down, whichever client it was.
            sync()
            runs[kind, default: []].append(try runChild(kind, url: source, file: destination))
            try? FileManager.default.removeItem(at: destination)
        }
    }
    // The upload sends the file the last round downloaded, from disk.
    let uploadSource = folder.appending(path: "upload-source.bin")
    _ = try runChild(.curlDownload, url: source, file: uploadSource)
    sync()
    progress("transfers: upload…")
    let upload = try runChild(
        .chainUpload, url: baseURL.appending(path: "upload/\(UUID().uuidString).bin"), file: uploadSource)
    progress("transfers: upload over AsyncHTTPClient…")
    let ahcUpload = try runChild(
        .ahcChainUpload, url: baseURL.appending(path: "upload/\(UUID().uuidString).bin"), file: uploadSource)

    let size = runs[.chainDownload]?.first?.bytes ?? 0
    var section = Section(
        title: "Transfers over loopback (a \(format(Double(size) / 1_073_741_824, decimals: 2)) GiB file from nginx to "
            + "disk, \(rounds) rounds in random orders, each transfer in a process of its own)"
    )
    let budget: Int64 = 32 * 1_048_576
    func mebibytes(_ bytes: Int64?) -> String {
        bytes.map { "\(format(Double($0) / 1_048_576, decimals: 1)) MiB" } ?? "unknown (no /proc)"
    }
    let downloadRaise = runs[.chainDownload]?.compactMap(\.peakRaise).max()
    section.rows.append(
        .check(
            "peak RSS rise, downloading with the chain (the largest of \(rounds))", mebibytes(downloadRaise),
            budget: "< 32 MiB", passes: downloadRaise.map { $0 < budget } ?? false))
    section.rows.append(
        .check(
            "peak RSS rise, uploading from disk with the chain (FileBody)", mebibytes(upload.peakRaise),
            budget: "< 32 MiB", passes: upload.peakRaise.map { $0 < budget } ?? false))
    section.rows.append(
        .info(
            "peak RSS rise, URLSession's own download task (the largest)",
            mebibytes(runs[.rawDownload]?.compactMap(\.peakRaise).max())))

    // Throughput ratios within each round, so that the machine's drift between rounds cancels out.
    let chain = runs[.chainDownload] ?? []
    let raw = runs[.rawDownload] ?? []
    let curl = runs[.curlDownload] ?? []
    let ratios = zip(chain, raw).map { $1.seconds / $0.seconds }
    let ratio = median(ratios)
    let interval = medianConfidenceInterval(ratios).map { " (95% CI \(format($0.low))–\(format($0.high)))" } ?? ""
    section.rows.append(
        .check(
            "download throughput, the chain ÷ URLSession's download task", "\(format(ratio))\(interval)",
            budget: "≥ 0.90", passes: ratio >= 0.9))
    func rate(_ runs: [TransferRun]) -> String {
        let perSecond = runs.map { Double($0.bytes) / $0.seconds / 1_048_576 }
        return "\(format(median(perSecond), decimals: 0)) MiB/s"
    }
    section.rows.append(.info("download throughput: the chain", rate(chain)))
    section.rows.append(.info("download throughput: URLSession's download task", rate(raw)))
    section.rows.append(.info("download throughput: curl -o (for perspective)", rate(curl)))
    section.rows.append(.info("upload throughput: the chain, from disk", rate([upload])))

    // The same budgets over the AsyncHTTPClient transport, against raw AsyncHTTPClient's FileDownloadDelegate.
    let ahcDownloadRaise = runs[.ahcChainDownload]?.compactMap(\.peakRaise).max()
    section.rows.append(
        .check(
            "AsyncHTTPClient: peak RSS rise, downloading with the chain (the largest of \(rounds))",
            mebibytes(ahcDownloadRaise), budget: "< 32 MiB", passes: ahcDownloadRaise.map { $0 < budget } ?? false))
    section.rows.append(
        .check(
            "AsyncHTTPClient: peak RSS rise, uploading from disk with the chain (FileBody)",
            mebibytes(ahcUpload.peakRaise), budget: "< 32 MiB", passes: ahcUpload.peakRaise.map { $0 < budget } ?? false
        ))
    section.rows.append(
        .info(
            "AsyncHTTPClient: peak RSS rise, its own FileDownloadDelegate (the largest)",
            mebibytes(runs[.ahcRawDownload]?.compactMap(\.peakRaise).max())))
    let ahcChain = runs[.ahcChainDownload] ?? []
    let ahcRaw = runs[.ahcRawDownload] ?? []
    let ahcRatios = zip(ahcChain, ahcRaw).map { $1.seconds / $0.seconds }
    let ahcRatio = median(ahcRatios)
    let ahcInterval =
        medianConfidenceInterval(ahcRatios).map { " (95% CI \(format($0.low))–\(format($0.high)))" } ?? ""
    section.rows.append(
        .check(
            "AsyncHTTPClient: download throughput, the chain ÷ FileDownloadDelegate",
            "\(format(ahcRatio))\(ahcInterval)",
            budget: "≥ 0.90", passes: ahcRatio >= 0.9))
    section.rows.append(.info("AsyncHTTPClient: download throughput, the chain", rate(ahcChain)))
    section.rows.append(.info("AsyncHTTPClient: download throughput, FileDownloadDelegate", rate(ahcRaw)))
    section.rows.append(.info("AsyncHTTPClient: upload throughput, the chain, from disk", rate([ahcUpload])))
    return section
}

/// Runs one transfer in a child process and reads what it measured.
func runChild(_ kind: TransferKind, url: URL, file: URL) throws -> TransferRun {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: CommandLine.arguments[0])
    process.arguments = ["--transfer", kind.rawValue, url.absoluteString, file.path]
    let output = Pipe()
    process.standardOutput = output
    try process.run()
    let data = output.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    let fields = String(decoding: data, as: UTF8.self).split(separator: " ").map {
        $0.trimmingCharacters(in: .whitespacesAndNewlines)
    }
    guard process.terminationStatus == 0, fields.count == 3, let bytes = Int64(fields[0]),
        let seconds = Double(fields[1])
    else {
        throw TransferFailure(
            "the \(kind.rawValue) child exited with \(process.terminationStatus), printing "
                + "'\(String(decoding: data, as: UTF8.self))'")
    }
    return TransferRun(bytes: bytes, seconds: seconds, peakRaise: Int64(fields[2]))
}

struct TransferFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// The child's side: warms up, resets the peak, transfers, and prints `bytes seconds peakRaise` (`-` when the
/// kernel does not say).
nonisolated func runTransfer(kind: TransferKind, url: URL, file: URL) async throws {
    let clock = ContinuousClock()
    let measured: (bytes: Int64, seconds: Double, raise: Int64?)
    switch kind {
    case .curlDownload:
        let start = clock.now
        let curl = Process()
        curl.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        curl.arguments = ["curl", "--silent", "--fail", "--output", file.path, url.absoluteString]
        try curl.run()
        curl.waitUntilExit()
        guard curl.terminationStatus == 0 else { throw TransferFailure("curl exited with \(curl.terminationStatus)") }
        measured = (fileSize(file), (clock.now - start).nanoseconds / 1e9, nil)
    case .rawDownload:
        let session = URLSession(configuration: .ephemeral)
        _ = try await rawDownload(session, url.deletingLastPathComponent().appending(path: "warm-up"), to: file)
        let base = resetPeakResidentSize()
        let start = clock.now
        try await rawDownload(session, url, to: file)
        let seconds = (clock.now - start).nanoseconds / 1e9
        measured = (fileSize(file), seconds, base.flatMap { base in peakResidentSize().map { $0 - base } })
    case .chainDownload, .chainUpload:
        guard let environment = ServerEnvironment(baseURL: url.deletingLastPathComponent()) else {
            throw TransferFailure("\(url) is not a base URL")
        }
        let chain = makeDefaultChain(terminal: URLSessionLoader(), environment: environment)
        var warmUp = makeDefaultChainRequest()
        warmUp.path = "/person.json"
        _ = await chain.load(warmUp)
        var request = makeDefaultChainRequest()
        request.path = "/" + url.lastPathComponent
        let base = resetPeakResidentSize()
        let start = clock.now
        if kind == .chainUpload {
            request.method = .put
            request.body = FileBody(file)
            let response = try await chain.load(request).get()
            guard response.status.rawValue / 100 == 2 else {
                throw TransferFailure("the upload got \(response.status)")
            }
        } else {
            let response = try await chain.download(request, to: file).get()
            guard response.fileURL != nil else { throw TransferFailure("the download got \(response.status)") }
        }
        let seconds = (clock.now - start).nanoseconds / 1e9
        measured = (fileSize(file), seconds, base.flatMap { base in peakResidentSize().map { $0 - base } })
    case .connectionStream, .ahcConnectionStream:
        var base: Int64?
        var start = clock.now
        let bytes = try await streamThroughConnection(url, asyncHTTPClient: kind == .ahcConnectionStream) {
            base = resetPeakResidentSize()
            start = clock.now
        }
        let seconds = (clock.now - start).nanoseconds / 1e9
        measured = (bytes, seconds, base.flatMap { base in peakResidentSize().map { $0 - base } })
    case .ahcChainDownload, .ahcRawDownload, .ahcChainUpload:
        let transfers = AsyncHTTPClientTransfers(baseURL: url.deletingLastPathComponent())
        // Only the client measured warms up, so that every kind meets the same event loops: the shared group
        // hands them out in turn, and whether a transfer's delegate runs on its connection's event loop or on
        // another one (which then shares the work) changes a download's throughput by half.
        if kind == .ahcRawDownload {
            let warmUpFile = file.appendingPathExtension("warm-up")
            _ = try await transfers.rawDownload(
                url.deletingLastPathComponent().appending(path: "person.json"), to: warmUpFile)
            try? FileManager.default.removeItem(at: warmUpFile)
        } else {
            var warmUp = makeDefaultChainRequest()
            warmUp.path = "/person.json"
            _ = await transfers.chain.load(warmUp)
        }
        var request = makeDefaultChainRequest()
        request.path = "/" + url.lastPathComponent
        let base = resetPeakResidentSize()
        let start = clock.now
        switch kind {
        case .ahcChainUpload:
            request.method = .put
            request.body = FileBody(file)
            let response = try await transfers.chain.load(request).get()
            guard response.status.rawValue / 100 == 2 else {
                throw TransferFailure("the upload got \(response.status)")
            }
        case .ahcRawDownload:
            _ = try await transfers.rawDownload(url, to: file)
        default:
            let response = try await transfers.chain.download(request, to: file).get()
            guard response.fileURL != nil else { throw TransferFailure("the download got \(response.status)") }
        }
        let seconds = (clock.now - start).nanoseconds / 1e9
        measured = (fileSize(file), seconds, base.flatMap { base in peakResidentSize().map { $0 - base } })
        await transfers.shutdown()
    }
    print("\(measured.bytes) \(measured.seconds) \(measured.raise.map(String.init) ?? "-")")
}

/// URLSession's own download task, moving its file to `destination` as the chain's download does.
private func rawDownload(_ session: URLSession, _ url: URL, to destination: URL) async throws {
    try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
        session.downloadTask(with: URLRequest(url: url)) { location, response, error in
            do {
                if let error { throw error }
                guard let location, let http = response as? HTTPURLResponse else {
                    throw TransferFailure("no file")
                }
                try? FileManager.default.removeItem(at: destination)
                if http.statusCode == 200 { try FileManager.default.moveItem(at: location, to: destination) }
                continuation.resume()
            } catch {
                continuation.resume(throwing: error)
            }
        }.resume()
    }
}

private func fileSize(_ url: URL) -> Int64 {
    ((try? FileManager.default.attributesOfItem(atPath: url.path)[.size]) as? NSNumber)?.int64Value ?? 0
}

/// Resets the kernel's record of the peak RSS to the current RSS and returns it; `nil` without /proc.
private func resetPeakResidentSize() -> Int64? {
    // Writing 5 to clear_refs resets VmHWM to the current VmRSS (Linux 4.0 and later).
    try? "5".write(toFile: "/proc/self/clear_refs", atomically: false, encoding: .utf8)
    return statusField("VmRSS")
}

/// The peak RSS since the last reset, in bytes; `nil` without /proc.
private func peakResidentSize() -> Int64? { statusField("VmHWM") }

private func statusField(_ name: String) -> Int64? {
    guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return nil }
    // A line reads "VmHWM:\t   12345 kB".
    for line in status.split(separator: "\n") where line.hasPrefix(name + ":") {
        return Int64(String(line.dropFirst(name.count + 1).filter(\.isNumber))).map { $0 * 1024 }
    }
    return nil
}
