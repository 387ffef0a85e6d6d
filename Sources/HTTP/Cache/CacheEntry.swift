public import Foundation

/// A response as a ``Cache`` stores it: what the server sent, when, and the request header fields it varies on.
///
/// Stores keep entries and give them back; they never look inside. A store of your own (over a database, say)
/// saves the public properties and makes the entry again with
/// ``init(status:headers:body:url:requestDate:responseDate:varyingRequestHeaders:)``. What the cache derives
/// from the header fields (freshness, validators, `Vary`) is worked out once, when the entry is made.
public struct CacheEntry: Sendable {
    /// The response's status.
    public let status: HTTPStatus
    /// The response's header fields as stored: without hop-by-hop fields and without `Set-Cookie`.
    public let headers: HTTPHeaders
    /// The response's body.
    public let body: Data
    /// The URL the response came from, when the transport named it; `nil` means the request's URL.
    public let url: URL?
    /// When the request that produced the response was sent (RFC 9111's `request_time`), on the cache's clock.
    public let requestDate: Date
    /// When the response was received, or last validated (RFC 9111's `response_time`), on the cache's clock.
    public let responseDate: Date
    /// The values the request had for the header fields the response's `Vary` names, as a later request must
    /// have them to be answered with this response. A field the request did not have is absent. Values of fields
    /// that ``Redaction/standard`` hides (`Authorization`, `Cookie`, …) are kept only as a digest keyed for this
    /// process, so no credential is ever written to a store, and such an entry matches no request after a restart.
    public let varyingRequestHeaders: HTTPHeaders

    /// What the cache works out from the header fields, once.
    let metadata: Metadata

    /// Makes an entry from its stored parts.
    ///
    /// - Parameters:
    ///   - status: The response's status.
    ///   - headers: The response's header fields.
    ///   - body: The response's body.
    ///   - url: The URL the response came from.
    ///   - requestDate: When the request was sent.
    ///   - responseDate: When the response was received or last validated.
    ///   - varyingRequestHeaders: The request's values of the fields the response varies on.
    public init(
        status: HTTPStatus,
        headers: HTTPHeaders,
        body: Data,
        url: URL?,
        requestDate: Date,
        responseDate: Date,
        varyingRequestHeaders: HTTPHeaders = [:]
    ) {
        self.status = status
        self.headers = headers
        self.body = body
        self.url = url
        self.requestDate = requestDate
        self.responseDate = responseDate
        self.varyingRequestHeaders = varyingRequestHeaders
        self.metadata = Metadata(status: status, headers: headers, requestDate: requestDate, responseDate: responseDate)
    }

    /// About how many bytes the entry occupies: its body, header fields, URL and a fixed overhead. The stores'
    /// size limits count this.
    public var size: Int {
        var total = body.count + 128 + (url?.absoluteString.utf8.count ?? 0)
        for field in headers { total += field.name.utf8.count + field.value.utf8.count + 4 }
        for field in varyingRequestHeaders { total += field.name.utf8.count + field.value.utf8.count + 4 }
        return total
    }
}

// MARK: - Making and serving entries

extension CacheEntry {
    /// Header fields a cache does not store (RFC 9111 §3.1: hop-by-hop and proxy fields), and `Set-Cookie`, which
    /// would hand a session's cookies to whoever reads the store and replay them on every hit.
    private static let unstoredFields: Set<String> = [
        "connection", "keep-alive", "proxy-connection", "te", "transfer-encoding", "upgrade",
        "proxy-authenticate", "proxy-authentication-info", "proxy-authorization", "set-cookie", "set-cookie2",
    ]

    /// `headers` without the fields a cache does not store, nor those `Connection` lists.
    static func storableFields(of headers: HTTPHeaders) -> HTTPHeaders {
        var listed: Set<String> = []
        for value in headers.values(for: "Connection") {
            for name in value.split(separator: ",") {
                listed.insert(name.trimmingCharacters(in: .whitespaces).lowercased())
            }
        }
        return HTTPHeaders(
            headers.filter { field in
                let name = field.name.lowercased()
                return !unstoredFields.contains(name) && !listed.contains(name)
            })
    }

