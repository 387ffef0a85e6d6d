import Foundation
import HTTP
import Testing

@Suite(.noHang) struct PEMTests {
    private func block(_ label: String, _ bytes: [UInt8]) -> String {
        "-----BEGIN \(label)-----\n\(Data(bytes).base64EncodedString(options: .lineLength64Characters))\n-----END \(label)-----\n"
    }

    @Test func readsBlocksInOrderIgnoringTextAroundThem() throws {
        let text =
            "subject=CN = example.test\n" + block("CERTIFICATE", [1, 2, 3]) + "issuer=CN = CA\n\n"
            + block("PRIVATE KEY", Array(repeating: 9, count: 100))

        let blocks = try PEM.blocks(in: text)

        #expect(blocks.map(\.label) == ["CERTIFICATE", "PRIVATE KEY"])
        #expect(blocks.map(\.contents) == [Data([1, 2, 3]), Data(repeating: 9, count: 100)])
    }

    @Test func readsCRLFLineEndsAndIndentation() throws {
        let text = "  -----BEGIN CERTIFICATE-----\r\n  AQID\r\n  -----END CERTIFICATE-----\r\n"
        #expect(try PEM.blocks(in: text) == [PEM.Block(label: "CERTIFICATE", contents: Data([1, 2, 3]))])
    }

    @Test func textWithoutBlocksHasNone() throws {
        #expect(try PEM.blocks(in: "").isEmpty)
        #expect(try PEM.blocks(in: "just text\n-----BEGIN\n").isEmpty)
    }

    @Test(arguments: [
        ("-----BEGIN CERTIFICATE-----\nAQID\n", "the CERTIFICATE block of line 1 has no END line"),
        ("-----END CERTIFICATE-----\n", "line 1 ends a block never begun"),
        ("-----BEGIN CERTIFICATE-----\nAQID\n-----END KEY-----\n", "the CERTIFICATE block of line 1 ends as KEY"),
        (
            "-----BEGIN CERTIFICATE-----\n!!!!\n-----END CERTIFICATE-----\n",
            "the CERTIFICATE block of line 1 is not valid base64"
        ),
        (
            "-----BEGIN CERTIFICATE-----\n-----END CERTIFICATE-----\n",
            "the CERTIFICATE block of line 1 is not valid base64"
        ),
        (
            "x\n-----BEGIN RSA PRIVATE KEY-----\nProc-Type: 4,ENCRYPTED\nAQID\n-----END RSA PRIVATE KEY-----\n",
            "the RSA PRIVATE KEY block of line 2 has header lines (an encrypted key?), which are not supported"
        ),
        (
            "-----BEGIN A-----\nAQID\n-----BEGIN B-----\nAQID\n-----END B-----\n",
            "the A block of line 1 has no END line"
        ),
    ])
    func malformedBlocksAreRefusedWithAReason(text: String, reason: String) {
        let error = #expect(throws: PEM.Failure.self) { try PEM.blocks(in: text) }
        #expect(error?.message == reason)
    }

    @Test func randomTextNeverTraps() {
        let seed = randomSeed("PEMTests.randomText")
        var random = SplitMix64(seed: seed)
        let pieces = [
            "-----BEGIN CERTIFICATE-----", "-----END CERTIFICATE-----", "-----BEGIN ", "-----", "\n", "\r\n", "AQID",
            "====", "a:b", " ", "é", "\0", "MIIB",
        ]
        for _ in 0..<5_000 {
            let text = (0..<Int.random(in: 0...12, using: &random)).map { _ in pieces.randomElement(using: &random)! }
                .joined()
            if let blocks = try? PEM.blocks(in: text) {
                #expect(blocks.allSatisfy { !$0.contents.isEmpty }, "seed \(seed): \(text.debugDescription)")
            }
        }
    }
}
