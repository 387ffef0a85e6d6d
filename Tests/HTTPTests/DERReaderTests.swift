import Foundation
import HTTP
import Testing

@Suite(.noHang) struct DERReaderTests {
    private func readAll(_ bytes: [UInt8]) throws(DERReader.Failure) -> [DERReader.Element] {
        var reader = DERReader(bytes[...])
        var elements: [DERReader.Element] = []
        while !reader.isAtEnd { elements.append(try reader.read()) }
        return elements
    }

    private func failure(_ bytes: [UInt8]) -> DERReader.Failure? {
        do {
            _ = try readAll(bytes)
            return nil
        } catch {
            return error
        }
    }

    // MARK: Lengths

    @Test(arguments: [0, 1, 127, 128, 255, 256, 1_000, 65_535, 65_536, 70_000])
    func readsTheLengthFormsDERUses(count: Int) throws {
        // Given an OCTET STRING of `count` bytes after an INTEGER
        let contents = (0..<count).map { UInt8(truncatingIfNeeded: $0) }
        let bytes = DER.element(0x02, [5]) + DER.element(0x04, contents)

        // When both are read
        let elements = try readAll(bytes)

        // Then each has its tag, contents and whole encoding
        #expect(elements.count == 2)
        #expect(elements[0].tag == .integer)
        #expect(Array(elements[0].contents) == [5])
        #expect(elements[1].tag == .octetString)
        #expect(Array(elements[1].contents) == contents)
        #expect(Array(elements[1].encoded) == Array(bytes.dropFirst(3)))
        #expect(elements[1].encoded.count == 1 + DER.length(count).count + count)
    }

    @Test func nestedReadersCountOffsetsFromTheOutermostInput() throws {
        let bytes = DER.sequence(DER.element(0x02, [1]), DER.element(0x02, [2]))
        var outer = DERReader(bytes[...])
        let sequence = try outer.read(.sequence, "the sequence")
        var inner = DERReader(contentsOf: sequence, within: outer)
        #expect(inner.offset == 2)
        _ = try inner.read(.integer, "the first integer")
        #expect(inner.offset == 5)
        let error = #expect(throws: DERReader.Failure.self) { try inner.read(.sequence, "a sequence") }
        #expect(error?.description == "expected a sequence (tag 0x30), found tag 0x02 at byte 5")
    }

    struct Malformed: Sendable, CustomTestStringConvertible {
        let name: String
        let bytes: [UInt8]
        let failure: String

        var testDescription: String { name }

        static let all: [Malformed] = [
            Malformed(name: "nothing", bytes: [], failure: ""),  // no failure: nothing to read
            Malformed(
                name: "a tag alone", bytes: [0x30],
                failure: "the input ends before the length of element 0x30 at byte 1"),
            Malformed(
                name: "indefinite length", bytes: [0x30, 0x80, 0, 0], failure: "indefinite length (not DER) at byte 1"),
            Malformed(name: "reserved length 0xFF", bytes: [0x30, 0xFF], failure: "a length of 127 bytes at byte 1"),
            Malformed(
                name: "nine length bytes", bytes: [0x04, 0x89] + [UInt8](repeating: 1, count: 9),
                failure: "a length of 9 bytes at byte 1"),
            Malformed(
                name: "eight length bytes claiming 2^64 - 1", bytes: [0x04, 0x88] + [UInt8](repeating: 0xFF, count: 8),
                failure: "element 0x04 claims 18446744073709551615 bytes but only 0 are left at byte 1"),
            Malformed(
                name: "length bytes cut off", bytes: [0x04, 0x82, 0x01],
                failure: "the input ends inside the length of element 0x04 at byte 1"),
            Malformed(
                name: "a leading zero length byte", bytes: [0x04, 0x81, 0x00],
                failure: "a length with a leading zero byte at byte 1"),
            Malformed(
                name: "long form below 128", bytes: [0x04, 0x81, 0x05, 1, 2, 3, 4, 5],
                failure: "a long-form length below 128 at byte 1"),
            Malformed(
                name: "contents cut off", bytes: [0x02, 0x01, 0x05, 0x04, 0x03, 0x01],
                failure: "element 0x04 claims 3 bytes but only 1 are left at byte 4"),
            Malformed(
                name: "a multi-byte tag", bytes: [0x1F, 0x81, 0x01, 0x00],
                failure: "unsupported multi-byte tag 0x1f at byte 0"),
        ]
    }

