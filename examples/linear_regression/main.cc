// Linear regression (y = 2x + 10) trained on a local parameter-server
// cluster, as a standalone program; the same job is `distflow demo`. See
// demo.h for what it does.
#include <iostream>

#include "CLI/CLI.hpp"
#include "demo/demo.h"

int main(int argc, char** argv) {
  distflow::DemoFlags flags;
  CLI::App app{"Train y = 2x + 10 on a local parameter-server cluster"};
  distflow::AddDemoFlags(&app, &flags);
  CLI11_PARSE(app, argc, argv);
  absl::Status s = distflow::RunDemo(flags, std::cout, std::cerr);
  if (!s.ok()) {
    std::cerr << "error: " << s << std::endl;
    return 1;
  }
  return 0;
}
