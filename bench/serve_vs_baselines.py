"""canrun serve benchmark: wrk on /api/models (a view, a task, a search) against canrun serve
and, in the same run, two baselines on the same data:
  - the plain reference server: Python's http.server with pandas filtering the same Parquet
    (bench/serve_pandas_baseline.py), target: canrun >= 100x its requests/s;
  - Debian's nginx serving the very same response bytes as a static file, the practical limit
    of this machine, target: canrun >= 0.5x its requests/s.
Also the time canrun serve takes to load 200 dataset files at start, against pyarrow reading
the same 200 files (pq.read_table of the folder) in the same run.

usage: python bench/serve_vs_baselines.py BUILD_DIR [--duration 30] [--connections 256]
Index: 20,000 ranked models x 20 stacks (400,000 verdict rows). Results are printed as a
Markdown table and written to BUILD_DIR/bench/serve.json.
"""
import argparse
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

import pyarrow.parquet as pq

HERE = Path(__file__).resolve().parent
QUERY = "/api/models?view=downloads&task=text-generation&q=qwen&limit=50"


def bench_model_id(idx):  # the same formula as serve_bench_data.cc
    return f"Qwen/Qwen-bench-{idx}" if idx % 40 == 0 else f"org-{idx % 997}/model-{idx}"


def free_port():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def write_rankings(folder, models):
    folder.mkdir(parents=True)
    for sort in ("downloads", "trending"):
        entries = [{"id": bench_model_id(idx), "downloads": 10_000_000 - idx, "likes": idx % 500,
                    "trendingScore": (idx * 37) % 1000, "pipeline_tag": "text-generation",
                    "library_name": "transformers", "tags": [], "gated": False,
                    "createdAt": "2026-01-01T00:00:00Z", "lastModified": "2026-06-01T00:00:00Z"}
                   for idx in range(models)]
        snapshot = {"task": "text-generation", "sort": sort, "fetched_at": "2026-12-02T15:00:00Z",
                    "endpoint": "https://huggingface.co", "models": entries}
        (folder / f"text-generation__{sort}.json").write_text(json.dumps(snapshot))


def wait_line(process, pattern, timeout=120):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        line = process.stdout.readline()
        if not line:
            raise RuntimeError(f"server exited: {process.stderr.read()}")
        if re.search(pattern, line):
            return line
    raise RuntimeError("server did not start in time")


def stop(process):
    if process.poll() is None:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def run_wrk(url, duration, connections):
    out = subprocess.run(["wrk", "-t2", f"-c{connections}", f"-d{duration}s", "--latency",
                          "--timeout", "5s", url],
                         capture_output=True, text=True, check=True, timeout=duration + 60).stdout

    def latency_ms(label):
        match = re.search(rf"^\s+{label}%\s+([\d.]+)(us|ms|s)\s*$", out, re.M)
        if not match:
            return None
        value, unit = float(match.group(1)), match.group(2)
        return value / 1000 if unit == "us" else value * 1000 if unit == "s" else value

    errors = 0
    if match := re.search(r"Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)",
                          out):
        errors += sum(map(int, match.groups()))
    if match := re.search(r"Non-2xx or 3xx responses: (\d+)", out):
        errors += int(match.group(1))
    requests = int(re.search(r"(\d+) requests in", out).group(1))
    return {"requests_per_s": float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1)),
            "p50_ms": latency_ms("50"), "p99_ms": latency_ms("99"), "requests": requests,
            "errors": errors}


