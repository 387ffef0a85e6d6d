import Foundation
import HTTP
import Testing

@Suite(.noHang) struct TraceParentTests {
    @Test func parsesTheStandardsExamples() throws {
        let parent = try #require(TraceParent("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"))
        #expect(parent.traceID.description == "4bf92f3577b34da6a3ce929d0e0e4736")
        #expect(parent.traceID.high == 0x4bf9_2f35_77b3_4da6 && parent.traceID.low == 0xa3ce_929d_0e0e_4736)
        #expect(parent.parentID.description == "00f067aa0ba902b7")
        #expect(parent.flags == .sampled)
        #expect(parent.description == "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01")
        #expect(TraceParent("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00")?.flags == [])
        // A later version may carry more, after a dash; it is written back as version 00.
        let future = try #require(
            TraceParent("cc-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-what-the-future-will-be-like"))
        #expect(future.description == "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01")
        #expect(TraceParent(" \t00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01 ") == parent)
    }

    @Test func refusesWhatTheStandardRefuses() {
        for value in [
            "00-00000000000000000000000000000000-00f067aa0ba902b7-01",  // all-zero trace id
            "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01",  // all-zero parent id
            "00-4BF92F3577B34DA6A3CE929D0E0E4736-00F067AA0BA902B7-01",  // uppercase
            "ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",  // version ff
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-extra",  // version 00 has nothing after
            "cc-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01extra",  // later fields follow a dash
            "00-4bf92f3577b34da6a3ce929d0e0e473-00f067aa0ba902b7-01",  // short trace id
            "00_4bf92f3577b34da6a3ce929d0e0e4736_00f067aa0ba902b7_01",
            "", "00", "0-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
        ] {
            #expect(TraceParent(value) == nil, "\(value)")
        }
        #expect(TraceParent.TraceID(high: 0, low: 0) == nil && TraceParent.SpanID(rawValue: 0) == nil)
        #expect(TraceParent.TraceID(hex: "4bf92f3577b34da6a3ce929d0e0e4736")?.low == 0xa3ce_929d_0e0e_4736)
        #expect(TraceParent.SpanID(hex: "00f067aa0ba902b7")?.rawValue == 0x00f0_67aa_0ba9_02b7)
        #expect(TraceParent.SpanID(hex: "00f067aa0ba902b") == nil && TraceParent.SpanID(hex: "+0f067aa0ba902b7") == nil)
    }

    @Test func randomValuesSurviveARoundTrip() throws {
        let seed = SplitMix64.seed()
        print("TraceParentTests round-trip seed: \(seed) (HTTP_TEST_SEED=\(seed) replays it)")
        var random = SplitMix64(seed: seed)
        for _ in 0..<10_000 {
            let traceID = try #require(
                TraceParent.TraceID(
                    high: random.next() >> UInt64.random(in: 0...64, using: &random), low: random.next() | 1))
            let parentID = try #require(
                TraceParent.SpanID(rawValue: random.next() | 1 << UInt64.random(in: 0...63, using: &random)))
            let parent = TraceParent(
                traceID: traceID, parentID: parentID, flags: .init(rawValue: .random(in: 0...255, using: &random)))
            let text = parent.description
            #expect(text.utf8.count == 55)
            #expect(TraceParent(text) == parent, "\(text)")
            #expect(TraceParent.TraceID(hex: traceID.description) == traceID)
        }
    }

    /// Random mutations of valid values, judged by the parser and by an independent reading of W3C Trace Context §3.2
    /// (a regular expression): both must agree on every one, and on the fields of the valid ones.
    @Test func randomMutationsAreJudgedAsTheStandardSays() {
        let seed = SplitMix64.seed()
        print("TraceParentTests mutation seed: \(seed) (HTTP_TEST_SEED=\(seed) replays it)")
        var random = SplitMix64(seed: seed)
        let alphabet = Array("0123456789abcdefABCDEFg- \té\u{0}")
        var valid = 0
        for _ in 0..<4_000 {
            var characters = Array(Self.randomValid(using: &random))
            for _ in 0..<Int.random(in: 0...3, using: &random) {
                let position = Int.random(in: 0..<characters.count, using: &random)
                switch Int.random(in: 0..<9, using: &random) {
                case 0: characters[position] = alphabet.randomElement(using: &random)!
                case 1: characters.remove(at: position)
                case 2: characters.insert(alphabet.randomElement(using: &random)!, at: position)
                case 3: characters.replaceSubrange(3..<35, with: Array(repeating: "0", count: 32))
                case 4: characters.replaceSubrange(36..<52, with: Array(repeating: "0", count: 16))
                case 5:
                    characters.replaceSubrange(
                        0..<2, with: Array(["00", "ff", "01", "cc", "fe"].randomElement(using: &random)!))
                case 6: characters += Array(["-", "-x", "x", "-00-11", ""].randomElement(using: &random)!)
                case 7: characters = Array(" \t".randomElement(using: &random).map { String($0) } ?? "") + characters
                default: characters[position] = Character(characters[position].uppercased())
                }
                if characters.isEmpty { break }
            }
            let text = String(characters)
            let parsed = TraceParent(text)
            let expected = Self.referenceParse(text)
            #expect((parsed == nil) == (expected == nil), "\(text.debugDescription)")
            if let parsed, let expected {
                valid += 1
                #expect(
                    parsed.traceID.description == expected.traceID && parsed.parentID.description == expected.parentID)
                #expect(parsed.flags.rawValue == expected.flags)
            }
        }
        #expect(valid > 200)  // the mutations leave enough valid values to compare fields
    }

    private static func randomValid(using random: inout SplitMix64) -> String {
        let traceID = TraceParent.TraceID(high: random.next(), low: random.next() | 1)!
        let parentID = TraceParent.SpanID(rawValue: random.next() | 1)!
        return TraceParent(
            traceID: traceID, parentID: parentID, flags: .init(rawValue: .random(in: 0...3, using: &random))
        )
        .description
    }

    /// §3.2, read independently: version (not `ff`), trace id, parent id, flags, lowercase hex, ids not all zeros,
    /// version 00 exactly 55 characters, later versions possibly more after a `-`; spaces and tabs around ignored.
    private static func referenceParse(_ text: String) -> (traceID: String, parentID: String, flags: UInt8)? {
        let trimmed = text.trimmingCharacters(in: CharacterSet(charactersIn: " \t"))
        let pattern = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(-.*)?$/
        guard let match = trimmed.wholeMatch(of: pattern) else { return nil }
        let (_, version, traceID, parentID, flags, rest) = match.output
        if version == "ff" || (version == "00" && rest != nil) { return nil }
        if traceID.allSatisfy({ $0 == "0" }) || parentID.allSatisfy({ $0 == "0" }) { return nil }
        return (String(traceID), String(parentID), UInt8(flags, radix: 16)!)
    }
}
