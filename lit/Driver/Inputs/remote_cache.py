# Runs pallasc compiles through `--cache-dir http://127.0.0.1:PORT/pallasc`
# against an HTTP cache server in this process (GET/PUT of whole blobs under
# /pallasc/ac/KEY, as Bazel's HTTP cache protocol and nginx's WebDAV serve
# them), and prints what a test can check. The server binds 127.0.0.1 and
# stops with this script. Modes, one line each:
#   cold, warm    a miss stores the entry (GET 404, PUT); the same compile
#                 into another directory is a hit (GET 200, no PUT); both
#                 outputs equal the uncached compile's byte for byte
#   corrupt       the server answers with damaged bytes: a warning, a local
#                 compile, the same outputs
#   error         the server answers 500: one warning for a build of 3
#                 compiles, all compiled locally
#   slow          the server takes longer than PALLASC_CACHE_TIMEOUT: one
#                 warning, the compile finishes well before the server would
#   down          nothing listens on the port: one warning, a local compile
#   concurrent    4 compiles of one kernel at once all miss (the server holds
#                 each GET 0.5 s), all compile and all PUT the same key; each
#                 output equals the uncached one, and the entry left is a hit
#   %python remote_cache.py PALLASC KERNEL SPEC WORKDIR
import http.server
import json
import os
import socket
import subprocess
import sys
import threading
import time

from trees import same_tree

pallasc, kernel, spec, work = sys.argv[1:5]
env = dict(os.environ, PTXAS="none", PALLASC_CACHE_TIMEOUT="1")
env.pop("PALLASC_CACHE_DIR", None)
store, log = {}, []
mode = {"answer": "ok"}


class Handler(http.server.BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def do_GET(self):
        log.append("GET " + self.path.split("/ac/")[0])
        if mode["answer"] == "slow":
            time.sleep(4)
        if mode["answer"] == "gather":
            time.sleep(0.5)
        if mode["answer"] == "error":
            self.send_response(500)
            self.end_headers()
            return
        body = store.get(self.path)
        if body is None:
            self.send_response(404)
            self.end_headers()
            return
        if mode["answer"] == "corrupt":
            body = body[:40] + bytes(b ^ 0x5A for b in body[40:80]) + body[80:]
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_PUT(self):
        n = int(self.headers.get("Content-Length", "0"))
        store[self.path] = self.rfile.read(n)
        log.append("PUT " + self.path.split("/ac/")[0])
        self.send_response(201)
        self.end_headers()


server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
server.daemon_threads = True
threading.Thread(target=server.serve_forever, daemon=True).start()
url = "http://127.0.0.1:%d/pallasc" % server.server_address[1]


def compile_to(out, cache):
    args = [pallasc, kernel, "--spec", spec, "-o", out, "--target", "cpu",
            "--target", "cuda:sm_90a"]
    if cache:
        args += ["--cache-dir", cache]
    return subprocess.run(args, capture_output=True, text=True, env=env)


def warnings(r):
    return [l.replace(url, "URL") for l in r.stderr.splitlines()
            if "warning" in l]


reference = os.path.join(work, "reference")
assert compile_to(reference, None).returncode == 0


def run(name, answer, cache=url):
    mode["answer"] = answer
    del log[:]
    out = os.path.join(work, name)
    start = time.monotonic()
    r = compile_to(out, cache)
    took = time.monotonic() - start
    print("%s: exit %d, %s, requests [%s], warnings %s%s" % (
        name, r.returncode,
        "identical" if r.returncode == 0 and same_tree(out, reference)
        else "DIFFERENT", ", ".join(log), json.dumps(warnings(r)),
        ", under 3 s" if took < 3 else ", took %.1f s" % took))


run("cold", "ok")
run("warm", "ok")
run("corrupt", "corrupt")
run("slow", "slow")
store.clear()
run("error", "error")
with socket.socket() as s:
    s.bind(("127.0.0.1", 0))
    closed = s.getsockname()[1]
run("down", "ok", cache="http://127.0.0.1:%d/pallasc" % closed)

# Concurrent writers: 4 processes miss, compile and PUT the same entry.
store.clear()
mode["answer"] = "gather"
del log[:]
outs = [os.path.join(work, "concurrent%d" % i) for i in range(4)]
args = lambda out: [pallasc, kernel, "--spec", spec, "-o", out, "--target",
                    "cpu", "--target", "cuda:sm_90a", "--cache-dir", url]
procs = [subprocess.Popen(args(out), stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, text=True, env=env)
         for out in outs]
results = [(p.wait(), p.stderr.read()) for p in procs]
print("concurrent: exits %s, identical %d/4, %d GETs, %d PUTs, %d entries, "
      "warnings %d" % (
          [rc for rc, _ in results],
          sum(same_tree(out, reference) for out in outs),
          sum(l.startswith("GET") for l in log),
          sum(l.startswith("PUT") for l in log), len(store),
          sum("warning" in err for _, err in results)))
run("after-concurrent", "ok")

# A build of 3 compiles sharing one cache: one warning for the failing
# server, every job compiled.
mode["answer"] = "error"
jobs = [{"kernel": kernel, "spec": spec, "targets": ["cpu"],
         "out_dir": os.path.join(work, "build%d" % i), "flags": ["-O%d" % i]}
        for i in range(3)]
with open(os.path.join(work, "build.json"), "w") as f:
    json.dump(jobs, f)
r = subprocess.run([pallasc, "build", os.path.join(work, "build.json"),
                    "--cache-dir", url], capture_output=True, text=True,
                   env=env)
print("build: exit %d, %d warnings" % (r.returncode, len(warnings(r))))
server.shutdown()
