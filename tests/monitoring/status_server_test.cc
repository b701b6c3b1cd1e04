// The status server and the Prometheus text format: pages served on a free
// port, a token asked where one is set, unknown paths 404, a held port
// refused; exposition lines escaped as the format says, histograms
// cumulative; promtool accepts a page (when Debian's prometheus is there).
#include "distflow/monitoring/status_server.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <string>
#include <thread>
#include <vector>

#include "distflow/monitoring/histogram.h"
#include "distflow/monitoring/prometheus_text.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "integration/http_get.h"

namespace distflow {
namespace {

using ::testing::HasSubstr;

TEST(PrometheusTextTest, LinesAndEscapes) {
  PrometheusText t;
  t.Family("distflow_x_total", "counter", "Help with a \\ and a\nnewline.");
  t.Sample("distflow_x_total", {{"state", "a\"b\\c\nd"}}, 3);
  t.Sample("distflow_x_total", {}, std::numeric_limits<double>::infinity());
  t.Sample("distflow_x_total", {{"k", "v"}}, std::nan(""));
  t.Sample("bad name", {{"bad-label", "v"}}, 1.5);
  EXPECT_EQ(t.text(),
            "# HELP distflow_x_total Help with a \\\\ and a\\nnewline.\n"
            "# TYPE distflow_x_total counter\n"
            "distflow_x_total{state=\"a\\\"b\\\\c\\nd\"} 3\n"
            "distflow_x_total +Inf\n"
            "distflow_x_total{k=\"v\"} NaN\n"
            "invalid_name{invalid_name=\"v\"} 1.5\n");
}

TEST(HistogramTest, BucketsAreCumulative) {
  Histogram h({0.1, 1, 10});
  for (double v : {0.05, 0.1, 0.5, 5.0, 50.0}) h.Observe(v);
  EXPECT_EQ(h.count(), 5);
  EXPECT_DOUBLE_EQ(h.sum(), 55.65);
  PrometheusText t;
  t.Family("h_seconds", "histogram", "H.");
  h.WriteSamples("h_seconds", {{"job", "x"}}, &t);
  EXPECT_THAT(t.text(), HasSubstr("h_seconds_bucket{job=\"x\",le=\"0.1\"} 2\n"));
  EXPECT_THAT(t.text(), HasSubstr("h_seconds_bucket{job=\"x\",le=\"1\"} 3\n"));
  EXPECT_THAT(t.text(), HasSubstr("h_seconds_bucket{job=\"x\",le=\"10\"} 4\n"));
  EXPECT_THAT(t.text(), HasSubstr("h_seconds_bucket{job=\"x\",le=\"+Inf\"} 5\n"));
  EXPECT_THAT(t.text(), HasSubstr("h_seconds_count{job=\"x\"} 5\n"));
}

std::map<std::string, StatusPage> Pages(int* renders) {
  std::map<std::string, StatusPage> pages;
  pages["/"] = {"text/html; charset=utf-8", [] { return std::string("<p>hi</p>"); }};
  pages["/metrics"] = {kPrometheusContentType, [renders] {
                         PrometheusText t;
                         t.Family("distflow_renders_total", "counter", "Times rendered.");
                         t.Sample("distflow_renders_total", {}, ++*renders);
                         return t.text();
                       }};
  return pages;
}

TEST(StatusServerTest, ServesPagesOnAFreePort) {
  int renders = 0;
  auto server = StatusServer::Start({}, Pages(&renders));
  ASSERT_TRUE(server.ok()) << server.status();
  const int port = (*server)->port();
  ASSERT_GT(port, 0);
  HttpResponse r = HttpGet(port, "/");
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.body, "<p>hi</p>");
  EXPECT_THAT(r.headers, HasSubstr("Content-Type: text/html; charset=utf-8"));
  r = HttpGet(port, "/metrics");
  EXPECT_EQ(r.status, 200);
  EXPECT_THAT(r.body, HasSubstr("distflow_renders_total 1\n"));
  EXPECT_EQ(HttpGet(port, "/metrics").body.find("distflow_renders_total 2\n") != std::string::npos,
            true);
  EXPECT_EQ(HttpGet(port, "/nope").status, 404);

