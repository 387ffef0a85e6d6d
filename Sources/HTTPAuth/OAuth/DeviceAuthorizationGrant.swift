public import Foundation
public import HTTP

/// The OAuth 2 device authorization grant (RFC 8628) as a ``CredentialScheme``: for a TV, a console or a command-line
/// tool, which has no browser or no keyboard. The user approves the device on another one — a phone, a computer —
/// by entering a short code at the server's verification page, while the device polls for its tokens.
///
/// ```swift
/// let grant = DeviceAuthorizationGrant(
///     deviceAuthorizationEndpoint: URL(string: "https://id.example.com/oauth2/device")!,
///     tokenEndpoint: URL(string: "https://id.example.com/oauth2/token")!,
///     clientID: "tv-app", scopes: ["videos.read"], delegate: codeScreen)
/// let tv = CredentialLoader(scheme: grant, method: .oauth, origins: ["api.example.com"])
/// let chain = tv --> Retry() --> URLSessionLoader()
/// ```
///
/// The first request that needs a token starts the flow, and every request arriving meanwhile waits for it: the
/// grant asks the device authorization endpoint for a code (the client authenticated as at the token endpoint, RFC 6749
/// §2.3.1, with ``scopes``), shows the ``DeviceAuthorization`` — the user code, the verification URI, the
/// URI with the code in it, how long the code lasts — to its ``delegate``, and polls the token endpoint with
/// `grant_type=urn:ietf:params:oauth:grant-type:device_code` every `interval` (5 s when the server names none):
/// `authorization_pending` keeps polling, `slow_down` adds 5 s to the interval for every later poll, a token endpoint
/// that cannot be reached doubles it, `access_denied` and `expired_token` fail with
/// ``DeviceAuthorizationError/Code/accessDenied`` and ``DeviceAuthorizationError/Code/expired``, and the code's
/// `expires_in` bounds the whole wait. ``cancelAuthorization()`` (the code screen's Cancel button) and a reset stop
/// the polling at once. The polling decisions are a value state machine; the waits run on ``clock``, which a test
/// replaces with one it moves by hand.
///
/// Tokens with a refresh token are refreshed with it before they expire (within ``refreshWindow``, or half their
/// lifetime if that is sooner) and when the API answers `401`: a rotated refresh token replaces the old one, and a
/// response without one keeps it. Without a refresh token, or when the server rejects it (`invalid_grant`), the
/// device flow runs again. A reset revokes the refresh and access tokens where a ``revocationEndpoint`` is given
/// (RFC 7009), and forgets them. ``CredentialLoader`` gives all of this its single flight, origin binding, refusal
/// limit and reset protocol.
///
/// An ID token the server sends is kept in the credentials as it came, not validated: use ``OAuth`` for OpenID
/// Connect logins. The device code, the tokens and the client secret never appear in a message, a description or a
/// log.
public final class DeviceAuthorizationGrant: CredentialScheme, Sendable {
    /// How the client authenticates at the server's endpoints: `client_secret_basic` or `client_secret_post`, for a
    /// client with a secret. A public client (no secret) sends its `client_id` in the form.
    public typealias ClientAuthentication = ClientCredentialsGrant.ClientAuthentication
    package typealias Machine = DeviceAuthorizationStateMachine

    private struct WeakDelegate {
        weak var value: (any DeviceAuthorizationDelegate)?
    }

    private struct State {
        var delegate = WeakDelegate()
        /// The flows running now, which ``cancelAuthorization()`` cancels.
        var flows: [UInt64: Task<OAuthCredentials, any Error>] = [:]
        var nextFlowID: UInt64 = 0
        /// Every state the last flow's machine went through, for tests.
        var lastPath: [Machine.State] = []
    }

