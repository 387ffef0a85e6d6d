import Foundation

/// The file format of ``DiskCacheStore``: one entry per file, checked end to end, so that a file cut short,
/// overwritten or made by anything else is recognised and dropped rather than served.
///
/// ```
/// magic      8 bytes   "HTTPCE01"
/// length     UInt64    the payload's length in bytes
/// payload    length    key, dates, status, URL, header fields, varying request fields, body
/// checksum   UInt64    FNV-1a (64 bits) of the payload
/// ```
///
/// Integers are little-endian; a string is a `UInt32` byte count and UTF-8; dates are the bits of their
/// `timeIntervalSince1970`. A file decodes only when its size is exactly `24 + length`, its checksum matches, every
/// length fits in what remains, every string is valid UTF-8 and the payload ends where it says.
enum CacheEntryFile {
    static let magic = Array("HTTPCE01".utf8)

    /// The bytes of a file holding `entry` under `key`.
    static func encode(_ entry: CacheEntry, key: String) -> Data {
        var payload: [UInt8] = []
        payload.reserveCapacity(entry.size + key.utf8.count)
        func append(_ value: UInt64) { withUnsafeBytes(of: value.littleEndian) { payload.append(contentsOf: $0) } }
        func append(_ text: String) {
            let bytes = Array(text.utf8)
            withUnsafeBytes(of: UInt32(truncatingIfNeeded: bytes.count).littleEndian) { payload.append(contentsOf: $0) }
            payload.append(contentsOf: bytes)
        }
        func append(_ headers: HTTPHeaders) {
            withUnsafeBytes(of: UInt32(truncatingIfNeeded: headers.count).littleEndian) {
                payload.append(contentsOf: $0)
            }
            for field in headers {
                append(field.name)
                append(field.value)
            }
        }
        append(key)
        append(entry.requestDate.timeIntervalSince1970.bitPattern)
        append(entry.responseDate.timeIntervalSince1970.bitPattern)
        append(UInt64(bitPattern: Int64(entry.status.rawValue)))
        append(entry.url?.absoluteString ?? "")
        append(entry.headers)
        append(entry.varyingRequestHeaders)
        append(UInt64(entry.body.count))
        payload.append(contentsOf: entry.body)

        var file = magic
        file.reserveCapacity(payload.count + 24)
        withUnsafeBytes(of: UInt64(payload.count).littleEndian) { file.append(contentsOf: $0) }
        file.append(contentsOf: payload)
        withUnsafeBytes(of: fnv1a(payload[...]).littleEndian) { file.append(contentsOf: $0) }
        return Data(file)
    }

    /// The key and entry a file holds, or `nil` when the bytes are not an intact entry file.
    static func decode(_ bytes: [UInt8]) -> (key: String, entry: CacheEntry)? {
        guard bytes.count >= 24, bytes[0..<8].elementsEqual(magic) else { return nil }
        var header = Reader(bytes: bytes[8..<16])
        guard let length = header.uint64(), length == UInt64(bytes.count - 24) else { return nil }
        let payload = bytes[16..<(bytes.count - 8)]
        var trailer = Reader(bytes: bytes[(bytes.count - 8)...])
        guard trailer.uint64() == fnv1a(payload) else { return nil }

        var reader = Reader(bytes: payload)
        guard let key = reader.string(),
            let requestBits = reader.uint64(), let responseBits = reader.uint64(),
            let statusBits = reader.uint64(),
            let urlText = reader.string(),
            let headers = reader.headers(),
            let varying = reader.headers(),
            let bodyLength = reader.uint64(), let body = reader.bytes(bodyLength),
            reader.isAtEnd
        else { return nil }
        let status = Int64(bitPattern: statusBits)
        guard let statusCode = Int(exactly: status) else { return nil }
        let entry = CacheEntry(
            status: HTTPStatus(rawValue: statusCode),
            headers: headers,
            body: Data(body),
            url: urlText.isEmpty ? nil : URL(string: urlText),
            requestDate: Date(timeIntervalSince1970: Double(bitPattern: requestBits)),
            responseDate: Date(timeIntervalSince1970: Double(bitPattern: responseBits)),
            varyingRequestHeaders: varying
        )
        return (key, entry)
    }

    /// FNV-1a, 64 bits: the checksum of a file's payload and the name of a key's file. Not a cryptographic hash:
    /// it finds accidents (a torn write, a flipped byte), and a file's key is checked against the one asked for.
    static func fnv1a(_ bytes: some Sequence<UInt8>) -> UInt64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in bytes { hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01b3 }
        return hash
    }

    /// Reads a payload front to back; every read checks what remains and returns `nil` past the end.
    private struct Reader {
        var bytes: ArraySlice<UInt8>

        var isAtEnd: Bool { bytes.isEmpty }

        mutating func bytes(_ count: UInt64) -> ArraySlice<UInt8>? {
            guard count <= UInt64(bytes.count) else { return nil }
            let end = bytes.startIndex + Int(count)
            defer { bytes = bytes[end...] }
            return bytes[bytes.startIndex..<end]
        }

        mutating func uint64() -> UInt64? {
            guard let raw = bytes(8) else { return nil }
            return raw.reversed().reduce(0) { $0 << 8 | UInt64($1) }
        }

        mutating func uint32() -> UInt32? {
            guard let raw = bytes(4) else { return nil }
            return raw.reversed().reduce(0) { $0 << 8 | UInt32($1) }
        }

        mutating func string() -> String? {
            guard let count = uint32(), let raw = bytes(UInt64(count)) else { return nil }
            return String(validating: raw, as: UTF8.self)
        }

        mutating func headers() -> HTTPHeaders? {
            guard let count = uint32() else { return nil }
            // Each field takes at least 8 bytes: a count beyond that is a lie, whatever memory it would ask for.
            guard UInt64(count) * 8 <= UInt64(bytes.count) else { return nil }
            var fields: [HTTPHeaders.Field] = []
            fields.reserveCapacity(Int(count))
            for _ in 0..<count {
                guard let name = string(), let value = string() else { return nil }
                fields.append(HTTPHeaders.Field(name: name, value: value))
            }
            return HTTPHeaders(fields)
        }
    }
}
