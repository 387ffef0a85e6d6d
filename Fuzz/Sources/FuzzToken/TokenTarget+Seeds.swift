import Foundation
import FuzzSupport

extension TokenTarget {
    static var seeds: [(name: String, bytes: [UInt8])] {
        let now = 1_795_341_600
        let claims = """
            {"iss":"https://id.example.com","sub":"alice","aud":"my-app","exp":\(now + 3600),"iat":\(now),\
            "nonce":"n-0S6_WzA2Mj","auth_time":\(now),"email":"alice@example.com"}
            """
        let idTokens: [(String, String, Validation)] = [
            (
                "id-token-valid", claims,
                Validation(issuer: nil, clientID: nil, nonce: .fromClaims, now: .init(), allowedSkew: nil)
            ),
            (
                "id-token-several-audiences",
                """
                {"iss":"https://id.example.com","sub":"bob","aud":["my-app","other"],"azp":"my-app",\
                "exp":\(now + 60),"iat":\(now - 10)}
                """,
                Validation(
                    issuer: "https://id.example.com", clientID: "my-app", nonce: .none, now: .init(), allowedSkew: nil)
            ),
            (
                "id-token-expired",
                """
                {"iss":"https://id.example.com","sub":"carol","aud":"my-app","exp":\(now - 600),"iat":\(now - 4200),"nonce":"x"}
                """,
                Validation(issuer: nil, clientID: nil, nonce: .text("y"), now: .init(), allowedSkew: .seconds(60))
            ),
            (
                "id-token-fractional-times",
                """
                {"iss":"i","sub":"s","aud":[],"exp":1.7953416005e9,"iat":-1e300}
                """,
                Validation(issuer: "i", clientID: "", nonce: .none, now: .init(), allowedSkew: .seconds(0))
            ),
        ]
        var seeds: [(String, [UInt8])] = []
        for (name, payload, validation) in idTokens {
            var writer = SeedWriter()
            writer.choice(1, of: 3)
            writer.string(payload)
            write(validation, &writer)
            seeds.append((name, writer.bytes))
        }
        var raw = SeedWriter()
        raw.choice(0, of: 3)
        raw.string(jwt(payload: claims).replacingOccurrences(of: "c2lnbmF0dXJl", with: "").appending(".extra"))
        write(Validation(issuer: nil, clientID: nil, nonce: .none, now: .init(), allowedSkew: nil), &raw)
        seeds.append(("jwt-four-parts", raw.bytes))

        let responses: [(String, String, Bool)] = [
            (
                "token-response-full",
                """
                {"access_token":"SlAV32hkKG","token_type":"Bearer","refresh_token":"8xLOxBtZp8","expires_in":3600,\
                "id_token":"eyJhbGciOiJSUzI1NiJ9.e30.c2ln","scope":"openid profile"}
                """,
                false
            ),
            (
                "token-response-refresh",
                #"{"access_token":"2YotnFZFEjr1zCsicMWpAA","token_type":"bearer","expires_in":60.5}"#, true
            ),
            ("token-response-mac", #"{"access_token":"a","token_type":"mac","expires_in":1}"#, false),
            (
                "token-response-negative",
                #"{"access_token":"abc","token_type":"Bearer","expires_in":-3600,"refresh_token":null}"#, true
            ),
            (
                "token-response-string-expiry", #"{"access_token":"abc","token_type":"Bearer","expires_in":"3600"}"#,
                false
            ),
            ("token-response-error", #"{"error":"invalid_grant","error_description":"expired"}"#, true),
        ]
        for (name, body, previous) in responses {
            var writer = SeedWriter()
            writer.choice(2, of: 3)
            writer.string(body)
            writer.date(secondsAfterReferenceNow: 0)
            writer.bool(previous)
            writer.seconds(60)
            writer.date(secondsAfterReferenceNow: 3000)
            seeds.append((name, writer.bytes))
        }
        return seeds
    }

    /// Writes a validation; its `now` is always the reference time.
    static func write(_ validation: Validation, _ writer: inout SeedWriter) {
        writer.optionalString(validation.issuer)
        writer.optionalString(validation.clientID)
        switch validation.nonce {
        case .none: writer.choice(0, of: 3)
        case .fromClaims: writer.choice(1, of: 3)
        case .text(let text):
            writer.choice(2, of: 3)
            writer.string(text)
        }
        writer.date(secondsAfterReferenceNow: 0)
        writer.bool(validation.allowedSkew == nil)
        if let skew = validation.allowedSkew { writer.seconds(Int(skew.components.seconds)) }
    }
}
