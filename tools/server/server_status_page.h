// The status page of `distflow server --status-port`: one HTML document with
// its script and styles inline (nothing fetched from elsewhere), which polls
// /api/status once a second (?poll_ms=N for another period) and redraws in
// place; the query string (with ?token=) is passed on. Styles and script
// helpers are shared with the training page (status_page_parts.h).
#ifndef DISTFLOW_TOOLS_SERVER_SERVER_STATUS_PAGE_H_
#define DISTFLOW_TOOLS_SERVER_SERVER_STATUS_PAGE_H_

namespace distflow {

inline constexpr char kServerStatusPage[] = R"html(<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>distflow server</title>
<link rel="icon" href="data:,">
<style>
$STYLE$  #rpcs td:first-child { font-family: ui-monospace, monospace; }
  #rpcs th { text-align: right; font-weight: 600; color: #4a5563; padding: 2px 4px; }
  #rpcs th:first-child, #transfers th:first-child { text-align: left; }
  #transfers th { text-align: right; font-weight: 600; color: #4a5563; padding: 2px 4px; }
  #steps td.v { text-align: left; font-family: ui-monospace, monospace; font-size: 12px;
                word-break: break-all; }
</style>
</head>
<body>
<header><h1>distflow server</h1><div class="sub" id="task">connecting…</div>
<div id="error"></div></header>
<main>
  <section><h2>Work</h2><table id="work"></table></section>
  <section><h2>Memory</h2><table id="memory"></table></section>
  <section class="wide"><h2>Steps running</h2><table id="steps"></table></section>
  <section class="wide"><h2>RPC methods served</h2><table id="rpcs"></table></section>
  <section class="wide"><h2>Tensors moved, per peer and transport</h2><table id="transfers"></table></section>
</main>
<script>
"use strict";
$HELPERS$async function poll() {
  try {
    const res = await fetch("/api/status" + query, {cache: "no-store"});
    if (!res.ok) throw new Error("status " + res.status + ": " + (await res.text()));
    const s = await res.json();
    document.getElementById("error").textContent = "";
    document.getElementById("task").textContent =
      s.task + " · port " + s.port + " · up " + secs(s.uptime_seconds);
    rows("work", [["master sessions", s.master_sessions], ["registered graphs", s.registered_graphs],
                  ["steps held", s.steps],
                  ["side-channel transfers", s.side_channel ? s.side_channel_fetches : "off"]]);
    const m = s.memory;
    rows("memory", [["budget", m.budget_bytes > 0 ? mib(m.budget_bytes) : "none"],
                    ["in the budget", mib(m.in_use_bytes)], ["resident", mib(m.resident_bytes)]]);
    const st = s.running_steps.map(r => [
      "step " + r.step_id + " · " + r.graph,
      secs(r.age_seconds) + (r.waiting_for.length ? " · waiting for " + r.waiting_for.join(", ") : "")]);
    rows("steps", st.length ? st : [["none", ""]]);
    const t = document.getElementById("rpcs");
    t.replaceChildren();
    const head = t.createTHead().insertRow();
    for (const h of ["method", "calls", "errors", "mean ms"]) {
      const th = document.createElement("th");
      th.textContent = h;
      head.appendChild(th);
    }
    const body = t.createTBody();
    for (const r of s.rpcs.filter(r => r.calls > 0)) {
      const tr = body.insertRow();
      tr.insertCell().textContent = r.method;
      for (const [v, d] of [[r.calls, 0], [r.errors, 0], [r.mean_ms, 3]]) {
        const td = tr.insertCell();
        td.className = "v";
        td.textContent = fmt(v, d);
      }
    }
    const x = document.getElementById("transfers");
    x.replaceChildren();
    const xh = x.createTHead().insertRow();
    for (const h of ["peer", "transport", "direction", "tensors", "bytes"]) {
      const th = document.createElement("th");
      th.textContent = h;
      xh.appendChild(th);
    }
    const xb = x.createTBody();
    for (const r of s.transfers) {
      const tr = xb.insertRow();
      tr.insertCell().textContent = r.peer;
      for (const v of [r.transport, r.direction, r.tensors, mib(r.bytes)]) {
        const td = tr.insertCell();
        td.className = "v";
        td.textContent = v;
      }
    }
  } catch (e) {
    document.getElementById("error").textContent = "cannot read /api/status: " + e.message;
  }
}
const pollMs = Math.max(100, Number(new URLSearchParams(location.search).get("poll_ms")) || 1000);
poll();
setInterval(poll, pollMs);
</script>
</body>
</html>
)html";

}  // namespace distflow

#endif  // DISTFLOW_TOOLS_SERVER_SERVER_STATUS_PAGE_H_
