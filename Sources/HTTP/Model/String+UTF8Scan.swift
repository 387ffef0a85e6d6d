extension String {
    /// The offset of the first UTF-8 byte that `isMatch` accepts, or `nil` when none does.
    ///
    /// It reads the string's bytes where they lie when they are contiguous (native strings always are), which is
    /// what lets every request's URL and header fields be validated cheaply; `utf8.firstIndex(where:)` steps
    /// through the view's indices instead.
    func firstUTF8Offset(where isMatch: (UInt8) -> Bool) -> Int? {
        if let found = utf8.withContiguousStorageIfAvailable({ $0.firstIndex(where: isMatch) }) {
            return found
        }
        var offset = 0
        for byte in utf8 {
            if isMatch(byte) { return offset }
            offset += 1
        }
        return nil
    }

    /// The scalar that starts at UTF-8 offset `offset`: for naming a byte that ``firstUTF8Offset(where:)`` found,
    /// when every byte before it is ASCII.
    func unicodeScalar(atUTF8Offset offset: Int) -> Unicode.Scalar {
        unicodeScalars[utf8.index(utf8.startIndex, offsetBy: offset)]
    }
}