    /// Where the grant asks for a device code and a user code (RFC 8628 §3.1).
    public let deviceAuthorizationEndpoint: URL
    /// Where the grant polls for tokens and refreshes them.
    public let tokenEndpoint: URL
    /// The client identifier.
    public let clientID: String
    /// The client secret, for a confidential client; `nil` for a public one, as most devices are. Never shown.
    public let clientSecret: String?
    /// How a client with a secret sends it; ``ClientCredentialsGrant/ClientAuthentication/basic`` by default.
    public let authentication: ClientAuthentication
    /// Scopes to ask for (`scope`); none by default, the server's default scopes.
    public let scopes: [String]
    /// Refresh this long before the access token expires, or when half its lifetime is left if that is sooner; 60 s
    /// by default.
    public let refreshWindow: Duration
    /// Where a reset revokes the tokens (RFC 7009); without one, a reset only forgets them.
    public let revocationEndpoint: URL?
    /// The clock the grant waits on between polls.
    public let clock: any Clock<Duration>
    private let state: Locked<State>

    /// - Parameters:
    ///   - deviceAuthorizationEndpoint: The device authorization endpoint.
    ///   - tokenEndpoint: The token endpoint.
    ///   - clientID: The client identifier.
    ///   - clientSecret: The secret of a confidential client; `nil` (the default) for a public one.
    ///   - authentication: How the secret is sent; `client_secret_basic` by default.
    ///   - scopes: Scopes to ask for.
    ///   - refreshWindow: How long before expiry to refresh; 60 s by default.
    ///   - revocationEndpoint: Where a reset revokes the tokens, if the server has one.
    ///   - delegate: Shows the user code. Held weakly.
    ///   - clock: The clock to wait on between polls; tests pass one they move by hand.
    public init(
        deviceAuthorizationEndpoint: URL,
        tokenEndpoint: URL,
        clientID: String,
        clientSecret: String? = nil,
        authentication: ClientAuthentication = .basic,
        scopes: [String] = [],
        refreshWindow: Duration = .seconds(60),
        revocationEndpoint: URL? = nil,
        delegate: (any DeviceAuthorizationDelegate)? = nil,
        clock: any Clock<Duration> = ContinuousClock()
    ) {
        self.deviceAuthorizationEndpoint = deviceAuthorizationEndpoint
        self.tokenEndpoint = tokenEndpoint
        self.clientID = clientID
        self.clientSecret = clientSecret
        self.authentication = authentication
        self.scopes = scopes
        self.refreshWindow = refreshWindow
        self.revocationEndpoint = revocationEndpoint
        self.clock = clock
        var initial = State()
        initial.delegate.value = delegate
        self.state = Locked(initial)
    }

    /// Shows the user code. Held weakly.
    public var delegate: (any DeviceAuthorizationDelegate)? {
        get { state.withLock { $0.delegate.value } }
        set { state.withLock { $0.delegate.value = newValue } }
    }

    /// Cancels the device flow under way, if any: polling stops at once, and the requests waiting for it fail with
    /// ``DeviceAuthorizationError/Code/cancelled``. For the code screen's Cancel button. The next request that needs
    /// a token starts a new flow.
    public func cancelAuthorization() {
        let flows = state.withLock { Array($0.flows.values) }
        for flow in flows { flow.cancel() }
    }

    /// The states the last device flow went through.
    package var lastPath: [Machine.State] { state.withLock { $0.lastPath } }

    // MARK: - CredentialScheme

    public var credentialName: String { "the device authorization grant's tokens" }

    /// Runs the device flow: a code from the device authorization endpoint, shown by the delegate, then polling until
    /// the user approves. Fails with a ``DeviceAuthorizationError`` (the user declined, the code expired, the flow was
    /// cancelled, there is no delegate, the device authorization endpoint refused) or an ``OAuthError`` (the token
    /// endpoint refused the client or answered something unusable; an endpoint could not be reached).
    public func obtainCredential(_ context: CredentialContext) async throws -> OAuthCredentials {
        guard delegate != nil else { throw DeviceAuthorizationError.noDelegate }
        let (id, flow) = state.withLock { state -> (UInt64, Task<OAuthCredentials, any Error>) in
            state.nextFlowID += 1
            let flow = Task { try await self.runDeviceFlow(context) }
            state.flows[state.nextFlowID] = flow
            return (state.nextFlowID, flow)
        }
        defer { _ = state.withLock { $0.flows.removeValue(forKey: id) } }
        return try await withTaskCancellationHandler {
            try await flow.value
        } onCancel: {
            flow.cancel()
        }
    }

