// The loader sample of MiddlewareAndLoaders.md, compiled.
import HTTP
import HTTPAuth
import HTTPOpenAPI

extension ServerEnvironment {
    /// The app's production environment the sample names.
    static let production = ServerEnvironment(host: "httpbin.org")
}

/// The sample, as the article shows it.
func loaderSample(oauthConfiguration: OAuthConfiguration, session: any OAuthDelegate) async throws -> Client {
    /// The operations' policies, read from the operation ID the transport sets on each request.
    let policies = ModifyRequest { request in
        var request = request
        switch request.openAPIOperationID {
        case "getBearer": request.authenticationMethod = .oauth
        case "postAnything": request.isIdempotent = true  // the server deduplicates uploads: safe to retry
        default: break
        }
        return request
    }

    let chain =
        ApplyEnvironment(environment: .production) --> policies --> Cache()
        --> Auth(loaders: [.oauth: OAuth(configuration: oauthConfiguration, delegate: session)])
        --> Retry() --> Throttle(maximumNumberOfRequests: 6) --> URLSessionLoader()

    let transport = LoaderTransport(
        configuration: .init(loader: chain) { metadata in
            // The cache stores buffered responses: let it keep this operation's.
            var overrides = LoaderTransport.Configuration.RequestOverrides.empty
            if metadata.operationID == "getCached" { overrides.httpBodyProcessingMode = .buffered }
            return overrides
        })
    let client = Client(serverURL: try Servers.Server1.url(), transport: transport)

    // On logout: requests waiting in the chain fail at once, tokens are revoked, the cache is emptied.
    await chain.reset()
    return client
}
