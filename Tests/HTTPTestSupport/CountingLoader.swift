public import HTTP

/// A terminal that answers every request with 200, recording the requests and counting resets.
// Safety: its state is in two Boxes, each behind a lock.
public final class CountingLoader: HTTPLoader, @unchecked Sendable {
    /// How many times the chain's reset reached this loader.
    public let resets = Box(0)
    /// The requests received, in order.
    public let loads = Box<[HTTPRequest]>([])

    public override init() {}

    public override func load(_ request: HTTPRequest) async -> HTTPResult {
        loads.withLock { $0.append(request) }
        return .success(HTTPResponse(request: request))
    }

    public override func forgetState() async {
        resets.withLock { $0 += 1 }
    }
}