    /// Refreshes with the refresh token (RFC 6749 §6), keeping it when the response has no new one; without one, or
    /// when the server answers `invalid_grant`, runs the device flow again.
    public func refreshCredential(
        _ credentials: OAuthCredentials, _ context: CredentialContext
    ) async throws -> OAuthCredentials {
        guard let refreshToken = credentials.refreshToken else { return try await obtainCredential(context) }
        let fields = [
            URLQueryItem(name: "grant_type", value: "refresh_token"),
            URLQueryItem(name: "refresh_token", value: refreshToken),
        ]
        let result = await context.send(clientRequest(fields, to: tokenEndpoint))
        let response: HTTPResponse
        do {
            response = try TokenEndpoint.successfulResponse(result, from: tokenEndpoint)
        } catch {
            let isRejected = error.code == .tokenRequestFailed && error.serverErrorCode == "invalid_grant"
            guard isRejected else { throw error }
            return try await obtainCredential(context)
        }
        return try OAuthCredentials(
            tokenResponse: response.body, receivedAt: context.now,
            serverDate: Self.serverDate(of: response, now: context.now), previous: credentials)
    }

    /// Whether `credentials` expire within the refresh window (or half their lifetime) at `now`.
    public func needsRefresh(_ credentials: OAuthCredentials, at now: Date) -> Bool {
        OAuthStateMachine.refreshDeadline(of: credentials, window: refreshWindow).map { now >= $0 } ?? false
    }

    /// Sets `Authorization: Bearer …`.
    public func authenticate(_ request: inout HTTPRequest, with credentials: OAuthCredentials) {
        request.headers["Authorization"] = credentials.authorizationHeaderValue
    }

    /// Revokes the refresh token, then the access token, at ``revocationEndpoint`` if there is one (RFC 7009); a
    /// failure changes nothing: the loader forgets the tokens either way.
    public func forgetCredential(_ credentials: OAuthCredentials?, _ context: CredentialContext) async {
        guard let credentials, let revocationEndpoint else { return }
        var tokens: [(String, String)] = []
        if let refreshToken = credentials.refreshToken { tokens.append((refreshToken, "refresh_token")) }
        tokens.append((credentials.accessToken, "access_token"))
        for (token, hint) in tokens {
            let fields = [
                URLQueryItem(name: "token", value: token), URLQueryItem(name: "token_type_hint", value: hint),
            ]
            _ = await context.send(clientRequest(fields, to: revocationEndpoint))
        }
    }

    // MARK: - The device flow

    /// What the device authorization endpoint issued.
    private struct IssuedCode {
        var deviceCode: String
        var authorization: DeviceAuthorization
        var interval: Duration?
    }

    /// What the flow learned along the way, beside the machine's state.
    private struct Flow {
        var machine = Machine()
        var code: IssuedCode?
        var shownTo: (any DeviceAuthorizationDelegate)?
        var tokens: OAuthCredentials?
        /// The error to fail with, for a failure whose details the machine does not keep.
        var failure: (any Error)?
        var path: [Machine.State] = []

        /// Out of line: `runDeviceFlow`'s loop calls it in each of its async pieces (Architecture.md, "Keep async
        /// loops thin").
        @inline(never)
        mutating func handle(_ event: Machine.Event) -> Machine.Action {
            let action = machine.handle(event)
            if path.last != machine.state { path.append(machine.state) }
            return action
        }
    }

