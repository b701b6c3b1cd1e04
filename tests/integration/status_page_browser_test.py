#!/usr/bin/env python3
"""The training job's status page as a person sees it, in headless Chromium.

Starts `distflow train` on 1 ps + 2 workers with a worker killed every 2 s
and --status-port 0, opens the page, and watches it until everything below
was seen (then interrupts the job, which must end as Ctrl-C ends it) or the
job ends:
a killed worker must be shown down and then up again, the done-closure count
must only grow and never run ahead of /api/status, the chart must be drawn
with points, the ps row must show the variables it holds and its bytes/s,
and the browser must log no error. A screenshot taken while a
worker is down is written to --screenshot. Prints "N passed, N failed".

Usage: status_page_browser_test.py --distflow BIN --screenshot PNG
"""
import argparse
import json
import re
import shutil
import signal
import subprocess
import sys
import time
import urllib.request

from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By

DEADLINE_S = 180


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--distflow", required=True)
    ap.add_argument("--screenshot", required=True)
    args = ap.parse_args()
    chromedriver = shutil.which("chromedriver")
    if chromedriver is None:
        print("chromedriver is not installed (Debian: chromium-driver)")
        return 1

    train = subprocess.Popen(
        [args.distflow, "train", "--ps", "1", "--workers", "2", "--epochs", "8",
         "--kill-worker-every", "2", "--status-port", "0", "--output", "json"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    checks = []

    def check(ok, what):
        checks.append((bool(ok), what))
        print(("ok   " if ok else "FAIL ") + what, flush=True)

    driver = None
    try:
        port = None
        start = time.time()
        while port is None and time.time() - start < 60:
            line = train.stderr.readline()
            if not line:
                break
            m = re.search(r"status page on http://127\.0\.0\.1:(\d+)/", line)
            if m:
                port = int(m.group(1))
        if port is None:
            check(False, "distflow train printed its status page address")
            return 1
        base = f"http://127.0.0.1:{port}"

        options = webdriver.ChromeOptions()
        for flag in ("--headless=new", "--no-sandbox", "--disable-gpu",
                     "--disable-dev-shm-usage", "--window-size=1100,1000"):
            options.add_argument(flag)
        options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
        driver = webdriver.Chrome(service=Service(chromedriver), options=options)
        driver.set_page_load_timeout(30)
        driver.get(base + "/?poll_ms=150")

        # Everything the test reads from the page, in one round trip.
        read_page = """
          const cells = t => [...document.querySelectorAll(t + ' tr')].map(
              r => [...r.cells].map(c => c.textContent));
          return {workers: cells('#worker_list'), closures: cells('#closures'),
                  ps: cells('#ps_list'),
                  points: document.getElementById('chart').dataset.points || '0'};"""
        seen = {}  # worker label -> states seen, in order
        done_counts = []
        ahead = []
        errors = []
        shot = False
        chart_points = 0
        ps_shown = ""  # the ps row once it shows what the ps holds and moves

        def down_then_up():
            return any("down" in v and "up" in v[v.index("down"):] for v in seen.values())

        while train.poll() is None and time.time() - start < DEADLINE_S:
            time.sleep(0.05)
            page = driver.execute_script(read_page)
            for label, state in page["workers"]:
                s = state.split(" ")[0]
                states = seen.setdefault(label, [])
                if not states or states[-1] != s:
                    states.append(s)
                if s == "down" and not shot:
                    driver.save_screenshot(args.screenshot)
                    shot = True
            for _, state in page["ps"]:
                if re.search(r"\d+ variables, [\d.]+ MiB · [\d.]+ MiB/s", state):
                    ps_shown = state
            closures = dict(page["closures"])
            if closures.get("done", "").isdigit():
                page_done = int(closures["done"])
                done_counts.append(page_done)
                try:
                    with urllib.request.urlopen(base + "/api/status", timeout=5) as r:
                        api_done = json.load(r)["closures"]["done"]
                    if page_done > api_done:
                        ahead.append((page_done, api_done))
                except OSError:
                    pass  # the job may have just ended
            chart_points = int(page["points"])
            # Console errors while the job serves (its end closes the port
            # under the page's next poll, which is not the page's fault).
            logged = [e for e in driver.get_log("browser") if e.get("level") == "SEVERE"]
            if train.poll() is not None:
                logged = [e for e in logged if "ERR_CONNECTION_REFUSED" not in e.get("message", "")]
            errors += logged
            if down_then_up() and chart_points > 0 and len(done_counts) > 20 and ps_shown:
                break

        check(len(seen) == 2, f"the page lists both workers: {sorted(seen)}")
        check(down_then_up(), f"a killed worker is shown down, then up again: {seen}")
        check(shot, f"a screenshot of the page with a worker down is in {args.screenshot}")
        check(len(done_counts) > 5 and all(a <= b for a, b in zip(done_counts, done_counts[1:])),
              f"done closures only grow on the page ({len(done_counts)} readings, "
              f"{done_counts[:1]} .. {done_counts[-1:]})")
        check(not ahead, f"the page never shows more done closures than /api/status: {ahead[:3]}")
        check(bool(ps_shown), f"the ps row shows its variables and bytes/s: {ps_shown!r}")
        check(chart_points > 0, f"the chart is drawn with points ({chart_points})")
        check(not errors, f"no errors in the browser console: {errors[:3]}")
    finally:
        if driver is not None:
            driver.quit()
        interrupted = train.poll() is None
        if interrupted:
            train.send_signal(signal.SIGINT)
        try:
            train.wait(timeout=DEADLINE_S)
        except subprocess.TimeoutExpired:
            train.kill()
            train.wait()
            check(False, "distflow train ended within the deadline")
        if train.returncode is not None:
            want = (0, 130) if interrupted else (0,)
            check(train.returncode in want,
                  f"distflow train exited {train.returncode} (expected one of {want})")
    failed = sum(1 for ok, _ in checks if not ok)
    print(f"{len(checks) - failed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
