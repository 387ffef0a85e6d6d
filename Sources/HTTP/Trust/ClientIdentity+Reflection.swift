extension ClientIdentity: CustomReflectable {
    /// The form and the certificate chain's length; the private key redacted. `Data`'s own mirror lists every byte, so
    /// without this `dump` and crash reporters would print the key.
    public var customMirror: Mirror {
        Mirror(
            self,
            children: [
                "form": form, "certificates": certificateChain.count,
                "privateKey": privateKey == nil ? "none" : "<redacted>",
            ],
            displayStyle: .struct)
    }
}
