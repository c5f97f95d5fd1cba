"""The plain reference server for bench/serve_vs_baselines.py: Python's http.server answering
/api/models with pandas, filtering the same Parquet file and rankings snapshot as canrun serve
(preloaded into DataFrames at start, so each request costs only the filtering and the JSON).

usage: python bench/serve_pandas_baseline.py PORT STACK_PARQUET RANKINGS_JSON
"""
import json
import sys
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pandas as pd

COLUMNS = ["model_id", "task", "result", "exclusion_reason", "error_signature", "cores",
           "parallelism", "runtime_s", "peak_device_memory_bytes"]


def load(stack_parquet, rankings_json):
    verdicts = pd.read_parquet(stack_parquet, columns=COLUMNS)
    with open(rankings_json) as handle:
        snapshot = json.load(handle)
    ranked = pd.DataFrame(snapshot["models"])[["id", "downloads", "likes", "trendingScore"]]
    ranked.insert(0, "rank", range(1, len(ranked) + 1))
    return snapshot["task"], ranked, verdicts


def main():
    port, stack_parquet, rankings_json = int(sys.argv[1]), sys.argv[2], sys.argv[3]
    task, ranked, verdicts = load(stack_parquet, rankings_json)

    def answer(params):
        q = params.get("q", [""])[0]
        offset = int(params.get("offset", ["0"])[0])
        limit = int(params.get("limit", ["50"])[0])
        rows = verdicts[verdicts["task"] == params.get("task", [task])[0]]
        view = ranked
        if q:
            view = view[view["id"].str.contains(q, case=False, regex=False)]
        page = view.iloc[offset:offset + limit]
        merged = page.merge(rows, how="left", left_on="id", right_on="model_id")
        models = []
        for record in merged.to_dict("records"):
            clean = {key: (None if isinstance(value, float) and value != value else value)
                     for key, value in record.items()}
            models.append({
                "rank": clean["rank"], "id": clean["id"], "downloads": clean["downloads"],
                "likes": clean["likes"], "trending_score": clean["trendingScore"],
                "status": clean["result"] or "not tested",
                "exclusion_reason": clean["exclusion_reason"],
                "error_signature": clean["error_signature"], "cores": clean["cores"],
                "parallelism": clean["parallelism"], "runtime_s": clean["runtime_s"],
                "peak_device_memory_bytes": clean["peak_device_memory_bytes"]})
        return {"view": params.get("view", ["selected"])[0], "total": len(view),
                "offset": offset, "limit": limit, "models": models}

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"  # keep-alive, as the others

        def do_GET(self):
            url = urllib.parse.urlsplit(self.path)
            body = json.dumps(answer(urllib.parse.parse_qs(url.query)), default=int).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    ThreadingHTTPServer.daemon_threads = True
    ThreadingHTTPServer.request_queue_size = 1024
    server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
    print(f"serving on http://127.0.0.1:{port}/", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
