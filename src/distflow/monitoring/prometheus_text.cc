#include "distflow/monitoring/prometheus_text.h"

#include <cmath>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"

namespace distflow {
namespace {

bool ValidName(absl::string_view name, bool allow_colon) {
  if (name.empty()) return false;
  for (size_t i = 0; i < name.size(); ++i) {
    const char c = name[i];
    const bool ok = absl::ascii_isalpha(c) || c == '_' || (allow_colon && c == ':') ||
                    (i > 0 && absl::ascii_isdigit(c));
    if (!ok) return false;
  }
  return true;
}

std::string Name(absl::string_view name, bool allow_colon = true) {
  return ValidName(name, allow_colon) ? std::string(name) : "invalid_name";
}

// Escapes backslash and newline (and, in label values, the double quote).
std::string Escape(absl::string_view s, bool quote) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '\n') {
      out += "\\n";
    } else if (quote && c == '"') {
      out += "\\\"";
    } else {
      out += c;
    }
  }
  return out;
}

std::string Value(double v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "+Inf" : "-Inf";
  return absl::StrCat(v);
}

}  // namespace

void PrometheusText::Family(absl::string_view name, absl::string_view type,
                            absl::string_view help) {
  const std::string n = Name(name);
  absl::StrAppend(&text_, "# HELP ", n, " ", Escape(help, /*quote=*/false), "\n");
  absl::StrAppend(&text_, "# TYPE ", n, " ", type, "\n");
}

void PrometheusText::Sample(absl::string_view name, const PrometheusLabels& labels, double value) {
  absl::StrAppend(&text_, Name(name));
  if (!labels.empty()) {
    text_ += '{';
    for (size_t i = 0; i < labels.size(); ++i) {
      absl::StrAppend(&text_, i ? "," : "", Name(labels[i].first, /*allow_colon=*/false), "=\"",
                      Escape(labels[i].second, /*quote=*/true), "\"");
    }
    text_ += '}';
  }
  absl::StrAppend(&text_, " ", Value(value), "\n");
}

}  // namespace distflow
