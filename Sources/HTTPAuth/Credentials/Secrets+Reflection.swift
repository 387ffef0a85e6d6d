import Foundation
import HTTP

// The values that hold secrets give mirrors that hide them, as their descriptions do: `dump`, `Mirror`, debuggers'
// `po` and crash reporters show which credential is there, never the secret itself. A secret that is absent shows
// as `none`, so a mirror still tells a public client from a confidential one.

extension BasicCredentials: CustomReflectable {
    /// The user name; the password redacted.
    public var customMirror: Mirror {
        Mirror(self, children: ["username": username, "password": "<redacted>"], displayStyle: .struct)
    }
}

extension OAuthCredentials: CustomReflectable {
    /// The dates and the scope; the access, refresh and ID tokens redacted.
    public var customMirror: Mirror {
        Mirror(
            self,
            children: [
                "accessToken": "<redacted>", "refreshToken": Self.redacted(refreshToken),
                "idToken": Self.redacted(idToken), "expirationDate": expirationDate as Any, "scope": scope as Any,
                "issuedAt": issuedAt as Any, "serverClockOffset": serverClockOffset as Any,
            ],
            displayStyle: .struct)
    }

    /// `<redacted>` for a secret that is there, `none` for one that is not.
    static func redacted(_ secret: String?) -> String { secret == nil ? "none" : "<redacted>" }
}

extension PKCE: CustomReflectable {
    /// The method and the challenge, which travel in the clear; the verifier redacted.
    public var customMirror: Mirror {
        Mirror(
            self, children: ["method": Self.method, "challenge": challenge, "verifier": "<redacted>"],
            displayStyle: .struct)
    }
}

extension OAuthConfiguration: CustomReflectable {
    /// The configuration; the client secret redacted, and secrets in the extra authorization parameters hidden as
    /// `Redaction.standard` hides query items.
    public var customMirror: Mirror {
        let parameters = additionalAuthorizationParameters.map { item in
            Redaction.standard.hides(item.name) ? "\(item.name)=<redacted>" : item.description
        }
        return Mirror(
            self,
            children: [
                "endpoints": endpoints, "endpointOverrides": endpointOverrides, "clientID": clientID,
                "clientSecret": OAuthCredentials.redacted(clientSecret), "redirectURI": redirectURI,
                "scopes": scopes, "resourceOrigins": resourceOrigins, "refreshWindow": refreshWindow,
                "onInvalidGrant": onInvalidGrant, "refreshLimit": refreshLimit, "allowedClockSkew": allowedClockSkew,
                "idTokenMaximumAge": idTokenMaximumAge, "postLogoutRedirectURI": postLogoutRedirectURI as Any,
                "additionalAuthorizationParameters": parameters,
            ],
            displayStyle: .struct)
    }
}
