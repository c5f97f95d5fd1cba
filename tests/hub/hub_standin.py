"""A local stand-in for the Hugging Face Hub, for tests (there is no Hub access here).

It speaks the real endpoints with the shapes the Hub documents (see the "_source" note in each
fixture under fixtures/):
  GET  /api/models?pipeline_tag=T&sort=downloads|trendingScore|likes&limit=N[&cursor=C]
       paged: at most `page_size` models per page and a `Link: <...>; rel="next"` header
  GET  /api/models/{org}/{name}                      model info
  GET  /api/models/{org}/{name}/revision/{rev}       model info at a revision (URL-quoted)
  GET  /api/models/{org}/{name}/tree/{rev}           the file list (huggingface_hub RepoFile)
  GET|HEAD /{org}/{name}/resolve/{rev}/{path}        a file, with Range (206 + Content-Range),
       ETag / X-Repo-Commit (as huggingface_hub reads them), If-None-Match → 304; LFS files
       (*.safetensors) also X-Linked-Etag (their sha256) and X-Linked-Size. With
       `cdn_redirects`, an LFS file is a 302 to /cdn-lfs/{sha256} carrying those headers, as
       the Hub redirects to its CDN, whose answer has an ETag of its own and no X-Repo-Commit.
  401 for a gated repo's files without an Authorization header, 404 for anything unknown,
  and injected faults for a path: `faults[path] = [(status, headers, body), ...]` are answered
  once each, in order, before the real answer; `storms[path] = (status, headers, body)` is
  answered every time (a 429 storm, a redirect loop, malformed JSON). `truncations[path] =
  [n, ...]` cut the next file answers for a path after n body bytes each (the headers announce
  the whole body, then the connection closes: an interrupted download). `throttle_bytes_per_s`
  paces file bodies, so that a test can watch a download in progress.

It listens on 127.0.0.1 on a free port, records every request, and stops by itself after
`lifetime_s` seconds. Run it alone with `python hub_standin.py --lifetime 600` to try canrun
against it by hand (prints the endpoint).
"""
from __future__ import annotations

import argparse
import hashlib
import json
import re
import socket
import threading
import time
import urllib.parse
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

FIXTURES = Path(__file__).parent / "fixtures"
SORT_KEYS = {"downloads", "trendingScore", "likes", "createdAt", "lastModified"}


def load_fixture(name: str):
    """A fixture JSON file without its "_source" note."""
    data = json.loads((FIXTURES / name).read_text())
    if isinstance(data, dict):
        data.pop("_source", None)
    return data


def git_blob_sha1(data: bytes) -> str:
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


@dataclass
class Repo:
    info: dict                      # the /api/models/{id} answer, less siblings
    files: dict[str, bytes] = field(default_factory=dict)
    sha: str = "0" * 40             # commit of "main"
    gated: bool = False             # files need a token

    def info_json(self) -> dict:
        info = dict(self.info)
        info.setdefault("sha", self.sha)
        info["siblings"] = [{"rfilename": name} for name in sorted(self.files)]
        return info


@dataclass
class Request:
    method: str
    path: str
    headers: dict
    status: int
    body_bytes: int


class HubStandIn:
    def __init__(self, models: list[dict] | None = None, page_size: int = 3,
                 lifetime_s: float = 300.0):
        self.models = list(models or [])
        self.repos: dict[str, Repo] = {}
        self.page_size = page_size
        self.faults: dict[str, list[tuple[int, dict, bytes]]] = {}
        self.storms: dict[str, tuple[int, dict, bytes]] = {}
        self.truncations: dict[str, list[int]] = {}
        self.throttle_bytes_per_s: float | None = None
        self.cdn_redirects = False
        self.requests: list[Request] = []
        self._lock = threading.Lock()
        handler = type("Handler", (_Handler,), {"standin": self})
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.server.daemon_threads = True
        self.endpoint = f"http://127.0.0.1:{self.server.server_address[1]}"
        self._thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self._timer = threading.Timer(lifetime_s, self.stop)
        self._timer.daemon = True

    def start(self) -> "HubStandIn":
        self._thread.start()
        self._timer.start()
        return self

    def stop(self) -> None:
        self._timer.cancel()
        self.server.shutdown()
        self.server.server_close()

    def add_repo(self, repo_id: str, info: dict | None = None, files: dict[str, bytes] | None = None,
                 sha: str | None = None, gated: bool = False) -> Repo:
        info = dict(info or {"id": repo_id})
        info["id"] = repo_id
        sha = sha or hashlib.sha1(repo_id.encode()).hexdigest()
        repo = Repo(info=info, files=dict(files or {}), sha=sha, gated=gated)
        self.repos[repo_id] = repo
        return repo

    def record(self, request: Request) -> None:
        with self._lock:
            self.requests.append(request)

    def requests_to(self, prefix: str) -> list[Request]:
        with self._lock:
            return [r for r in self.requests if r.path.startswith(prefix)]


