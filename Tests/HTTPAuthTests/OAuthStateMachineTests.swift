import Foundation
import HTTP
import Testing

@testable import HTTPAuth

/// The machine driven directly, without a loader: every state against every event, then whole flows.
///
/// A row of the table is a state, reached from a new machine by a recipe of events; a column is an event. Each
/// cell says where the machine is afterwards — its position (or, when no flow runs, its situation), the current
/// access token, whether a reset is in progress — and what it asks its driver to do. Columns for the outcomes of
/// the driver's actions default to "not an outcome this state waits for": nothing happens.
@Suite(.noHang) struct OAuthStateMachineTableTests {
    typealias Machine = OAuthStateMachine

    /// A state of the machine, and how to get there.
    enum Row: String, CaseIterable, CustomTestStringConvertible {
        case idle, authorized, needsRefresh
        case getSavedCredentials, discoveryForLogIn, logIn, getTokens, savingLoginCredentials
        case discoveryForRefresh, refreshTokens, savingRefreshedCredentials, deletingRejectedCredentials
        case resetting
        case logOutReadingSavedCredentials, logOutDiscovery, logOutRevoking, logOutDeletingCredentials
        case logOutEndingSession

        var testDescription: String { rawValue }
    }

    /// Something that happens to the machine.
    enum Column: String, CaseIterable, CustomTestStringConvertible {
        /// A request needs a token.
        case request
        /// A `401` for a request sent with the current token.
        case rejectedCurrentToken
        /// A `401` for a request sent with a token replaced since.
        case rejectedOlderToken
        case setNeedsRefresh
        case savedCredentialsRead
        case noSavedCredentials
        /// The server answered with a discovery document.
        case discoveryDocument
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
        case beginReset
        case logOut
        case endReset

        var testDescription: String { rawValue }

        /// Whether this is the outcome of an action the driver performed, which only the state waiting for it
        /// acts on.
        var isOutcome: Bool {
            switch self {
            case .request, .rejectedCurrentToken, .rejectedOlderToken, .setNeedsRefresh, .beginReset, .logOut,
                .endReset:
                false
            default: true
            }
        }
    }

    /// Where the machine is and what it asks for: `"<position or situation> <token>[ resetting]"` and a phrase.
    struct Cell: Equatable, CustomStringConvertible {
        var state: String
        var action: String
        var description: String { "\(state) → \(action)" }
    }

    // MARK: - The table

