// BuildWhileLoop and BuildCond: loops and conditionals built from the client
// API run on one device and split over three, nest, and differentiate (conds)
// or refuse to (loops) with a message naming the loop.
#include "distflow/cc/while_loop.h"

#include <vector>

#include "distflow/cc/client_session.h"
#include "distflow/cc/cond.h"
#include "distflow/cc/ops/standard_ops.h"
#include "distflow/gradients/gradients.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace distflow {
namespace {

using ::testing::HasSubstr;

SessionOptions ThreeDevices() {
  SessionOptions options;
  (*options.config.mutable_device_count())["CPU"] = 3;
  return options;
}

// i, s = 0, x; while i < n: i, s = i + 1, s * 2 + 1. The body's two updates
// run on devices 1 and 2 when `split`.
void BuildDoubling(const Scope& root, bool split, Output* n, Output* x, OutputList* out) {
  *n = ops::Placeholder(root.WithOpName("n"), DT_INT32);
  *x = ops::Placeholder(root.WithOpName("x"), DT_FLOAT);
  const Output bound = *n;
  ASSERT_TRUE(
      ops::BuildWhileLoop(
          root, {ops::Const(root, 0), *x, bound},
          [](const Scope& s, const std::vector<Output>& v, Output* pred) {
            *pred = ops::Less(s, v[0], v[2]);
            return s.status();
          },
          [split](const Scope& s, const std::vector<Output>& v, std::vector<Output>* next) {
            const Scope a = split ? s.WithDevice("/device:CPU:1") : s;
            const Scope b = split ? s.WithDevice("/device:CPU:2") : s;
            *next = {ops::AddV2(a, v[0], 1), ops::AddV2(b, ops::Mul(b, v[1], 2.0f), 1.0f), v[2]};
            return s.status();
          },
          "doubling", out)
          .ok());
}

TEST(WhileLoopTest, RunsOnOneAndOnThreeDevices) {
  for (bool split : {false, true}) {
    Scope root = Scope::NewRootScope();
    Output n, x;
    OutputList out;
    BuildDoubling(root, split, &n, &x, &out);
    ClientSession session(root, ThreeDevices());
    ASSERT_TRUE(session.status().ok()) << session.status();
    for (int k : {0, 1, 5}) {
      std::vector<Tensor> got;
      ASSERT_TRUE(session.Run({{n, k}, {x, 1.0f}}, {out[0], out[1]}, &got).ok());
      EXPECT_EQ(got[0].scalar<int32_t>(), k);
      EXPECT_EQ(got[1].scalar<float>(), static_cast<float>((2 << k) - 1)) << k;
    }
  }
}

TEST(WhileLoopTest, NestedLoopsAndACondInTheBody) {
  // total = sum over i < n of (i odd ? sum_{j < i} 1 : -1).
  Scope root = Scope::NewRootScope();
  auto n = ops::Placeholder(root.WithOpName("n"), DT_INT32);
  OutputList out;
  ASSERT_TRUE(
      ops::BuildWhileLoop(
          root, {ops::Const(root, 0), ops::Const(root, 0), n},
          [](const Scope& s, const std::vector<Output>& v, Output* pred) {
            *pred = ops::Less(s, v[0], v[2]);
            return s.status();
          },
          [](const Scope& s, const std::vector<Output>& v, std::vector<Output>* next) {
            auto odd = ops::Equal(s, ops::FloorMod(s, v[0], 2), 1);
            OutputList picked;
            absl::Status st = ops::BuildCond(
                s, odd, {v[0]},
                [](const Scope& t, const std::vector<Output>& in, std::vector<Output>* o) {
                  OutputList inner;
                  absl::Status r = ops::BuildWhileLoop(
                      t, {ops::Const(t, 0), ops::Const(t, 0), in[0]},
                      [](const Scope& c, const std::vector<Output>& w, Output* p) {
                        *p = ops::Less(c, w[0], w[2]);
                        return c.status();
                      },
                      [](const Scope& b, const std::vector<Output>& w, std::vector<Output>* nx) {
                        *nx = {ops::AddV2(b, w[0], 1), ops::AddV2(b, w[1], 1), w[2]};
                        return b.status();
                      },
                      "inner", &inner);
                  if (r.ok()) *o = {inner[1]};
                  return r;
                },
                [](const Scope& e, const std::vector<Output>&, std::vector<Output>* o) {
                  *o = {ops::Const(e, -1)};
                  return e.status();
                },
                &picked);
            if (!st.ok()) return st;
            *next = {ops::AddV2(s, v[0], 1), ops::AddV2(s, v[1], picked[0]), v[2]};
            return s.status();
          },
          "outer", &out)
          .ok())
      << root.status();
  ClientSession session(root);
  ASSERT_TRUE(session.status().ok()) << session.status();
  for (int k : {0, 1, 4, 9}) {
    int expected = 0;
    for (int i = 0; i < k; ++i) expected += i % 2 == 1 ? i : -1;
    std::vector<Tensor> got;
    absl::Status s = session.Run({{n, k}}, {out[1]}, &got);
    ASSERT_TRUE(s.ok()) << s;
    EXPECT_EQ(got[0].scalar<int32_t>(), expected) << k;
  }
}

TEST(WhileLoopTest, BadBodiesAreErrors) {
  Scope root = Scope::NewRootScope();
  OutputList out;
  auto cond = [](const Scope& s, const std::vector<Output>& v, Output* pred) {
    *pred = ops::Less(s, v[0], 3);
    return s.status();
  };
  absl::Status s = ops::BuildWhileLoop(
      root, {ops::Const(root, 0)}, cond,
      [](const Scope& b, const std::vector<Output>&, std::vector<Output>* next) {
        *next = {ops::Const(b, 1.0f)};
        return b.status();
      },
      "bad_dtype", &out);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(s.message()), HasSubstr("bad_dtype"));

