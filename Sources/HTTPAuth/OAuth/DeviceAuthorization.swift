public import Foundation

/// What the user needs to approve a device (RFC 8628 §3.2): where to go and which code to enter there. A
/// ``DeviceAuthorizationDelegate`` shows it — on a TV's screen, in a terminal, as a QR code of
/// ``verificationURIComplete``.
///
/// The user code is meant to be read by the user; the device code, which the grant polls with, is never part of it.
public struct DeviceAuthorization: Sendable, Hashable {
    /// The code the user enters at ``verificationURI`` (`user_code`).
    public var userCode: String
    /// Where the user goes, on a phone or a computer, to enter ``userCode`` (`verification_uri`).
    public var verificationURI: URL
    /// ``verificationURI`` with the code already in it, if the server offers one (`verification_uri_complete`): for a
    /// QR code or a link, so that the user need not type the code.
    public var verificationURIComplete: URL?
    /// How long the code is valid from when it was issued (`expires_in`).
    public var expiresIn: Duration
    /// When the code expires, by the loader's clock.
    public var expirationDate: Date

    /// - Parameters:
    ///   - userCode: The code the user enters.
    ///   - verificationURI: Where the user enters it.
    ///   - verificationURIComplete: The URI with the code in it, if any.
    ///   - expiresIn: How long the code is valid.
    ///   - expirationDate: When the code expires.
    public init(
        userCode: String, verificationURI: URL, verificationURIComplete: URL? = nil, expiresIn: Duration,
        expirationDate: Date
    ) {
        self.userCode = userCode
        self.verificationURI = verificationURI
        self.verificationURIComplete = verificationURIComplete
        self.expiresIn = expiresIn
        self.expirationDate = expirationDate
    }
}

/// What a ``DeviceAuthorizationGrant`` needs from the app: a screen for the user code.
///
/// ```swift
/// final class CodeScreen: DeviceAuthorizationDelegate {
///     func showUserCode(_ authorization: DeviceAuthorization, for grant: DeviceAuthorizationGrant) async {
///         print("Go to \(authorization.verificationURI) and enter \(authorization.userCode)")
///     }
///
///     func hideUserCode(_ authorization: DeviceAuthorization, for grant: DeviceAuthorizationGrant) async {
///         print("Done.")
///     }
/// }
/// ```
///
/// The grant polls the token endpoint while the code is shown; the user cancels with
/// ``DeviceAuthorizationGrant/cancelAuthorization()`` (a Cancel button on the code screen).
public protocol DeviceAuthorizationDelegate: AnyObject, Sendable {
    /// Shows the user where to go and which code to enter. Return once it is on screen: polling starts then.
    func showUserCode(_ authorization: DeviceAuthorization, for grant: DeviceAuthorizationGrant) async

    /// Takes the code off the screen: the flow ended — the user approved or declined, the code expired, the flow was
    /// cancelled or reset. By default, nothing.
    func hideUserCode(_ authorization: DeviceAuthorization, for grant: DeviceAuthorizationGrant) async
}

extension DeviceAuthorizationDelegate {
    /// Does nothing.
    public func hideUserCode(_ authorization: DeviceAuthorization, for grant: DeviceAuthorizationGrant) async {}
}
