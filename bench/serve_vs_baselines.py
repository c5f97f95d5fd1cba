"""canrun serve benchmark: wrk on three API answers against canrun serve and, in the same run,
baselines on the same data:
  - /api/models (a view, a task, a search), /api/causes (one stack's failures grouped by error
    signature) and /api/compare (two stacks diffed: regressions, fixes, changed plans...);
  - for each, Debian's nginx serving the very same response bytes as a static file, the
    practical limit of this machine: targets canrun >= 0.85x nginx's requests/s and canrun's p99
    latency <= 1.2x nginx's p99;
  - for /api/models, the plain reference server too: Python's http.server with pandas filtering
    the same Parquet (bench/serve_pandas_baseline.py), target: canrun >= 100x its requests/s.
canrun and nginx are up together, and each endpoint's DURATION is split into ROUNDS that
alternate them (canrun then nginx, then nginx then canrun, ...), so that load from elsewhere on
the machine falls on both alike: requests/s is over all rounds, p50 and p99 are the rounds'
medians. Also the time canrun serve takes to load 200 dataset files at start, against pyarrow
reading the same 200 files (pq.read_table of the folder) in the same run.

usage: python bench/serve_vs_baselines.py BUILD_DIR [--duration 30] [--rounds 5]
                                          [--connections 256]
Index: 20,000 ranked models x 20 stacks (400,000 verdict rows) from bench_serve_data, whose
stacks differ as releases do (bench/serve_bench_data.cc); /api/causes asks for the newest stack,
/api/compare for the one before it against the newest. Results are printed as a Markdown table
and written to BUILD_DIR/bench/serve.json.
"""
import argparse
import json
import os
import re
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.parse
import urllib.request
from pathlib import Path

import pyarrow.parquet as pq

HERE = Path(__file__).resolve().parent
QUERY = "/api/models?view=downloads&task=text-generation&q=qwen&limit=50"
ENDPOINTS = ("models", "causes", "compare")
# Floors against nginx serving the same bytes (parity is the aim).
TARGET_RPS_RATIO = 0.85
TARGET_P99_RATIO = 1.2


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


def bounded(command, seconds):
    """`command` under timeout(1): a server left behind by a killed run stops by itself."""
    return ["timeout", "-k", "10", str(int(seconds)), *command]


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


