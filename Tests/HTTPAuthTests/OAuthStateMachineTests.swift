import Foundation
import HTTP
import Testing

@testable import HTTPAuth

/// The machine driven directly, without a loader: every state against every event, then whole flows.
///
/// A row of the table is a state, reached from a new machine by a recipe of events; a column is an event: a run
/// started (to obtain tokens, or to refresh ones that are due or were just refused), the outcome of an action the
/// machine asked for, a reset's interruption, a logout. Each cell says where the machine is afterwards and what it
/// asks its driver to do. Columns for outcomes default to "not an outcome this state waits for": nothing happens.
/// Which requests wait for a run, and when one starts, is the credential loader's machine's business
/// (`CredentialStateMachineTests`).
@Suite(.noHang) struct OAuthStateMachineTableTests {
    typealias Machine = OAuthStateMachine

    /// A state of the machine, and how to get there.
    enum Row: String, CaseIterable, CustomTestStringConvertible {
        /// Nothing known of saved credentials.
        case idle
        /// The saved credentials are known (none, or replaced by given ones).
        case idleKnowingSavedCredentials
        case getSavedCredentials, discoveryForLogIn, logIn, getTokens, savingLoginCredentials
        /// The OpenID document was missing: the RFC 8414 metadata is asked for.
        case metadataForLogIn
        /// The OpenID document named no revocation endpoint: the RFC 8414 metadata may add one.
        case metadataFillingRevocation
        case discoveryForRefresh, refreshTokens, savingRefreshedCredentials, deletingRejectedCredentials
        case logOutReadingSavedCredentials, logOutDiscovery, logOutMetadata, logOutRevoking, logOutDeletingCredentials
        case logOutEndingSession

        var testDescription: String { rawValue }
    }

    /// Something that happens to the machine.
    enum Column: String, CaseIterable, CustomTestStringConvertible {
        /// A run to obtain tokens: there are none.
        case obtain
        /// A run to refresh a1, which is due.
        case refreshDue
        /// A run to refresh a1, which the server just refused.
        case refreshRefused
        case savedCredentialsRead
        case noSavedCredentials
        /// The server answered with a discovery document.
        case discoveryDocument
        /// The server answered with a discovery document that names no revocation endpoint.
        case discoveryDocumentWithoutRevocation
        /// The server answered with tokens.
        case tokenResponse
        /// The server answered `400 invalid_grant`.
        case invalidGrant
        /// The server could not be reached.
        case unreachable
        case loginRedirected
        case loginCancelled
        /// The delegate's login failed with an error of its own.
        case loginFailed
        case noDelegate
        case credentialsSaved
        case savedCredentialsDeleted
        case logoutPageClosed
        /// An outcome reported for a run that is not the current one (one a reset interrupted).
        case outcomeOfAnotherRun
        /// A reset's first phase.
        case interrupt
        /// A reset's logout of a1.
        case logOut
        /// A reset's logout without credentials: the saved ones are read first.
        case logOutWithoutCredentials

        var testDescription: String { rawValue }

        /// Whether this is the outcome of an action the driver performed, which only the state waiting for it
        /// acts on.
        var isOutcome: Bool {
            switch self {
            case .obtain, .refreshDue, .refreshRefused, .interrupt, .logOut, .logOutWithoutCredentials: false
            default: true
            }
        }
    }

    /// Where the machine is and what it asks for.
    struct Cell: Equatable, CustomStringConvertible {
        var state: String
        var action: String
        var description: String { "\(state) → \(action)" }
    }

    // MARK: - The table