    /// The expected cells, row by row. A column missing from a row is an outcome that row does not wait for: the
    /// machine stays as it was and does nothing. Every other column is listed.
    static let table: [Row: [Column: Cell]] = [
        .idle: [
            .request: Cell(state: "getSavedCredentials -", action: "start: read saved credentials"),
            .rejectedCurrentToken: Cell(state: "getSavedCredentials -", action: "start: read saved credentials"),
            .rejectedOlderToken: Cell(state: "getSavedCredentials -", action: "start: read saved credentials"),
            .setNeedsRefresh: Cell(state: "idle -", action: "—"),
            .beginReset: Cell(state: "idle - resetting", action: "fail waiters (resetInProgress)"),
            .logOut: Cell(state: "logOutReadingSavedCredentials -", action: "log out: read saved credentials"),
            .endReset: Cell(state: "idle -", action: "—"),
        ],
        .authorized: [
            .request: Cell(state: "authorized a1", action: "send with a1"),
            .rejectedCurrentToken: Cell(state: "discovery a1", action: "start: send GET discovery"),
            .rejectedOlderToken: Cell(state: "authorized a1", action: "send with a1"),
            .setNeedsRefresh: Cell(state: "needsRefresh a1", action: "—"),
            .beginReset: Cell(state: "authorized a1 resetting", action: "fail waiters (resetInProgress)"),
            .logOut: Cell(state: "logOutDiscovery -", action: "log out: send GET discovery"),
            .endReset: Cell(state: "authorized a1", action: "—"),
        ],
        .needsRefresh: [
            .request: Cell(state: "discovery a1", action: "start: send GET discovery"),
            .rejectedCurrentToken: Cell(state: "discovery a1", action: "start: send GET discovery"),
            .rejectedOlderToken: Cell(state: "discovery a1", action: "start: send GET discovery"),
            .setNeedsRefresh: Cell(state: "needsRefresh a1", action: "—"),
            .beginReset: Cell(state: "needsRefresh a1 resetting", action: "fail waiters (resetInProgress)"),
            .logOut: Cell(state: "logOutDiscovery -", action: "log out: send GET discovery"),
            .endReset: Cell(state: "needsRefresh a1", action: "—"),
        ],
        .getSavedCredentials: running(
            "getSavedCredentials -", token: nil,
            [
                .savedCredentialsRead: Cell(state: "authorized s1", action: "finish: grant s1 (logged in)"),
                .noSavedCredentials: Cell(state: "discovery -", action: "send GET discovery"),
            ]),
        .discoveryForLogIn: running(
            "discovery -", token: nil,
            [
                .discoveryDocument: Cell(state: "logIn -", action: "show login"),
                .tokenResponse: Cell(state: "idle -", action: "finish: refuse discoveryFailed"),
                .invalidGrant: Cell(state: "idle -", action: "finish: refuse discoveryFailed"),
                .unreachable: Cell(state: "idle -", action: "finish: refuse discoveryFailed"),
            ]),
        .logIn: running(
            "logIn -", token: nil,
            [
                .loginRedirected: Cell(state: "getTokens -", action: "send POST /token authorization_code"),
                .loginCancelled: Cell(state: "idle -", action: "finish: refuse loginCancelled"),
                .loginFailed: Cell(state: "idle -", action: "finish: refuse loginFailed"),
                .noDelegate: Cell(state: "idle -", action: "finish: refuse noDelegate"),
            ]),
        .getTokens: running(
            "getTokens -", token: nil,
            [
                .discoveryDocument: Cell(state: "idle -", action: "finish: refuse invalidTokenResponse"),
                .tokenResponse: Cell(state: "savingCredentials -", action: "save a2"),
                .invalidGrant: Cell(state: "idle -", action: "finish: refuse tokenRequestFailed"),
                .unreachable: Cell(state: "idle -", action: "finish: refuse endpointUnreachable"),
            ]),
        .savingLoginCredentials: running(
            "savingCredentials -", token: nil,
            [.credentialsSaved: Cell(state: "authorized a2", action: "finish: grant a2 (logged in)")]),
        .discoveryForRefresh: running(
            "discovery a1", token: "a1",
            [
                .discoveryDocument: Cell(state: "refreshTokens a1", action: "send POST /token refresh_token"),
                .tokenResponse: Cell(state: "needsRefresh a1", action: "finish: refuse discoveryFailed"),
                .invalidGrant: Cell(state: "needsRefresh a1", action: "finish: refuse discoveryFailed"),
                .unreachable: Cell(state: "needsRefresh a1", action: "finish: refuse discoveryFailed"),
            ]),
        .refreshTokens: running(
            "refreshTokens a1", token: "a1", endpointsKnown: true,
            [
                .discoveryDocument: Cell(state: "needsRefresh a1", action: "finish: refuse invalidTokenResponse"),
                .tokenResponse: Cell(state: "savingCredentials a1", action: "save a2"),
                .invalidGrant: Cell(state: "deletingRejectedCredentials a1", action: "delete saved credentials"),
                .unreachable: Cell(state: "needsRefresh a1", action: "finish: refuse endpointUnreachable"),
            ]),
        .savingRefreshedCredentials: running(
            "savingCredentials a1", token: "a1", endpointsKnown: true,
            [.credentialsSaved: Cell(state: "authorized a2", action: "finish: grant a2 (refreshed)")]),
        .deletingRejectedCredentials: running(
            "deletingRejectedCredentials a1", token: "a1", endpointsKnown: true,
            [.savedCredentialsDeleted: Cell(state: "logIn a1", action: "show login")]),
        .resetting: [
            .request: Cell(state: "authorized a1 resetting", action: "refuse resetInProgress"),
            .rejectedCurrentToken: Cell(state: "authorized a1 resetting", action: "refuse resetInProgress"),
            .rejectedOlderToken: Cell(state: "authorized a1 resetting", action: "refuse resetInProgress"),
            .setNeedsRefresh: Cell(state: "needsRefresh a1 resetting", action: "—"),
            .beginReset: Cell(state: "authorized a1 resetting", action: "fail waiters (resetInProgress)"),
            .logOut: Cell(state: "logOutDiscovery - resetting", action: "log out: send GET discovery"),
            .endReset: Cell(state: "authorized a1", action: "—"),
        ],
        .logOutReadingSavedCredentials: loggingOut(
            "logOutReadingSavedCredentials",
            [
                .savedCredentialsRead: Cell(state: "logOutDiscovery - resetting", action: "send GET discovery"),
                .noSavedCredentials: Cell(
                    state: "logOutDeletingCredentials - resetting", action: "delete saved credentials"),
            ]),
        .logOutDiscovery: loggingOut(
            "logOutDiscovery",
            [
                .discoveryDocument: Cell(
                    state: "logOutRevoking - resetting", action: "send POST /revoke refresh_token, not interruptible"),
                // Without endpoints there is nothing to revoke; the logout goes on.
                .tokenResponse: Cell(
                    state: "logOutDeletingCredentials - resetting", action: "delete saved credentials"),
                .invalidGrant: Cell(state: "logOutDeletingCredentials - resetting", action: "delete saved credentials"),
                .unreachable: Cell(state: "logOutDeletingCredentials - resetting", action: "delete saved credentials"),
            ]),
        .logOutRevoking: loggingOut(
            "logOutRevoking",
            // Whatever the answer, the access token is revoked next; a failure is reported when the logout ends.
            [
                .discoveryDocument: Cell(
                    state: "logOutRevoking - resetting", action: "send POST /revoke access_token, not interruptible"),
                .tokenResponse: Cell(
                    state: "logOutRevoking - resetting", action: "send POST /revoke access_token, not interruptible"),
                .invalidGrant: Cell(
                    state: "logOutRevoking - resetting", action: "send POST /revoke access_token, not interruptible"),
                .unreachable: Cell(
                    state: "logOutRevoking - resetting", action: "send POST /revoke access_token, not interruptible"),
            ]),
        .logOutDeletingCredentials: loggingOut(
            "logOutDeletingCredentials",
            [.savedCredentialsDeleted: Cell(state: "logOutEndingSession - resetting", action: "show logout")]),
        .logOutEndingSession: loggingOut(
            "logOutEndingSession",
            [.logoutPageClosed: Cell(state: "idle - resetting", action: "finish logout (no problem)")]),
    ]

