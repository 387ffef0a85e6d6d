import Foundation

extension CacheEntry {
    /// What a cache needs from a stored response's header fields, read once: its directives, its freshness
    /// lifetime and initial age (RFC 9111 §4.2), its validators and the fields it varies on.
    ///
    /// A class, so that an entry — copied on every hit, from the store to the response — stays a few words.
    final class Metadata: Sendable {
        let control: CacheControl
        /// How long the response stays fresh, in seconds (RFC 9111 §4.2.1); zero when it is stale at once.
        let freshnessLifetime: Double
        /// Whether ``freshnessLifetime`` is a heuristic (RFC 9111 §4.2.2) rather than the server's word.
        let isHeuristic: Bool
        /// The response's age when it was received, in seconds (`corrected_initial_age`, RFC 9111 §4.2.3).
        let correctedInitialAge: Double
        /// The `Date` field, in seconds since 1970, when it could be read: the most recent of two variants answers.
        let date: Double?
        /// `ETag`, as sent.
        let entityTag: String?
        /// `Last-Modified`, as sent.
        let lastModified: String?
        /// The field names `Vary` lists, lowercased; `*` among them matches no request.
        let varyNames: [String]
        /// Whether the stored fields include `Age`, which a response served from the store replaces.
        let hasAgeField: Bool
        /// Whether the response must not be stored (RFC 9111 §3): it has `no-store`, without a `must-understand`
        /// this cache honours for its status (§5.2.2.3), or `must-understand` with a status this cache does not
        /// understand.
        let forbidsStoring: Bool

        /// Statuses a cache may give a heuristic lifetime (RFC 9110 §15.1).
        static let heuristicallyCacheable: Set<Int> = [200, 203, 204, 206, 300, 301, 308, 404, 405, 410, 414, 501]
        /// The statuses whose caching requirements this cache understands, for `must-understand` (RFC 9111 §5.2.2.3):
        /// the final statuses RFC 9110 §15 defines, but `304` (never stored).
        static let understoodStatuses: Set<Int> = [
            200, 201, 202, 203, 204, 205, 206, 300, 301, 302, 303, 305, 307, 308, 400, 401, 402, 403, 404, 405, 406,
            407,
            408, 409, 410, 411, 412, 413, 414, 415, 416, 417, 421, 422, 426, 500, 501, 502, 503, 504, 505,
        ]
        /// The share of the time since `Last-Modified` a heuristic lifetime lasts (RFC 9111 §4.2.2's example).
        static let heuristicFraction = 0.1
        /// The longest heuristic lifetime: a day, beyond which RFC 7234 wanted a warning.
        static let maximumHeuristicLifetime: Double = 86_400

        init(status: HTTPStatus, headers: HTTPHeaders, requestDate: Date, responseDate: Date) {
            control = CacheControl(headers)
            forbidsStoring =
                control.mustUnderstand ? !Self.understoodStatuses.contains(status.rawValue) : control.noStore
            entityTag = headers.values(for: "ETag").first
            lastModified = headers.values(for: "Last-Modified").first
            varyNames = Self.varyNames(in: headers)

            let responseTime = Self.seconds(responseDate)
            let requestTime = Self.seconds(requestDate)
            let date = headers.values(for: "Date").first.flatMap { HTTPDate.secondsSince1970($0, now: responseDate) }
                .map(Double.init)
            self.date = date
            let ageField = headers.values(for: "Age").first
            hasAgeField = ageField != nil
            let age = ageField.flatMap(Self.age)

            // §4.2.3: the age when received, from the Age field, the time in transit and the Date field.
            let apparentAge = max(0, responseTime - (date ?? responseTime))
            let responseDelay = max(0, responseTime - requestTime)
            correctedInitialAge = max(apparentAge, Double(age ?? 0) + responseDelay)

            // §4.2.1: max-age, else Expires − Date; an invalid max-age or Expires means stale at once.
            var isHeuristic = false
            if control.hasInvalidMaxAge {
                freshnessLifetime = 0
            } else if let maxAge = control.maxAge {
                freshnessLifetime = Double(maxAge)
            } else if let expires = headers.values(for: "Expires").first {
                let expiry = HTTPDate.secondsSince1970(expires, now: responseDate).map(Double.init)
                freshnessLifetime = expiry.map { max(0, $0 - (date ?? responseTime)) } ?? 0
            } else if Self.heuristicallyCacheable.contains(status.rawValue) || control.isPublic,
                let text = lastModified, let modified = HTTPDate.secondsSince1970(text, now: responseDate)
            {
                // §4.2.2: a fraction of the time since the last modification, when the response was sent.
                let sinceModified = (date ?? responseTime) - Double(modified)
                freshnessLifetime = min(max(0, sinceModified * Self.heuristicFraction), Self.maximumHeuristicLifetime)
                isHeuristic = true
            } else {
                freshnessLifetime = 0
            }
            self.isHeuristic = isHeuristic
        }

        /// The `Age` field's value (RFC 9111 §5.1): its first member when a sender wrote a list (`10, 20`), `nil` when
        /// that member is not delta-seconds (`junk`, `-5`, `1.5`, `10;p=1`), and the field is then ignored.
        static func age(_ field: String) -> Int64? {
            var member = Array(field.utf8.prefix { $0 != UInt8(ascii: ",") })[...]
            while let first = member.first, first == 0x20 || first == 0x09 { member.removeFirst() }
            while let last = member.last, last == 0x20 || last == 0x09 { member.removeLast() }
            return CacheControl.deltaSeconds(Array(member))
        }

        /// Whether the response has a validator, so that a stale copy can be revalidated with a conditional request.
        var hasValidator: Bool { entityTag != nil || lastModified != nil }

        /// Whether a stale copy may ever be served without revalidating it (`must-revalidate` and `no-cache` say
        /// no).
        var mayServeStale: Bool { !control.mustRevalidate && !control.noCache }

        /// The response's age at `now`, in seconds (`current_age`, RFC 9111 §4.2.3). A clock that went back counts
        /// no time in the cache.
        func currentAge(at now: Date, responseDate: Date) -> Double {
            correctedInitialAge + max(0, Self.seconds(now) - Self.seconds(responseDate))
        }

        /// The field names `Vary` lists in `headers`, lowercased, in order.
        static func varyNames(in headers: HTTPHeaders) -> [String] {
            headers.values(for: "Vary").flatMap { value in
                value.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
                    .filter { !$0.isEmpty }
            }
        }

        /// Seconds since 1970 of a date, finite: NaN counts as 1970 and infinities as ±10¹³ s.
        static func seconds(_ date: Date) -> Double {
            let value = date.timeIntervalSince1970
            if value.isNaN { return 0 }
            return min(max(value, -1e13), 1e13)
        }

        /// Whole seconds (rounded down) of a duration, between zero and 2³¹ (RFC 9111 §1.2.2), for an `Age` field
        /// or a `Cache-Status` ttl; NaN counts as zero.
        static func wholeSeconds(_ value: Double) -> Int64 {
            guard value.isFinite else { return value == .infinity ? CacheControl.maximumDeltaSeconds : 0 }
            return Int64(min(max(value, 0), Double(CacheControl.maximumDeltaSeconds)).rounded(.down))
        }

        /// Whole seconds (rounded down, towards zero) of a signed duration, within ±2³¹, for a `Cache-Status` ttl.
        static func signedSeconds(_ value: Double) -> Int64 {
            value < 0 ? -wholeSeconds(-value) : wholeSeconds(value)
        }
    }
}
