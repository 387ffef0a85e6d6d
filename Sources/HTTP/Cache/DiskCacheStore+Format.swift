import Foundation

/// The file format of ``DiskCacheStore``: the variants of one key per file, checked end to end, so that a file cut
/// short, overwritten or made by anything else is recognised and dropped rather than served.
///
/// ```
/// magic      8 bytes   "HTTPCE02"
/// length     UInt64    the payload's length in bytes
/// payload    length    key, variant count (UInt32), then each variant: dates, status, URL, header fields,
///                      varying request fields, body
/// checksum   UInt64    FNV-1a (64 bits) of the payload
/// ```
///
/// Integers are little-endian; a string is a `UInt32` byte count and UTF-8; dates are the bits of their
/// `timeIntervalSince1970`. A file decodes only when its size is exactly `24 + length`, its checksum matches, every
/// length fits in what remains, every string is valid UTF-8 and the payload ends where it says.
///
/// Version 1 (`"HTTPCE01"`, one variant per file: the payload is the key and one variant, without a count) is still
/// read, as a key with one variant; the store writes version 2, so a file is migrated when its key is next stored.
/// Any other magic is not an entry file.
enum CacheEntryFile {
    static let magic = Array("HTTPCE02".utf8)
    static let magicVersion1 = Array("HTTPCE01".utf8)

    /// The bytes of a file holding `variants` under `key`: the longest prefix of them whose file is at most
    /// `maximumSize` bytes, or `nil` when not even the first fits (or there is none).
    static func encode(_ variants: [CacheEntry], key: String, maximumSize: Int = .max) -> Data? {
        var payload: [UInt8] = []
        payload.reserveCapacity(variants.reduce(key.utf8.count + 8) { $0 + $1.size })
        append(key, to: &payload)
        let countOffset = payload.count
        append(UInt32(0), to: &payload)
        var count: UInt32 = 0
        for variant in variants {
            let end = payload.count
            appendVariant(variant, to: &payload)
            guard payload.count + 24 <= maximumSize else {
                payload.removeSubrange(end...)
                break
            }
            count += 1
        }
        guard count > 0 else { return nil }
        withUnsafeBytes(of: count.littleEndian) { payload.replaceSubrange(countOffset..<(countOffset + 4), with: $0) }

        var file = magic
        file.reserveCapacity(payload.count + 24)
        withUnsafeBytes(of: UInt64(payload.count).littleEndian) { file.append(contentsOf: $0) }
        file.append(contentsOf: payload)
        withUnsafeBytes(of: fnv1a(payload[...]).littleEndian) { file.append(contentsOf: $0) }
        return Data(file)
    }

    /// The bytes of a version 1 file holding `entry` under `key`, as earlier releases wrote them; for tests of the
    /// migration.
    static func encodeVersion1(_ entry: CacheEntry, key: String) -> Data {
        var payload: [UInt8] = []
        append(key, to: &payload)
        appendVariant(entry, to: &payload)
        var file = magicVersion1
        withUnsafeBytes(of: UInt64(payload.count).littleEndian) { file.append(contentsOf: $0) }
        file.append(contentsOf: payload)
        withUnsafeBytes(of: fnv1a(payload[...]).littleEndian) { file.append(contentsOf: $0) }
        return Data(file)
    }

    private static func append(_ value: UInt64, to payload: inout [UInt8]) {
        withUnsafeBytes(of: value.littleEndian) { payload.append(contentsOf: $0) }
    }

    private static func append(_ value: UInt32, to payload: inout [UInt8]) {
        withUnsafeBytes(of: value.littleEndian) { payload.append(contentsOf: $0) }
    }

    private static func append(_ text: String, to payload: inout [UInt8]) {
        let bytes = Array(text.utf8)
        append(UInt32(truncatingIfNeeded: bytes.count), to: &payload)
        payload.append(contentsOf: bytes)
    }

    private static func append(_ headers: HTTPHeaders, to payload: inout [UInt8]) {
        append(UInt32(truncatingIfNeeded: headers.count), to: &payload)
        for field in headers {
            append(field.name, to: &payload)
            append(field.value, to: &payload)
        }
    }

    private static func appendVariant(_ entry: CacheEntry, to payload: inout [UInt8]) {
        append(entry.requestDate.timeIntervalSince1970.bitPattern, to: &payload)
        append(entry.responseDate.timeIntervalSince1970.bitPattern, to: &payload)
        append(UInt64(bitPattern: Int64(entry.status.rawValue)), to: &payload)
        append(entry.url?.absoluteString ?? "", to: &payload)
        append(entry.headers, to: &payload)
        append(entry.varyingRequestHeaders, to: &payload)
        append(UInt64(entry.body.count), to: &payload)
        payload.append(contentsOf: entry.body)
    }

    /// The key and variants a file holds, or `nil` when the bytes are not an intact entry file of either version.
    static func decode(_ bytes: [UInt8]) -> (key: String, variants: [CacheEntry])? {
        guard bytes.count >= 24 else { return nil }
        let isVersion1 = bytes[0..<8].elementsEqual(magicVersion1)
        guard isVersion1 || bytes[0..<8].elementsEqual(magic) else { return nil }
        var header = Reader(bytes: bytes[8..<16])
        guard let length = header.uint64(), length == UInt64(bytes.count - 24) else { return nil }
        let payload = bytes[16..<(bytes.count - 8)]
        var trailer = Reader(bytes: bytes[(bytes.count - 8)...])
        guard trailer.uint64() == fnv1a(payload) else { return nil }

        var reader = Reader(bytes: payload)
        guard let key = reader.string() else { return nil }
        let count: UInt32
        if isVersion1 {
            count = 1
        } else {
            // Each variant takes at least 44 bytes: a count beyond that is a lie, whatever memory it would ask for.
            guard let stated = reader.uint32(), stated > 0, UInt64(stated) * 44 <= UInt64(reader.bytes.count) else {
                return nil
            }
            count = stated
        }
        var variants: [CacheEntry] = []
        variants.reserveCapacity(Int(count))
        for _ in 0..<count {
            guard let variant = reader.variant() else { return nil }
            variants.append(variant)
        }
        guard reader.isAtEnd else { return nil }
        return (key, variants)
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

        mutating func variant() -> CacheEntry? {
            guard let requestBits = uint64(), let responseBits = uint64(), let statusBits = uint64(),
                let urlText = string(), let fields = headers(), let varying = headers(),
                let bodyLength = uint64(), let body = bytes(bodyLength),
                let statusCode = Int(exactly: Int64(bitPattern: statusBits))
            else { return nil }
            return CacheEntry(
                status: HTTPStatus(rawValue: statusCode),
                headers: fields,
                body: Data(body),
                url: urlText.isEmpty ? nil : URL(string: urlText),
                requestDate: Date(timeIntervalSince1970: Double(bitPattern: requestBits)),
                responseDate: Date(timeIntervalSince1970: Double(bitPattern: responseBits)),
                varyingRequestHeaders: varying
            )
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