    /// Performs the machine's actions until it finishes or fails.
    private func runDeviceFlow(_ context: CredentialContext) async throws -> OAuthCredentials {
        let clock = self.clock
        let elapsed = Self.stopwatch(on: clock)
        var flow = Flow()
        var action = flow.handle(.start)
        while true {
            switch action {
            case .finish, .fail, .none: break
            default: if Task.isCancelled { action = flow.handle(.cancelled) }
            }
            guard let event = await perform(action, &flow, context, elapsed: elapsed) else { break }
            action = flow.handle(event)
        }
        let path = flow.path
        state.withLock { $0.lastPath = path }
        if let delegate = flow.shownTo, let authorization = flow.code?.authorization {
            await delegate.hideUserCode(authorization, for: self)
        }
        switch action {
        case .finish:
            if let tokens = flow.tokens { return tokens }
        case .fail(.denied):
            throw flow.failure ?? DeviceAuthorizationError.accessDenied()
        case .fail(.expired):
            let lifetime = flow.code.map { "\(Int($0.authorization.expiresIn.seconds)) s" } ?? "its lifetime"
            throw flow.failure
                ?? DeviceAuthorizationError.expired(
                    "the code's expires_in (\(lifetime)) ran out before the user approved")
        case .fail(.cancelled):
            throw DeviceAuthorizationError.cancelled
        case .fail(.requestFailed):
            if let failure = flow.failure { throw failure }
        default:
            break
        }
        throw CredentialFailure("the device authorization flow stopped in \(flow.machine.state) without an outcome")
    }

    /// Asks the device authorization endpoint for a code (RFC 8628 §3.1, §3.2).
    private func requestDeviceCode(
        _ context: CredentialContext, elapsed: @escaping @Sendable () -> Duration
    ) async throws -> IssuedCode {
        var fields: [URLQueryItem] = []
        if !scopes.isEmpty { fields.append(URLQueryItem(name: "scope", value: scopes.joined(separator: " "))) }
        var request = clientRequest(fields, to: deviceAuthorizationEndpoint)
        // The media type alone, without FormBody's charset parameter: oauthlib (django-oauth-toolkit) compares the
        // whole field and refuses anything else at this endpoint.
        request.headers["Content-Type"] = "application/x-www-form-urlencoded"
        if clientSecret != nil, authentication == .basic {
            // RFC 8628 §3.1's client_id, beside Basic authentication: some servers read it from the form only.
            request.body = FormBody(fields + [URLQueryItem(name: "client_id", value: clientID)])
        }
        let response: HTTPResponse
        switch await context.send(request) {
        case .failure(let error):
            throw OAuthError.endpointUnreachable(
                "POST \(deviceAuthorizationEndpoint.absoluteString) (device authorization endpoint): "
                    + "\(error.code): \(error.message)")
        case .success(let answer): response = answer
        }
        guard response.status.isSuccess else {
            let problem = try? JSONDecoder().decode(TokenEndpoint.ErrorResponse.self, from: response.body)
            throw DeviceAuthorizationError.authorizationRequestFailed(
                status: response.status.rawValue, error: problem?.error, description: problem?.errorDescription)
        }
        let answer: DeviceCodeResponse
        do {
            answer = try JSONDecoder().decode(DeviceCodeResponse.self, from: response.body)
        } catch {
            throw DeviceAuthorizationError.invalidAuthorizationResponse(
                "the response is not the JSON RFC 8628 §3.2 describes: \(error)")
        }
        guard !answer.deviceCode.isEmpty, !answer.userCode.isEmpty else {
            throw DeviceAuthorizationError.invalidAuthorizationResponse("the device code or the user code is empty")
        }
        guard let verificationURI = Self.webURL(answer.verificationURI) else {
            throw DeviceAuthorizationError.invalidAuthorizationResponse(
                "verification_uri is not an http or https URL")
        }
        guard answer.expiresIn.isFinite, answer.expiresIn > 0 else {
            throw DeviceAuthorizationError.invalidAuthorizationResponse(
                "expires_in \(answer.expiresIn) is not a positive number of seconds")
        }
        let expiresIn = Duration(clampingSeconds: answer.expiresIn, to: .zero ... .century)
        let issuedAt = context.now.addingTimeInterval(elapsed().seconds)
        let authorization = DeviceAuthorization(
            userCode: answer.userCode, verificationURI: verificationURI,
            verificationURIComplete: answer.verificationURIComplete.flatMap(Self.webURL),
            expiresIn: expiresIn, expirationDate: issuedAt.addingTimeInterval(expiresIn.seconds))
        let interval = answer.interval.flatMap {
            $0.isFinite ? Duration(clampingSeconds: $0, to: .zero ... .century) : nil
        }
        return IssuedCode(deviceCode: answer.deviceCode, authorization: authorization, interval: interval)
    }

