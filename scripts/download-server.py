"""A download server for the tests of resumable downloads, started by scripts/servers.sh.

    python download-server.py --port PORT

GET /health                   200 "ok"
GET /file/<size>?...          <size> bytes of a deterministic pattern (byte i is i % 251), with a strong ETag,
                              Last-Modified, Accept-Ranges: bytes, and Range / If-Range honoured (206 with
                              Content-Range; a stale If-Range gets the whole file, 200).
    ?drop=<key>               the first response for each distinct key is cut off half-way: the connection is
                              closed after half the body (the client sees a transfer that ended early).
    ?version=<v>              part of the ETag: a different version is a different entity.
    ?change=<key>             the entity changes after the first response for each distinct key: later
                              responses have another ETag (so an If-Range with the first one gets a 200).
    ?slow=<ms>                sleeps that many milliseconds between 64 KiB chunks.
    ?hold=<bytes>             after sending about that many bytes (whole 64 KiB chunks), sends nothing more until
                              the client closes the connection (at most 120 s, then the rest follows): a test can
                              cancel a transfer that cannot have finished first, however slowly the test runs.
POST /echo                    reads the request body, plain or chunked, and answers JSON: {"length": n,
                              "sha256": hex, "chunked": bool, "contentLength": the header or null,
                              "contentType": the header or null, "head": the first 64 bytes as text}
Every request is logged to stdout with its Range and If-Range, so a test can read what was asked.
"""
import argparse
import hashlib
import http.server
import json
import select
import socket
import threading
import time
import urllib.parse

PATTERN = bytes(range(251))
LAST_MODIFIED = "Wed, 21 Oct 2026 07:28:00 GMT"
dropped = set()
changed = set()
lock = threading.Lock()


def body(start, end):
    """Bytes start..<end of the pattern."""
    out = bytearray()
    position = start
    while position < end:
        offset = position % 251
        take = min(251 - offset, end - position)
        out += PATTERN[offset:offset + take]
        position += take
    return bytes(out)


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, fmt, *args):
        print("%s range=%s if-range=%s" % (self.path, self.headers.get("Range"), self.headers.get("If-Range")),
              flush=True)

    def do_GET(self):
        url = urllib.parse.urlsplit(self.path)
        query = urllib.parse.parse_qs(url.query)
        if url.path == "/health":
            return self.reply(200, b"ok", {"Content-Type": "text/plain"})
        parts = url.path.strip("/").split("/")
        if len(parts) != 2 or parts[0] != "file" or not parts[1].isdigit():
            return self.reply(404, b"not found", {"Content-Type": "text/plain"})
        size = int(parts[1])
        version = query.get("version", ["1"])[0]
        change_key = query.get("change", [None])[0]
        if change_key is not None:
            with lock:
                if change_key in changed:
                    version += "-changed"
                changed.add(change_key)
        etag = '"%d-%s"' % (size, version)
        start, status = 0, 200
        headers = {"ETag": etag, "Last-Modified": LAST_MODIFIED, "Accept-Ranges": "bytes",
                   "Content-Type": "application/octet-stream"}
        requested = self.headers.get("Range")
        if_range = self.headers.get("If-Range")
        if requested and requested.startswith("bytes=") and requested.endswith("-") and (
                if_range is None or if_range in (etag, LAST_MODIFIED)):
            first = int(requested[6:-1])
            if first >= size:
                return self.reply(416, b"", {"Content-Range": "bytes */%d" % size})
            start, status = first, 206
            headers["Content-Range"] = "bytes %d-%d/%d" % (first, size - 1, size)
        drop_key = query.get("drop", [None])[0]
        drop = False
        if drop_key is not None:
            with lock:
                if drop_key not in dropped:
                    dropped.add(drop_key)
                    drop = True
        slow = int(query.get("slow", ["0"])[0]) / 1000.0
        hold = int(query.get("hold", ["-1"])[0])
        length = size - start
        self.send_response(status)
        for name, value in headers.items():
            self.send_header(name, value)
        self.send_header("Content-Length", str(length))
        self.end_headers()
        stop = start + length // 2 if drop else size
        position = start
        try:
            while position < stop:
                chunk_end = min(stop, position + 65536)
                self.wfile.write(body(position, chunk_end))
                position = chunk_end
                if slow:
                    time.sleep(slow)
                if 0 <= hold <= position - start:
                    hold = -1
                    self.wfile.flush()
                    if self.wait_for_client_to_close(seconds=120):
                        return
            self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError):
            return
        if drop:
            self.close_connection = True
            self.connection.shutdown(2)

    def wait_for_client_to_close(self, seconds):
        """True once the client has closed the connection; False if it is still open after `seconds`."""
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            readable, _, _ = select.select([self.connection], [], [], 0.1)
            if readable:
                try:
                    if not self.connection.recv(1, socket.MSG_PEEK):
                        return True
                except OSError:
                    return True
                time.sleep(0.1)  # the client sent something (it should not): keep waiting for the close
        return False

    def do_POST(self):
        if urllib.parse.urlsplit(self.path).path != "/echo":
            return self.reply(404, b"not found", {"Content-Type": "text/plain"})
        digest = hashlib.sha256()
        length = 0
        head = b""
        chunked = self.headers.get("Transfer-Encoding", "").lower() == "chunked"
        def take(data):
            nonlocal length, head
            digest.update(data)
            length += len(data)
            if len(head) < 64:
                head += data[:64 - len(head)]
        if chunked:
            while True:
                size = int(self.rfile.readline().split(b";")[0].strip(), 16)
                if size == 0:
                    while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                        pass
                    break
                take(self.rfile.read(size))
                self.rfile.readline()
        else:
            left = int(self.headers.get("Content-Length", "0"))
            while left > 0:
                data = self.rfile.read(min(left, 65536))
                if not data:
                    break
                left -= len(data)
                take(data)
        answer = json.dumps({"length": length, "sha256": digest.hexdigest(), "chunked": chunked,
                             "contentLength": self.headers.get("Content-Length"),
                             "contentType": self.headers.get("Content-Type"),
                             "head": head.decode("utf-8", "replace")}).encode()
        self.reply(200, answer, {"Content-Type": "application/json"})

    def reply(self, status, data, headers):
        self.send_response(status)
        for name, value in headers.items():
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    arguments = parser.parse_args()
    server = http.server.ThreadingHTTPServer(("127.0.0.1", arguments.port), Handler)
    server.daemon_threads = True
    print("download-server listening on 127.0.0.1:%d" % arguments.port, flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
