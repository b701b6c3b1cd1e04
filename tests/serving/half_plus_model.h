// TF2's half_plus_two from ../shared/saved_models, rewritten to compute
// 0.5 x + b for a b of the test's choosing: distinct model versions for the
// serving tests. Needs DISTFLOW_SOURCE_DIR and the framework layer.
#ifndef DISTFLOW_TESTS_SERVING_HALF_PLUS_MODEL_H_
#define DISTFLOW_TESTS_SERVING_HALF_PLUS_MODEL_H_

#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "distflow/framework/tensor_bundle.h"
#include "gtest/gtest.h"

namespace distflow {

// TF2's half_plus_two as version directory `dir`, computing 0.5 x + `b`
// (its checkpoint rewritten), made beside `dir` and renamed into place as an
// exporter would.
inline void WriteHalfPlus(const std::string& dir, float b) {
  const std::string models = absl::StrCat(DISTFLOW_SOURCE_DIR, "/../shared/saved_models");
  namespace fs = std::filesystem;
  const std::string tmp = dir + ".tmp";
  fs::remove_all(tmp);
  fs::copy(models + "/serving_half_plus_two_tf2/00000123", tmp, fs::copy_options::recursive);
  for (const auto& e : fs::recursive_directory_iterator(tmp)) {
    fs::permissions(e.path(), fs::perms::owner_write, fs::perm_options::add);
  }
  const std::string prefix = tmp + "/variables/variables";
  std::vector<std::pair<std::string, Tensor>> tensors;
  {
    auto reader = BundleReader::Open(prefix);
    ASSERT_TRUE(reader.ok()) << reader.status();
    for (const std::string& name : (*reader)->Names()) {
      const DataType dtype = (*reader)->Find(name)->dtype();
      auto t = (*reader)->Read(name, dtype);
      ASSERT_TRUE(t.ok()) << t.status();
      tensors.emplace_back(name,
                           name == "b/.ATTRIBUTES/VARIABLE_VALUE" ? Tensor::Scalar<float>(b) : *t);
    }
  }
  fs::remove(prefix + ".index");
  fs::remove(prefix + ".data-00000-of-00001");
  BundleWriter w(prefix);
  for (const auto& [name, t] : tensors) ASSERT_TRUE(w.Add(name, t).ok());
  ASSERT_TRUE(w.Finish().ok());
  fs::rename(tmp, dir);
}

}  // namespace distflow

#endif  // DISTFLOW_TESTS_SERVING_HALF_PLUS_MODEL_H_