    /// Performs one of the machine's actions and returns the event it ends with, or `nil` for an action that ends the
    /// flow. Out of line, so that the flow's loop has one suspension point and each of this function's async pieces
    /// only turns its outcome into an event (Architecture.md, "Keep async loops thin"); inlined, each of the loop's
    /// async pieces would carry a copy of every action.
    @inline(never)
    private func perform(
        _ action: Machine.Action, _ flow: inout Flow, _ context: CredentialContext,
        elapsed: @escaping @Sendable () -> Duration
    ) async -> Machine.Event? {
        switch action {
        case .requestCode:
            do {
                let code = try await requestDeviceCode(context, elapsed: elapsed)
                flow.code = code
                return .codeIssued(expiresIn: code.authorization.expiresIn, interval: code.interval, at: elapsed())
            } catch {
                flow.failure = error
                return .codeRequestFailed
            }
        case .showCode:
            // Without the delegate nobody can show the code.
            guard let authorization = flow.code?.authorization, let delegate else { return .cancelled }
            flow.shownTo = delegate
            await delegate.showUserCode(authorization, for: self)
            return .codeShown(at: elapsed())
        case .sleep(let until):
            do {
                try await clock.sleep(for: until - elapsed())
                return .timerFired(at: elapsed())
            } catch {
                return .cancelled
            }
        case .poll:
            return await poll(&flow, context, elapsed: elapsed)
        case .finish, .fail, .none:
            return nil
        }
    }

    /// Asks the token endpoint whether the user has approved (RFC 8628 §3.4), and says what came of it.
    private func poll(
        _ flow: inout Flow, _ context: CredentialContext, elapsed: @escaping @Sendable () -> Duration
    ) async -> Machine.Event {
        guard let deviceCode = flow.code?.deviceCode else { return .tokenRequestFailed }
        let fields = [
            URLQueryItem(name: "grant_type", value: "urn:ietf:params:oauth:grant-type:device_code"),
            URLQueryItem(name: "device_code", value: deviceCode),
        ]
        let result = await context.send(clientRequest(fields, to: tokenEndpoint))
        let now = elapsed()
        do {
            let response = try TokenEndpoint.successfulResponse(result, from: tokenEndpoint)
            let receivedAt = context.now.addingTimeInterval(now.seconds)
            flow.tokens = try OAuthCredentials(
                tokenResponse: response.body, receivedAt: receivedAt,
                serverDate: Self.serverDate(of: response, now: receivedAt))
            return .tokensIssued
        } catch {
            switch (error.code, error.serverErrorCode) {
            case (.endpointUnreachable, _):
                return .unreachable(at: now)
            case (.tokenRequestFailed, "authorization_pending"):
                return .authorizationPending(at: now)
            case (.tokenRequestFailed, "slow_down"):
                return .slowDown(at: now)
            case (.tokenRequestFailed, "access_denied"):
                flow.failure = DeviceAuthorizationError.accessDenied(description: error.serverErrorDescription)
                return .accessDenied
            case (.tokenRequestFailed, "expired_token"):
                flow.failure = DeviceAuthorizationError.expired("the token endpoint answered expired_token")
                return .expiredToken
            default:
                flow.failure = error
                return .tokenRequestFailed
            }
        }
    }

    /// A form posted to `endpoint`, the client authenticated as ``authentication`` says (or identified by its
    /// `client_id`, without a secret).
    private func clientRequest(_ fields: [URLQueryItem], to endpoint: URL) -> HTTPRequest {
        TokenEndpoint.request(
            fields, to: endpoint, clientID: clientID, clientSecret: clientSecret,
            sendsSecretInForm: authentication == .post)
    }

