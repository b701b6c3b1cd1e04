// The smallest program against an installed distflow: y = 2x + 1 and the
// gradient of sum(x * x), run in one process with a ClientSession. Prints
//   y = 3 5 7
//   dsum(x*x)/dx = 2 4 6
#include <iostream>
#include <vector>

#include "distflow/cc/client_session.h"
#include "distflow/cc/ops/standard_ops.h"
#include "distflow/gradients/gradients.h"

using namespace distflow;  // NOLINT: a short example

int main() {
  Scope root = Scope::NewRootScope();
  auto x = ops::Placeholder(root.WithOpName("x"), DT_FLOAT);
  auto y = ops::AddV2(root, ops::Mul(root, x, 2.0f), 1.0f);
  std::vector<Output> grads;
  absl::Status s = AddSymbolicGradients(root, {ops::Mul(root, x, x)}, {x}, &grads);
  if (!s.ok()) {
    std::cerr << "error: " << s << std::endl;
    return 1;
  }
  ClientSession session(root);
  std::vector<Tensor> out;
  s = session.Run({{x, {1.0f, 2.0f, 3.0f}}}, {y, grads[0]}, &out);
  if (!s.ok()) {
    std::cerr << "error: " << s << std::endl;
    return 1;
  }
  const char* names[] = {"y =", "dsum(x*x)/dx ="};
  for (int i = 0; i < 2; ++i) {
    std::cout << names[i];
    for (int64_t j = 0; j < out[i].NumElements(); ++j) std::cout << " " << out[i].flat<float>()[j];
    std::cout << "\n";
  }
  return 0;
}