def start_nginx(root, port, body):
    (root / "www").mkdir(parents=True)
    (root / "www" / "models.json").write_bytes(body)
    conf = root / "nginx.conf"
    conf.write_text(f"""
worker_processes {os.cpu_count()};
daemon off;
pid {root}/nginx.pid;
error_log {root}/error.log warn;
user root;
events {{ worker_connections 4096; }}
http {{
  access_log off;
  client_body_temp_path {root}/tmp_body;
  proxy_temp_path {root}/tmp_proxy;
  fastcgi_temp_path {root}/tmp_fastcgi;
  uwsgi_temp_path {root}/tmp_uwsgi;
  scgi_temp_path {root}/tmp_scgi;
  keepalive_requests 1000000;
  sendfile on;
  tcp_nopush on;
  open_file_cache max=16;
  types {{ application/json json; }}
  server {{
    listen 127.0.0.1:{port} reuseport backlog=4096;
    root {root}/www;
  }}
}}
""")
    process = subprocess.Popen(["nginx", "-c", str(conf), "-e", str(root / "error.log")],
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    for _ in range(100):
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/models.json", timeout=1).read()
            return process
        except OSError:
            time.sleep(0.1)
    raise RuntimeError(f"nginx did not start: {process.stderr.read()}")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("build_dir", type=Path)
    parser.add_argument("--duration", type=int, default=30)
    parser.add_argument("--connections", type=int, default=256)
    parser.add_argument("--models", type=int, default=20_000)
    parser.add_argument("--stacks", type=int, default=20)
    args = parser.parse_args()
    canrun = args.build_dir / "canrun"
    results = {"query": QUERY, "models": args.models, "stacks": args.stacks,
               "duration_s": args.duration, "connections": args.connections}

    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        subprocess.run([str(args.build_dir / "bench_serve_data"), str(tmp / "dataset"),
                        str(args.stacks), str(args.models)], check=True)
        write_rankings(tmp / "rankings", args.models)

        # --- canrun serve ---------------------------------------------------------------
        port = free_port()
        started = time.perf_counter()
        server = subprocess.Popen([str(canrun), "serve", "--data", str(tmp / "dataset"),
                                   "--rankings", str(tmp / "rankings"), "--port", str(port),
                                   "--reload-interval", "5"],
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            wait_line(server, r"serving on")
            results["canrun_start_s_20_stacks"] = time.perf_counter() - started
            url = f"http://127.0.0.1:{port}{QUERY}"
            ours = urllib.request.urlopen(url).read()
            ours_json = json.loads(ours)
            run_wrk(url, 3, args.connections)  # warm-up
            results["canrun"] = run_wrk(url, args.duration, args.connections)
            health = run_wrk(f"http://127.0.0.1:{port}/healthz", min(10, args.duration),
                             args.connections)
            results["canrun_healthz"] = health
        finally:
            stop(server)

        # --- nginx: the same bytes as a static file --------------------------------------
        port = free_port()
        nginx = start_nginx(tmp / "nginx", port, ours)
        try:
            url = f"http://127.0.0.1:{port}/models.json"
            assert urllib.request.urlopen(url).read() == ours
            run_wrk(url, 3, args.connections)
            results["nginx_static"] = run_wrk(url, args.duration, args.connections)
        finally:
            stop(nginx)

        # --- the plain reference server: http.server + pandas -----------------------------
        port = free_port()
        newest = sorted((tmp / "dataset" / "data").glob("*.parquet"),
                        key=lambda path: int(path.name.split("-2.")[1].split(".")[0]))[-1]
        baseline = subprocess.Popen(
            [sys.executable, str(HERE / "serve_pandas_baseline.py"), str(port), str(newest),
             str(tmp / "rankings" / "text-generation__downloads.json")],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            wait_line(baseline, r"serving on")
            url = f"http://127.0.0.1:{port}{QUERY}"
            theirs = json.loads(urllib.request.urlopen(url).read())
            # Same work: the same models with the same verdicts.
            assert [(m["id"], m["status"]) for m in theirs["models"]] == \
                [(m["id"], m["status"]) for m in ours_json["models"]], "baseline disagrees"
            assert theirs["total"] == ours_json["total"]
            results["pandas_http_server"] = run_wrk(url, args.duration, args.connections)
        finally:
            stop(baseline)

        # --- start-up with 200 dataset files ----------------------------------------------
        shutil.rmtree(tmp / "dataset")
        subprocess.run([str(args.build_dir / "bench_serve_data"), str(tmp / "dataset200"), "200",
                        "2000"], check=True)
        port = free_port()
        started = time.perf_counter()
        server = subprocess.Popen([str(canrun), "serve", "--data", str(tmp / "dataset200"),
                                   "--port", str(port)],
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            wait_line(server, r"serving on")
            results["canrun_start_s_200_files"] = time.perf_counter() - started
        finally:
            stop(server)
        started = time.perf_counter()
        table = pq.read_table(tmp / "dataset200" / "data")
        results["pyarrow_read_table_s_200_files"] = time.perf_counter() - started
        results["rows_200_files"] = table.num_rows

    ours, nginx, pandas = results["canrun"], results["nginx_static"], results["pandas_http_server"]
    results["ratio_vs_pandas"] = ours["requests_per_s"] / pandas["requests_per_s"]
    results["ratio_vs_nginx"] = ours["requests_per_s"] / nginx["requests_per_s"]
    out_dir = args.build_dir / "bench"
    out_dir.mkdir(exist_ok=True)
    (out_dir / "serve.json").write_text(json.dumps(results, indent=2))

    print(f"wrk -t2 -c{args.connections} -d{args.duration}s {QUERY}  "
          f"({args.models:,} ranked models x {args.stacks} stacks)\n")
    print("| server | requests/s | p50 ms | p99 ms | errors |")
    print("|---|---:|---:|---:|---:|")
    for name, key in (("canrun serve", "canrun"), ("nginx, same bytes as a static file",
                                                   "nginx_static"),
                      ("http.server + pandas", "pandas_http_server"),
                      ("canrun serve /healthz", "canrun_healthz")):
        row = results[key]
        print(f"| {name} | {row['requests_per_s']:,.0f} | {row['p50_ms']:.2f} | "
              f"{row['p99_ms']:.2f} | {row['errors']} |")
    print(f"\ncanrun / pandas: {results['ratio_vs_pandas']:,.0f}x (target >= 100x)")
    print(f"canrun / nginx:  {results['ratio_vs_nginx']:.2f}x (target >= 0.5x)")
    print(f"start-up, 200 files ({results['rows_200_files']:,} rows): canrun serve "
          f"{results['canrun_start_s_200_files']:.2f} s to listening; pyarrow read_table of the "
          f"same files {results['pyarrow_read_table_s_200_files']:.2f} s")
    print(f"start-up, 20 stacks x {args.models:,} rows: {results['canrun_start_s_20_stacks']:.2f} s")


if __name__ == "__main__":
    main()
