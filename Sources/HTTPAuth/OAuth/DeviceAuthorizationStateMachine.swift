import HTTP

/// The device authorization grant's polling decisions (RFC 8628 §3.4, §3.5) as a value: events in, actions out. No
/// `await`, no I/O, no lock and no clock of its own — time comes with each event, as the time elapsed since the flow
/// started on the grant's clock. ``DeviceAuthorizationGrant`` performs the actions and reports what came of them.
///
/// ```
/// state            event                          action                         next state
/// ───────────────  ─────────────────────────────  ─────────────────────────────  ─────────────────────────────
/// idle             start                          request a code                 requesting code
/// requesting code  code issued (t)                show the code                  showing code (first poll at
///                                                                                t + interval, deadline t +
///                                                                                expires_in)
///                  code request failed            fail with its error            finished
/// showing code     code shown (t)                 sleep until the next poll      waiting
///                                                 (the code expires first:       (finished)
///                                                 fail, expired)
/// waiting          timer fired (t)                poll (t before the poll time:  polling (waiting)
///                                                 sleep again; t at the
///                                                 deadline: fail, expired)       (finished)
/// polling          authorization_pending (t)      sleep until t + interval       waiting
///                  slow_down (t)                  interval + 5 s, for every      waiting
///                                                 later poll; sleep
///                  endpoint unreachable (t)       interval doubled (backoff);    waiting
///                                                 sleep
///                  access_denied                  fail, denied                   finished
///                  expired_token                  fail, expired                  finished
///                  tokens issued                  finish                         finished
///                  token request failed           fail with its error            finished
/// any but finished cancelled                      fail, cancelled                finished
/// ```
///
/// An event a state does not expect (a late answer) changes nothing and asks for nothing. Whenever the next poll
/// would come at or after the device code's deadline, the flow fails as expired at once: `expires_in` bounds the
/// whole wait.
package struct DeviceAuthorizationStateMachine: Sendable, Hashable {
    /// When to poll, and until when.
    package struct Schedule: Sendable, Hashable {
        /// The time between two polls: the server's `interval` (5 s without one), plus 5 s for each `slow_down`.
        package var interval: Duration
        /// When the device code expires: `expires_in` after it was issued.
        package var deadline: Duration
        /// When the next poll is due.
        package var nextPoll: Duration
    }

    package enum State: Sendable, Hashable {
        /// Nothing requested yet.
        case idle
        /// The device authorization request is on its way.
        case requestingCode
        /// The delegate is being shown the user code.
        case showingCode(Schedule)
        /// Sleeping until the next poll.
        case waiting(Schedule)
        /// A token request is on its way.
        case polling(Schedule)
        /// Done: tokens, or a failure.
        case finished
    }

    package enum Event: Sendable, Hashable {
        /// The flow starts.
        case start
        /// The device authorization endpoint issued a code valid for `expiresIn`, to be polled for every
        /// `interval` (`nil`: the server named none).
        case codeIssued(expiresIn: Duration, interval: Duration?, at: Duration)
        /// The device authorization request failed.
        case codeRequestFailed
        /// The delegate has been shown the code.
        case codeShown(at: Duration)
        /// The sleep before the next poll ended.
        case timerFired(at: Duration)
        /// The token endpoint answered `authorization_pending`.
        case authorizationPending(at: Duration)
        /// The token endpoint answered `slow_down`.
        case slowDown(at: Duration)
        /// The token endpoint could not be reached.
        case unreachable(at: Duration)
        /// The token endpoint answered `access_denied`: the user declined.
        case accessDenied
        /// The token endpoint answered `expired_token`.
        case expiredToken
        /// The token endpoint issued tokens.
        case tokensIssued
        /// The token endpoint refused otherwise (`invalid_client`, …) or answered something unusable.
        case tokenRequestFailed
        /// The flow was cancelled: by the app, or by a reset.
        case cancelled
    }

    /// Why a flow failed.
    package enum Failure: Sendable, Hashable {
        /// The user declined.
        case denied
        /// The device code expired before the user approved it.
        case expired
        /// The flow was cancelled.
        case cancelled
        /// The last request's own error.
        case requestFailed
    }

    package enum Action: Sendable, Hashable {
        /// Send the device authorization request.
        case requestCode
        /// Show the user code to the delegate.
        case showCode
        /// Sleep until this time, then report ``Event/timerFired(at:)``.
        case sleep(until: Duration)
        /// Send a token request.
        case poll
        /// Hand over the tokens.
        case finish
        /// Fail the flow.
        case fail(Failure)
        /// Nothing: the event does not apply in this state.
        case none
    }

    /// The interval when the server names none (RFC 8628 §3.2).
    package static let defaultInterval: Duration = .seconds(5)
    /// What each `slow_down` adds to the interval (RFC 8628 §3.5).
    package static let slowDownStep: Duration = .seconds(5)

    package private(set) var state: State = .idle

    package init() {}

    /// Takes `event` and says what to do next.
    package mutating func handle(_ event: Event) -> Action {
        switch (state, event) {
        case (.finished, _):
            return .none
        case (_, .cancelled):
            state = .finished
            return .fail(.cancelled)
        case (.idle, .start):
            state = .requestingCode
            return .requestCode
        case (.requestingCode, .codeIssued(let expiresIn, let interval, let now)):
            let interval = interval.flatMap { $0 > .zero ? $0 : nil } ?? Self.defaultInterval
            state = .showingCode(Schedule(interval: interval, deadline: now + expiresIn, nextPoll: now + interval))
            return .showCode
        case (.requestingCode, .codeRequestFailed):
            state = .finished
            return .fail(.requestFailed)
        case (.showingCode(let schedule), .codeShown):
            return wait(schedule)
        case (.waiting(let schedule), .timerFired(let now)):
            if now >= schedule.deadline {
                state = .finished
                return .fail(.expired)
            }
            if now < schedule.nextPoll { return .sleep(until: schedule.nextPoll) }
            state = .polling(schedule)
            return .poll
        case (.polling(var schedule), .authorizationPending(let now)):
            schedule.nextPoll = now + schedule.interval
            return wait(schedule)
        case (.polling(var schedule), .slowDown(let now)):
            schedule.interval += Self.slowDownStep
            schedule.nextPoll = now + schedule.interval
            return wait(schedule)
        case (.polling(var schedule), .unreachable(let now)):
            schedule.interval = min(schedule.interval * 2, .century)
            schedule.nextPoll = now + schedule.interval
            return wait(schedule)
        case (.polling, .accessDenied):
            state = .finished
            return .fail(.denied)
        case (.polling, .expiredToken):
            state = .finished
            return .fail(.expired)
        case (.polling, .tokensIssued):
            state = .finished
            return .finish
        case (.polling, .tokenRequestFailed):
            state = .finished
            return .fail(.requestFailed)
        default:
            return .none
        }
    }

    /// Sleeps until the next poll, or fails when the code expires first.
    private mutating func wait(_ schedule: Schedule) -> Action {
        guard schedule.nextPoll < schedule.deadline else {
            state = .finished
            return .fail(.expired)
        }
        state = .waiting(schedule)
        return .sleep(until: schedule.nextPoll)
    }
}
