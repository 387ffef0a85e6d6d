import FuzzSupport

@_cdecl("LLVMFuzzerTestOneInput")
public func testOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    FuzzDriver.run(CURLTarget.self, data, size)
    return 0
}

FuzzDriver.main(CURLTarget.self, callback: testOneInput)
