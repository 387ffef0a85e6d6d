#!/usr/bin/env python3
"""HTTPS servers with deliberately bad (and one good) certificates, for the TLS integration tests.

Run by scripts/servers.sh with the servers venv's Python (it needs the venv's `cryptography`):

  tls-servers.py certs DIR
      Makes a throwaway test CA and four server certificates in DIR, all for 127.0.0.1 unless said
      otherwise, with EC P-256 keys:
        ca.pem                         the test CA (no one trusts it unless told to; its key is never written)
        self-signed.pem/.key           self-signed, valid from a day ago for 30 days
        expired.pem/.key               from the test CA, expired a day ago (valid from 30 to 1 days ago)
        wrong-name.pem/.key            from the test CA, valid, but for example.invalid only
        trusted.pem/.key               from the test CA, valid, for 127.0.0.1 and localhost
      Each *.pem holds the server's certificate only (not the CA's), as a server would send it. And two
      client identities for mutual TLS, each a PEM file with the certificate followed by its key (the form
      a client loads in one piece, such as ClientIdentity(pemEncoded:) or Python's load_cert_chain):
        client-identity.pem            from the test CA, valid, for client authentication only, subject
                                       "CN=HTTP package test client,O=HTTP package tests (throwaway)"
        stranger-identity.pem          self-signed, valid, for client authentication: a client no one knows

  tls-servers.py serve --port PORT --cert PEM --key KEY --name NAME [--client-ca CA]
      Serves HTTPS on 127.0.0.1:PORT with that certificate: GET /health answers 200 "ok"; GET / answers
      200 with {"server": NAME} (application/json); anything else 404. With --client-ca, the handshake
      requires a client certificate issued by CA (Python's ssl.CERT_REQUIRED: a client without one, or with
      another issuer's, is refused with a TLS alert and never gets an HTTP answer), and GET / answers
      {"server": NAME, "client": SUBJECT}, SUBJECT being the presented certificate's subject as RFC 4514
      writes it (most specific first: "CN=...,O=..."). Logs "Serving HTTPS on 127.0.0.1:PORT" once the
      port is bound, then one line per request (with the client's subject, when it presented one) or failed
      handshake. Each connection's handshake runs on that connection's own thread, so a client that never
      finishes one holds up no one else.
"""

import argparse
import datetime
import http.server
import ipaddress
import json
import os
import socketserver
import ssl
import sys

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

LOOPBACK = [x509.IPAddress(ipaddress.ip_address("127.0.0.1")), x509.DNSName("localhost")]


def name(common_name):
    return x509.Name([
        x509.NameAttribute(NameOID.ORGANIZATION_NAME, "HTTP package tests (throwaway)"),
        x509.NameAttribute(NameOID.COMMON_NAME, common_name),
    ])


