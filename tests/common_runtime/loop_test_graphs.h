// Loop GraphDefs shared by the executor, multi-device and multi-task tests,
// each with its expected result. Every graph places its parts on three
// devices given by the caller (all "" runs them on one device), so the same
// graph runs on one device, on three local devices or on three tasks.
#ifndef DISTFLOW_TESTS_COMMON_RUNTIME_LOOP_TEST_GRAPHS_H_
#define DISTFLOW_TESTS_COMMON_RUNTIME_LOOP_TEST_GRAPHS_H_

#include <array>
#include <cstdint>
#include <string>

#include "tf_loop_writer.h"

namespace distflow {
namespace test {

using Devices = std::array<std::string, 3>;

inline Tensor I32(int32_t v) { return Tensor::Scalar<int32_t>(v); }
inline Tensor F32(float v) { return Tensor::Scalar<float>(v); }

// Feeds n (int32) and x (float). i = 0, s = 0; while i < n: s += x * i,
// i += 1. Fetch "sum/Exit_0" (n, or 0 when n <= 0) and "sum/Exit_1". The
// condition runs on devices[0], i's update on devices[1], s's on devices[2].
inline GraphDef SumLoop(const Devices& d, int parallel_iterations = 10) {
  GraphDef g;
  TfLoopWriter w(&g);
  w.set_device(d[0]);
  w.Placeholder("n", DT_INT32);
  w.Placeholder("x", DT_FLOAT);
  w.Const("i0", I32(0));
  w.Const("s0", F32(0));
  w.While(
      "sum", {{"i0", DT_INT32}, {"s0", DT_FLOAT}}, {{"n", DT_INT32}, {"x", DT_FLOAT}},
      [&](const TfLoopWriter::Frame& f) {
        w.set_device(d[0]);
        return w.Binary("sum/Less", "Less", f.vars[0], f.invariants[0], DT_INT32);
      },
      [&](const TfLoopWriter::Frame& f) {
        w.set_device(d[1]);
        w.Const("sum/one", I32(1), f.pivot);
        const std::string i1 = w.Binary("sum/add_i", "AddV2", f.vars[0], "sum/one", DT_INT32);
        w.set_device(d[2]);
        NodeDef* cast = w.Node("sum/cast", "Cast", {f.vars[0]});
        AddNodeAttr("SrcT", DT_INT32, cast);
        AddNodeAttr("DstT", DT_FLOAT, cast);
        const std::string xi = w.Binary("sum/mul", "Mul", "sum/cast", f.invariants[1], DT_FLOAT);
        const std::string s1 = w.Binary("sum/add_s", "AddV2", f.vars[1], xi, DT_FLOAT);
        w.set_device(d[0]);
        return std::vector<std::string>{i1, s1};
      },
      parallel_iterations);
  return g;
}

// What SumLoop computes, in the same float operations and order.
inline float SumLoopExpected(int32_t n, float x) {
  float s = 0;
  for (int32_t i = 0; i < n; ++i) s = s + static_cast<float>(i) * x;
  return s;
}

// Feeds n and m (int32). acc = 0; for i < n: for j < m: acc += i * j + 1.
// Fetch "outer/Exit_1". The outer loop runs on devices[0], the inner
// condition on devices[1], the inner body on devices[2].
inline GraphDef NestedLoop(const Devices& d, int parallel_iterations = 10) {
  GraphDef g;
  TfLoopWriter w(&g);
  w.set_device(d[0]);
  w.Placeholder("n", DT_INT32);
  w.Placeholder("m", DT_INT32);
  w.Const("zero", I32(0));
  w.While(
      "outer", {{"zero", DT_INT32}, {"zero", DT_INT32}}, {{"n", DT_INT32}, {"m", DT_INT32}},
      [&](const TfLoopWriter::Frame& f) {
        w.set_device(d[0]);
        return w.Binary("outer/Less", "Less", f.vars[0], f.invariants[0], DT_INT32);
      },
      [&](const TfLoopWriter::Frame& f) {
        w.set_device(d[0]);
        w.Const("outer/zero", I32(0), f.pivot);
        const std::vector<std::string> inner = w.While(
            "inner", {{"outer/zero", DT_INT32}, {f.vars[1], DT_INT32}},
            {{f.invariants[1], DT_INT32}, {f.vars[0], DT_INT32}},
            [&](const TfLoopWriter::Frame& g2) {
              w.set_device(d[1]);
              return w.Binary("inner/Less", "Less", g2.vars[0], g2.invariants[0], DT_INT32);
            },
            [&](const TfLoopWriter::Frame& g2) {
              w.set_device(d[2]);
              w.Const("inner/one", I32(1), g2.pivot);
              const std::string j1 =
                  w.Binary("inner/add_j", "AddV2", g2.vars[0], "inner/one", DT_INT32);
              const std::string ij =
                  w.Binary("inner/mul", "Mul", g2.invariants[1], g2.vars[0], DT_INT32);
              const std::string ij1 = w.Binary("inner/add_one", "AddV2", ij, "inner/one", DT_INT32);
              const std::string acc = w.Binary("inner/add_acc", "AddV2", g2.vars[1], ij1, DT_INT32);
              w.set_device(d[1]);
              return std::vector<std::string>{j1, acc};
            },
            parallel_iterations);
        w.set_device(d[0]);
        w.Const("outer/one", I32(1), f.pivot);
        const std::string i1 = w.Binary("outer/add_i", "AddV2", f.vars[0], "outer/one", DT_INT32);
        return std::vector<std::string>{i1, inner[1]};
      },
      parallel_iterations);
  return g;
}

inline int32_t NestedLoopExpected(int32_t n, int32_t m) {
  int32_t acc = 0;
  for (int32_t i = 0; i < n; ++i) {
    for (int32_t j = 0; j < m; ++j) acc += i * j + 1;
  }
  return acc;
}

// Feeds n and h (int32). s = 0; for i < n: s += i < h ? i * 2 : -1 (a
// tf.cond in the body). Fetch "cond_loop/Exit_1". The loop runs on
// devices[0], the true branch on devices[1], the false branch on devices[2].
inline GraphDef CondInLoop(const Devices& d, int parallel_iterations = 10) {
  GraphDef g;
  TfLoopWriter w(&g);
  w.set_device(d[0]);
  w.Placeholder("n", DT_INT32);
  w.Placeholder("h", DT_INT32);
  w.Const("zero", I32(0));
  w.While(
      "cond_loop", {{"zero", DT_INT32}, {"zero", DT_INT32}}, {{"n", DT_INT32}, {"h", DT_INT32}},
      [&](const TfLoopWriter::Frame& f) {
        w.set_device(d[0]);
        return w.Binary("cond_loop/Less", "Less", f.vars[0], f.invariants[0], DT_INT32);
      },
      [&](const TfLoopWriter::Frame& f) {
        w.set_device(d[0]);
        const std::string p =
            w.Binary("cond_loop/below", "Less", f.vars[0], f.invariants[1], DT_INT32);
        const std::string delta = w.Cond(
            "cond_loop/cond", p, f.vars[0], DT_INT32,
            [&](const std::string& x, const std::string& pivot) {
              w.set_device(d[1]);
              w.Const("cond_loop/cond/two", I32(2), pivot);
              return w.Binary("cond_loop/cond/mul", "Mul", x, "cond_loop/cond/two", DT_INT32);
            },
            [&](const std::string&, const std::string& pivot) {
              w.set_device(d[2]);
              return w.Const("cond_loop/cond/minus_one", I32(-1), pivot);
            });
        w.set_device(d[0]);
        w.Const("cond_loop/one", I32(1), f.pivot);
        const std::string i1 =
            w.Binary("cond_loop/add_i", "AddV2", f.vars[0], "cond_loop/one", DT_INT32);
        const std::string s1 = w.Binary("cond_loop/add_s", "AddV2", f.vars[1], delta, DT_INT32);
        return std::vector<std::string>{i1, s1};
      },
      parallel_iterations);
  return g;
}

inline int32_t CondInLoopExpected(int32_t n, int32_t h) {
  int32_t s = 0;
  for (int32_t i = 0; i < n; ++i) s += i < h ? i * 2 : -1;
  return s;
}

// Feeds n (int32). s = 0; for i < n: s += table[i] with a 10-element table:
// iteration 10 fails in "gather/GatherV2" (the first to fail with
// parallel_iterations 1). Fetch "gather/Exit_1". The gather runs on
// devices[1].
inline GraphDef GatherLoop(const Devices& d, int parallel_iterations = 1) {
  GraphDef g;
  TfLoopWriter w(&g);
  w.set_device(d[0]);
  w.Placeholder("n", DT_INT32);
  w.Const("zero", I32(0));
  w.Const("table", Tensor::FromVector<int32_t>({0, 1, 2, 3, 4, 5, 6, 7, 8, 9}, TensorShape({10})));
  w.While(
      "gather", {{"zero", DT_INT32}, {"zero", DT_INT32}}, {{"n", DT_INT32}, {"table", DT_INT32}},
      [&](const TfLoopWriter::Frame& f) {
        return w.Binary("gather/Less", "Less", f.vars[0], f.invariants[0], DT_INT32);
      },
      [&](const TfLoopWriter::Frame& f) {
        w.set_device(d[1]);
        w.Const("gather/axis", I32(0), f.pivot);
        NodeDef* gather =
            w.Node("gather/GatherV2", "GatherV2", {f.invariants[1], f.vars[0], "gather/axis"});
        AddNodeAttr("Tparams", DT_INT32, gather);
        AddNodeAttr("Tindices", DT_INT32, gather);
        AddNodeAttr("Taxis", DT_INT32, gather);
        w.set_device(d[0]);
        w.Const("gather/one", I32(1), f.pivot);
        const std::string i1 = w.Binary("gather/add_i", "AddV2", f.vars[0], "gather/one", DT_INT32);
        const std::string s1 =
            w.Binary("gather/add_s", "AddV2", f.vars[1], "gather/GatherV2", DT_INT32);
        return std::vector<std::string>{i1, s1};
      },
      parallel_iterations);
  return g;
}

// Feeds p (bool) and n (int32). out = p ? (count i from 0 while i < n) : -7:
// a loop inside a tf.cond branch, entered with dead values when p is false.
// Fetch "branch/Merge". The loop's condition runs on devices[1], its body on
// devices[2].
inline GraphDef LoopInCond(const Devices& d) {
  GraphDef g;
  TfLoopWriter w(&g);
  w.set_device(d[0]);
  w.Placeholder("p", DT_BOOL);
  w.Placeholder("n", DT_INT32);
  w.Cond(
      "branch", "p", "n", DT_INT32,
      [&](const std::string& x, const std::string& pivot) {
        w.set_device(d[0]);
        w.Const("branch/zero", I32(0), pivot);
        const std::vector<std::string> exits = w.While(
            "branch/loop", {{"branch/zero", DT_INT32}, {x, DT_INT32}}, {},
            [&](const TfLoopWriter::Frame& f) {
              w.set_device(d[1]);
              return w.Binary("branch/loop/Less", "Less", f.vars[0], f.vars[1], DT_INT32);
            },
            [&](const TfLoopWriter::Frame& f) {
              w.set_device(d[2]);
              w.Const("branch/loop/one", I32(1), f.pivot);
              const std::string i1 =
                  w.Binary("branch/loop/add", "AddV2", f.vars[0], "branch/loop/one", DT_INT32);
              w.set_device(d[0]);
              return std::vector<std::string>{i1, f.vars[1]};
            });
        w.set_device(d[0]);
        return exits[0];
      },
      [&](const std::string&, const std::string& pivot) {
        w.set_device(d[0]);
        return w.Const("branch/minus_seven", I32(-7), pivot);
      });
  return g;
}

}  // namespace test
}  // namespace distflow

#endif  // DISTFLOW_TESTS_COMMON_RUNTIME_LOOP_TEST_GRAPHS_H_
