/// A typed, per-request setting that loaders read, such as a retry strategy or a server environment.
///
/// An option is a type whose ``defaultOptionValue`` is what a request answers when the option was
/// never set. Requests store options by type, so two libraries can never clash on a string key.
///
/// ## Declaring an option
///
/// ```swift
/// public enum CachePolicy: HTTPRequestOption {
///     public static let defaultOptionValue = false
/// }
///
/// extension HTTPRequest {
///     public var bypassesCache: Bool {
///         get { self[option: CachePolicy.self] }
///         set { self[option: CachePolicy.self] = newValue }
///     }
/// }
/// ```
///
/// A loader then reads `request.bypassesCache`; callers set it like any other property.
public protocol HTTPRequestOption {
    /// The type of the option's value.
    associatedtype Value: Sendable

    /// The value a request reports when the option has not been set.
    static var defaultOptionValue: Value { get }
}
