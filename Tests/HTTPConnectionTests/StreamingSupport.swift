import Foundation
@_spi(Transport) import HTTP
import Testing

/// A body that a test produces chunk by chunk, as a transport would: it stops when the stream pauses it (the
/// consumer lags) and goes on when the stream resumes it, stops for good when the stream cancels it, and counts how
/// far it got.
final class ChunkProducer: Sendable {
    private struct State {
        var resume: CheckedContinuation<Void, Never>?
        var produced = 0
        var cancels = 0
        var isFinished = false
        var task: Task<Void, Never>?
    }

    /// The stream until ``response(to:)`` hands it over: from then on only its consumer holds it, so that dropping
    /// it stops the transfer, as with a real transport.
    private let handedOver: Box<HTTPBodyStream?>
    private let state = Box(State())

    /// Starts delivering `chunks` to a new stream for `request`, then ends it (with `failure`, if any); `endless`
    /// repeats the last chunk until the stream is cancelled; `pause` waits that long before each chunk.
    init(
        request: HTTPRequest, chunks: [Data], bufferLimit: Int = 256 * 1024, endless: Bool = false,
        failure: HTTPError? = nil, pause: Duration = .zero
    ) {
        let stream = HTTPBodyStream(request: request, bufferLimit: bufferLimit)
        handedOver = Box(stream)
        stream.connect(
            cancel: { [state] in
                let task = state.withLock { state -> Task<Void, Never>? in
                    state.cancels += 1
                    return state.task
                }
                task?.cancel()
            },
            pause: { [state] paused in
                // Whether the producer waits is read from the stream itself (see `waitWhilePaused`): the stream makes
                // these calls outside its lock, so a pause can arrive after the resume that ended it.
                guard !paused else { return }
                state.withLock { state -> CheckedContinuation<Void, Never>? in
                    defer { state.resume = nil }
                    return state.resume
                }?.resume()
            })
        let task = Task { [weak stream, state] in
            var index = 0
            while index < chunks.count || (endless && !chunks.isEmpty), !Task.isCancelled {
                let chunk = chunks[min(index, chunks.count - 1)]
                index += 1
                if pause > .zero { try? await Task.sleep(for: pause) }
                // Only weakly: a consumer that drops the stream while the producer waits stops the transfer.
                await Self.waitWhilePaused({ [weak stream] in stream?.isProducerPaused ?? false }, state)
                guard let stream, !Task.isCancelled else { break }
                state.withLock { $0.produced += chunk.count }
                stream.deliver(chunk)
            }
            if !Task.isCancelled { stream?.finish(throwing: failure) }
            state.withLock { $0.isFinished = true }
        }
        state.withLock { $0.task = task }
    }

    /// Waits while the stream holds its producer paused (`isPaused`). The stream's state is read under the producer's
    /// lock, and a resume takes that lock to wake the producer: a resume cannot slip between the check and the wait.
    private static func waitWhilePaused(_ isPaused: @escaping @Sendable () -> Bool, _ state: Box<State>) async {
        await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let waits = state.withLock { state -> Bool in
                    guard isPaused(), !Task.isCancelled else { return false }
                    state.resume = continuation
                    return true
                }
                if !waits { continuation.resume() }
            }
        } onCancel: {
            state.withLock { state -> CheckedContinuation<Void, Never>? in
                defer { state.resume = nil }
                return state.resume
            }?.resume()
        }
    }

    /// The bytes delivered so far.
    var produced: Int { state.value.produced }
    /// How many times the stream asked to stop the transfer.
    var cancels: Int { state.value.cancels }
    /// Whether the producer has stopped: all delivered, or cancelled.
    var isFinished: Bool { state.value.isFinished }

    /// A response for `request` whose body this producer delivers.
    func response(to request: HTTPRequest, status: HTTPStatus = .ok, headers: HTTPHeaders = [:]) -> HTTPResponse {
        var response = HTTPResponse(request: request, status: status, headers: headers)
        response.bodyStream = handedOver.withLock { stream in
            defer { stream = nil }
            return stream
        }
        return response
    }
}

/// `data` cut into chunks at the given offsets.
func chunks(of data: Data, cutAt cuts: [Int]) -> [Data] {
    var pieces: [Data] = []
    var start = 0
    for cut in cuts.sorted() where cut > start && cut < data.count {
        pieces.append(data.subdata(in: start..<cut))
        start = cut
    }
    pieces.append(data.subdata(in: start..<data.count))
    return pieces
}

/// `data` cut into chunks of random sizes from 1 to `largest` bytes.
func randomChunks(of data: Data, largest: Int, using random: inout SplitMix64) -> [Data] {
    var pieces: [Data] = []
    var start = 0
    while start < data.count {
        let end = min(data.count, start + Int.random(in: 1...largest, using: &random))
        pieces.append(data.subdata(in: start..<end))
        start = end
    }
    return pieces
}

/// A mock whose every load streams the chunks `chunks(request)` returns, through a ``ChunkProducer`` it records.
final class StreamingMock: Sendable {
    let loader = MockLoader()
    private let producers = Box<[ChunkProducer]>([])

    var all: [ChunkProducer] { producers.value }

    @discardableResult
    func then(
        status: HTTPStatus = .ok, headers: HTTPHeaders = [:], bufferLimit: Int = 256 * 1024, endless: Bool = false,
        failure: HTTPError? = nil, _ chunks: [Data]
    ) -> StreamingMock {
        loader.then { [producers] request in
            let producer = ChunkProducer(
                request: request, chunks: chunks, bufferLimit: bufferLimit, endless: endless, failure: failure)
            producers.withLock { $0.append(producer) }
            return .success(producer.response(to: request, status: status, headers: headers))
        }
        return self
    }
}
