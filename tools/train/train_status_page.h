// The status page of `distflow train --status-port`: one HTML document with
// its script and styles inline (nothing fetched from elsewhere), which polls
// /api/status once a second (?poll_ms=N for another period) and redraws in
// place. The query string (with ?token=) is passed on to /api/status.
// Styles and script helpers shared with the server's page are put in by
// StatusPageHtml() (status_page_parts.h).
#ifndef DISTFLOW_TOOLS_TRAIN_TRAIN_STATUS_PAGE_H_
#define DISTFLOW_TOOLS_TRAIN_TRAIN_STATUS_PAGE_H_

namespace distflow {

inline constexpr char kTrainStatusPage[] = R"html(<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>distflow train</title>
<link rel="icon" href="data:,">
<style>
$STYLE$  #worker_list { margin-top: 6px; border-top: 1px solid #dde1e6; }
  .up { color: #137333; font-weight: 600; } .down { color: #c5221f; font-weight: 600; }
  #chart { width: 100%; height: 220px; }
  #log { max-height: 220px; overflow-y: auto; font-family: ui-monospace, monospace; font-size: 12px; }
</style>
</head>
<body>
<header><h1>distflow train</h1><div class="sub" id="job">connecting…</div>
<div id="error"></div></header>
<main>
  <section><h2>Training</h2><table id="training"></table></section>
  <section><h2>Workers</h2><table id="workers"></table><table id="worker_list"></table></section>
  <section><h2>Parameter servers</h2><table id="ps_list"></table></section>
  <section><h2>Closures</h2><table id="closures"></table></section>
  <section><h2>Checkpoints</h2><table id="checkpoints"></table></section>
  <section class="wide"><h2>Loss and accuracy by step</h2><canvas id="chart"></canvas></section>
  <section class="wide"><h2>Events</h2><div id="log"></div></section>
</main>
<script>
"use strict";
$HELPERS$function draw(history) {
  const c = document.getElementById("chart");
  const w = c.clientWidth, h = c.clientHeight, r = window.devicePixelRatio || 1;
  c.width = w * r; c.height = h * r;
  const g = c.getContext("2d");
  g.scale(r, r);
  g.clearRect(0, 0, w, h);
  if (history.length === 0) return;
  const pad = 30, maxStep = Math.max(1, history[history.length - 1].step);
  const maxLoss = Math.max(1e-6, ...history.map(p => p.loss));
  const x = s => pad + (w - 2 * pad) * s / maxStep;
  g.strokeStyle = "#dde1e6"; g.strokeRect(pad, 5, w - 2 * pad, h - pad - 5);
  for (const [key, color, top] of [["loss", "#1a73e8", maxLoss], ["accuracy", "#137333", 1]]) {
    const y = v => h - pad - (h - pad - 10) * v / top;
    g.strokeStyle = color; g.fillStyle = color; g.beginPath();
    history.forEach((p, i) => i ? g.lineTo(x(p.step), y(p[key])) : g.moveTo(x(p.step), y(p[key])));
    g.stroke();
    for (const p of history) g.fillRect(x(p.step) - 1.5, y(p[key]) - 1.5, 3, 3);
  }
  g.fillStyle = "#4a5563";
  g.fillText("step " + maxStep, w - pad - 60, h - 10);
  g.fillStyle = "#1a73e8"; g.fillText("loss (max " + maxLoss.toFixed(3) + ")", pad, h - 10);
  g.fillStyle = "#137333"; g.fillText("accuracy (0–1)", pad + 140, h - 10);
  c.dataset.points = history.length;
}
async function poll() {
  try {
    const res = await fetch("/api/status" + query, {cache: "no-store"});
    if (!res.ok) throw new Error("status " + res.status + ": " + (await res.text()));
    const s = await res.json();
    const j = s.job;
    document.getElementById("error").textContent = "";
    document.getElementById("job").textContent =
      j.model + " · epoch " + j.epoch + "/" + j.epochs + " · step " + j.step + "/" + j.total_steps +
      (j.done ? " · done" : " · ETA " + secs(j.eta_seconds));
    rows("training", [["examples/s", fmt(j.examples_per_second, 0)], ["loss", fmt(j.loss, 4)],
                      ["accuracy", fmt(j.accuracy, 4)], ["test accuracy", fmt(j.test_accuracy, 4)],
                      ["elapsed", secs(j.elapsed_seconds)]]);
    const wk = s.workers;
    rows("workers", [["up", wk.up + " / " + wk.total, wk.up < wk.total ? "down" : "up"],
                     ["failures", wk.failures], ["recoveries", wk.recoveries],
                     ["parameter servers", s.ps_tasks]]);
    rows("worker_list", wk.list.map(w => [
      "worker " + w.task + " (" + w.address + ")",
      w.state + " · " + w.closures_done + " done" +
        (w.closures_per_second >= 0 ? " · " + fmt(w.closures_per_second, 1) + "/s" : "") +
        (w.failures ? " · lost " + w.failures + "×, last " + secs(w.last_error_seconds_ago) + " ago" : ""),
      w.state]));
    rows("ps_list", s.ps.length ? s.ps.map(p => [
      "ps " + p.task + " (" + p.address + ")",
      p.state + (p.variables >= 0 ? " · " + p.variables + " variables, " + mib(p.variable_bytes) : "") +
        (p.bytes_per_second >= 0 ? " · " + mib(p.bytes_per_second) + "/s" : "") +
        (p.failures ? " · " + p.failures + " closures put back" : "") +
        (p.error ? " · " + p.error : ""),
      p.state === "up" ? "up" : "down"]) : [["none: training in this process", ""]]);
    const c = s.closures;
    rows("closures", [["scheduled", c.scheduled], ["queued", c.queued], ["in flight", c.in_flight],
                      ["done", c.done], ["retried", c.retried], ["failed", c.failed]]);
    const k = s.checkpoint;
    rows("checkpoints", k.count > 0
      ? [["written", k.count], ["last at step", k.step], ["when", secs(k.seconds_ago) + " ago"],
         ["where", k.prefix]]
      : [["written", "none yet"]]);
    draw(s.history);
    const log = document.getElementById("log");
    log.replaceChildren(...s.events.slice().reverse().map(e => {
      const d = document.createElement("div");
      d.textContent = secs(e.seconds) + "  " + e.text;
      return d;
    }));
  } catch (e) {
    document.getElementById("error").textContent = "cannot read /api/status: " + e.message;
  }
}
// ?poll_ms=N polls faster (tests watch short outages); once a second by default.
const pollMs = Math.max(100, Number(new URLSearchParams(location.search).get("poll_ms")) || 1000);
poll();
setInterval(poll, pollMs);
</script>
</body>
</html>
)html";

}  // namespace distflow

#endif  // DISTFLOW_TOOLS_TRAIN_TRAIN_STATUS_PAGE_H_
