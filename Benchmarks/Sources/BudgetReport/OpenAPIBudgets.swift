import BenchmarkSupport
import Foundation

/// Issue 25's loopback budgets: one generated OpenAPI client (``PersonAPI/Client``, the person decoded) over
/// Integrations/OpenAPI's `LoaderTransport` in front of the default chain reaches ≥ 1.0× the throughput of the same
/// client over swift-openapi-urlsession when the chain ends in `URLSessionLoader`, and ≥ 0.95× the same client over
/// swift-openapi-async-http-client when it ends in `AsyncHTTPClientLoader`; sequentially and at concurrency 16,
/// judged on the mean of the runs' median ratios. The peers' clients have the middleware stack that stands for the
/// default chain (one sets `Authorization`, three pass the request on). `LoaderTransport` with buffered bodies is
/// shown beside it over each transport (no budget). Measured like ``measureLoopback(baseURL:plan:)``: interleaved turns in fresh clients
/// every round, medians of per-round ratios with 95% intervals.
func measureOpenAPILoopback(baseURL: URL, plan: LoopbackPlan) async throws -> Section {
    let urlSessionPeer = 0
    let overURLSession = 1
    let ahcPeer = 2
    let overAHC = 3
    let buffered = 4
    let bufferedAHC = 5
    let separateRuns = try await repeatedLoopbackRuns(
        baseURL: baseURL, plan: plan, countsConnections: false,
        clients: [
            { GeneratedOverURLSessionTransportClient(baseURL: baseURL) },
            { GeneratedOverLoaderTransportClient(baseURL: baseURL) },
            { GeneratedOverAsyncHTTPClientTransportClient(baseURL: baseURL) },
            { GeneratedOverLoaderTransportAHCClient(baseURL: baseURL) },
            { GeneratedOverLoaderTransportClient(baseURL: baseURL, buffered: true) },
            { GeneratedOverLoaderTransportAHCClient(baseURL: baseURL, buffered: true) },
        ]
    )
    let runs = LoopbackRuns(pooling: separateRuns)
    var section = Section(
        title: "Over loopback, a generated OpenAPI client (person decoded; \(plan.description))")
    for (modeIndex, mode) in plan.modes.enumerated() {
        let rate = runs.rates[modeIndex]
        section.rows += clientRows(mode: mode, names: runs.names, rates: rate, cpu: runs.cpu[modeIndex])
        for (numerator, denominator, label, floor) in [
            (overURLSession, urlSessionPeer, "LoaderTransport over URLSessionLoader ÷ swift-openapi-urlsession", 1.0),
            (overAHC, ahcPeer, "LoaderTransport over AsyncHTTPClientLoader ÷ swift-openapi-async-http-client", 0.95),
        ] {
            let ratio = MeanOfRuns(separateRuns, mode: modeIndex, numerator, to: denominator)
            section.rows.append(
                .check(
                    "\(mode.name): \(label), mean of runs",
                    "\(ratio.description); pooled median \(shownRatio(rate[numerator], to: rate[denominator]))",
                    budget: "≥ \(format(floor, decimals: 2))", passes: ratio.mean >= floor))
        }
        section.rows.append(
            .info(
                "\(mode.name): LoaderTransport buffered ÷ streamed (both over URLSessionLoader)",
                shownRatio(rate[buffered], to: rate[overURLSession])))
        section.rows.append(
            .info(
                "\(mode.name): LoaderTransport buffered ÷ streamed (both over AsyncHTTPClientLoader)",
                shownRatio(rate[bufferedAHC], to: rate[overAHC])))
    }
    return section
}
