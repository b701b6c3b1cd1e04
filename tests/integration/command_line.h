// Runs a program the way a user's shell does, for the tests of the
// `distflow` command line. Thread-compatible.
#ifndef DISTFLOW_TESTS_INTEGRATION_COMMAND_LINE_H_
#define DISTFLOW_TESTS_INTEGRATION_COMMAND_LINE_H_

#include <sys/wait.h>

#include <cstdio>
#include <string>

namespace distflow {
namespace test {

struct CommandOutput {
  int exit_code = -1;  // -1 when the command could not start or was killed
  std::string out;     // its standard output
};

// Runs `command_line` with /bin/sh (quote arguments for it; redirect stderr
// there, e.g. "2>&1" or "2>FILE") and waits for it to end.
inline CommandOutput RunCommandLine(const std::string& command_line) {
  CommandOutput r;
  FILE* p = popen(command_line.c_str(), "r");
  if (p == nullptr) return r;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof(buf), p)) > 0) r.out.append(buf, n);
  const int status = pclose(p);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

}  // namespace test
}  // namespace distflow

#endif  // DISTFLOW_TESTS_INTEGRATION_COMMAND_LINE_H_
