import HTTP
import Testing

@Suite(.noHang) struct HTTPMethodTests {
    @Test func standardMethodsHaveTheirTokens() {
        #expect(HTTPMethod.get.rawValue == "GET")
        #expect(HTTPMethod.patch.rawValue == "PATCH")
        #expect(HTTPMethod(rawValue: "PURGE").description == "PURGE")
        #expect(("POST" as HTTPMethod) == .post)
    }

    @Test func safeAndIdempotentFollowRFC9110() {
        for method: HTTPMethod in [.get, .head, .options, .trace] {
            #expect(method.isSafe && method.isIdempotent)
        }
        for method: HTTPMethod in [.put, .delete] {
            #expect(!method.isSafe && method.isIdempotent)
        }
        for method: HTTPMethod in [.post, .patch, .connect, "PURGE"] {
            #expect(!method.isSafe && !method.isIdempotent)
        }
    }
}