    /// The expected cells, row by row. A column missing from a row is an outcome that row does not wait for: the
    /// machine stays as it was and does nothing. Every other column is listed.
    static let table: [Row: [Column: Cell]] = [
        .idle: common("idle", knowsSaved: false, endpointsKnown: false, [:]),
        .idleKnowingSavedCredentials: common("idle", knowsSaved: true, endpointsKnown: false, [:]),
        .getSavedCredentials: common(
            "getSavedCredentials", knowsSaved: false, endpointsKnown: false,
            [
                .savedCredentialsRead: Cell(state: "idle", action: "finish: authorized s1 (logged in)"),
                .noSavedCredentials: Cell(state: "discovery", action: "send GET discovery"),
            ]),
        .discoveryForLogIn: common(
            "discovery", knowsSaved: false, endpointsKnown: false,
            [
                .discoveryDocument: Cell(state: "logIn", action: "show login"),
                .discoveryDocumentWithoutRevocation: Cell(state: "discovery", action: "send GET metadata"),
                // Not a discovery document, or none: the next document is asked for.
                .tokenResponse: Cell(state: "discovery", action: "send GET metadata"),
                .invalidGrant: Cell(state: "discovery", action: "send GET metadata"),
                // The server cannot be reached: it is not asked again.
                .unreachable: Cell(state: "idle", action: "finish: fail discoveryFailed"),
            ]),
        .metadataForLogIn: common(
            "discovery", knowsSaved: false, endpointsKnown: false,
            [
                .discoveryDocument: Cell(state: "logIn", action: "show login"),
                .discoveryDocumentWithoutRevocation: Cell(state: "logIn", action: "show login"),
                .tokenResponse: Cell(state: "idle", action: "finish: fail discoveryFailed"),
                .invalidGrant: Cell(state: "idle", action: "finish: fail discoveryFailed"),
                .unreachable: Cell(state: "idle", action: "finish: fail discoveryFailed"),
            ]),
        .metadataFillingRevocation: common(
            "discovery", knowsSaved: false, endpointsKnown: false,
            // The OpenID document's endpoints are enough to go on, whatever the metadata says.
            [
                .discoveryDocument: Cell(state: "logIn", action: "show login"),
                .discoveryDocumentWithoutRevocation: Cell(state: "logIn", action: "show login"),
                .tokenResponse: Cell(state: "logIn", action: "show login"),
                .invalidGrant: Cell(state: "logIn", action: "show login"),
                .unreachable: Cell(state: "logIn", action: "show login"),
            ]),
        .logIn: common(
            "logIn", knowsSaved: false, endpointsKnown: true,
            [
                .loginRedirected: Cell(state: "getTokens", action: "send POST /token authorization_code"),
                .loginCancelled: Cell(state: "idle", action: "finish: fail loginCancelled"),
                .loginFailed: Cell(state: "idle", action: "finish: fail loginFailed"),
                .noDelegate: Cell(state: "idle", action: "finish: fail noDelegate"),
            ]),
        .getTokens: common(
            "getTokens", knowsSaved: false, endpointsKnown: true,
            [
                .discoveryDocument: Cell(state: "idle", action: "finish: fail invalidTokenResponse"),
                .discoveryDocumentWithoutRevocation: Cell(state: "idle", action: "finish: fail invalidTokenResponse"),
                .tokenResponse: Cell(state: "savingCredentials", action: "save a2"),
                .invalidGrant: Cell(state: "idle", action: "finish: fail tokenRequestFailed"),
                .unreachable: Cell(state: "idle", action: "finish: fail endpointUnreachable"),
            ]),
        .savingLoginCredentials: common(
            "savingCredentials", knowsSaved: false, endpointsKnown: true,
            [.credentialsSaved: Cell(state: "idle", action: "finish: authorized a2 (logged in)")]),
        .discoveryForRefresh: common(
            "discovery", knowsSaved: true, endpointsKnown: false,
            [
                .discoveryDocument: Cell(state: "refreshTokens", action: "send POST /token refresh_token"),
                .discoveryDocumentWithoutRevocation: Cell(state: "discovery", action: "send GET metadata"),
                .tokenResponse: Cell(state: "discovery", action: "send GET metadata"),
                .invalidGrant: Cell(state: "discovery", action: "send GET metadata"),
                .unreachable: Cell(state: "idle", action: "finish: fail discoveryFailed"),
            ]),
        .refreshTokens: common(
            "refreshTokens", knowsSaved: true, endpointsKnown: true,
            [
                .discoveryDocument: Cell(state: "idle", action: "finish: fail invalidTokenResponse"),
                .discoveryDocumentWithoutRevocation: Cell(state: "idle", action: "finish: fail invalidTokenResponse"),
                .tokenResponse: Cell(state: "savingCredentials", action: "save a2"),
                .invalidGrant: Cell(state: "deletingRejectedCredentials", action: "delete saved credentials"),
                .unreachable: Cell(state: "idle", action: "finish: fail endpointUnreachable"),
            ]),
        .savingRefreshedCredentials: common(
            "savingCredentials", knowsSaved: true, endpointsKnown: true,
            [.credentialsSaved: Cell(state: "idle", action: "finish: authorized a2 (refreshed)")]),
        .deletingRejectedCredentials: common(
            "deletingRejectedCredentials", knowsSaved: true, endpointsKnown: true,
            [.savedCredentialsDeleted: Cell(state: "logIn", action: "show login")]),
        .logOutReadingSavedCredentials: common(
            "logOutReadingSavedCredentials", knowsSaved: false, endpointsKnown: false,
            [
                .savedCredentialsRead: Cell(state: "logOutDiscovery", action: "send GET discovery"),
                .noSavedCredentials: Cell(state: "logOutDeletingCredentials", action: "delete saved credentials"),
            ]),
        .logOutDiscovery: common(
            "logOutDiscovery", knowsSaved: false, endpointsKnown: false,
            [
                .discoveryDocument: Cell(state: "logOutRevoking", action: "send POST /revoke refresh_token"),
                .discoveryDocumentWithoutRevocation: Cell(state: "logOutDiscovery", action: "send GET metadata"),
                .tokenResponse: Cell(state: "logOutDiscovery", action: "send GET metadata"),
                .invalidGrant: Cell(state: "logOutDiscovery", action: "send GET metadata"),
                // Without endpoints there is nothing to revoke; the logout goes on.
                .unreachable: Cell(state: "logOutDeletingCredentials", action: "delete saved credentials"),
            ]),
        .logOutMetadata: common(
            "logOutDiscovery", knowsSaved: false, endpointsKnown: false,
            [
                .discoveryDocument: Cell(state: "logOutRevoking", action: "send POST /revoke refresh_token"),
                // No revocation endpoint anywhere: the tokens are not revoked, and the outcome will say so.
                .discoveryDocumentWithoutRevocation: Cell(
                    state: "logOutDeletingCredentials", action: "delete saved credentials"),
                .tokenResponse: Cell(state: "logOutDeletingCredentials", action: "delete saved credentials"),
                .invalidGrant: Cell(state: "logOutDeletingCredentials", action: "delete saved credentials"),
                .unreachable: Cell(state: "logOutDeletingCredentials", action: "delete saved credentials"),
            ]),
        .logOutRevoking: common(
            "logOutRevoking", knowsSaved: false, endpointsKnown: true,
            // Whatever the answer, the access token is revoked next; a failure is reported when the logout ends.
            [
                .discoveryDocument: Cell(state: "logOutRevoking", action: "send POST /revoke access_token"),
                .discoveryDocumentWithoutRevocation: Cell(
                    state: "logOutRevoking", action: "send POST /revoke access_token"),
                .tokenResponse: Cell(state: "logOutRevoking", action: "send POST /revoke access_token"),
                .invalidGrant: Cell(state: "logOutRevoking", action: "send POST /revoke access_token"),
                .unreachable: Cell(state: "logOutRevoking", action: "send POST /revoke access_token"),
            ]),
        .logOutDeletingCredentials: common(
            "logOutDeletingCredentials", knowsSaved: false, endpointsKnown: true,
            [.savedCredentialsDeleted: Cell(state: "logOutEndingSession", action: "show logout")]),
        .logOutEndingSession: common(
            "logOutEndingSession", knowsSaved: false, endpointsKnown: true,
            [.logoutPageClosed: Cell(state: "idle", action: "finish logout (revoked, no problem)")]),
    ]