def certificate(subject, key, issuer, issuer_key, not_before, not_after, names=None, is_ca=False, usage=None):
    builder = (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(issuer)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(not_before)
        .not_valid_after(not_after)
        .add_extension(x509.BasicConstraints(ca=is_ca, path_length=0 if is_ca else None), critical=True)
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()), critical=False)
    )
    if is_ca:
        builder = builder.add_extension(
            x509.KeyUsage(
                digital_signature=True, content_commitment=False, key_encipherment=False,
                data_encipherment=False, key_agreement=False, key_cert_sign=True, crl_sign=True,
                encipher_only=False, decipher_only=False,
            ),
            critical=True,
        )
    else:
        if names:
            builder = builder.add_extension(x509.SubjectAlternativeName(names), critical=False)
        builder = (
            builder.add_extension(x509.ExtendedKeyUsage([usage or ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
            .add_extension(
                x509.AuthorityKeyIdentifier.from_issuer_public_key(issuer_key.public_key()), critical=False
            )
        )
    return builder.sign(issuer_key, hashes.SHA256())


def write(path, data, private=False):
    # Private keys are owner-only; everything is written whole, then renamed into place.
    temporary = path + ".tmp"
    descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600 if private else 0o644)
    with os.fdopen(descriptor, "wb") as file:
        file.write(data)
    os.replace(temporary, path)


def make_certificates(directory):
    os.makedirs(directory, exist_ok=True)
    now = datetime.datetime.now(datetime.timezone.utc).replace(microsecond=0)
    day = datetime.timedelta(days=1)

    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_name = name("HTTP package test CA (throwaway)")
    ca = certificate(ca_name, ca_key, ca_name, ca_key, now - 60 * day, now + 30 * day, is_ca=True)
    write(os.path.join(directory, "ca.pem"), ca.public_bytes(serialization.Encoding.PEM))

    servers = {
        # file name: (subject, issued by the CA, valid from, valid until, names)
        "self-signed": ("127.0.0.1", False, now - day, now + 30 * day, LOOPBACK),
        "expired": ("127.0.0.1", True, now - 30 * day, now - day, LOOPBACK),
        "wrong-name": ("example.invalid", True, now - day, now + 30 * day, [x509.DNSName("example.invalid")]),
        "trusted": ("127.0.0.1", True, now - day, now + 30 * day, LOOPBACK),
    }
    for file_name, (common_name, from_ca, not_before, not_after, names) in servers.items():
        key = ec.generate_private_key(ec.SECP256R1())
        subject = name(common_name)
        issuer, issuer_key = (ca_name, ca_key) if from_ca else (subject, key)
        cert = certificate(subject, key, issuer, issuer_key, not_before, not_after, names=names)
        write(os.path.join(directory, file_name + ".pem"), cert.public_bytes(serialization.Encoding.PEM))
        key_bytes = key.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
        )
        write(os.path.join(directory, file_name + ".key"), key_bytes, private=True)

    # Client identities for mutual TLS: certificate and key in one file.
    clients = {
        # file name: (common name, issued by the CA)
        "client-identity": ("HTTP package test client", True),
        "stranger-identity": ("HTTP package stranger client", False),
    }
    for file_name, (common_name, from_ca) in clients.items():
        key = ec.generate_private_key(ec.SECP256R1())
        subject = name(common_name)
        issuer, issuer_key = (ca_name, ca_key) if from_ca else (subject, key)
        cert = certificate(
            subject, key, issuer, issuer_key, now - day, now + 30 * day, usage=ExtendedKeyUsageOID.CLIENT_AUTH
        )
        key_bytes = key.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
        )
        write(
            os.path.join(directory, file_name + ".pem"),
            cert.public_bytes(serialization.Encoding.PEM) + key_bytes,
            private=True,
        )


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def answer(self, status, content_type, body):
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def do_GET(self):
        if self.path == "/health":
            self.answer(200, "text/plain", b"ok")
        elif self.path == "/":
            answer = {"server": self.server.name}
            if self.server.requires_client_certificate:
                answer["client"] = self.client_subject()
            self.answer(200, "application/json", json.dumps(answer).encode())
        else:
            self.answer(404, "text/plain", b"not found")

    do_HEAD = do_GET

    def client_subject(self):
        # The presented certificate's subject, RFC 4514 style: most specific first, "CN=...,O=...".
        der = self.connection.getpeercert(binary_form=True)
        return x509.load_der_x509_certificate(der).subject.rfc4514_string() if der else None

    def log_message(self, format, *args):
        client = self.client_subject() if self.server.requires_client_certificate else None
        suffix = " (client %s)" % client if client else ""
        sys.stderr.write("%s %s%s\n" % (self.address_string(), format % args, suffix))


class TLSServer(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True
    allow_reuse_address = False  # a port another process holds must fail the bind, so servers.sh retries

    def __init__(self, port, context, name, requires_client_certificate=False):
        self.context = context
        self.name = name
        self.requires_client_certificate = requires_client_certificate
        super().__init__(("127.0.0.1", port), Handler)

    def server_bind(self):
        # HTTPServer's own would look the host's name up (socket.getfqdn), which can stall without DNS.
        socketserver.TCPServer.server_bind(self)
        self.server_name, self.server_port = self.server_address[:2]

    def finish_request(self, request, client_address):
        # Runs on the connection's own thread: the handshake happens here, not in accept().
        request.settimeout(30)
        try:
            connection = self.context.wrap_socket(request, server_side=True)
        except (OSError, ValueError) as error:
            sys.stderr.write("%s handshake failed: %s\n" % (client_address[0], error))
            return
        try:
            self.RequestHandlerClass(connection, client_address, self)
        finally:
            try:
                connection.close()
            except OSError:
                pass


def serve(port, cert, key, name, client_ca=None):
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    if client_ca:
        context.verify_mode = ssl.CERT_REQUIRED
        context.load_verify_locations(cafile=client_ca)
    server = TLSServer(port, context, name, requires_client_certificate=client_ca is not None)
    print("Serving HTTPS on 127.0.0.1:%d (%s)" % (port, name), flush=True)
    server.serve_forever()


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    certs = commands.add_parser("certs", help="make the test CA and the server certificates")
    certs.add_argument("directory")
    server = commands.add_parser("serve", help="serve HTTPS on 127.0.0.1")
    server.add_argument("--port", type=int, required=True)
    server.add_argument("--cert", required=True)
    server.add_argument("--key", required=True)
    server.add_argument("--name", required=True)
    server.add_argument("--client-ca", help="require a client certificate issued by this CA (PEM)")
    arguments = parser.parse_args()
    if arguments.command == "certs":
        make_certificates(arguments.directory)
    else:
        serve(arguments.port, arguments.cert, arguments.key, arguments.name, arguments.client_ca)


if __name__ == "__main__":
    main()
