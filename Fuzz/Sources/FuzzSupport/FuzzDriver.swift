import CLibFuzzer
import Foundation

/// What every fuzz target provides: how to run one input, its seeds, and how to print an input as Swift.
public protocol FuzzTarget {
    /// Runs one input; traps (through ``FuzzCheck``) when an oracle fails.
    static func run(_ input: inout FuzzInput)
    /// Realistic inputs for the seed corpus, by file name.
    static var seeds: [(name: String, bytes: [UInt8])] { get }
    /// The Swift statements the input makes the harness execute, for a crash report.
    static func reproducer(_ input: inout FuzzInput) -> String
}

/// The entry point of a fuzz target's executable.
///
/// SwiftPM gives every executable on Linux a `main` of its own, so instead of libFuzzer's `main` the target's
/// `main.swift` calls ``main(_:callback:)``, which hands the command line to `LLVMFuzzerRunDriver` (every libFuzzer
/// option works) unless it is one of these:
///
/// - `--write-seeds DIR`: writes the target's seeds into `DIR`;
/// - `--reproducer FILE…`: prints, for each input file, the Swift statements the harness executes for it.
public enum FuzzDriver {
    public typealias Callback = @convention(c) (UnsafePointer<UInt8>?, Int) -> CInt

    public static func main<Target: FuzzTarget>(_ target: Target.Type, callback: Callback) -> Never {
        let arguments = CommandLine.arguments
        if arguments.count == 3, arguments[1] == "--write-seeds" {
            let directory = URL(fileURLWithPath: arguments[2], isDirectory: true)
            do {
                try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
                for seed in Target.seeds {
                    try Data(seed.bytes).write(to: directory.appendingPathComponent(seed.name))
                }
            } catch {
                printError("\(arguments[0]): cannot write seeds: \(error)")
                exit(1)
            }
            print("\(Target.seeds.count) seeds written to \(directory.path)")
            exit(0)
        }
        if arguments.count >= 3, arguments[1] == "--reproducer" {
            for path in arguments.dropFirst(2) {
                guard let data = FileManager.default.contents(atPath: path) else {
                    printError("\(arguments[0]): cannot read \(path)")
                    exit(1)
                }
                var input = FuzzInput(Array(data))
                print("// \(path)\n" + Target.reproducer(&input))
            }
            exit(0)
        }
        var argc = CommandLine.argc
        var argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = CommandLine.unsafeArgv
        exit(LLVMFuzzerRunDriver(&argc, &argv, callback))
    }

    /// Runs `Target` on the bytes libFuzzer passes; for the target's `LLVMFuzzerTestOneInput`.
    public static func run<Target: FuzzTarget>(_ target: Target.Type, _ data: UnsafePointer<UInt8>?, _ size: Int) {
        var input = FuzzInput(size == 0 ? [] : Array(UnsafeBufferPointer(start: data, count: size)))
        Target.run(&input)
    }
}

/// Oracle failures: a message on standard error, then a trap that libFuzzer reports as a crash.
public enum FuzzCheck {
    public static func expect(
        _ condition: @autoclosure () -> Bool, _ message: @autoclosure () -> String, file: StaticString = #file,
        line: UInt = #line
    ) {
        if !condition() { fail(message(), file: file, line: line) }
    }

    public static func fail(_ message: String, file: StaticString = #file, line: UInt = #line) -> Never {
        printError("ORACLE FAILED (\(file):\(line)): \(message)")
        fatalError("oracle failed: \(message)", file: file, line: line)
    }
}

/// Writes a line to standard error, unbuffered, so that it precedes the sanitizer's report.
public func printError(_ line: String) {
    FileHandle.standardError.write(Data((line + "\n").utf8))
}
