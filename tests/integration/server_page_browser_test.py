#!/usr/bin/env python3
"""A server's status page as a person sees it, in headless Chromium.

Starts `distflow server --status-port 0`, opens its page, runs steps on the
server with `distflow run --master` while the page is open, and checks that
the page shows the task, the RunStep calls as they happen (never more than
/api/status says), the memory budget, and that the browser logs no error.
A screenshot is written to --screenshot. Prints "N passed, N failed".

Usage: server_page_browser_test.py --distflow BIN --screenshot PNG
"""
import argparse
import json
import re
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.request

from selenium import webdriver
from selenium.webdriver.chrome.service import Service

DEADLINE_S = 60
GRAPH = """
node { name: "x" op: "Placeholder" attr { key: "dtype" value { type: DT_FLOAT } } }
node { name: "y" op: "Mul" input: "x" input: "x" attr { key: "T" value { type: DT_FLOAT } } }
"""


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--distflow", required=True)
    ap.add_argument("--screenshot", required=True)
    args = ap.parse_args()
    chromedriver = shutil.which("chromedriver")
    if chromedriver is None:
        print("chromedriver is not installed (Debian: chromium-driver)")
        return 1
    checks = []

    def check(ok, what):
        checks.append((bool(ok), what))
        print(("ok   " if ok else "FAIL ") + what, flush=True)

    server = subprocess.Popen(
        [args.distflow, "server", "--cluster", "worker=127.0.0.1:0", "--job", "worker",
         "--task", "0", "--status-port", "0", "--memory-budget-mb", "256"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    driver = None
    try:
        address = re.search(r"listening on (\S+)", server.stdout.readline())
        status = re.search(r"status page on http://127\.0\.0\.1:(\d+)/", server.stderr.readline())
        if address is None or status is None:
            check(False, "distflow server printed its address and its status page's")
            return 1
        base = f"http://127.0.0.1:{status.group(1)}"
        graph = tempfile.NamedTemporaryFile("w", suffix=".pbtxt", delete=False)
        graph.write(GRAPH)
        graph.close()

        options = webdriver.ChromeOptions()
        for flag in ("--headless=new", "--no-sandbox", "--disable-gpu",
                     "--disable-dev-shm-usage", "--window-size=1000,700"):
            options.add_argument(flag)
        options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
        driver = webdriver.Chrome(service=Service(chromedriver), options=options)
        driver.set_page_load_timeout(30)
        driver.get(base + "/?poll_ms=150")

        read_page = """
          const cells = t => [...document.querySelectorAll(t + ' tr')].map(
              r => [...r.cells].map(c => c.textContent));
          return {task: document.getElementById('task').textContent,
                  memory: cells('#memory'), rpcs: cells('#rpcs')};"""
        shown = []  # RunStep calls the page showed, in order
        ahead = []
        errors = []
        start = time.time()
        runs = 0
        while time.time() - start < DEADLINE_S and runs < 5:
            run = subprocess.run(
                [args.distflow, "run", graph.name, "--feed", "x=[1,2,3]", "--fetch", "y",
                 "--master", "grpc://" + address.group(1), "--cluster",
                 "worker=" + address.group(1)], capture_output=True, text=True, timeout=30)
            check(run.returncode == 0 and "[1.0,4.0,9.0]" in run.stdout,
                  f"step {runs + 1} ran on the server: {run.stdout.strip()}")
            runs += 1
            seen_at = time.time()
            while time.time() - seen_at < 5:
                time.sleep(0.05)
                page = driver.execute_script(read_page)
                row = [r for r in page["rpcs"] if r and r[0] == "RunStep"]
                if not row:
                    continue
                calls = int(row[0][1])
                with urllib.request.urlopen(base + "/api/status", timeout=5) as r:
                    api = {m["method"]: m["calls"] for m in json.load(r)["rpcs"]}
                if calls > api["RunStep"]:
                    ahead.append((calls, api["RunStep"]))
                if not shown or shown[-1] != calls:
                    shown.append(calls)
                if calls == runs:
                    break
            errors += [e for e in driver.get_log("browser") if e.get("level") == "SEVERE"]
        page = driver.execute_script(read_page)
        driver.save_screenshot(args.screenshot)
        check("/job:worker/replica:0/task:0" in page["task"], f"the page names the task: {page['task']}")
        check(shown == list(range(1, runs + 1)),
              f"the page showed each RunStep call as it came: {shown}")
        check(not ahead, f"the page never shows more calls than /api/status: {ahead[:3]}")
        memory = dict(r for r in page["memory"] if len(r) == 2)
        check(memory.get("budget") == "256.0 MiB", f"the page shows the memory budget: {memory}")
        check(not errors, f"no errors in the browser console: {errors[:3]}")
    finally:
        if driver is not None:
            driver.quit()
        server.terminate()
        try:
            server.wait(timeout=20)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()
    failed = sum(1 for ok, _ in checks if not ok)
    print(f"{len(checks) - failed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