  // promtool (Debian's prometheus package) reads the page as Prometheus would.
  if (std::system("command -v promtool >/dev/null 2>&1") == 0) {
    const std::string file = ::testing::TempDir() + "/status_server_metrics.txt";
    std::ofstream(file) << HttpGet(port, "/metrics").body;
    EXPECT_EQ(std::system(("promtool check metrics < " + file).c_str()), 0);
  }

  // The port is held: a second server on it is refused, not shared.
  StatusServerOptions same;
  same.port = port;
  auto second = StatusServer::Start(same, Pages(&renders));
  EXPECT_EQ(second.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(second.status().message(), HasSubstr(absl::StrCat("127.0.0.1:", port)));
}

// The files this process has open.
int OpenFiles() {
  int n = 0;
  for (const auto& entry : std::filesystem::directory_iterator("/proc/self/fd")) {
    (void)entry;
    ++n;
  }
  return n;
}

// 300 idle connections hold at most the server's 4 threads and 16 waiting
// slots (plus the one its accept loop holds while it waits for a slot):
// the rest wait in the kernel's backlog. Once they close, pages are served
// again. (cpp-httplib's own pool accepted and queued all 300, one file each.)
TEST(StatusServerTest, AFloodOfIdleConnectionsHoldsAFewFiles) {
  int renders = 0;
  auto server = StatusServer::Start({}, Pages(&renders));
  ASSERT_TRUE(server.ok()) << server.status();
  const int port = (*server)->port();
  constexpr int kFlood = 300;
  const int before = OpenFiles();
  const std::vector<int> fds = OpenIdleConnections(port, kFlood);
  ASSERT_EQ(fds.size(), static_cast<size_t>(kFlood));
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  const int accepted = OpenFiles() - before - kFlood;
  EXPECT_LE(accepted, 4 + 16 + 1) << "files the server holds for the flood";
  for (int fd : fds) close(fd);
  HttpResponse r = HttpGet(port, "/");
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.body, "<p>hi</p>");
}

TEST(StatusServerTest, TokenIsAskedWhereOneIsSet) {
  int renders = 0;
  StatusServerOptions o;
  o.token = "s3cret";
  auto server = StatusServer::Start(o, Pages(&renders));
  ASSERT_TRUE(server.ok()) << server.status();
  const int port = (*server)->port();
  HttpResponse r = HttpGet(port, "/metrics");
  EXPECT_EQ(r.status, 401);
  EXPECT_THAT(r.body, HasSubstr("Authorization: Bearer"));
  EXPECT_EQ(HttpGet(port, "/metrics", "Authorization: Bearer wrong\r\n").status, 401);
  EXPECT_EQ(HttpGet(port, "/metrics", "Authorization: Bearer s3cret\r\n").status, 200);
  EXPECT_EQ(HttpGet(port, "/?token=s3cret").status, 200);
  EXPECT_EQ(HttpGet(port, "/?token=s3cre").status, 401);
  EXPECT_EQ(renders, 1);
}

TEST(StatusServerTest, BadAddressesAreClearErrors) {
  int renders = 0;
  StatusServerOptions o;
  o.port = 70000;
  EXPECT_EQ(StatusServer::Start(o, Pages(&renders)).status().code(),
            absl::StatusCode::kInvalidArgument);
  o.port = 0;
  o.bind = "192.0.2.1";  // TEST-NET-1: not an address of this host
  auto s = StatusServer::Start(o, Pages(&renders));
  EXPECT_EQ(s.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(s.status().message(), HasSubstr("192.0.2.1"));
}

}  // namespace
}  // namespace distflow
