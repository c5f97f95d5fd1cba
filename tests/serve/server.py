"""Starts `canrun serve` on a free loopback port and stops it (by its own pid) afterwards."""
import os
import re
import subprocess
import time
import urllib.request


class SpaceServer:
    def __init__(self, canrun_bin, args, *, exit_after=300, extra=(), env=None):
        self.process = subprocess.Popen(
            [str(canrun_bin), "serve", *map(str, args), "--port", "0", "--host", "127.0.0.1",
             "--reload-interval", "0.2", "--exit-after", str(exit_after), *map(str, extra)],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
            # Offline unless a test says otherwise: serve refreshes rankings from the Hub.
            env={**os.environ, "NO_COLOR": "1", "HF_HUB_OFFLINE": "1", **(env or {})})
        line = self.process.stdout.readline()
        match = re.search(r"http://127\.0\.0\.1:(\d+)/", line)
        if not match:
            self.process.kill()
            raise AssertionError(f"no address line; stdout {line!r}, stderr "
                                 f"{self.process.stderr.read()!r}")
        self.port = int(match.group(1))
        self.url = f"http://127.0.0.1:{self.port}"

    def get(self, path, timeout=5):
        """(status, headers, body bytes) of a GET; 4xx/5xx are returned, not raised."""
        try:
            with urllib.request.urlopen(self.url + path, timeout=timeout) as response:
                return response.status, dict(response.headers), response.read()
        except urllib.error.HTTPError as error:
            return error.code, dict(error.headers), error.read()

    def wait_for(self, predicate, timeout=10):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if predicate():
                return True
            time.sleep(0.05)
        return False

    def stop(self):
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        return self.process.returncode
