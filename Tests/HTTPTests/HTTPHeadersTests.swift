import HTTP
import Testing

@Suite(.noHang) struct HTTPHeadersTests {
    @Test func lookupIgnoresCase() {
        let headers: HTTPHeaders = ["Content-Type": "application/json"]
        #expect(headers["content-type"] == "application/json")
        #expect(headers["CONTENT-TYPE"] == "application/json")
        #expect(headers.contains("Content-type"))
        #expect(headers["Accept"] == nil)
    }

    @Test func keepsOrderAndRepeatedFields() {
        var headers = HTTPHeaders()
        headers.add("a=1", for: "Set-Cookie")
        headers.add("text/html", for: "Accept")
        headers.add("b=2", for: "set-cookie")
        #expect(headers.map(\.name) == ["Set-Cookie", "Accept", "set-cookie"])
        #expect(headers.values(for: "SET-COOKIE") == ["a=1", "b=2"])
        #expect(headers["Set-Cookie"] == "a=1, b=2")
        #expect(headers.count == 3)
    }

    @Test func settingReplacesAllFieldsWithThatNameInPlace() {
        var headers: HTTPHeaders = ["A": "1", "X-Dup": "x", "B": "2", "x-dup": "y"]
        headers["X-DUP"] = "z"
        #expect(headers.map(\.description) == ["A: 1", "X-Dup: z", "B: 2"])
        headers["B"] = nil
        #expect(headers.map(\.name) == ["A", "X-Dup"])
        headers["C"] = "3"
        #expect(headers.last?.description == "C: 3")
    }

    @Test func removeDeletesEveryMatch() {
        var headers: HTTPHeaders = ["Cookie": "a", "cookie": "b", "Accept": "*/*"]
        headers.remove("COOKIE")
        #expect(headers.map(\.name) == ["Accept"])
    }

    @Test func nonASCIILettersAreNotFoldedAsCase() {
        let headers: HTTPHeaders = ["X-É": "1"]
        #expect(headers["x-é"] == nil)
        #expect(headers["X-É"] == "1")
        #expect(!HTTPHeaders.Field(name: "Ab", value: "").hasName("A"))
    }
}