    /// The cells of a row where a flow runs: requests wait for it, a reset drops it, a logout replaces it.
    static func running(
        _ state: String, token: String?, endpointsKnown: Bool = false, _ outcomes: [Column: Cell]
    ) -> [Column: Cell] {
        let before = state
        let token = token ?? "-"
        // After a login's discovery, a logout has no credentials to revoke; after a refresh's, it revokes them.
        let logOut =
            endpointsKnown
            ? Cell(state: "logOutRevoking -", action: "log out: send POST /revoke refresh_token, not interruptible")
            : token == "-"
                ? Cell(state: "logOutReadingSavedCredentials -", action: "log out: read saved credentials")
                : Cell(state: "logOutDiscovery -", action: "log out: send GET discovery")
        let idleAfterReset = token == "-" ? "idle - resetting" : "needsRefresh \(token) resetting"
        return outcomes.merging(
            [
                .request: Cell(state: before, action: "wait"),
                .rejectedCurrentToken: Cell(state: before, action: "wait"),
                .rejectedOlderToken: Cell(state: before, action: "wait"),
                .setNeedsRefresh: Cell(state: before, action: "—"),
                .beginReset: Cell(state: idleAfterReset, action: "fail waiters (resetInProgress), interrupt the run"),
                .logOut: logOut,
                .endReset: Cell(state: before, action: "—"),
            ],
            uniquingKeysWith: { outcome, _ in outcome })
    }

