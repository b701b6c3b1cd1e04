// `distflow saved-model`, in the shape of TensorFlow's saved_model_cli:
//   distflow saved-model show DIR                     the tag sets
//   distflow saved-model show DIR --tag-set serve     the signature keys
//   distflow saved-model show DIR --tag-set serve --signature-def NAME
//                                                     its inputs and outputs
//   distflow saved-model show DIR --all               every tag set and signature
//   distflow saved-model show DIR --ops               the ops of the graph and its
//                                                     functions, those distflow lacks marked
//   distflow saved-model run DIR [--tag-set serve] [--signature-def serving_default]
//       [--input KEY=VALUE]... [--inputs KEY=FILE.npy]... [--input-exprs KEY=JSON]...
//       [--output text|json] [--output-dir DIR]
// DIR may also be given as --dir, a base directory of numbered versions (the
// highest is used), and tag sets as "serve,gpu". saved_model_cli's
// underscore spellings (--tag_set, --signature_def, --input_exprs) are
// accepted. A VALUE is JSON (a number or nested list), @FILE.npy, or for
// string inputs JSON whose strings may be {"b64": "..."} (TensorFlow
// Serving's convention for bytes). Outputs print one per line, or as one JSON
// object keyed by the signature's output keys; --output-dir writes each as
// KEY.npy. Thread-compatible.
#ifndef DISTFLOW_TOOLS_SAVED_MODEL_COMMAND_H_
#define DISTFLOW_TOOLS_SAVED_MODEL_COMMAND_H_

#include <ostream>
#include <string>
#include <vector>

#include "CLI/CLI.hpp"
#include "absl/status/status.h"

namespace distflow {

struct SavedModelFlags {
  std::string dir;
  std::string tag_set;  // show: empty lists the tag sets; run: "serve" when empty
  std::string signature_def;
  bool all = false;
  bool ops = false;
  std::vector<std::string> input;        // KEY=JSON or KEY=@FILE.npy
  std::vector<std::string> inputs;       // KEY=FILE.npy
  std::vector<std::string> input_exprs;  // KEY=JSON
  std::string output = "text";
  std::string output_dir;
};

// The `saved-model` subcommand and its `show` and `run` subcommands.
struct SavedModelCommand {
  CLI::App* command = nullptr;
  CLI::App* show = nullptr;
  CLI::App* run = nullptr;
  SavedModelFlags flags;
};

// Registers `saved-model show|run` on `app`.
void AddSavedModelCommand(CLI::App* app, SavedModelCommand* command);

// Runs the parsed subcommand, writing its report to `out`.
absl::Status RunSavedModelCommand(const SavedModelCommand& command, std::ostream& out);

}  // namespace distflow

#endif  // DISTFLOW_TOOLS_SAVED_MODEL_COMMAND_H_
