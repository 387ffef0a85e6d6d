import Foundation
import HTTP
import HTTPTestSupport
import Testing

@testable import HTTPAuth

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#elseif canImport(Android)
import Android
#endif

@Suite(.noHang) struct CredentialStoreTests {
    struct TokenBundle: Codable, Equatable, Sendable {
        var accessToken: String
        var refreshToken: String
        var expiresAt: Date

        init(accessToken: String, refreshToken: String, expiresAt: Date) {
            self.accessToken = accessToken
            self.refreshToken = refreshToken
            self.expiresAt = expiresAt
        }

        init(number: Int, size: Int = 0) {
            let padding = String(repeating: "x", count: size)
            accessToken = "access-\(number)-\(padding)"
            refreshToken = "refresh-\(number)"
            expiresAt = Date(timeIntervalSinceReferenceDate: 760_000_000.123_456 + Double(number))
        }

        /// The number the bundle was made from, if all its fields agree on it.
        var number: Int? {
            guard let number = Int(refreshToken.dropFirst("refresh-".count)),
                accessToken.hasPrefix("access-\(number)-"),
                expiresAt == Date(timeIntervalSinceReferenceDate: 760_000_000.123_456 + Double(number))
            else { return nil }
            return number
        }
    }

    enum Kind: String, CaseIterable, Sendable {
        case memory, file

        /// A new, empty store; a file store keeps its files in `root/credentials`.
        func makeStore(in root: URL) -> any CredentialStore {
            switch self {
            case .memory: InMemoryCredentialStore()
            case .file: FileCredentialStore(directory: root.appending(path: "credentials", directoryHint: .isDirectory))
            }
        }
    }

    // MARK: - Every store

    @Test(arguments: Kind.allCases)
    func aSavedValueLoadsBackEqual(kind: Kind) async throws {
        try await withTemporaryDirectory { root in
            let store = kind.makeStore(in: root)
            let tokens = TokenBundle(number: 1)
            try await store.save(tokens, for: "tokens")
            #expect(try await store.load(TokenBundle.self, for: "tokens") == tokens)
        }
    }

    @Test(arguments: Kind.allCases)
    func savingAgainReplacesTheValue(kind: Kind) async throws {
        try await withTemporaryDirectory { root in
            let store = kind.makeStore(in: root)
            try await store.save(TokenBundle(number: 1), for: "tokens")
            try await store.save(TokenBundle(number: 2), for: "tokens")
            #expect(try await store.load(TokenBundle.self, for: "tokens") == TokenBundle(number: 2))
        }
    }

    @Test(arguments: Kind.allCases)
    func aMissingKeyLoadsAsNil(kind: Kind) async throws {
        try await withTemporaryDirectory { root in
            let store = kind.makeStore(in: root)
            #expect(try await store.load(TokenBundle.self, for: "tokens") == nil)
            try await store.save(TokenBundle(number: 1), for: "other")
            #expect(try await store.load(TokenBundle.self, for: "tokens") == nil)
        }
    }

    @Test(arguments: Kind.allCases)
    func deletingRemovesOnlyThatKeyAndDeletingAgainSucceeds(kind: Kind) async throws {
        try await withTemporaryDirectory { root in
            let store = kind.makeStore(in: root)
            try await store.save(TokenBundle(number: 1), for: "tokens")
            try await store.save(TokenBundle(number: 2), for: "other")

            try await store.delete(for: "tokens")
            #expect(try await store.load(TokenBundle.self, for: "tokens") == nil)
            #expect(try await store.load(TokenBundle.self, for: "other") == TokenBundle(number: 2))

            try await store.delete(for: "tokens")
            try await store.delete(for: "never-saved")
        }
    }