  Scope root2 = Scope::NewRootScope();
  s = ops::BuildWhileLoop(
      root2, {ops::Const(root2, 0)},
      [](const Scope& c, const std::vector<Output>& v, Output* pred) {
        *pred = v[0];
        return c.status();
      },
      [](const Scope& b, const std::vector<Output>& v, std::vector<Output>* next) {
        *next = v;
        return b.status();
      },
      "int_cond", &out);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(s.message()), HasSubstr("bool"));
}

TEST(CondTest, TakesTheBranchAndDifferentiatesThroughIt) {
  Scope root = Scope::NewRootScope();
  auto p = ops::Placeholder(root.WithOpName("p"), DT_BOOL);
  auto x = ops::Placeholder(root.WithOpName("x"), DT_FLOAT);
  OutputList out;
  ASSERT_TRUE(ops::BuildCond(
                  root, p, {x},
                  [](const Scope& s, const std::vector<Output>& in, std::vector<Output>* o) {
                    *o = {ops::Mul(s, ops::Mul(s, in[0], in[0]), 3.0f)};  // 3x^2
                    return s.status();
                  },
                  [](const Scope& s, const std::vector<Output>& in, std::vector<Output>* o) {
                    *o = {ops::Neg(s, in[0])};  // -x
                    return s.status();
                  },
                  &out)
                  .ok());
  std::vector<Output> grads;
  ASSERT_TRUE(AddSymbolicGradients(root, {out[0]}, {x}, &grads).ok()) << root.status();
  ClientSession session(root, ThreeDevices());
  std::vector<Tensor> got;
  ASSERT_TRUE(session.Run({{p, true}, {x, 2.0f}}, {out[0], grads[0]}, &got).ok());
  EXPECT_EQ(got[0].scalar<float>(), 12.0f);
  EXPECT_EQ(got[1].scalar<float>(), 12.0f);  // 6x
  ASSERT_TRUE(session.Run({{p, false}, {x, 2.0f}}, {out[0], grads[0]}, &got).ok());
  EXPECT_EQ(got[0].scalar<float>(), -2.0f);
  EXPECT_EQ(got[1].scalar<float>(), -1.0f);
}

TEST(WhileLoopTest, GradientsOfLoopsAreUnimplementedAndNameTheLoop) {
  Scope root = Scope::NewRootScope();
  Output n, x;
  OutputList out;
  BuildDoubling(root, false, &n, &x, &out);
  std::vector<Output> grads;
  absl::Status s = AddSymbolicGradients(root, {out[1]}, {x}, &grads);
  EXPECT_EQ(s.code(), absl::StatusCode::kUnimplemented) << s;
  EXPECT_THAT(std::string(s.message()), HasSubstr("doubling"));
}

}  // namespace
}  // namespace distflow
