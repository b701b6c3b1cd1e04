// What the status pages of `distflow train --status-port` and `distflow
// server --status-port` share: the styles (header, grid of sections,
// tables of figures) and the script helpers (rows() fills a table of
// label/value pairs, fmt() and secs() format numbers and durations; `query`
// is the page's query string, ?token= included, passed on to /api/status).
// StatusPageHtml() puts them in place of $STYLE$ and $HELPERS$ in a page.
#ifndef DISTFLOW_TOOLS_STATUS_PAGE_PARTS_H_
#define DISTFLOW_TOOLS_STATUS_PAGE_PARTS_H_

#include <string>

#include "absl/strings/str_replace.h"

namespace distflow {

inline constexpr char kStatusPageStyle[] =
    R"css(  body { font: 14px/1.4 system-ui, sans-serif; margin: 0; background: #f6f7f9; color: #1d232b; }
  header { background: #1d232b; color: #fff; padding: 10px 16px; }
  header h1 { font-size: 18px; margin: 0; }
  header .sub { color: #b8c0cc; }
  main { display: grid; grid-template-columns: repeat(auto-fit, minmax(280px, 1fr));
         gap: 12px; padding: 12px; }
  section { background: #fff; border: 1px solid #dde1e6; border-radius: 6px; padding: 10px 12px; }
  section.wide { grid-column: 1 / -1; }
  h2 { font-size: 14px; margin: 0 0 6px; color: #4a5563; text-transform: uppercase; }
  table { border-collapse: collapse; width: 100%; }
  td { padding: 2px 4px; } td.v { text-align: right; font-variant-numeric: tabular-nums; }
  #error { color: #c5221f; }
)css";

inline constexpr char kStatusPageHelpers[] = R"js(const query = location.search;
function rows(id, pairs) {
  const t = document.getElementById(id);
  t.replaceChildren();
  for (const [k, v, cls] of pairs) {
    const tr = t.insertRow();
    tr.insertCell().textContent = k;
    const td = tr.insertCell();
    td.className = "v" + (cls ? " " + cls : "");
    td.textContent = v;
  }
}
function fmt(x, d) { return x === null || x === undefined || x < 0 ? "–" : Number(x).toFixed(d); }
function mib(b) { return b === null || b === undefined || b < 0 ? "–" : (b / 1048576).toFixed(1) + " MiB"; }
function secs(s) {
  if (s === null || s === undefined || s < 0) return "–";
  const m = Math.floor(s / 60);
  return m > 0 ? m + " min " + Math.round(s - 60 * m) + " s" : s.toFixed(1) + " s";
}
)js";

// `page` with $STYLE$ and $HELPERS$ replaced by the shared parts.
inline std::string StatusPageHtml(const char* page) {
  return absl::StrReplaceAll(page,
                             {{"$STYLE$", kStatusPageStyle}, {"$HELPERS$", kStatusPageHelpers}});
}

}  // namespace distflow

#endif  // DISTFLOW_TOOLS_STATUS_PAGE_PARTS_H_
