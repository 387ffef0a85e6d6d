// Names what the product declares only when the stand-ins are importable. Should a stand-in stop being found (a
// renamed target, a changed condition), the product's Apple-only branches would drop out silently and the check
// would pass without checking them: this file then fails to compile instead.

import Combine
import Foundation
import HTTP
import HTTPAuth
import HTTPConnection
import Security

func witnesses(connection: Connection, request: Request<Data>, trust: SecTrust, identity: SecIdentity) {
    // canImport(Combine): Sources/HTTPConnection/Connection+Combine.swift
    let _: AnyPublisher<Data, any Error> = connection.publisher(for: request)
    let _: AnyPublisher<String, any Error> = connection.linesPublisher(
        for: Request<String>(underlyingRequest: request.underlyingRequest))
    // canImport(Security): Sources/HTTPAuth/Storage/KeychainCredentialStore.swift, Sources/HTTP/Trust/*
    _ = KeychainCredentialStore(service: "witness", accessibility: .whenUnlockedThisDeviceOnly)
    _ = ServerTrust(host: "example.com", port: 443, secTrust: trust).secTrust
    _ = ClientIdentity(secIdentity: identity, intermediateCertificates: []).secIdentity
}