class _Handler(BaseHTTPRequestHandler):
    standin: HubStandIn
    protocol_version = "HTTP/1.1"

    def log_message(self, format, *args):  # quiet
        pass

    # --- answers ---------------------------------------------------------------------------
    def _send(self, status: int, body: bytes = b"", headers: dict | None = None,
              content_type: str = "application/json", cut_after: int | None = None,
              paced: bool = False) -> None:
        """The answer; `cut_after` bytes of the body then the connection closes, `paced` bodies
        go at throttle_bytes_per_s."""
        self.send_response(status)
        headers = dict(headers or {})
        headers.setdefault("Content-Type", content_type)
        headers.setdefault("Content-Length", str(len(body)))
        for name, value in headers.items():
            self.send_header(name, value)
        self.end_headers()
        sent = 0
        if self.command != "HEAD" and status not in (204, 304):
            to_send = body if cut_after is None else body[:cut_after]
            rate = self.standin.throttle_bytes_per_s if paced else None
            if rate:
                chunk = 64 * 1024
                for start in range(0, len(to_send), chunk):
                    self.wfile.write(to_send[start:start + chunk])
                    self.wfile.flush()
                    time.sleep(len(to_send[start:start + chunk]) / rate)
            else:
                self.wfile.write(to_send)
            sent = len(to_send)
            if cut_after is not None:
                self.wfile.flush()
                self.close_connection = True
                try:
                    self.connection.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass
        self.standin.record(Request(self.command, self.path, dict(self.headers), status, sent))

    def _json(self, value, status: int = 200, headers: dict | None = None) -> None:
        self._send(status, json.dumps(value).encode(), headers)

    def _error(self, status: int, message: str) -> None:
        self._json({"error": message}, status, {"X-Error-Message": message})

    # --- routing -----------------------------------------------------------------------------
    def do_HEAD(self):
        self.do_GET()

    def do_GET(self):
        url = urllib.parse.urlsplit(self.path)
        with self.standin._lock:
            faults = self.standin.faults.get(url.path)
            fault = faults.pop(0) if faults else self.standin.storms.get(url.path)
        if fault:
            status, headers, body = fault
            return self._send(status, body, headers)
        if url.path == "/api/models":
            return self._list_models(urllib.parse.parse_qs(url.query))
        match = re.fullmatch(r"/api/models/([^/]+/[^/]+)/tree/([^/]+)", url.path)
        if match:
            return self._tree(match.group(1), urllib.parse.unquote(match.group(2)))
        match = re.fullmatch(r"/api/models/([^/]+/[^/]+)(?:/revision/(.+))?", url.path)
        if match:
            return self._model_info(match.group(1), match.group(2))
        match = re.fullmatch(r"/cdn-lfs/([0-9a-f]{64})", url.path)
        if match:
            return self._cdn(match.group(1))
        match = re.fullmatch(r"/([^/]+/[^/]+)/resolve/([^/]+)/(.+)", url.path)
        if match:
            return self._resolve(match.group(1), urllib.parse.unquote(match.group(2)),
                                 urllib.parse.unquote(match.group(3)))
        self._error(404, f"no route {url.path}")

    def _list_models(self, query: dict) -> None:
        task = query.get("pipeline_tag", [None])[0]
        sort = query.get("sort", ["downloads"])[0]
        if sort not in SORT_KEYS:
            return self._error(400, f"invalid sort {sort}")
        limit = int(query.get("limit", ["1000"])[0])
        cursor = int(query.get("cursor", ["0"])[0])
        expand = query.get("expand")
        models = [m for m in self.standin.models if task is None or m.get("pipeline_tag") == task]
        models.sort(key=lambda m: m.get(sort, 0), reverse=True)  # the Hub sorts descending
        size = min(limit, self.standin.page_size)
        page = models[cursor:cursor + size]
        if expand:
            page = [{k: v for k, v in m.items() if k in expand or k in ("id", "_id")} for m in page]
        headers = {}
        if cursor + size < len(models):
            params = {k: v for k, v in query.items() if k != "cursor"}
            params["cursor"] = [str(cursor + size)]
            next_url = f"{self.standin.endpoint}/api/models?{urllib.parse.urlencode(params, doseq=True)}"
            headers["Link"] = f'<{next_url}>; rel="next"'
        self._json(page, headers=headers)

    def _model_info(self, repo_id: str, revision: str | None) -> None:
        repo = self.standin.repos.get(repo_id)
        if repo is None:
            return self._error(404, "Repository not found")
        if revision is not None and urllib.parse.unquote(revision) not in ("main", repo.sha):
            return self._error(404, f"Revision not found: {urllib.parse.unquote(revision)}")
        self._json(repo.info_json())

    def _tree(self, repo_id: str, revision: str) -> None:
        # huggingface_hub RepoFile: {"type": "file", "oid", "size", "path", "lfs"?}.
        repo = self.standin.repos.get(repo_id)
        if repo is None or revision not in ("main", repo.sha):
            return self._error(404, "Repository or revision not found")
        entries = []
        folders = sorted({str(Path(path).parent) for path in repo.files} - {"."})
        for folder in folders:  # as the Hub lists them with recursive=true
            entries.append({"type": "directory", "oid": "0" * 40, "size": 0, "path": folder})
        for path, data in sorted(repo.files.items()):
            entry = {"type": "file", "oid": git_blob_sha1(data), "size": len(data), "path": path}
            if path.endswith(".safetensors"):
                entry["lfs"] = {"oid": hashlib.sha256(data).hexdigest(), "size": len(data),
                                "pointerSize": 134}
            entries.append(entry)
        self._json(entries)

    def _resolve(self, repo_id: str, revision: str, path: str) -> None:
        repo = self.standin.repos.get(repo_id)
        if repo is None:
            return self._error(404, "Repository not found")
        if repo.gated and "Authorization" not in self.headers:
            return self._error(401, "Access to model is restricted. You must be authenticated.")
        if revision not in ("main", repo.sha):
            return self._error(404, f"Revision not found: {revision}")
        data = repo.files.get(path)
        if data is None:
            return self._error(404, "Entry not found")
        lfs = path.endswith(".safetensors")
        etag = hashlib.sha256(data).hexdigest() if lfs else git_blob_sha1(data)
        headers = {"X-Repo-Commit": repo.sha, "ETag": f'"{etag}"', "Accept-Ranges": "bytes"}
        if lfs:
            headers["X-Linked-Etag"] = f'"{etag}"'
            headers["X-Linked-Size"] = str(len(data))
        if self.headers.get("If-None-Match") == f'"{etag}"':
            headers["Content-Length"] = "0"
            return self._send(304, b"", headers, "application/octet-stream")
        if lfs and self.standin.cdn_redirects:
            headers["Location"] = f"{self.standin.endpoint}/cdn-lfs/{etag}"
            headers["Content-Length"] = "0"
            return self._send(302, b"", headers, "text/plain")
        self._file_body(url_path_of(self.path), data, headers)

    def _cdn(self, sha256: str) -> None:
        for repo in self.standin.repos.values():
            for data in repo.files.values():
                if hashlib.sha256(data).hexdigest() == sha256:
                    # The CDN's own ETag (not the sha256); no Hub headers.
                    headers = {"ETag": f'"cdn-{sha256[:16]}"', "Accept-Ranges": "bytes"}
                    return self._file_body(url_path_of(self.path), data, headers)
        self._error(404, "no such object")

    def _file_body(self, path: str, data: bytes, headers: dict) -> None:
        """A file's bytes: whole, or the Range asked for; cut short when a truncation is set."""
        with self.standin._lock:
            cuts = self.standin.truncations.get(path)
            cut_after = cuts.pop(0) if cuts else None
        range_header = self.headers.get("Range")
        if range_header:
            match = re.fullmatch(r"bytes=(\d+)-(\d*)", range_header.strip())
            if not match:
                return self._error(400, f"bad Range {range_header}")
            first = int(match.group(1))
            last = int(match.group(2)) if match.group(2) else len(data) - 1
            if first >= len(data):
                headers["Content-Range"] = f"bytes */{len(data)}"
                return self._send(416, b"", headers)
            last = min(last, len(data) - 1)
            headers["Content-Range"] = f"bytes {first}-{last}/{len(data)}"
            return self._send(206, data[first:last + 1], headers, "application/octet-stream",
                              cut_after=cut_after, paced=True)
        self._send(200, data, headers, "application/octet-stream", cut_after=cut_after, paced=True)


def url_path_of(request_path: str) -> str:
    return urllib.parse.urlsplit(request_path).path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lifetime", type=float, default=600.0, help="seconds before it stops")
    args = parser.parse_args()
    standin = HubStandIn(load_fixture("models.json")["models"], lifetime_s=args.lifetime).start()
    print(f"HF_ENDPOINT={standin.endpoint}", flush=True)
    time.sleep(args.lifetime)


if __name__ == "__main__":
    main()