    /// A row's cells for the columns every state answers: a run started replaces what runs (the loader starts one
    /// only when none runs) — reading the saved credentials while they are unknown, then a login or a refresh,
    /// after Discovery while the endpoints are unknown; an interruption drops a run but never a logout; a logout
    /// revokes, or reads the saved credentials first.
    static func common(
        _ state: String, knowsSaved: Bool, endpointsKnown: Bool, _ outcomes: [Column: Cell]
    ) -> [Column: Cell] {
        let discovery = Cell(state: "discovery", action: "start: send GET discovery")
        let obtain =
            !knowsSaved
            ? Cell(state: "getSavedCredentials", action: "start: read saved credentials")
            : endpointsKnown ? Cell(state: "logIn", action: "start: show login") : discovery
        let refresh =
            endpointsKnown ? Cell(state: "refreshTokens", action: "start: send POST /token refresh_token") : discovery
        let isRun = !state.hasPrefix("logOut") && state != "idle"
        return outcomes.merging(
            [
                .obtain: obtain,
                .refreshDue: refresh,
                .refreshRefused: refresh,
                .interrupt: isRun ? Cell(state: "idle", action: "interrupt the run") : Cell(state: state, action: "—"),
                .logOut: endpointsKnown
                    ? Cell(state: "logOutRevoking", action: "log out: send POST /revoke refresh_token")
                    : Cell(state: "logOutDiscovery", action: "log out: send GET discovery"),
                .logOutWithoutCredentials: Cell(
                    state: "logOutReadingSavedCredentials", action: "log out: read saved credentials"),
            ],
            uniquingKeysWith: { outcome, _ in outcome })
    }