    /// The cells of a row where a logout runs, during a reset: requests are refused, another logout joins.
    static func loggingOut(_ position: String, _ outcomes: [Column: Cell]) -> [Column: Cell] {
        let before = "\(position) - resetting"
        return outcomes.merging(
            [
                .request: Cell(state: before, action: "refuse resetInProgress"),
                .rejectedCurrentToken: Cell(state: before, action: "refuse resetInProgress"),
                .rejectedOlderToken: Cell(state: before, action: "refuse resetInProgress"),
                .setNeedsRefresh: Cell(state: before, action: "—"),
                .beginReset: Cell(state: before, action: "fail waiters (resetInProgress)"),
                .logOut: Cell(state: before, action: "join the logout"),
                .endReset: Cell(state: "\(position) -", action: "—"),
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
            case .idle: "idle -"
            case .authorized: "authorized a1"
            case .needsRefresh: "needsRefresh a1"
            case .getSavedCredentials: "getSavedCredentials -"
            case .discoveryForLogIn: "discovery -"
            case .logIn: "logIn -"
            case .getTokens: "getTokens -"
            case .savingLoginCredentials: "savingCredentials -"
            case .discoveryForRefresh: "discovery a1"
            case .refreshTokens: "refreshTokens a1"
            case .savingRefreshedCredentials: "savingCredentials a1"
            case .deletingRejectedCredentials: "deletingRejectedCredentials a1"
            case .resetting: "authorized a1 resetting"
            case .logOutReadingSavedCredentials: "logOutReadingSavedCredentials - resetting"
            case .logOutDiscovery: "logOutDiscovery - resetting"
            case .logOutRevoking: "logOutRevoking - resetting"
            case .logOutDeletingCredentials: "logOutDeletingCredentials - resetting"
            case .logOutEndingSession: "logOutEndingSession - resetting"
            }
        #expect(Self.describe(machine) == expected)
    }

    // MARK: - Recipes

    static func machine(in row: Row) throws -> Machine {
        switch row {
        case .idle: return makeMachine()
        case .authorized: return makeMachine(credentials: validA1)
        case .needsRefresh: return makeMachine(credentials: expiringA1)
        case .getSavedCredentials: return try reach(makeMachine(), [.request])
        case .discoveryForLogIn: return try reach(machine(in: .getSavedCredentials), [.noSavedCredentials])
        case .logIn: return try reach(machine(in: .discoveryForLogIn), [.discoveryDocument])
        case .getTokens: return try reach(machine(in: .logIn), [.loginRedirected])
        case .savingLoginCredentials: return try reach(machine(in: .getTokens), [.tokenResponse])
        case .discoveryForRefresh: return try reach(makeMachine(credentials: expiringA1), [.request])
        case .refreshTokens: return try reach(machine(in: .discoveryForRefresh), [.discoveryDocument])
        case .savingRefreshedCredentials: return try reach(machine(in: .refreshTokens), [.tokenResponse])
        case .deletingRejectedCredentials: return try reach(machine(in: .refreshTokens), [.invalidGrant])
        case .resetting: return try reach(makeMachine(credentials: validA1), [.beginReset])
        case .logOutReadingSavedCredentials: return try reach(makeMachine(), [.beginReset, .logOut])
        case .logOutDiscovery: return try reach(makeMachine(credentials: validA1), [.beginReset, .logOut])
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
        case .request:
            return describe(machine.requestArrived(at: now))
        case .rejectedCurrentToken:
            let current = machine.credentials.map { Machine.Grant($0, refreshWindow: .seconds(60)) }
            return describe(machine.requestArrived(rejecting: current, at: now))
        case .rejectedOlderToken:
            let older = Machine.Grant(OAuthCredentials(accessToken: "a0"), refreshWindow: .seconds(60))
            return describe(machine.requestArrived(rejecting: older, at: now))
        case .setNeedsRefresh:
            machine.setNeedsRefresh()
            return "—"
        case .savedCredentialsRead: return outcome(.savedCredentialsRead(savedS1))
        case .noSavedCredentials: return outcome(.savedCredentialsRead(nil))
        case .discoveryDocument: return outcome(.responseReceived(response(json: discoveryDocument)))
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
        case .beginReset:
            return describe(machine.beginReset())
        case .logOut:
            return describe(machine.logOut())
        case .endReset:
            machine.endReset()
            return "—"
        }
    }

    // MARK: - Descriptions

    static func describe(_ machine: Machine) -> String {
        let position =
            machine.position == .idle ? "\(machine.situation(at: now))" : machine.position.rawValue
        let token = machine.credentials?.accessToken ?? "-"
        return "\(position) \(token)" + (machine.isResetting ? " resetting" : "")
    }

    static func describe(_ arrival: Machine.Arrival) -> String {
        switch arrival {
        case .send(let grant): "send with \(grant.token)"
        case .wait: "wait"
        case .start(_, let action): "start: " + describe(action)
        case .refuse(let refusal): "refuse \(refusal.code)"
        }
    }

    static func describe(_ interruption: Machine.Interruption) -> String {
        "fail waiters (\(interruption.refusal.code))"
            + (interruption.interruptedRun == nil ? "" : ", interrupt the run")
    }

    static func describe(_ start: Machine.LogoutStart) -> String {
        switch start {
        case .run(_, let action): "log out: " + describe(action)
        case .join: "join the logout"
        }
    }

    static func describe(_ action: Machine.Action) -> String {
        switch action {
        case .readSavedCredentials: return "read saved credentials"
        case .send(let request, let isInterruptible):
            guard request.method == .post else { return "send GET discovery" }
            let form = formFields(of: request)
            let field = form["grant_type"] ?? form["token_type_hint"] ?? "?"
            return "send POST \(request.path) \(field)" + (isInterruptible ? "" : ", not interruptible")
        case .showLogin: return "show login"
        case .save(let credentials): return "save \(credentials.accessToken)"
        case .deleteSavedCredentials: return "delete saved credentials"
        case .showLogout: return "show logout"
        case .finish(.granted(let grant), let session):
            return "finish: grant \(grant.token)" + (session.map { " (\($0))" } ?? "")
        case .finish(.refused(let refusal), let session):
            return "finish: refuse \(refusal.reason.map { "\($0.code)" } ?? "\(refusal.code)")"
                + (session.map { " (\($0))" } ?? "")
        case .finishLogout(let problem):
            return "finish logout (\(problem.map { "\($0.code)" } ?? "no problem"))"
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
    configuration: OAuthConfiguration = machineConfiguration, credentials: OAuthCredentials? = nil
) -> OAuthStateMachine {
    OAuthStateMachine(configuration: configuration, credentials: credentials, makeLoginSecrets: { fixedSecrets })
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

    /// Starts a run with a request and returns it with its first action.
    private func start(
        _ machine: inout Machine, at time: Date = now, sourceLocation: SourceLocation = #_sourceLocation
    ) throws -> (Machine.RunID, Machine.Action) {
        guard case .start(let run, let action) = machine.requestArrived(at: time) else {
            Issue.record("no run started", sourceLocation: sourceLocation)
            throw CancellationError()
        }
        return (run, action)
    }

    private func describe(_ action: Machine.Action) -> String { OAuthStateMachineTableTests.describe(action) }

    @Test func aLoginReadsSavedCredentialsDiscoversLogsInAndRedeemsTheCodeWithItsVerifier() throws {
        var machine = makeMachine()
        let (run, first) = try start(&machine)
        #expect(describe(first) == "read saved credentials")
        guard case .send(let discovery, true) = machine.handle(.savedCredentialsRead(nil), of: run, at: now) else {
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

        guard case .send(let redemption, true) = machine.handle(.loginAnswered(.redirected(callback)), of: run, at: now)
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
        #expect(machine.credentials == nil, "new credentials are current only once the run is done")
        #expect(describe(machine.handle(.credentialsSaved, of: run, at: now)) == "finish: grant a2 (logged in)")
        #expect(machine.credentials?.refreshToken == "r2")
        #expect(machine.lastPath == [.getSavedCredentials, .discovery, .logIn, .getTokens, .done])
        #expect(machine.grant(usableAt: now)?.authorization == "Bearer a2")
    }

    @Test func withoutTheOpenIDScopeALoginSendsNoNonceAndNeedsNoIDToken() throws {
        var machine = makeMachine(configuration: Self.configuration(scopes: ["read"]))
        let (run, first) = try start(&machine)
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
        let (run, _) = try start(&machine)
        _ = machine.handle(.savedCredentialsRead(nil), of: run, at: now)
        let forged = URL(string: "com.example.app:/oauth/callback?code=c0de&state=forged")!
        let action = machine.handle(.loginAnswered(.redirected(forged)), of: run, at: now)
        #expect(describe(action) == "finish: refuse stateMismatch")
        #expect(machine.lastPath == [.getSavedCredentials, .logIn])
    }

    @Test func aLoginTokenDeadOnArrivalFailsWithoutARefreshTokenAndIsRefreshedWithOne() throws {
        for (refreshToken, expected) in [
            (nil, "finish: refuse invalidTokenResponse"), ("r2", "send POST /token refresh_token"),
        ] {
            var machine = makeMachine(configuration: Self.configuration())
            let (run, _) = try start(&machine)
            _ = machine.handle(.savedCredentialsRead(nil), of: run, at: now)
            _ = machine.handle(.loginAnswered(.redirected(callback)), of: run, at: now)
            let body = try tokenResponse(lifetime: 0, refreshToken: refreshToken)
            #expect(describe(machine.handle(.responseReceived(response(json: body)), of: run, at: now)) == "save a2")
            #expect(describe(machine.handle(.credentialsSaved, of: run, at: now)) == expected)
            #expect(machine.credentials == nil, "a dead token is never current")
        }
    }

    @Test func aRefreshedTokenDeadOnArrivalIsRefreshedAgainUntilTheRefreshLimit() throws {
        let limit = OAuthConfiguration.RefreshLimit(maximumRefreshes: 2, window: .seconds(60))
        var machine = makeMachine(configuration: Self.configuration(refreshLimit: limit), credentials: expiringA1)
        let (run, first) = try start(&machine)
        #expect(describe(first) == "send POST /token refresh_token")
        let dead = try tokenResponse(lifetime: 0, refreshToken: nil)
        for expected in ["send POST /token refresh_token", "finish: refuse refreshLoop"] {
            #expect(describe(machine.handle(.responseReceived(response(json: dead)), of: run, at: now)) == "save a2")
            #expect(describe(machine.handle(.credentialsSaved, of: run, at: now)) == expected)
        }
        #expect(machine.lastPath == [.refreshTokens, .refreshTokens, .refreshTokens])
        #expect(machine.credentials?.accessToken == "a1", "the dead tokens were never made current")
    }

    /// Issue 26: healthy refreshes never count against the limit, however many within its window.
    @Test func healthyRefreshesNeverTripTheRefreshLimit() throws {
        let limit = OAuthConfiguration.RefreshLimit(maximumRefreshes: 2, window: .seconds(60))
        var machine = makeMachine(configuration: Self.configuration(refreshLimit: limit), credentials: validA1)
        for index in 0..<10 {
            machine.setNeedsRefresh()
            let (run, first) = try start(&machine)
            #expect(describe(first) == "send POST /token refresh_token", "refresh \(index + 1)")
            let body = try tokenResponse(accessToken: "a\(index + 2)")
            _ = machine.handle(.responseReceived(response(json: body)), of: run, at: now)
            #expect(
                describe(machine.handle(.credentialsSaved, of: run, at: now))
                    == "finish: grant a\(index + 2) (refreshed)")
        }
    }

    /// The limit counts refreshes whose new token the server then rejected: the third such refresh within the
    /// window is refused, one after it is allowed. A rejected login token does not count.
    @Test func theRefreshLimitRefusesAThirdRejectedRefreshWithinItsWindowAndAllowsOneAfter() throws {
        let limit = OAuthConfiguration.RefreshLimit(maximumRefreshes: 2, window: .seconds(60))
        var machine = makeMachine(configuration: Self.configuration(refreshLimit: limit), credentials: validA1)
        // a1 was given, not refreshed: its rejection starts a refresh and does not count.
        for index in 0..<3 {
            let current = try #require(machine.grant(usableAt: now))
            guard case .start(let run, let first) = machine.requestArrived(rejecting: current, at: now) else {
                Issue.record("the rejection of \(current.token) started no run")
                return
            }
            if index == 2 {
                #expect(describe(first) == "finish: refuse refreshLoop")
                guard case .finish(.refused(let refusal), nil) = first else { return }
                #expect(refusal.reason == .refreshLoop(refreshes: 2, window: .seconds(60)))
                break
            }
            #expect(describe(first) == "send POST /token refresh_token")
            let body = try tokenResponse(accessToken: "a\(index + 2)")
            _ = machine.handle(.responseReceived(response(json: body)), of: run, at: now)
            _ = machine.handle(.credentialsSaved, of: run, at: now)
        }
        #expect(machine.credentials?.accessToken == "a3", "a tripped guard keeps the credentials")
        // The window passes: one more refresh is allowed.
        let current = try #require(machine.grant(usableAt: now.addingTimeInterval(61)))
        let later = machine.requestArrived(rejecting: current, at: now.addingTimeInterval(61))
        guard case .start(_, let action) = later else {
            Issue.record("no run after the window")
            return
        }
        #expect(describe(action) == "send POST /token refresh_token")
    }

    @Test func invalidGrantWithTheFailPolicyForgetsTheCredentialsAndReportsTheLogout() throws {
        var machine = makeMachine(configuration: Self.configuration(onInvalidGrant: .fail), credentials: expiringA1)
        let (run, _) = try start(&machine)
        let rejected = response(status: .badRequest, json: #"{"error":"invalid_grant","error_description":"gone"}"#)
        #expect(describe(machine.handle(.responseReceived(rejected), of: run, at: now)) == "delete saved credentials")
        let action = machine.handle(.savedCredentialsDeleted(nil), of: run, at: now)
        let expected = OAuthError.refreshRejected(description: "gone")
        guard case .finish(.refused(let refusal), .loggedOut(expected)?) = action else {
            Issue.record("expected a refusal and a logout, got \(describe(action))")
            return
        }
        #expect(refusal.reason == expected && refusal.code == .cannotAuthenticate)
        #expect(machine.credentials == nil && machine.situation(at: now) == .idle)
        // The saved credentials are known to be gone: the next run logs in at once.
        let (_, next) = try start(&machine)
        #expect(describe(next) == "show login")
    }

    @Test func anOutcomeOfARunAResetInterruptedChangesNothing() throws {
        var machine = makeMachine()
        let (old, _) = try start(&machine)
        #expect(machine.beginReset().interruptedRun == old)
        machine.endReset()
        let (new, first) = try start(&machine)
        #expect(new != old && describe(first) == "read saved credentials")
        #expect(describe(machine.handle(.savedCredentialsRead(savedS1), of: old, at: now)) == "none")
        #expect(machine.position == .getSavedCredentials && machine.credentials == nil)
        #expect(
            describe(machine.handle(.savedCredentialsRead(savedS1), of: new, at: now)) == "finish: grant s1 (logged in)"
        )
    }

    @Test func theFastPathServesOnlyAUsableTokenOutsideRunsAndResets() throws {
        var machine = makeMachine(configuration: Self.configuration(), credentials: validA1)
        #expect(machine.grant(usableAt: now)?.token == "a1")
        #expect(machine.grant(usableAt: now.addingTimeInterval(3_541)) == nil, "inside the refresh window")
        _ = machine.beginReset()
        #expect(machine.grant(usableAt: now) == nil, "during a reset")
        machine.endReset()
        machine.setNeedsRefresh()
        #expect(machine.grant(usableAt: now) == nil, "marked for refresh")
        _ = try start(&machine)
        #expect(machine.grant(usableAt: now) == nil, "during a run")
    }

    @Test func aLogoutAttemptsEveryStepAndReportsTheFirstProblem() throws {
        var machine = makeMachine(configuration: Self.configuration(), credentials: validA1)
        _ = machine.beginReset()
        guard case .run(let run, let first) = machine.logOut() else {
            Issue.record("no logout")
            return
        }
        #expect(describe(first) == "send POST /revoke refresh_token, not interruptible")
        guard case .send(let revocation, false) = first else { return }
        #expect(revocation.isPartOfReset && formFields(of: revocation)["token"] == "r1")
        #expect(machine.credentials == nil, "forgotten as the logout starts")
        let refused = response(status: .serviceUnavailable, json: "{}")
        let second = machine.handle(.responseReceived(refused), of: run, at: now)
        #expect(describe(second) == "send POST /revoke access_token, not interruptible")
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
        guard case .finishLogout(let problem) = end else {
            Issue.record("the logout did not end: \(describe(end))")
            return
        }
        #expect(problem == .tokenRequestFailed(status: 503, error: nil, description: nil))
        #expect(machine.lastPath == [.logOut, .done])
        #expect(OAuthStateMachineTableTests.describe(machine.logOut()) == "log out: read saved credentials")
    }

    @Test func aLogoutWithNothingToRevokeDeletesTheSavedCredentialsOnly() throws {
        var machine = makeMachine()
        _ = machine.beginReset()
        guard case .run(let run, let first) = machine.logOut() else {
            Issue.record("no logout")
            return
        }
        #expect(describe(first) == "read saved credentials")
        #expect(describe(machine.handle(.savedCredentialsRead(nil), of: run, at: now)) == "delete saved credentials")
        // No endpoints are known, so no end-session page either.
        #expect(
            describe(machine.handle(.savedCredentialsDeleted(nil), of: run, at: now)) == "finish logout (no problem)")
        #expect(machine.lastPath == [.logOut, .done])
        #expect(machine.requestArrived(at: now).isRefusal, "requests are refused until the reset ends")
        machine.endReset()
        #expect(!machine.requestArrived(at: now).isRefusal)
    }
}

extension OAuthStateMachine.Arrival {
    fileprivate var isRefusal: Bool {
        if case .refuse = self { true } else { false }
    }
}
