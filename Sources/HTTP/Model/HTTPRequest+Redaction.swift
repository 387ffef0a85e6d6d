extension HTTPRequest {
    /// The URL as text for messages and logs, even when the request is still relative or invalid, with the values
    /// `redaction` hides replaced: query items, and for a URL that could not be parsed also its fragment and user
    /// information.
    func displayURL(redaction: Redaction) -> String {
        if let unusableURL { return redaction.display(url: unusableURL.text) }
        var text = ""
        if let host {
            text = "\(scheme)://\(host)"
            if let port { text += ":\(port)" }
        }
        text += percentEncodedPath
        if let percentEncodedQuery { text += "?" + percentEncodedQuery }
        return redaction.display(url: text)
    }
}