    @Test(arguments: Kind.allCases)
    func aValueThatCannotBeEncodedThrowsAndKeepsTheOldValue(kind: Kind) async throws {
        try await withTemporaryDirectory { root in
            let store = kind.makeStore(in: root)
            try await store.save(TokenBundle(number: 1), for: "tokens")

            // JSON has no NaN.
            let error = await #expect(throws: CredentialStoreError.self) {
                try await store.save(Double.nan, for: "tokens")
            }
            guard let error, error.code == .encodingFailed else {
                Issue.record("expected encodingFailed, got \(String(describing: error))")
                return
            }
            #expect(error.key == "tokens")
            #expect(error.underlyingError != nil)
            #expect(try await store.load(TokenBundle.self, for: "tokens") == TokenBundle(number: 1))
        }
    }

    @Test(arguments: Kind.allCases)
    func loadingAsAnotherTypeThrowsCorruptedNamingTheKey(kind: Kind) async throws {
        try await withTemporaryDirectory { root in
            let store = kind.makeStore(in: root)
            try await store.save("just a string", for: "tokens")

            let error = await #expect(throws: CredentialStoreError.self) {
                try await store.load(TokenBundle.self, for: "tokens")
            }
            guard let error, error.code == .corrupted else {
                Issue.record("expected corrupted, got \(String(describing: error))")
                return
            }
            #expect(error.key == "tokens")
            #expect(error.description.contains("\"tokens\""))
            #expect(!error.description.contains("just a string"))
        }
    }

    @Test(arguments: Kind.allCases)
    func canonicallyEquivalentKeysAreTheSameKey(kind: Kind) async throws {
        try await withTemporaryDirectory { root in
            let store = kind.makeStore(in: root)
            try await store.save(TokenBundle(number: 1), for: "caf\u{E9}")  // é, one scalar
            #expect(try await store.load(TokenBundle.self, for: "cafe\u{301}") == TokenBundle(number: 1))  // e + ◌́
        }
    }

    @Test(arguments: Kind.allCases)
    func concurrentSavesAndLoadsStayConsistent(kind: Kind) async throws {
        try await withTemporaryDirectory { root in
            let store = kind.makeStore(in: root)
            try await withThrowingTaskGroup(of: Void.self) { group in
                for number in 0..<100 {
                    group.addTask {
                        // Ten keys, each saved by ten tasks, and one key every task saves and reads.
                        let key = "key-\(number % 10)"
                        try await store.save(TokenBundle(number: number), for: key)
                        let own = try await store.load(TokenBundle.self, for: key)
                        #expect(own?.number.map { $0 % 10 } == number % 10)

                        let shared = try await store.load(TokenBundle.self, for: "shared")
                        #expect(shared == nil || shared?.number != nil)
                        try await store.save(TokenBundle(number: number), for: "shared")
                        if number.isMultiple(of: 7) { try await store.delete(for: "shared") }
                    }
                }
                try await group.waitForAll()
            }
            for index in 0..<10 {
                let value = try await store.load(TokenBundle.self, for: "key-\(index)")
                #expect(value?.number.map { $0 % 10 } == index)
            }
            let shared = try await store.load(TokenBundle.self, for: "shared")
            #expect(shared == nil || shared?.number != nil)
        }
    }

    @Test func theProtocolDocumentationExampleRuns() async throws {
        try await withTemporaryDirectory { credentialsDirectory in
            let expiry = Date(timeIntervalSinceReferenceDate: 800_000_000)
            // The example in CredentialStore's documentation:
            #if canImport(Security)
            let store: any CredentialStore = KeychainCredentialStore(service: "com.example.app")
            #else
            let store: any CredentialStore = FileCredentialStore(directory: credentialsDirectory)
            #endif

            try await store.save(TokenBundle(accessToken: "a", refreshToken: "r", expiresAt: expiry), for: "tokens")
            if let tokens = try await store.load(TokenBundle.self, for: "tokens") {
                print(tokens.expiresAt)  // never the tokens themselves
            }
            try await store.delete(for: "tokens")  // on logout

            #expect(try await store.load(TokenBundle.self, for: "tokens") == nil)
        }
    }

    // MARK: - FileCredentialStore: layout and permissions

    @Test func theFileIsOwnerOnlyInAnOwnerOnlyDirectoryCreatedWithItsParents() async throws {
        try await withTemporaryDirectory { root in
            let directory = root.appending(path: "a/b/credentials", directoryHint: .isDirectory)
            let store = FileCredentialStore(directory: directory)
            try await store.save(TokenBundle(number: 1), for: "tokens")

            #expect(try permissions(of: directory) == 0o700)
            #expect(try permissions(of: root.appending(path: "a/b")) == 0o700)
            #expect(try permissions(of: root.appending(path: "a")) == 0o700)
            #expect(try permissions(of: directory.appending(path: "746f6b656e73.json")) == 0o600)
        }
    }

    @Test func eachKeyIsOneJSONFileNamedAfterTheKeyInHex() async throws {
        try await withTemporaryDirectory { root in
            let directory = root.appending(path: "credentials")
            let store = FileCredentialStore(directory: directory)
            try await store.save(TokenBundle(number: 1), for: "tokens")
            try await store.save(TokenBundle(number: 2), for: "Tokens")

            #expect(try listing(of: directory) == ["546f6b656e73.json", "746f6b656e73.json"])
            let data = try Data(contentsOf: directory.appending(path: "746f6b656e73.json"))
            #expect(try JSONDecoder().decode(TokenBundle.self, from: data) == TokenBundle(number: 1))
        }
    }

    @Test func savesLeaveNoTemporaryFilesBehind() async throws {
        try await withTemporaryDirectory { root in
            let directory = root.appending(path: "credentials")
            let store = FileCredentialStore(directory: directory)
            for number in 0..<30 {
                try await store.save(TokenBundle(number: number), for: "key-\(number % 3)")
            }
            _ = await #expect(throws: CredentialStoreError.self) { try await store.save(Double.nan, for: "key-0") }

            #expect(try listing(of: directory) == ["6b65792d30.json", "6b65792d31.json", "6b65792d32.json"])
        }
    }

    @Test func aReaderSeesTheOldFileOrTheNewOneNeverAPartialWrite() async throws {
        try await withTemporaryDirectory { root in
            let store = FileCredentialStore(directory: root.appending(path: "credentials"))
            // Large enough that a file rewritten in place could be read half-written.
            let values = [TokenBundle(number: 1, size: 1 << 19), TokenBundle(number: 2, size: 1 << 19)]
            try await store.save(values[0], for: "tokens")

            let isWriting = Locked(true)
            let writer = Task {
                defer { isWriting.withLock { $0 = false } }
                for round in 1...20 { try await store.save(values[round % 2], for: "tokens") }
            }
            var readsDuringWrites = 0
            repeat {
                let value = try await store.load(TokenBundle.self, for: "tokens")
                #expect(value == values[0] || value == values[1])
                if isWriting.value { readsDuringWrites += 1 }
            } while isWriting.value
            try await writer.finished()
            // Reads that all came after the writes would prove nothing.
            #expect(readsDuringWrites > 0, "no read overlapped the writes")
            #expect(try await store.load(TokenBundle.self, for: "tokens") == values[0])
        }
    }

    @Test func loadRefusesAFileOthersCanReadAndSavingAgainFixesIt() async throws {
        try await withTemporaryDirectory { root in
            let directory = root.appending(path: "credentials")
            let store = FileCredentialStore(directory: directory)
            try await store.save(TokenBundle(number: 1), for: "tokens")
            let file = directory.appending(path: "746f6b656e73.json")
            #expect(chmod(file.path, 0o644) == 0)

            let error = await #expect(throws: CredentialStoreError.self) {
                try await store.load(TokenBundle.self, for: "tokens")
            }
            guard let (key, path, _) = insecurePermissions(error) else { return }
            #expect(key == "tokens")
            #expect(path == file.path)
            #expect(error?.description.contains("0644") == true)
            #expect(error?.description.contains(file.path) == true)

            try await store.save(TokenBundle(number: 2), for: "tokens")
            #expect(try permissions(of: file) == 0o600)
            #expect(try await store.load(TokenBundle.self, for: "tokens") == TokenBundle(number: 2))
        }
    }

    @Test(.enabled(if: geteuid() == 0, "only root can give a file to another user"))
    func loadRefusesAFileAnotherUserOwns() async throws {
        try await withTemporaryDirectory { root in
            let directory = root.appending(path: "credentials")
            let store = FileCredentialStore(directory: directory)
            try await store.save(TokenBundle(number: 1), for: "tokens")
            #expect(chown(directory.appending(path: "746f6b656e73.json").path, 65_534, 65_534) == 0)

            let error = await #expect(throws: CredentialStoreError.self) {
                try await store.load(TokenBundle.self, for: "tokens")
            }
            guard let (key, _, reason) = insecurePermissions(error) else { return }
            #expect(key == "tokens")
            #expect(reason.contains("owned by user ID 65534"))
        }
    }

    @Test func loadRefusesASymbolicLink() async throws {
        try await withTemporaryDirectory { root in
            let directory = root.appending(path: "credentials")
            let store = FileCredentialStore(directory: directory)
            try await store.save(TokenBundle(number: 1), for: "other")
            // An owner-only file with a valid value, outside the directory.
            let target = root.appending(path: "planted.json")
            try JSONEncoder().encode(TokenBundle(number: 2)).write(to: target)
            #expect(chmod(target.path, 0o600) == 0)
            #expect(symlink(target.path, directory.appending(path: "746f6b656e73.json").path) == 0)

            let error = await #expect(throws: CredentialStoreError.self) {
                try await store.load(TokenBundle.self, for: "tokens")
            }
            guard let (key, _, reason) = insecurePermissions(error) else { return }
            #expect(key == "tokens")
            #expect(reason.contains("symbolic link"))
        }
    }

    @Test func saveRefusesADirectoryOthersCanWriteTo() async throws {
        try await withTemporaryDirectory { root in
            let directory = root.appending(path: "shared")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: false)
            #expect(chmod(directory.path, 0o777) == 0)
            let store = FileCredentialStore(directory: directory)

            let error = await #expect(throws: CredentialStoreError.self) {
                try await store.save(TokenBundle(number: 1), for: "tokens")
            }
            guard let (key, path, _) = insecurePermissions(error) else { return }
            #expect(key == nil)
            #expect(path == directory.path)
            #expect(error?.description.contains("0777") == true)
            #expect(try listing(of: directory).isEmpty)
        }
    }

    @Test func anExistingDirectoryOthersCanOnlyReadIsUsedAsItIs() async throws {
        try await withTemporaryDirectory { root in
            let directory = root.appending(path: "credentials")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: false)
            #expect(chmod(directory.path, 0o755) == 0)
            let store = FileCredentialStore(directory: directory)

            try await store.save(TokenBundle(number: 1), for: "tokens")
            #expect(try permissions(of: directory) == 0o755)
            #expect(try await store.load(TokenBundle.self, for: "tokens") == TokenBundle(number: 1))
        }
    }

    // MARK: - FileCredentialStore: bad files, keys and paths

    @Test(arguments: ["", "{", "not json", #"{"accessToken":1}"#, #"{"accessToken":"a","refreshToken""#])
    func aCorruptedFileThrowsCorruptedNamingTheKeyAndFile(contents: String) async throws {
        try await withTemporaryDirectory { root in
            let directory = root.appending(path: "credentials")
            let store = FileCredentialStore(directory: directory)
            try await store.save(TokenBundle(number: 1), for: "tokens")
            let file = directory.appending(path: "746f6b656e73.json")
            try overwrite(file, with: Data(contents.utf8))
            #expect(try permissions(of: file) == 0o600)

            let error = await #expect(throws: CredentialStoreError.self) {
                try await store.load(TokenBundle.self, for: "tokens")
            }
            guard let error, error.code == .corrupted else {
                Issue.record("expected corrupted, got \(String(describing: error))")
                return
            }
            #expect(error.key == "tokens")
            #expect(error.path == file.path)
            #expect(error.description.contains("\"tokens\""))
            #expect(error.description.contains(file.path))
            #expect(error.description.contains("corrupted"))
        }
    }

    @Test func keysCannotNameAFileOutsideTheDirectory() async throws {
        try await withTemporaryDirectory { root in
            let directory = root.appending(path: "credentials")
            let store = FileCredentialStore(directory: directory)
            let keys = [
                "../escape", "../../etc/passwd", "a/b", "/absolute", ".", "..", "..\\x", "~", "x\0y", "tokens",
                "Tokens", "./tokens",
            ]
            for (number, key) in keys.enumerated() { try await store.save(TokenBundle(number: number), for: key) }

            #expect(try listing(of: root) == ["credentials"])
            let names = try listing(of: directory)
            #expect(names.count == keys.count)
            for name in names {
                #expect(name.hasSuffix(".json"))
                #expect(name.dropLast(5).allSatisfy { "0123456789abcdef".contains($0) })
            }
            for (number, key) in keys.enumerated() {
                #expect(try await store.load(TokenBundle.self, for: key) == TokenBundle(number: number))
            }
        }
    }

    @Test func emptyAndOverlongKeysAreRejectedAndTheLongestKeyWorks() async throws {
        try await withTemporaryDirectory { root in
            let directory = root.appending(path: "credentials")
            let store = FileCredentialStore(directory: directory)
            let longest = String(repeating: "é", count: FileCredentialStore.maximumKeyLength / 2)
            try await store.save(TokenBundle(number: 1), for: longest)
            #expect(try await store.load(TokenBundle.self, for: longest) == TokenBundle(number: 1))

            for key in ["", longest + "x"] {
                let error = await #expect(throws: CredentialStoreError.self) {
                    try await store.save(TokenBundle(number: 2), for: key)
                }
                guard let error, error.code == .invalidKey else {
                    Issue.record("expected invalidKey, got \(String(describing: error))")
                    continue
                }
                #expect(error.key == key)
                await #expect(throws: CredentialStoreError.self) { try await store.load(TokenBundle.self, for: key) }
                await #expect(throws: CredentialStoreError.self) { try await store.delete(for: key) }
            }
            #expect(try listing(of: directory).count == 1)
        }
    }

    @Test func loadAndDeleteWithoutADirectoryCreateNothing() async throws {
        try await withTemporaryDirectory { root in
            let store = FileCredentialStore(directory: root.appending(path: "credentials"))
            #expect(try await store.load(TokenBundle.self, for: "tokens") == nil)
            try await store.delete(for: "tokens")
            #expect(try listing(of: root).isEmpty)
        }
    }

    @Test func aDirectoryPathThatIsAFileGivesAnIOErrorNamingIt() async throws {
        try await withTemporaryDirectory { root in
            let notADirectory = root.appending(path: "file")
            try Data("x".utf8).write(to: notADirectory)
            let store = FileCredentialStore(directory: notADirectory)

            let saveError = await #expect(throws: CredentialStoreError.self) {
                try await store.save(TokenBundle(number: 1), for: "tokens")
            }
            guard let saveError, saveError.code == .io else {
                Issue.record("expected io, got \(String(describing: saveError))")
                return
            }
            #expect(saveError.key == "tokens")
            #expect(saveError.path == notADirectory.path)
            #expect(saveError.errno == ENOTDIR)
            #expect(saveError.description.contains(notADirectory.path))

            let loadError = await #expect(throws: CredentialStoreError.self) {
                try await store.load(TokenBundle.self, for: "tokens")
            }
            guard let loadError, loadError.code == .io, loadError.operation == "open", loadError.errno == ENOTDIR else {
                Issue.record("expected io from open, got \(String(describing: loadError))")
                return
            }
        }
    }

    // MARK: - Helpers

    /// The key, path and reason of an `.insecurePermissions` error; records an issue when it is anything else.
    private func insecurePermissions(
        _ error: CredentialStoreError?,
        sourceLocation: SourceLocation = #_sourceLocation
    ) -> (key: String?, path: String, reason: String)? {
        guard let error, error.code == .insecurePermissions, let path = error.path, let reason = error.reason else {
            Issue.record(
                "expected insecurePermissions, got \(String(describing: error))", sourceLocation: sourceLocation)
            return nil
        }
        return (error.key, path, reason)
    }

    /// Runs `body` with a new, empty directory, and removes the directory afterwards.
    private func withTemporaryDirectory(_ body: (URL) async throws -> Void) async throws {
        let root = FileManager.default.temporaryDirectory
            .appending(path: "CredentialStoreTests-\(UUID().uuidString)", directoryHint: .isDirectory)
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: root) }
        try await body(root)
    }

    private func permissions(of url: URL) throws -> mode_t {
        var info = stat()
        guard lstat(url.path, &info) == 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
        return info.st_mode & 0o777
    }

    private func listing(of directory: URL) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted()
    }

    /// Replaces the file's contents in place, keeping its permissions.
    private func overwrite(_ file: URL, with data: Data) throws {
        let handle = try FileHandle(forWritingTo: file)
        try handle.truncate(atOffset: 0)
        try handle.write(contentsOf: data)
        try handle.close()
    }
}
