"""An event-stream server for the Server-Sent Events integration tests, started by scripts/servers.sh.

    python event-stream-server.py --port PORT

The event-stream encoding is sse-starlette's (EventSourceResponse, ServerSentEvent), served by uvicorn: the
client is tested against a server implementation nobody here wrote. This file only chooses which events to send.

GET /health                       200 "ok"
GET /numbers?count=N              events 1..N, each `event: number`, `id: <n>`, `data: {"n": <n>}`, resuming
                                  after the request's Last-Event-ID; once every event is sent, 204 No Content
                                  (the specification's "do not reconnect").
    &close_after=K                the connection ends after K events: the client must reconnect to get the rest.
    &retry=MS                     the first event of each connection carries `retry: MS` (default 10).
    &sep=crlf|lf|cr               the line separator sse-starlette writes (default its own, CRLF).
    &comment=1                    a comment line before each event.
Every request is logged to stdout with its Last-Event-ID, so a test failure shows what was asked.
"""
import argparse
import json
import sys

import uvicorn
from sse_starlette.sse import EventSourceResponse, ServerSentEvent
from starlette.applications import Starlette
from starlette.responses import PlainTextResponse, Response
from starlette.routing import Route

SEPARATORS = {"crlf": "\r\n", "lf": "\n", "cr": "\r"}


async def health(request):
    return PlainTextResponse("ok")


async def numbers(request):
    last = request.headers.get("last-event-id", "")
    print(f"GET {request.url.path}?{request.url.query} Last-Event-ID={last!r}", flush=True)
    start = int(last) + 1 if last.isdigit() else 1
    count = int(request.query_params.get("count", "5"))
    close_after = int(request.query_params.get("close_after", str(count)))
    retry = int(request.query_params.get("retry", "10"))
    with_comments = request.query_params.get("comment") == "1"
    if start > count:
        return Response(status_code=204)

    async def events():
        for sent, n in enumerate(range(start, count + 1)):
            if sent == close_after:
                return
            if with_comments:
                yield ServerSentEvent(comment=f"event {n} follows")
            yield ServerSentEvent(
                data=json.dumps({"n": n}), event="number", id=str(n), retry=retry if sent == 0 else None
            )

    return EventSourceResponse(events(), sep=SEPARATORS.get(request.query_params.get("sep", "")))


app = Starlette(routes=[Route("/health", health), Route("/numbers", numbers)])


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    arguments = parser.parse_args()
    uvicorn.run(app, host="127.0.0.1", port=arguments.port, log_level="info")


if __name__ == "__main__":
    sys.exit(main())
