import FuzzSupport
import HTTP

extension RetryAfterTarget {
    static var seeds: [(name: String, bytes: [UInt8])] {
        var seeds: [(String, SeedWriter)] = []
        func add(_ name: String, _ write: (inout SeedWriter) -> Void) {
            var writer = SeedWriter()
            write(&writer)
            seeds.append((name, writer))
        }
        for (name, value) in [
            ("parse-seconds", "120"), ("parse-imf", "Sun, 22 Nov 2026 10:02:00 GMT"),
            ("parse-rfc850", "Sunday, 22-Nov-26 10:02:00 GMT"), ("parse-asctime", "Sun Nov 22 10:02:00 2026"),
            ("parse-padded", "  0042 "), ("parse-past", "Wed, 21 Oct 2015 07:28:00 GMT"),
        ] {
            add(name) { writer in
                writer.choice(0, of: 5)
                writer.string(value)
                writer.date(secondsAfterReferenceNow: 0)
            }
        }
        add("http-date-lowercase") { writer in
            writer.choice(1, of: 5)
            writer.string("sun, 06 nov 1994 08:49:37 GMT")
        }
        for (name, form) in [("made-imf", DateParts.Form.imf), ("made-rfc850", .rfc850), ("made-asctime", .asctime)] {
            add(name) { writer in
                writer.choice(2, of: 5)
                DateParts(form: form, year: 2026, month: 2, day: 28, hour: 23, minute: 59, second: 59).write(&writer)
            }
        }
        add("delay-rate-limit") { writer in
            writer.choice(3, of: 5)
            writeRateLimitFields([("RateLimit-Reset", "30"), ("X-RateLimit-Reset", "1795341630")], &writer)
            writer.date(secondsAfterReferenceNow: 0)
        }
        add("delay-retry-after-wins") { writer in
            writer.choice(3, of: 5)
            writeRateLimitFields(
                [("X-RateLimit-Reset", "5"), ("Retry-After", "Sun, 22 Nov 2026 10:00:10 GMT")], &writer)
            writer.date(secondsAfterReferenceNow: 4)
        }
        let backoffs: [(String, BackoffCase)] = [
            (
                "backoff-standard-503",
                BackoffCase(
                    schedule: .exponential(initial: .seconds(1), multiplier: 2), maximumNumberOfAttempts: 3,
                    maximumDelay: .seconds(30), jitter: .full, retryableStatuses: [429, 503],
                    retryableCodes: ["cannotConnect", "timedOut"], maximumRetryAfter: .seconds(60), delayAttempt: 2,
                    outcome: .response(status: 503, fields: [("Retry-After", "12")]), attempt: 1,
                    now: FuzzInput.referenceNow)
            ),
            (
                "backoff-constant-failure",
                BackoffCase(
                    schedule: .constant(.seconds(2)), maximumNumberOfAttempts: 4, maximumDelay: .seconds(10),
                    jitter: .equal, retryableStatuses: [500], retryableCodes: ["cannotConnect"],
                    maximumRetryAfter: .seconds(60), delayAttempt: 3, outcome: .failure("cannotConnect"), attempt: 2,
                    now: FuzzInput.referenceNow)
            ),
            (
                "backoff-immediately-cancelled",
                BackoffCase(
                    schedule: .immediately, maximumNumberOfAttempts: 2, maximumDelay: .seconds(1), jitter: .none,
                    retryableStatuses: [408], retryableCodes: ["cancelled"], maximumRetryAfter: .seconds(0),
                    delayAttempt: 1, outcome: .failure("cancelled"), attempt: 1, now: FuzzInput.referenceNow)
            ),
        ]
        for (name, backoff) in backoffs {
            add(name) { writer in
                writer.choice(4, of: 5)
                backoff.write(&writer)
            }
        }
        return seeds.map { ($0.0, $0.1.bytes) }
    }
}