    /// An entry for `response`, received at `responseDate` for `request`, sent at `requestDate`.
    ///
    /// A response without `Date` gets one saying when it was received, as RFC 9110 §6.6.1 asks of a cache.
    init(storing response: HTTPResponse, for request: HTTPRequest, requestDate: Date, responseDate: Date) {
        var headers = Self.storableFields(of: response.headers)
        if !headers.contains("Date") { headers.add(HTTPDate.format(responseDate), for: "Date") }
        let varyNames = Metadata.varyNames(in: headers)
        var varying = HTTPHeaders()
        for name in varyNames {
            if let value = Self.varyValue(of: name, in: request) { varying.add(value, for: name) }
        }
        self.init(
            status: response.status, headers: headers, body: response.body, url: response.explicitURL,
            requestDate: requestDate, responseDate: responseDate, varyingRequestHeaders: varying)
    }

    /// Whether `request` has the values this entry's `Vary` requires (RFC 9111 §4.1). `Vary: *` matches nothing.
    func matchesVary(of request: HTTPRequest) -> Bool {
        for name in metadata.varyNames {
            if name == "*" { return false }
            if Self.varyValue(of: name, in: request) != varyingRequestHeaders[name] { return false }
        }
        return true
    }

    /// The request's value of `name` for `Vary` matching: its field lines combined, each list member trimmed;
    /// a digest of it for fields ``Redaction/standard`` hides. `nil` when the request has no such field.
    private static func varyValue(of name: String, in request: HTTPRequest) -> String? {
        let lines = request.headers.values(for: name)
        guard !lines.isEmpty else { return nil }
        let members = lines.flatMap { $0.split(separator: ",", omittingEmptySubsequences: false) }
        let normalized = members.map { $0.trimmingCharacters(in: .whitespaces) }.joined(separator: ",")
        guard Redaction.standard.hides(name) else { return normalized }
        // Hasher is seeded at random for each process: the digest means nothing outside it.
        var hasher = Hasher()
        hasher.combine(normalized)
        return "digest:" + String(UInt(bitPattern: hasher.finalize()), radix: 16)
    }

    /// This entry with the header fields of a `304 Not Modified` merged in (RFC 9111 §4.3.4, §3.2): each field
    /// the `304` has replaces the stored ones of that name, except `Content-Length` and the fields a cache does not
    /// store. A `304` without `Date` counts as dated when it was received (RFC 9110 §6.6.1), so the entry's age
    /// starts again from its validation.
    func freshened(with notModified: HTTPHeaders, requestDate: Date, responseDate: Date) -> CacheEntry {
        var update = Self.storableFields(of: notModified).filter { !$0.hasName("Content-Length") }
        if !update.contains(where: { $0.hasName("Date") }) {
            update.append(HTTPHeaders.Field(name: "Date", value: HTTPDate.format(responseDate)))
        }
        var headers = HTTPHeaders(self.headers.filter { field in !update.contains { $0.hasName(field.name) } })
        headers.add(contentsOf: HTTPHeaders(update))
        return CacheEntry(
            status: status, headers: headers, body: body, url: url, requestDate: requestDate,
            responseDate: responseDate, varyingRequestHeaders: varyingRequestHeaders)
    }

    /// This entry without the header fields `names` lists (lowercased); the entry itself when it has none of them.
    func removingFields(_ names: Set<String>) -> CacheEntry {
        guard !names.isEmpty, headers.contains(where: { names.contains($0.name.lowercased()) }) else { return self }
        return CacheEntry(
            status: status, headers: HTTPHeaders(headers.filter { !names.contains($0.name.lowercased()) }),
            body: body, url: url, requestDate: requestDate, responseDate: responseDate,
            varyingRequestHeaders: varyingRequestHeaders)
    }

    /// The response to `request` made from this entry, with its current `Age` and a `Cache-Status` member
    /// (RFC 9211) saying what the cache did. Unless the entry was just validated with the server, the fields a
    /// qualified `no-cache="…"` lists are left out (RFC 9111 §5.2.2.4).
    func response(to request: HTTPRequest, age: Double, cacheStatus: String, isValidated: Bool = false) -> HTTPResponse
    {
        var fields: [HTTPHeaders.Field] = []
        fields.reserveCapacity(headers.count + 2)
        let withheld = isValidated ? [] : metadata.control.noCacheFields
        if metadata.hasAgeField || !withheld.isEmpty {
            fields.append(
                contentsOf: headers.lazy.filter { field in
                    !field.hasName("Age") && (withheld.isEmpty || !withheld.contains(field.name.lowercased()))
                })
        } else {
            fields.append(contentsOf: headers)
        }
        fields.append(HTTPHeaders.Field(name: "Age", value: String(Metadata.wholeSeconds(age))))
        fields.append(HTTPHeaders.Field(name: "Cache-Status", value: cacheStatus))
        return HTTPResponse(request: request, status: status, headers: HTTPHeaders(fields), body: body, url: url)
    }
}
