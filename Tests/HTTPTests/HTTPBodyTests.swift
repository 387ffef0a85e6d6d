import Foundation
import HTTP
import Testing

private struct Person: Codable, Equatable, Sendable {
    var name: String
    var age: Int
}

private struct Unencodable: Encodable, Sendable {
    func encode(to encoder: any Encoder) throws {
        throw EncodingError.invalidValue(0, .init(codingPath: [], debugDescription: "cannot encode this"))
    }
}

@Suite(.noHang) struct HTTPBodyTests {
    @Test func emptyBody() throws {
        #expect(EmptyBody().isEmpty)
        #expect(try EmptyBody().encode().isEmpty)
        #expect(EmptyBody().additionalHeaders.isEmpty)
    }

    @Test func dataBody() throws {
        let body = DataBody(Data([1, 2, 3]), contentType: "application/octet-stream")
        #expect(try body.encode() == Data([1, 2, 3]))
        #expect(body.additionalHeaders == ["Content-Type": "application/octet-stream"])
        #expect(DataBody(Data()).isEmpty)
        #expect(DataBody(Data([1])).additionalHeaders.isEmpty)
    }

    @Test func jsonBodyEncodesAndDeclaresUTF8JSON() throws {
        let body = JSONBody(Person(name: "Zoë", age: 30))
        let decoded = try JSONDecoder().decode(Person.self, from: body.encode())
        #expect(decoded == Person(name: "Zoë", age: 30))
        #expect(body.additionalHeaders["Content-Type"] == "application/json; charset=utf-8")
    }

    @Test func jsonBodyUsesTheGivenEncoder() throws {
        let body = JSONBody(["b": 1, "a": 2]) {
            let encoder = JSONEncoder()
            encoder.outputFormatting = .sortedKeys
            return encoder
        }
        #expect(String(decoding: try body.encode(), as: UTF8.self) == #"{"a":2,"b":1}"#)
    }

    @Test func aBodyThatFailsToEncodeFailsTheRequestBeforeSending() throws {
        let request = HTTPRequest(method: .post, host: "example.com", body: JSONBody(Unencodable()))
        let error = try #require(throws: HTTPError.self) { try request.urlRequest() }
        #expect(error.code == .invalidRequest)
        #expect(error.message.contains("JSONBody"))
        #expect(error.message.contains("could not be encoded"))
        #expect(error.underlyingError is EncodingError)
    }

    @Test func formBodyEscapesLikeABrowser() throws {
        let body = FormBody([
            URLQueryItem(name: "name", value: "Zoë & Ann"),
            URLQueryItem(name: "math", value: "1+1=2"),
            URLQueryItem(name: "flag", value: nil),
            URLQueryItem(name: "safe", value: "a-b_c.d*"),
        ])
        #expect(
            String(decoding: try body.encode(), as: UTF8.self)
                == "name=Zo%C3%AB+%26+Ann&math=1%2B1%3D2&flag&safe=a-b_c.d*")
        #expect(body.additionalHeaders["Content-Type"] == "application/x-www-form-urlencoded; charset=utf-8")
    }

    @Test func formBodyFromADictionaryIsSortedByName() throws {
        let body = FormBody(["b": "2", "a": "1"])
        #expect(String(decoding: try body.encode(), as: UTF8.self) == "a=1&b=2")
        #expect(FormBody([URLQueryItem]()).isEmpty)
    }

    @Test func requestHeadersWinOverBodyHeaders() {
        var request = HTTPRequest(host: "example.com", headers: ["content-type": "application/vnd.api+json"])
        request.body = JSONBody(["a": 1])
        #expect(request.headersIncludingBody.values(for: "Content-Type") == ["application/vnd.api+json"])
        request.headers = [:]
        #expect(request.headersIncludingBody["Content-Type"] == "application/json; charset=utf-8")
    }
}

@Suite(.noHang) struct MultipartFormBodyTests {
    @Test func encodesFieldsAndFilesPerRFC7578() throws {
        var form = MultipartFormBody(boundary: "XYZ")
        form.addField(named: "title", value: "Holiday")
        form.addFile(named: "photo", filename: "beach.jpg", contentType: "image/jpeg", data: Data([0xFF, 0xD8]))
        let expected =
            Data(
                ("--XYZ\r\nContent-Disposition: form-data; name=\"title\"\r\n\r\nHoliday\r\n"
                    + "--XYZ\r\nContent-Disposition: form-data; name=\"photo\"; filename=\"beach.jpg\"\r\n"
                    + "Content-Type: image/jpeg\r\n\r\n").utf8
            ) + Data([0xFF, 0xD8]) + Data("\r\n--XYZ--\r\n".utf8)
        #expect(try form.encode() == expected)
        #expect(form.additionalHeaders["Content-Type"] == "multipart/form-data; boundary=XYZ")
    }

    @Test func theBoundaryNeverOccursInTheContent() throws {
        var form = MultipartFormBody(boundary: "B")
        form.addField(named: "text", value: "B Bx1 Bx2")  // contains the seed and its first variants
        let boundary = form.boundary
        #expect(boundary == "Bx3")
        let encoded = String(decoding: try form.encode(), as: UTF8.self)
        #expect(form.additionalHeaders["Content-Type"] == "multipart/form-data; boundary=\(boundary)")
        #expect(encoded.components(separatedBy: "--\(boundary)").count == 3)  // one opening, one closing delimiter
    }

    @Test func randomBoundariesDiffer() {
        #expect(MultipartFormBody().boundary != MultipartFormBody().boundary)
        #expect(MultipartFormBody().isEmpty)
    }

    @Test func namesCannotBreakOutOfTheirHeader() throws {
        var form = MultipartFormBody(boundary: "B")
        form.addFile(named: "a\"b", filename: "evil\r\nX-Injected: 1.txt", data: Data("x".utf8))
        let encoded = String(decoding: try form.encode(), as: UTF8.self)
        #expect(encoded.contains("name=\"a%22b\"; filename=\"evil%0D%0AX-Injected: 1.txt\""))
        #expect(!encoded.contains("\r\nX-Injected"))
    }
}
