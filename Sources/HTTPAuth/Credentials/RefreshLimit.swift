/// At most ``maximumRefreshes`` refreshes within ``window``: a guard against a server that refuses every fresh
/// credential, which would otherwise be answered with refresh after refresh.
///
/// A ``CredentialLoader`` counts the refusals (`401`s) of credentials it obtained; ``OAuth`` the refreshes whose new
/// token was rejected or had expired as it was issued (see ``OAuthConfiguration/refreshLimit``). Replacements that
/// were due never count.
public struct RefreshLimit: Sendable, Hashable {
    public var maximumRefreshes: Int
    public var window: Duration

    public init(maximumRefreshes: Int, window: Duration) {
        self.maximumRefreshes = maximumRefreshes
        self.window = window
    }

    /// 5 a minute.
    public static let standard = RefreshLimit(maximumRefreshes: 5, window: .seconds(60))
}
