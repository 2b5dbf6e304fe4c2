#!/usr/bin/env python3
"""A read-only npm registry on loopback that serves the packed packages of one folder.

    python3 scripts/npm_registry.py DIST_NPM_DIR

Listens on 127.0.0.1 at a free port, prints the port on the first line of stdout, and serves
until killed: GET /<name> (scoped names as /@scope%2fname or /@scope/name) answers the package
document npm reads (every version found, with its tarball's URL, sha512 integrity and sha1),
GET /-/<file>.tgz the tarball. scripts/ci-packages.sh uses it to run `npx ka-hooks` as a user
would, optional dependencies and `os`/`cpu` selection included, with no network.
"""

import base64
import hashlib
import http.server
import json
import os
import sys
import tarfile
import urllib.parse


def packuments(folder, base):
    """name -> package document, from every .tgz in folder."""
    docs = {}
    for file in sorted(os.listdir(folder)):
        if not file.endswith(".tgz"):
            continue
        path = os.path.join(folder, file)
        with open(path, "rb") as f:
            data = f.read()
        with tarfile.open(path) as tar:
            manifest = json.load(tar.extractfile("package/package.json"))
        name, version = manifest["name"], manifest["version"]
        digest = base64.b64encode(hashlib.sha512(data).digest()).decode()
        manifest["_id"] = f"{name}@{version}"
        manifest["dist"] = {
            "tarball": f"{base}/-/{urllib.parse.quote(file)}",
            "integrity": f"sha512-{digest}",
            "shasum": hashlib.sha1(data).hexdigest(),
        }
        doc = docs.setdefault(name, {"name": name, "versions": {}, "dist-tags": {}})
        doc["versions"][version] = manifest
        doc["dist-tags"]["latest"] = version
    return docs


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: python3 scripts/npm_registry.py DIST_NPM_DIR")
    folder = sys.argv[1]

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            path = urllib.parse.unquote(urllib.parse.urlsplit(self.path).path).lstrip("/")
            if path.startswith("-/") and "/" not in path[2:]:
                file = os.path.join(folder, path[2:])
                if os.path.isfile(file):
                    with open(file, "rb") as f:
                        return self.answer(200, "application/octet-stream", f.read())
            elif path in docs:
                body = json.dumps(docs[path]).encode()
                return self.answer(200, "application/json", body)
            self.answer(404, "application/json", b'{"error":"not found"}')

        def answer(self, status, kind, body):
            self.send_response(status)
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    port = server.server_address[1]
    docs = packuments(folder, f"http://127.0.0.1:{port}")
    print(port, flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