    @Test(arguments: Row.allCases, Column.allCases)
    func everyStateAgainstEveryEvent(row: Row, column: Column) throws {
        var machine = try Self.machine(in: row)
        let before = Self.describe(machine)
        let expected = try #require(
            Self.table[row]?[column] ?? (column.isOutcome ? Cell(state: before, action: "none") : nil),
            "the table has no cell for \(row) × \(column)")
        let action = try Self.apply(column, to: &machine)
        #expect(Cell(state: Self.describe(machine), action: action) == expected)
    }

    @Test(arguments: Row.allCases)
    func eachRowsRecipeReachesItsState(row: Row) throws {
        let machine = try Self.machine(in: row)
        let expected: String =
            switch row {
            case .idle, .idleKnowingSavedCredentials: "idle"
            case .getSavedCredentials: "getSavedCredentials"
            case .discoveryForLogIn, .discoveryForRefresh, .metadataForLogIn, .metadataFillingRevocation: "discovery"
            case .logIn: "logIn"
            case .getTokens: "getTokens"
            case .savingLoginCredentials, .savingRefreshedCredentials: "savingCredentials"
            case .refreshTokens: "refreshTokens"
            case .deletingRejectedCredentials: "deletingRejectedCredentials"
            case .logOutReadingSavedCredentials: "logOutReadingSavedCredentials"
            case .logOutDiscovery, .logOutMetadata: "logOutDiscovery"
            case .logOutRevoking: "logOutRevoking"
            case .logOutDeletingCredentials: "logOutDeletingCredentials"
            case .logOutEndingSession: "logOutEndingSession"
            }
        #expect(Self.describe(machine) == expected)
    }

    // MARK: - Recipes

    static func machine(in row: Row) throws -> Machine {
        switch row {
        case .idle: return makeMachine()
        case .idleKnowingSavedCredentials: return makeMachine(knowsSavedCredentials: true)
        case .getSavedCredentials: return try reach(makeMachine(), [.obtain])
        case .discoveryForLogIn: return try reach(machine(in: .getSavedCredentials), [.noSavedCredentials])
        case .metadataForLogIn: return try reach(machine(in: .discoveryForLogIn), [.invalidGrant])
        case .metadataFillingRevocation:
            return try reach(machine(in: .discoveryForLogIn), [.discoveryDocumentWithoutRevocation])
        case .logIn: return try reach(machine(in: .discoveryForLogIn), [.discoveryDocument])
        case .getTokens: return try reach(machine(in: .logIn), [.loginRedirected])
        case .savingLoginCredentials: return try reach(machine(in: .getTokens), [.tokenResponse])
        case .discoveryForRefresh: return try reach(makeMachine(knowsSavedCredentials: true), [.refreshDue])
        case .refreshTokens: return try reach(machine(in: .discoveryForRefresh), [.discoveryDocument])
        case .savingRefreshedCredentials: return try reach(machine(in: .refreshTokens), [.tokenResponse])
        case .deletingRejectedCredentials: return try reach(machine(in: .refreshTokens), [.invalidGrant])
        case .logOutReadingSavedCredentials: return try reach(makeMachine(), [.logOutWithoutCredentials])
        case .logOutDiscovery: return try reach(makeMachine(), [.logOut])
        case .logOutMetadata: return try reach(machine(in: .logOutDiscovery), [.invalidGrant])
        case .logOutRevoking: return try reach(machine(in: .logOutDiscovery), [.discoveryDocument])
        case .logOutDeletingCredentials:
            return try reach(machine(in: .logOutRevoking), [.tokenResponse, .tokenResponse])
        case .logOutEndingSession: return try reach(machine(in: .logOutDeletingCredentials), [.savedCredentialsDeleted])
        }
    }

    private static func reach(_ machine: Machine, _ columns: [Column]) throws -> Machine {
        var machine = machine
        for column in columns { _ = try apply(column, to: &machine) }
        return machine
    }

    // MARK: - Applying an event

    /// Applies `column` to `machine` at ``now``, and describes what the machine asked for.
    static func apply(_ column: Column, to machine: inout Machine) throws -> String {
        let run = machine.currentRun ?? Machine.RunID(rawValue: 0)
        func outcome(_ event: Machine.Event, of id: Machine.RunID = run) -> String {
            describe(machine.handle(event, of: id, at: now))
        }
        switch column {
        case .obtain: return "start: " + describe(machine.start(.obtain, at: now).1)
        case .refreshDue: return "start: " + describe(machine.start(.refresh(expiringA1, refused: false), at: now).1)
        case .refreshRefused: return "start: " + describe(machine.start(.refresh(expiringA1, refused: true), at: now).1)
        case .savedCredentialsRead: return outcome(.savedCredentialsRead(savedS1))
        case .noSavedCredentials: return outcome(.savedCredentialsRead(nil))
        case .discoveryDocument: return outcome(.responseReceived(response(json: discoveryDocument)))
        case .discoveryDocumentWithoutRevocation:
            return outcome(.responseReceived(response(json: discoveryDocumentWithoutRevocation)))
        case .tokenResponse: return outcome(.responseReceived(response(json: try tokenResponse())))
        case .invalidGrant:
            return outcome(.responseReceived(response(status: .badRequest, json: #"{"error":"invalid_grant"}"#)))
        case .unreachable:
            return outcome(.responseReceived(.failure(HTTPError(.cannotConnect, request: HTTPRequest()))))
        case .loginRedirected: return outcome(.loginAnswered(.redirected(callback)))
        case .loginCancelled: return outcome(.loginAnswered(.cancelled))
        case .loginFailed: return outcome(.loginAnswered(.failed(.loginFailed(CancellationError()))))
        case .noDelegate: return outcome(.loginAnswered(.noDelegate))
        case .credentialsSaved: return outcome(.credentialsSaved)
        case .savedCredentialsDeleted: return outcome(.savedCredentialsDeleted(nil))
        case .logoutPageClosed: return outcome(.logoutPageClosed)
        case .outcomeOfAnotherRun:
            return outcome(.credentialsSaved, of: Machine.RunID(rawValue: run.rawValue + 1_000))
        case .interrupt:
            return machine.interrupt() == nil ? "—" : "interrupt the run"
        case .logOut: return "log out: " + describe(machine.logOut(validA1).1)
        case .logOutWithoutCredentials: return "log out: " + describe(machine.logOut(nil).1)
        }
    }

    // MARK: - Descriptions

    static func describe(_ machine: Machine) -> String { machine.position.rawValue }

    static func describe(_ action: Machine.Action) -> String {
        switch action {
        case .readSavedCredentials: return "read saved credentials"
        case .send(let request):
            guard request.method == .post else {
                return request.path.contains("oauth-authorization-server") ? "send GET metadata" : "send GET discovery"
            }
            let form = formFields(of: request)
            let field = form["grant_type"] ?? form["token_type_hint"] ?? "?"
            return "send POST \(request.path) \(field)"
        case .showLogin: return "show login"
        case .save(let credentials): return "save \(credentials.accessToken)"
        case .deleteSavedCredentials: return "delete saved credentials"
        case .showLogout: return "show logout"
        case .finish(.authorized(let credentials), let session):
            return "finish: authorized \(credentials.accessToken)" + (session.map { " (\($0))" } ?? "")
        case .finish(.failed(let error, let forgets), let session):
            return "finish: fail \(error.code)" + (forgets ? ", forgetting the credentials" : "")
                + (session.map { " (\($0))" } ?? "")
        case .finishLogout(let logout):
            let revocation =
                switch logout.revocation {
                case .revoked: "revoked"
                case .unsupported: "not revoked: unsupported"
                case .failed(let error): "revocation failed: \(error.code)"
                case .nothingToRevoke: "nothing to revoke"
                }
            return "finish logout (\(revocation), \(logout.problem.map { "\($0.code)" } ?? "no problem"))"
        case .none: return "none"
        }
    }
}

// MARK: - Fixtures

/// The fixed "now" of the machine tests.
private let now = Date(timeIntervalSince1970: 1_800_000_000)

private let machineConfiguration = oauthConfiguration(scopes: ["openid"])

private let fixedSecrets = OAuthStateMachine.LoginSecrets(
    pkce: try! PKCE(verifier: String(repeating: "v", count: 43)), state: "state-1", nonce: "nonce-1")

private func makeMachine(
    configuration: OAuthConfiguration = machineConfiguration, knowsSavedCredentials: Bool = false
) -> OAuthStateMachine {
    OAuthStateMachine(
        configuration: configuration, knowsSavedCredentials: knowsSavedCredentials, makeLoginSecrets: { fixedSecrets })
}

/// Valid for an hour.
private let validA1 = OAuthCredentials(
    accessToken: "a1", refreshToken: "r1", expirationDate: now.addingTimeInterval(3_600), issuedAt: now)
/// Expires in 30 s: inside the 60 s refresh window.
private let expiringA1 = OAuthCredentials(
    accessToken: "a1", refreshToken: "r1", expirationDate: now.addingTimeInterval(30),
    issuedAt: now.addingTimeInterval(-3_570))
/// Saved by an earlier session, valid.
private let savedS1 = OAuthCredentials(
    accessToken: "s1", refreshToken: "rs", expirationDate: now.addingTimeInterval(3_600), issuedAt: now)

private let callback = URL(string: "com.example.app:/oauth/callback?code=c0de&state=state-1")!

private let discoveryDocument = """
    {"issuer": "https://id.example.com", "authorization_endpoint": "https://id.example.com/authorize",
     "token_endpoint": "https://id.example.com/token", "revocation_endpoint": "https://id.example.com/revoke",
     "end_session_endpoint": "https://id.example.com/logout"}
    """

/// An OpenID document without a revocation endpoint (some providers publish it only in their RFC 8414 metadata).
private let discoveryDocumentWithoutRevocation = """
    {"issuer": "https://id.example.com", "authorization_endpoint": "https://id.example.com/authorize",
     "token_endpoint": "https://id.example.com/token", "end_session_endpoint": "https://id.example.com/logout"}
    """

/// Tokens a2 and r2 for an hour, with an ID token for the fixed nonce.
private func tokenResponse(
    lifetime: Int = 3_600, refreshToken: String? = "r2", accessToken: String = "a2"
) throws
    -> String
{
    let idToken = makeJWT([
        "iss": "https://id.example.com", "sub": "alice", "aud": "test-app", "nonce": "nonce-1",
        "iat": now.timeIntervalSince1970, "exp": now.timeIntervalSince1970 + 86_400,
    ])
    var body: [String: Any] = [
        "access_token": accessToken, "token_type": "Bearer", "expires_in": lifetime, "id_token": idToken,
    ]
    if let refreshToken { body["refresh_token"] = refreshToken }
    return String(decoding: try JSONSerialization.data(withJSONObject: body), as: UTF8.self)
}

private func response(status: HTTPStatus = .ok, json: String) -> HTTPResult {
    .success(HTTPResponse(request: HTTPRequest(), status: status, body: Data(json.utf8)))
}

private func formFields(of request: HTTPRequest) -> [String: String] {
    guard let body = try? request.body.encode(), let text = String(data: body, encoding: .utf8) else { return [:] }
    var components = URLComponents()
    components.percentEncodedQuery = text
    return Dictionary(
        (components.queryItems ?? []).map { ($0.name, $0.value ?? "") }, uniquingKeysWith: { first, _ in first })
}

/// Whole flows through the machine, event by event, checking what it sends and what it remembers.
@Suite(.noHang) struct OAuthStateMachineFlowTests {
    typealias Machine = OAuthStateMachine

    private static let knownEndpoints = OAuthEndpoints(
        issuer: "https://id.example.com",
        authorization: URL(string: "https://id.example.com/authorize")!,
        token: URL(string: "https://id.example.com/token")!,
        revocation: URL(string: "https://id.example.com/revoke")!,
        endSession: URL(string: "https://id.example.com/logout")!
    )

    private static func configuration(
        endpoints: OAuthConfiguration.Endpoints = .known(knownEndpoints),
        scopes: [String] = ["openid"],
        onInvalidGrant: OAuthConfiguration.InvalidGrantPolicy = .logIn,
        refreshLimit: OAuthConfiguration.RefreshLimit = .standard
    ) -> OAuthConfiguration {
        oauthConfiguration(
            endpoints: endpoints, scopes: scopes, onInvalidGrant: onInvalidGrant, refreshLimit: refreshLimit)
    }

    /// Starts a run to obtain tokens, or to refresh `credentials`.
    private func start(
        _ machine: inout Machine, refreshing credentials: OAuthCredentials? = nil, refused: Bool = false,
        at time: Date = now
    ) -> (Machine.RunID, Machine.Action) {
        machine.start(credentials.map { .refresh($0, refused: refused) } ?? .obtain, at: time)
    }

    private func describe(_ action: Machine.Action) -> String { OAuthStateMachineTableTests.describe(action) }

    @Test func aLoginReadsSavedCredentialsDiscoversLogsInAndRedeemsTheCodeWithItsVerifier() throws {
        var machine = makeMachine()
        let (run, first) = start(&machine)
        #expect(describe(first) == "read saved credentials")
        guard case .send(let discovery) = machine.handle(.savedCredentialsRead(nil), of: run, at: now) else {
            Issue.record("no discovery")
            return
        }
        #expect(discovery.url?.absoluteString == "https://id.example.com/.well-known/openid-configuration")
        #expect(discovery.isAuthorizationServerTraffic && discovery.authenticationMethod == nil)
        let shown = machine.handle(.responseReceived(response(json: discoveryDocument)), of: run, at: now)
        guard case .showLogin(let page) = shown else {
            Issue.record("no login page: \(describe(shown))")
            return
        }
        #expect(page.absoluteString.hasPrefix("https://id.example.com/authorize?"))
        #expect(page.queryValue("state") == "state-1" && page.queryValue("nonce") == "nonce-1")
        #expect(page.queryValue("code_challenge") == fixedSecrets.pkce.challenge)
        #expect(page.queryValue("client_id") == "test-app" && page.queryValue("scope") == "openid")

        guard case .send(let redemption) = machine.handle(.loginAnswered(.redirected(callback)), of: run, at: now)
        else {
            Issue.record("the code was not redeemed")
            return
        }
        let form = formFields(of: redemption)
        #expect(redemption.url?.absoluteString == "https://id.example.com/token")
        #expect(form["code"] == "c0de" && form["code_verifier"] == fixedSecrets.pkce.verifier)
        #expect(form["redirect_uri"] == redirectURI.absoluteString && form["client_id"] == "test-app")
        #expect(redemption.throttle == .never && !redemption.isPartOfReset)

        let tokens = machine.handle(.responseReceived(response(json: try tokenResponse())), of: run, at: now)
        #expect(describe(tokens) == "save a2")
        let done = machine.handle(.credentialsSaved, of: run, at: now)
        #expect(describe(done) == "finish: authorized a2 (logged in)")
        guard case .finish(.authorized(let credentials), _) = done else { return }
        #expect(credentials.refreshToken == "r2" && credentials.authorizationHeaderValue == "Bearer a2")
        #expect(machine.lastPath == [.getSavedCredentials, .discovery, .logIn, .getTokens, .done])
    }

    @Test func withoutTheOpenIDScopeALoginSendsNoNonceAndNeedsNoIDToken() throws {
        var machine = makeMachine(configuration: Self.configuration(scopes: ["read"]))
        let (run, first) = start(&machine)
        #expect(describe(first) == "read saved credentials")
        guard case .showLogin(let page) = machine.handle(.savedCredentialsRead(nil), of: run, at: now) else {
            Issue.record("no login page")
            return
        }
        #expect(page.queryValue("nonce") == nil)
        _ = machine.handle(.loginAnswered(.redirected(callback)), of: run, at: now)
        let body = #"{"access_token":"a2","token_type":"Bearer","expires_in":3600}"#
        #expect(describe(machine.handle(.responseReceived(response(json: body)), of: run, at: now)) == "save a2")
    }

    @Test func aCallbackWithAnotherStateFailsTheRunWithoutRedeemingItsCode() throws {
        var machine = makeMachine(configuration: Self.configuration())
        let (run, _) = start(&machine)
        _ = machine.handle(.savedCredentialsRead(nil), of: run, at: now)
        let forged = URL(string: "com.example.app:/oauth/callback?code=c0de&state=forged")!
        let action = machine.handle(.loginAnswered(.redirected(forged)), of: run, at: now)
        #expect(describe(action) == "finish: fail stateMismatch")
        #expect(machine.lastPath == [.getSavedCredentials, .logIn])
    }

    @Test func aLoginTokenDeadOnArrivalFailsWithoutARefreshTokenAndIsRefreshedWithOne() throws {
        for (refreshToken, expected) in [
            (nil, "finish: fail invalidTokenResponse"), ("r2", "send POST /token refresh_token"),
        ] {
            var machine = makeMachine(configuration: Self.configuration())
            let (run, _) = start(&machine)
            _ = machine.handle(.savedCredentialsRead(nil), of: run, at: now)
            _ = machine.handle(.loginAnswered(.redirected(callback)), of: run, at: now)
            let body = try tokenResponse(lifetime: 0, refreshToken: refreshToken)
            #expect(describe(machine.handle(.responseReceived(response(json: body)), of: run, at: now)) == "save a2")
            #expect(describe(machine.handle(.credentialsSaved, of: run, at: now)) == expected)
        }
    }

    @Test func aRefreshedTokenDeadOnArrivalIsRefreshedAgainUntilTheRefreshLimit() throws {
        let limit = OAuthConfiguration.RefreshLimit(maximumRefreshes: 2, window: .seconds(60))
        var machine = makeMachine(configuration: Self.configuration(refreshLimit: limit), knowsSavedCredentials: true)
        let (run, first) = start(&machine, refreshing: expiringA1)
        #expect(describe(first) == "send POST /token refresh_token")
        let dead = try tokenResponse(lifetime: 0, refreshToken: nil)
        for expected in ["send POST /token refresh_token", "finish: fail refreshLoop"] {
            #expect(describe(machine.handle(.responseReceived(response(json: dead)), of: run, at: now)) == "save a2")
            #expect(describe(machine.handle(.credentialsSaved, of: run, at: now)) == expected)
        }
        #expect(machine.lastPath == [.refreshTokens, .refreshTokens, .refreshTokens])
    }

    /// Issue 26: healthy refreshes never count against the limit, however many within its window.
    @Test func healthyRefreshesNeverTripTheRefreshLimit() throws {
        let limit = OAuthConfiguration.RefreshLimit(maximumRefreshes: 2, window: .seconds(60))
        var machine = makeMachine(configuration: Self.configuration(refreshLimit: limit), knowsSavedCredentials: true)
        var current = validA1
        for index in 0..<10 {
            let (run, first) = start(&machine, refreshing: current)
            #expect(describe(first) == "send POST /token refresh_token", "refresh \(index + 1)")
            let body = try tokenResponse(accessToken: "a\(index + 2)")
            _ = machine.handle(.responseReceived(response(json: body)), of: run, at: now)
            let done = machine.handle(.credentialsSaved, of: run, at: now)
            #expect(describe(done) == "finish: authorized a\(index + 2) (refreshed)")
            guard case .finish(.authorized(let new), _) = done else { return }
            current = new
        }
    }

    /// The limit counts refreshes whose new token the server then rejected: the third such refresh within the
    /// window is refused, one after it is allowed. A rejected login token does not count.
    @Test func theRefreshLimitRefusesAThirdRejectedRefreshWithinItsWindowAndAllowsOneAfter() throws {
        let limit = OAuthConfiguration.RefreshLimit(maximumRefreshes: 2, window: .seconds(60))
        var machine = makeMachine(configuration: Self.configuration(refreshLimit: limit), knowsSavedCredentials: true)
        // a1 was given, not refreshed: its rejection starts a refresh and does not count.
        var current = validA1
        for index in 0..<3 {
            let (run, first) = start(&machine, refreshing: current, refused: true)
            if index == 2 {
                #expect(describe(first) == "finish: fail refreshLoop")
                guard case .finish(.failed(let error, forgetsCredentials: false), nil) = first else { return }
                #expect(error == .refreshLoop(refreshes: 2, window: .seconds(60)))
                break
            }
            #expect(describe(first) == "send POST /token refresh_token")
            let body = try tokenResponse(accessToken: "a\(index + 2)")
            _ = machine.handle(.responseReceived(response(json: body)), of: run, at: now)
            guard case .finish(.authorized(let new), _) = machine.handle(.credentialsSaved, of: run, at: now) else {
                Issue.record("refresh \(index + 1) did not authorize")
                return
            }
            current = new
        }
        // The window passes: one more refresh is allowed.
        let (_, action) = start(&machine, refreshing: current, refused: true, at: now.addingTimeInterval(61))
        #expect(describe(action) == "send POST /token refresh_token")
    }

    @Test func invalidGrantWithTheFailPolicyForgetsTheCredentialsAndReportsTheLogout() throws {
        var machine = makeMachine(configuration: Self.configuration(onInvalidGrant: .fail), knowsSavedCredentials: true)
        let (run, _) = start(&machine, refreshing: expiringA1)
        let rejected = response(status: .badRequest, json: #"{"error":"invalid_grant","error_description":"gone"}"#)
        #expect(describe(machine.handle(.responseReceived(rejected), of: run, at: now)) == "delete saved credentials")
        let action = machine.handle(.savedCredentialsDeleted(nil), of: run, at: now)
        let expected = OAuthError.refreshRejected(description: "gone")
        guard case .finish(.failed(let error, forgetsCredentials: true), .loggedOut(expected)?) = action else {
            Issue.record("expected a failure that forgets the credentials, and a logout; got \(describe(action))")
            return
        }
        #expect(error == expected && machine.position == .idle)
        // The saved credentials are known to be gone: the next run logs in at once.
        let (_, next) = start(&machine)
        #expect(describe(next) == "show login")
    }

    @Test func anOutcomeOfARunAResetInterruptedChangesNothing() throws {
        var machine = makeMachine()
        let (old, _) = start(&machine)
        #expect(machine.interrupt() == old)
        #expect(machine.interrupt() == nil, "nothing left to interrupt")
        let (new, first) = start(&machine)
        #expect(new != old && describe(first) == "read saved credentials")
        #expect(describe(machine.handle(.savedCredentialsRead(savedS1), of: old, at: now)) == "none")
        #expect(machine.position == .getSavedCredentials)
        #expect(
            describe(machine.handle(.savedCredentialsRead(savedS1), of: new, at: now))
                == "finish: authorized s1 (logged in)")
    }

    @Test func aLogoutAttemptsEveryStepAndReportsTheFirstProblem() throws {
        var machine = makeMachine(configuration: Self.configuration(), knowsSavedCredentials: true)
        let (run, first) = machine.logOut(validA1)
        #expect(describe(first) == "send POST /revoke refresh_token")
        guard case .send(let revocation) = first else { return }
        #expect(revocation.isPartOfReset && formFields(of: revocation)["token"] == "r1")
        let refused = response(status: .serviceUnavailable, json: "{}")
        let second = machine.handle(.responseReceived(refused), of: run, at: now)
        #expect(describe(second) == "send POST /revoke access_token")
        let unreachable = HTTPResult.failure(HTTPError(.cannotConnect, request: HTTPRequest()))
        #expect(
            describe(machine.handle(.responseReceived(unreachable), of: run, at: now)) == "delete saved credentials")
        let storeFailed = OAuthError.credentialStore("disk full")
        guard case .showLogout(let page) = machine.handle(.savedCredentialsDeleted(storeFailed), of: run, at: now)
        else {
            Issue.record("no logout page")
            return
        }
        #expect(page.path == "/logout" && page.queryValue("client_id") == "test-app")
        let end = machine.handle(.logoutPageClosed, of: run, at: now)
        guard case .finishLogout(let logout) = end else {
            Issue.record("the logout did not end: \(describe(end))")
            return
        }
        let refusedRevocation = OAuthError.tokenRequestFailed(status: 503, error: nil, description: nil)
        #expect(logout.problem == refusedRevocation)
        #expect(logout.revocation == .failed(refusedRevocation) && !logout.isSignedOutAtServer)
        #expect(!logout.deletedSavedCredentials && logout.endedProviderSession)
        #expect(machine.lastPath == [.logOut, .done])
        #expect(describe(machine.logOut(nil).1) == "read saved credentials")
    }

    @Test func aLogoutWithNothingToRevokeDeletesTheSavedCredentialsOnly() throws {
        var machine = makeMachine()
        let (run, first) = machine.logOut(nil)
        #expect(describe(first) == "read saved credentials")
        #expect(describe(machine.handle(.savedCredentialsRead(nil), of: run, at: now)) == "delete saved credentials")
        // No endpoints are known, so no end-session page either.
        #expect(
            describe(machine.handle(.savedCredentialsDeleted(nil), of: run, at: now))
                == "finish logout (nothing to revoke, no problem)")
        #expect(machine.lastPath == [.logOut, .done])
        // The saved credentials are unknown again after a logout: the next run reads them first.
        #expect(describe(start(&machine).1) == "read saved credentials")
    }

    // MARK: - Discovery: OpenID Connect, RFC 8414, overrides

    private static let issuerWithPath = URL(string: "https://id.example.com/tenant")!

    private static func discoveringConfiguration(
        issuer: URL = URL(string: "https://id.example.com")!, overrides: OAuthEndpointOverrides = .init()
    ) -> OAuthConfiguration {
        var configuration = oauthConfiguration(endpoints: .discover(issuer: issuer), scopes: ["openid"])
        configuration.endpointOverrides = overrides
        return configuration
    }

    private static func document(issuer: String, revocation: String?) -> String {
        var fields = [
            "issuer": issuer, "authorization_endpoint": "\(issuer)/authorize", "token_endpoint": "\(issuer)/token",
        ]
        if let revocation { fields["revocation_endpoint"] = revocation }
        return String(decoding: try! JSONSerialization.data(withJSONObject: fields), as: UTF8.self)
    }

    /// A logout that discovers, and returns the URLs it asked for and the revocation endpoint it used (if any).
    private func discoverAtLogout(
        _ machine: inout Machine, answers: [HTTPResult]
    ) -> (asked: [String], revokedAt: String?, outcome: OAuthLogout?) {
        var (run, action) = machine.logOut(validA1)
        var asked: [String] = []
        var revokedAt: String?
        var answers = answers[...]
        while true {
            switch action {
            case .send(let request) where request.method == .get:
                asked.append(request.url?.absoluteString ?? "?")
                #expect(request.isPartOfReset, "a logout's discovery is part of the reset")
                action = machine.handle(
                    .responseReceived(answers.popFirst() ?? .failure(Self.unreachable)), of: run, at: now)
            case .send(let request):
                revokedAt = revokedAt ?? request.url?.absoluteString
                action = machine.handle(.responseReceived(response(json: "{}")), of: run, at: now)
            case .deleteSavedCredentials:
                action = machine.handle(.savedCredentialsDeleted(nil), of: run, at: now)
            case .showLogout:
                action = machine.handle(.logoutPageClosed, of: run, at: now)
            case .finishLogout(let outcome):
                return (asked, revokedAt, outcome)
            default:
                Issue.record("unexpected \(describe(action))")
                return (asked, revokedAt, nil)
            }
        }
    }

    private static let unreachable = HTTPError(.cannotConnect, request: HTTPRequest())

    /// An OAuth-only server has no OpenID document: the RFC 8414 metadata, at the well-known path inserted before
    /// the issuer's path, gives the endpoints.
    @Test func anOAuthOnlyServersMetadataIsFoundAtTheRFC8414Location() {
        var machine = makeMachine(configuration: Self.discoveringConfiguration(issuer: Self.issuerWithPath))
        let issuer = Self.issuerWithPath.absoluteString
        let result = discoverAtLogout(
            &machine,
            answers: [
                response(status: .notFound, json: "{}"),
                response(json: Self.document(issuer: issuer, revocation: "\(issuer)/revoke")),
            ])
        #expect(
            result.asked == [
                "https://id.example.com/tenant/.well-known/openid-configuration",
                "https://id.example.com/.well-known/oauth-authorization-server/tenant",
            ])
        #expect(result.revokedAt == "\(issuer)/revoke" && result.outcome?.revocation == .revoked)
    }

    /// A provider whose OpenID document names no revocation endpoint, but whose RFC 8414 metadata does: the
    /// metadata fills the gap, and the logout revokes.
    @Test func theRFC8414MetadataFillsWhatTheOpenIDDocumentLeavesOut() {
        var machine = makeMachine(configuration: Self.discoveringConfiguration())
        let issuer = "https://id.example.com"
        let result = discoverAtLogout(
            &machine,
            answers: [
                response(json: Self.document(issuer: issuer, revocation: nil)),
                response(json: Self.document(issuer: issuer, revocation: "\(issuer)/oauth2/revoke")),
            ])
        #expect(result.asked.count == 2)
        #expect(result.revokedAt == "\(issuer)/oauth2/revoke" && result.outcome?.isSignedOutAtServer == true)
    }

    /// No revocation endpoint anywhere: the logout still deletes and ends the session, and its outcome says the
    /// tokens were not revoked.
    @Test func withoutARevocationEndpointTheOutcomeSaysTheTokensStayValid() {
        var machine = makeMachine(configuration: Self.discoveringConfiguration())
        let document = Self.document(issuer: "https://id.example.com", revocation: nil)
        let result = discoverAtLogout(
            &machine, answers: [response(json: document), response(status: .notFound, json: "{}")])
        #expect(result.revokedAt == nil)
        #expect(result.outcome?.revocation == .unsupported && result.outcome?.isSignedOutAtServer == false)
        #expect(result.outcome?.problem == nil && result.outcome?.deletedSavedCredentials == true)
    }

    /// An endpoint given explicitly wins over the discovered one, and a document that leaves out only what the
    /// overrides give needs no second document.
    @Test func anExplicitEndpointWinsOverDiscoveryAndSparesTheSecondDocument() {
        let overrides = OAuthEndpointOverrides(revocation: URL(string: "https://revoke.example.com/r")!)
        var machine = makeMachine(configuration: Self.discoveringConfiguration(overrides: overrides))
        let issuer = "https://id.example.com"
        let result = discoverAtLogout(
            &machine,
            answers: [response(json: Self.document(issuer: issuer, revocation: "\(issuer)/discovered-revoke"))])
        #expect(result.asked == ["https://id.example.com/.well-known/openid-configuration"])
        #expect(result.revokedAt == "https://revoke.example.com/r")
    }

    /// A document that names another issuer is refused (OpenID Connect Discovery §4.3, RFC 8414 §3.3), whichever
    /// of the two it is.
    @Test func aDocumentForAnotherIssuerIsNotUsed() {
        var machine = makeMachine(configuration: Self.discoveringConfiguration())
        let forged = Self.document(issuer: "https://evil.example.com", revocation: "https://evil.example.com/revoke")
        let result = discoverAtLogout(&machine, answers: [response(json: forged), response(json: forged)])
        #expect(result.asked.count == 2 && result.revokedAt == nil)
        #expect(result.outcome?.revocation == .unsupported)
    }

    /// Known endpoints with an override: the override wins, and nothing is discovered.
    @Test func anOverrideWinsOverKnownEndpointsToo() {
        var configuration = Self.configuration()
        configuration.endpointOverrides.token = URL(string: "https://tokens.example.com/t")!
        var machine = makeMachine(configuration: configuration, knowsSavedCredentials: true)
        let (_, first) = start(&machine, refreshing: expiringA1)
        guard case .send(let refresh) = first else {
            Issue.record("no refresh: \(describe(first))")
            return
        }
        #expect(refresh.url?.absoluteString == "https://tokens.example.com/t")
    }

    /// A login discovers once: the endpoints found serve every later run, and the logout needs no discovery.
    @Test func endpointsAreDiscoveredOnceForLoginsAndLogouts() throws {
        var machine = makeMachine(configuration: Self.discoveringConfiguration(), knowsSavedCredentials: true)
        let (run, first) = start(&machine)
        #expect(describe(first) == "send GET discovery")
        let document = Self.document(issuer: "https://id.example.com", revocation: "https://id.example.com/revoke")
        #expect(describe(machine.handle(.responseReceived(response(json: document)), of: run, at: now)) == "show login")
        let result = discoverAtLogout(&machine, answers: [])
        #expect(result.asked.isEmpty && result.revokedAt == "https://id.example.com/revoke")
    }
}
