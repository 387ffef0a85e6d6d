/// What the cache needs to know about a request's header fields, found in one pass over them.
struct CacheRequestFields {
    var hasCacheControl = false
    var hasPragma = false
    var hasAuthorization = false
    var hasRange = false
    /// The request carries a precondition of its own (RFC 9110 §13.1).
    var isConditional = false

    init(_ headers: HTTPHeaders) {
        for field in headers {
            let name = field.name
            guard let first = name.utf8.first else { continue }
            switch first | 0x20 {
            case UInt8(ascii: "c"): if field.hasName("Cache-Control") { hasCacheControl = true }
            case UInt8(ascii: "p"): if field.hasName("Pragma") { hasPragma = true }
            case UInt8(ascii: "a"): if field.hasName("Authorization") { hasAuthorization = true }
            case UInt8(ascii: "r"): if field.hasName("Range") { hasRange = true }
            case UInt8(ascii: "i"):
                if field.hasName("If-None-Match") || field.hasName("If-Modified-Since") || field.hasName("If-Match")
                    || field.hasName("If-Unmodified-Since") || field.hasName("If-Range")
                {
                    isConditional = true
                }
            default: break
            }
        }
    }
}