    @Test(arguments: Malformed.all)
    func malformedInputFailsNamingTheByte(_ input: Malformed) {
        #expect(failure(input.bytes)?.description ?? "" == input.failure)
    }

    @Test func aFailedReadLeavesTheReaderWhereItWas() throws {
        let bytes: [UInt8] = [0x02, 0x01, 0x07]
        var reader = DERReader(bytes[...])
        #expect(throws: DERReader.Failure.self) { try reader.read(.sequence, "a sequence") }
        #expect(reader.offset == 0)
        #expect(try reader.readIfPresent(.sequence, "a sequence") == nil)
        #expect(try reader.read(.integer, "the integer").contents.first == 7)
        #expect(reader.isAtEnd)
        #expect(reader.nextTag == nil)
    }

    @Test func tagsPrintAsHex() {
        #expect(DERReader.Tag.sequence.description == "0x30")
        #expect(DERReader.Tag.contextSpecific(0).description == "0xa0")
        #expect(DERReader.Tag.contextSpecific(3).rawValue == 0xA3)
    }

    // MARK: Randomised

    @Test func randomBytesNeverTrapAndEveryElementLiesWithinTheInput() {
        let seed = randomSeed("DERReaderTests.randomBytes")
        var random = SplitMix64(seed: seed)
        for _ in 0..<10_000 {
            // Bias towards inputs that look like DER: a plausible tag and length first, half the time.
            var bytes = DER.randomBytes(0...40, using: &random)
            if Bool.random(using: &random), bytes.count >= 2 {
                bytes[0] = [0x30, 0x02, 0x04, 0xA0].randomElement(using: &random)!
                bytes[1] = [0x81, 0x82, 0x84, 0x88, UInt8(bytes.count - 2)].randomElement(using: &random)!
            }
            var reader = DERReader(bytes[...])
            while !reader.isAtEnd {
                let before = reader.offset
                guard let element = try? reader.read() else { break }
                #expect(reader.offset > before, "seed \(seed): \(bytes)")
                #expect(element.encoded.startIndex >= 0 && element.encoded.endIndex <= bytes.count, "seed \(seed)")
                #expect(element.contents.endIndex == element.encoded.endIndex, "seed \(seed)")
                #expect(Array(element.encoded) == Array(bytes[element.encoded.startIndex..<reader.offset]))
            }
        }
    }

    @Test func randomTreesReadBackExactlyAsWritten() throws {
        let seed = randomSeed("DERReaderTests.randomTrees")
        var random = SplitMix64(seed: seed)

        indirect enum Node {
            case primitive(tag: UInt8, contents: [UInt8])
            case constructed(tag: UInt8, children: [Node])

            var encoded: [UInt8] {
                switch self {
                case .primitive(let tag, let contents): DER.element(tag, contents)
                case .constructed(let tag, let children): DER.element(tag, children.flatMap(\.encoded))
                }
            }
        }

        func tree(depth: Int) -> Node {
            if depth == 0 || Int.random(in: 0..<3, using: &random) == 0 {
                let tag = [UInt8(0x02), 0x03, 0x04, 0x05, 0x06, 0x0C, 0x17, 0x80].randomElement(using: &random)!
                return .primitive(tag: tag, contents: DER.randomBytes(0...300, using: &random))
            }
            let tag = [UInt8(0x30), 0x31, 0xA0, 0xA3].randomElement(using: &random)!
            return .constructed(
                tag: tag, children: (0..<Int.random(in: 0...4, using: &random)).map { _ in tree(depth: depth - 1) })
        }

        func check(_ node: Node, _ reader: inout DERReader) throws {
            let element = try reader.read()
            #expect(Array(element.encoded) == node.encoded, "seed \(seed)")
            switch node {
            case .primitive(let tag, let contents):
                #expect(element.tag.rawValue == tag && Array(element.contents) == contents, "seed \(seed)")
            case .constructed(let tag, let children):
                #expect(element.tag.rawValue == tag, "seed \(seed)")
                var inner = DERReader(contentsOf: element, within: reader)
                for child in children { try check(child, &inner) }
                #expect(inner.isAtEnd, "seed \(seed)")
            }
        }

        for _ in 0..<500 {
            let node = tree(depth: 4)
            let bytes = node.encoded
            var reader = DERReader(bytes[...])
            try check(node, &reader)
            #expect(reader.isAtEnd, "seed \(seed)")
        }
    }
}
