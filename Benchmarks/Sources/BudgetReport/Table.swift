import Foundation

/// One line of the report: a figure, what it measured, its budget and whether it is within it.
struct Row {
    enum Verdict: String {
        case pass = "PASS"
        case fail = "FAIL"
        case info = ""
        case skipped = "SKIP"
    }

    let figure: String
    let measured: String
    let budget: String
    let verdict: Verdict

    /// A figure with no budget of its own, shown for context.
    static func info(_ figure: String, _ measured: String) -> Row {
        Row(figure: figure, measured: measured, budget: "", verdict: .info)
    }

    static func check(_ figure: String, _ measured: String, budget: String, passes: Bool) -> Row {
        Row(figure: figure, measured: measured, budget: budget, verdict: passes ? .pass : .fail)
    }
}

/// A section of the report, with a heading.
struct Section {
    let title: String
    var rows: [Row] = []
}

/// Renders sections as an aligned plain-text table.
func render(_ sections: [Section]) -> String {
    let header = Row(figure: "figure", measured: "measured", budget: "budget (DESIGN.md)", verdict: .info)
    let all = sections.flatMap(\.rows) + [header]
    let figureWidth = all.map(\.figure.count).max() ?? 0
    let measuredWidth = all.map(\.measured.count).max() ?? 0
    let budgetWidth = all.map(\.budget.count).max() ?? 0
    func line(_ row: Row, result: String) -> String {
        let text =
            row.figure.padding(toLength: figureWidth, withPad: " ", startingAt: 0) + "  "
            + String(repeating: " ", count: measuredWidth - row.measured.count) + row.measured + "  "
            + row.budget.padding(toLength: budgetWidth, withPad: " ", startingAt: 0) + "  " + result
        return String(text.reversed().drop(while: { $0 == " " }).reversed())
    }
    let width = figureWidth + measuredWidth + budgetWidth + 12
    var lines = [line(header, result: "result"), String(repeating: "-", count: width)]
    for section in sections {
        lines.append(section.title)
        for row in section.rows { lines.append(line(row, result: row.verdict.rawValue)) }
    }
    return lines.joined(separator: "\n")
}

/// Formats a figure with a fixed number of decimals.
func format(_ value: Double, decimals: Int = 2) -> String {
    String(format: "%.\(decimals)f", value)
}
