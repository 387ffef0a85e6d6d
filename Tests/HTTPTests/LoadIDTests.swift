import Foundation
import HTTP
import Testing

@Suite(.noHang) struct LoadIDTests {
    @Test func identitiesAreUniqueAcrossConcurrentLoads() async {
        let mock = MockLoader()
        for _ in 0..<500 { mock.then(status: .ok) }
        let chain = PrintLoader(sink: { _ in }) --> mock
        let request = HTTPRequest(host: "example.com")
        let ids = await withTaskGroup(of: LoadID?.self) { group in
            for _ in 0..<500 { group.addTask { await chain.load(request).response?.request.loadID } }
            return await group.reduce(into: [LoadID?]()) { $0.append($1) }
        }
        #expect(ids.compactMap { $0 }.count == 500)
        #expect(Set(ids).count == 500)
    }

    @Test func aLoaderBelowKeepsTheIdentityStampedAbove() async throws {
        let mock = MockLoader().then(status: .ok)
        let recorder = EventRecorder()
        let lines = LineSink()
        let chain = Observe(recorder) --> PrintLoader(sink: lines.write) --> PropagateTraceContext() --> mock
        _ = await chain.load(HTTPRequest(host: "example.com"))
        let load = try #require(recorder.all.first?.loadID)
        #expect(mock.receivedRequests.first?.loadID == load)
        #expect(lines.all.allSatisfy { $0.dropFirst(2).hasPrefix("\(load) ") })
    }

    @Test func describesItselfAsANumber() {
        #expect(LoadID(rawValue: 17).description == "#17")
        #expect(LoadID(rawValue: 2) < LoadID(rawValue: 10))
    }
}