    private static func serverDate(of response: HTTPResponse, now: Date) -> Date? {
        response.headers["Date"].flatMap { RetryAfter.httpDate($0, now: now) }
    }

    /// `text` as an absolute `http` or `https` URL with a host: something to show a user.
    private static func webURL(_ text: String) -> URL? {
        guard let url = URL(string: text), let scheme = url.scheme?.lowercased(), scheme == "https" || scheme == "http",
            url.host?.isEmpty == false
        else { return nil }
        return url
    }

    /// Time elapsed on `clock` since this call.
    private static func stopwatch<C: Clock<Duration>>(on clock: C) -> @Sendable () -> Duration {
        let start = clock.now
        return { start.duration(to: clock.now) }
    }

    /// A device authorization response (RFC 8628 §3.2).
    private struct DeviceCodeResponse: Decodable {
        var deviceCode: String
        var userCode: String
        var verificationURI: String
        var verificationURIComplete: String?
        var expiresIn: Double
        var interval: Double?

        enum CodingKeys: String, CodingKey {
            case deviceCode = "device_code"
            case userCode = "user_code"
            case verificationURI = "verification_uri"
            /// What some servers (Google's) call `verification_uri`.
            case verificationURL = "verification_url"
            case verificationURIComplete = "verification_uri_complete"
            case expiresIn = "expires_in"
            case interval
        }

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            deviceCode = try container.decode(String.self, forKey: .deviceCode)
            userCode = try container.decode(String.self, forKey: .userCode)
            verificationURI =
                try container.decodeIfPresent(String.self, forKey: .verificationURI)
                ?? container.decode(String.self, forKey: .verificationURL)
            verificationURIComplete = try container.decodeIfPresent(String.self, forKey: .verificationURIComplete)
            guard let expiresIn = try Self.number(in: container, for: .expiresIn) else {
                throw DecodingError.keyNotFound(
                    CodingKeys.expiresIn, .init(codingPath: [], debugDescription: "expires_in is missing"))
            }
            self.expiresIn = expiresIn
            interval = try Self.number(in: container, for: .interval)
        }

        /// A number, or a string holding one ("1800"), as some servers send it.
        private static func number(
            in container: KeyedDecodingContainer<CodingKeys>, for key: CodingKeys
        ) throws
            -> Double?
        {
            if let number = try? container.decodeIfPresent(Double.self, forKey: key) { return number }
            guard let text = try container.decodeIfPresent(String.self, forKey: key) else { return nil }
            guard let number = Double(text.trimmingCharacters(in: .whitespaces)) else {
                throw DecodingError.dataCorruptedError(
                    forKey: key, in: container, debugDescription: "\(key.rawValue) is not a number")
            }
            return number
        }
    }
}

extension DeviceAuthorizationGrant: CustomStringConvertible {
    /// The endpoints, the client and the scopes; never the secret.
    public var description: String {
        "DeviceAuthorizationGrant(deviceAuthorizationEndpoint: \(deviceAuthorizationEndpoint.absoluteString), "
            + "tokenEndpoint: \(tokenEndpoint.absoluteString), clientID: \(clientID), "
            + "scopes: \(scopes.joined(separator: " ")))"
    }
}

extension DeviceAuthorizationGrant: CustomReflectable {
    /// The configuration, the secret redacted: `dump`, debuggers and crash reporters never show it.
    public var customMirror: Mirror {
        Mirror(
            self,
            children: [
                "deviceAuthorizationEndpoint": deviceAuthorizationEndpoint, "tokenEndpoint": tokenEndpoint,
                "clientID": clientID, "clientSecret": clientSecret == nil ? "none" : "<redacted>",
                "authentication": authentication, "scopes": scopes, "refreshWindow": refreshWindow,
                "revocationEndpoint": revocationEndpoint as Any,
            ],
            displayStyle: .class)
    }
}

extension DeviceAuthorizationGrant: CredentialSchemeDiagnostics {
    package var debugState: String {
        state.withLock { "device flows running \($0.flows.count), last path \($0.lastPath)" }
    }
}