def start_nginx(root, port, files, seconds):
    """nginx serving `files` (name -> bytes) from a folder of its own, for at most `seconds`."""
    (root / "www").mkdir(parents=True)
    for name, body in files.items():
        (root / "www" / name).write_bytes(body)
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
    process = subprocess.Popen(
        bounded(["nginx", "-c", str(conf), "-e", str(root / "error.log")], seconds),
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    for _ in range(100):
        try:
            name = next(iter(files))
            urllib.request.urlopen(f"http://127.0.0.1:{port}/{name}", timeout=1).read()
            return process
        except OSError:
            time.sleep(0.1)
    raise RuntimeError(f"nginx did not start: {process.stderr.read()}")


def run_wrk_rounds(urls, duration, rounds, connections):
    """wrk on each of `urls` (name -> url) for `duration` seconds in all, in `rounds` turns that
    alternate their order; each turn after a 1 s warm-up. Returns name -> the requests/s over
    all turns, the median p50 and p99, the errors, and each turn's figures."""
    turns = {name: [] for name in urls}
    seconds = max(1, round(duration / rounds))
    for turn in range(rounds):
        order = list(urls) if turn % 2 == 0 else list(reversed(list(urls)))
        for name in order:
            run_wrk(urls[name], 1, connections)  # warm-up
            turns[name].append(run_wrk(urls[name], seconds, connections))
    merged = {}
    for name, runs in turns.items():
        merged[name] = {
            "requests_per_s": sum(run["requests"] for run in runs) / (seconds * len(runs)),
            "p50_ms": statistics.median(run["p50_ms"] for run in runs),
            "p99_ms": statistics.median(run["p99_ms"] for run in runs),
            "requests": sum(run["requests"] for run in runs),
            "errors": sum(run["errors"] for run in runs), "rounds": runs}
    return merged


def fetch(url):
    with urllib.request.urlopen(url) as response:
        return response.read()


def api_queries(base):
    """The /api/causes and /api/compare queries: the newest stack's causes; the stack before it
    against the newest. Checked to have something to show, so the comparison means something."""
    versions = json.loads(fetch(f"{base}/api/versions"))
    stacks = versions["backends"][0]["stacks"]  # newest first
    assert len(stacks) >= 2, "--stacks must be at least 2 to compare two stacks"
    newest, previous = stacks[0], stacks[1]
    causes = ("/api/causes?" + urllib.parse.urlencode(
        {key: newest[key] for key in ("backend", "compiler_version", "library_version")}))
    compare = "/api/compare?" + urllib.parse.urlencode({"a": previous["stem"],
                                                        "b": newest["stem"]})
    return {"models": QUERY, "causes": causes, "compare": compare}


def describe(name, body):
    """What an answer holds, for the report; fails when the data has nothing to show."""
    answer = json.loads(body)
    if name == "models":
        return {"models": len(answer["models"]), "total": answer["total"]}
    if name == "causes":
        facts = {"failures": answer["failures"], "causes": len(answer["causes"])}
        assert facts["causes"] >= 10, f"too few failure causes to measure: {facts}"
        return facts
    facts = {key: len(answer[key]) for key in ("regressions", "fixes", "other_changes",
                                               "changed_plans", "run_time_changes",
                                               "memory_changes")}
    assert all(facts.values()), f"the compared stacks do not differ in every way: {facts}"
    return facts


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("build_dir", type=Path)
    parser.add_argument("--duration", type=int, default=30)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--connections", type=int, default=256)
    parser.add_argument("--models", type=int, default=20_000)
    parser.add_argument("--stacks", type=int, default=20)
    args = parser.parse_args()
    canrun = args.build_dir / "canrun"
    results = {"models": args.models, "stacks": args.stacks, "duration_s": args.duration,
               "rounds": args.rounds, "connections": args.connections,
               "targets": {"rps_ratio_min": TARGET_RPS_RATIO, "p99_ratio_max": TARGET_P99_RATIO},
               "endpoints": {}}
    # Every server stops by itself after this long, should this script be killed.
    lifetime = len(ENDPOINTS) * 2 * (args.duration + 2 * args.rounds) + 2 * args.duration + 600

    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        subprocess.run([str(args.build_dir / "bench_serve_data"), str(tmp / "dataset"),
                        str(args.stacks), str(args.models)], check=True)
        write_rankings(tmp / "rankings", args.models)

        # --- canrun serve and nginx with its answers' bytes, up together -----------------
        port = free_port()
        started = time.perf_counter()
        server = subprocess.Popen([str(canrun), "serve", "--data", str(tmp / "dataset"),
                                   "--rankings", str(tmp / "rankings"), "--port", str(port),
                                   "--reload-interval", "5", "--refresh-rankings", "0",
                                   "--exit-after", str(lifetime)],
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        nginx = None
        try:
            wait_line(server, r"serving on")
            results["canrun_start_s_20_stacks"] = time.perf_counter() - started
            base = f"http://127.0.0.1:{port}"
            queries = api_queries(base)
            bodies = {name: fetch(base + query) for name, query in queries.items()}
            models_answer = json.loads(bodies["models"])
            for name in ENDPOINTS:
                results["endpoints"][name] = {"query": queries[name], "bytes": len(bodies[name]),
                                              "answer": describe(name, bodies[name])}

            nginx_port = free_port()
            nginx = start_nginx(tmp / "nginx", nginx_port,
                                {f"{name}.json": body for name, body in bodies.items()}, lifetime)
            for name in ENDPOINTS:
                ours = base + queries[name]
                theirs = f"http://127.0.0.1:{nginx_port}/{name}.json"
                assert fetch(ours) == fetch(theirs) == bodies[name], f"{name}: bytes differ"
                entry = results["endpoints"][name]
                entry.update(run_wrk_rounds({"canrun": ours, "nginx_static": theirs},
                                            args.duration, args.rounds, args.connections))
                entry["rps_ratio"] = (entry["canrun"]["requests_per_s"]
                                      / entry["nginx_static"]["requests_per_s"])
                entry["p99_ratio"] = entry["canrun"]["p99_ms"] / entry["nginx_static"]["p99_ms"]
                entry["meets_targets"] = (entry["rps_ratio"] >= TARGET_RPS_RATIO
                                          and entry["p99_ratio"] <= TARGET_P99_RATIO)
            results["canrun_healthz"] = run_wrk(f"{base}/healthz", min(10, args.duration),
                                                args.connections)
        finally:
            stop(server)
            if nginx:
                stop(nginx)

        # --- the plain reference server: http.server + pandas -----------------------------
        port = free_port()
        newest = sorted((tmp / "dataset" / "data").glob("*.parquet"),
                        key=lambda path: int(path.name.split("-2.")[1].split(".")[0]))[-1]
        baseline = subprocess.Popen(
            bounded([sys.executable, str(HERE / "serve_pandas_baseline.py"), str(port),
                     str(newest), str(tmp / "rankings" / "text-generation__downloads.json")],
                    lifetime),
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            wait_line(baseline, r"serving on")
            url = f"http://127.0.0.1:{port}{QUERY}"
            theirs = json.loads(fetch(url))
            # Same work: the same models with the same verdicts.
            assert [(m["id"], m["status"]) for m in theirs["models"]] == \
                [(m["id"], m["status"]) for m in models_answer["models"]], "baseline disagrees"
            assert theirs["total"] == models_answer["total"]
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
                                   "--port", str(port), "--refresh-rankings", "0",
                                   "--exit-after", "600"],
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

    endpoints = results["endpoints"]
    results["ratio_vs_pandas"] = (endpoints["models"]["canrun"]["requests_per_s"]
                                  / results["pandas_http_server"]["requests_per_s"])
    out_dir = args.build_dir / "bench"
    out_dir.mkdir(exist_ok=True)
    (out_dir / "serve.json").write_text(json.dumps(results, indent=2))

    print(f"wrk -t2 -c{args.connections}, {args.duration} s per server and endpoint in "
          f"{args.rounds} alternating rounds ({args.models:,} ranked models x {args.stacks} "
          f"stacks); nginx serves each answer's bytes as a static file\n")
    for name in ENDPOINTS:
        facts = ", ".join(f"{key} {value:,}" for key, value in endpoints[name]["answer"].items())
        entry = endpoints[name]
        print(f"  {name}: {entry['query']}  ({entry['bytes']:,} bytes; {facts})")
    print("\nrequests/s over all rounds; p50 and p99, the median of the rounds'\n")
    print(f"| endpoint | canrun req/s | nginx req/s | ratio (>= {TARGET_RPS_RATIO}) "
          f"| canrun p50 / p99 ms | nginx p50 / p99 ms | p99 ratio (<= {TARGET_P99_RATIO}) "
          f"| errors | targets |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---|")
    for name in ENDPOINTS:
        entry = endpoints[name]
        ours, nginx = entry["canrun"], entry["nginx_static"]
        print(f"| /api/{name} | {ours['requests_per_s']:,.0f} | {nginx['requests_per_s']:,.0f} "
              f"| {entry['rps_ratio']:.2f}x | {ours['p50_ms']:.2f} / {ours['p99_ms']:.2f} "
              f"| {nginx['p50_ms']:.2f} / {nginx['p99_ms']:.2f} | {entry['p99_ratio']:.2f}x "
              f"| {ours['errors']} / {nginx['errors']} "
              f"| {'met' if entry['meets_targets'] else 'MISSED'} |")
    print("\n| other server | requests/s | p50 ms | p99 ms | errors |")
    print("|---|---:|---:|---:|---:|")
    for label, key in (("http.server + pandas, /api/models", "pandas_http_server"),
                       ("canrun serve /healthz", "canrun_healthz")):
        row = results[key]
        print(f"| {label} | {row['requests_per_s']:,.0f} | {row['p50_ms']:.2f} | "
              f"{row['p99_ms']:.2f} | {row['errors']} |")
    print(f"\ncanrun / pandas on /api/models: {results['ratio_vs_pandas']:,.0f}x (target >= 100x)")
    missed = [name for name in ENDPOINTS if not endpoints[name]["meets_targets"]]
    print(f"canrun / nginx: requests/s >= {TARGET_RPS_RATIO}x and p99 <= {TARGET_P99_RATIO}x "
          f"on every endpoint: {'met' if not missed else 'MISSED on ' + ', '.join(missed)}")
    print(f"start-up, 200 files ({results['rows_200_files']:,} rows): canrun serve "
          f"{results['canrun_start_s_200_files']:.2f} s to listening; pyarrow read_table of the "
          f"same files {results['pyarrow_read_table_s_200_files']:.2f} s")
    print(f"start-up, 20 stacks x {args.models:,} rows: {results['canrun_start_s_20_stacks']:.2f} s")


if __name__ == "__main__":
    main()
