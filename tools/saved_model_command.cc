#include "saved_model_command.h"

#include <map>
#include <set>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "distflow/core/status.h"
#include "distflow/framework/op_registry.h"
#include "distflow/saved_model/loader.h"
#include "distflow/saved_model/reader.h"
#include "distflow/saved_model/version_dirs.h"
#include "json_tensor.h"
#include "npy.h"

namespace distflow {
namespace {

std::set<std::string> ParseTagSet(const std::string& flag) {
  std::set<std::string> tags;
  for (absl::string_view t : absl::StrSplit(flag, ',', absl::SkipWhitespace())) {
    tags.insert(std::string(absl::StripAsciiWhitespace(t)));
  }
  return tags;
}

// 'serve' or 'serve, gpu', as saved_model_cli prints a tag set.
std::string QuotedTags(const google::protobuf::RepeatedPtrField<std::string>& tags) {
  std::set<std::string> sorted(tags.begin(), tags.end());
  return absl::StrCat("'", absl::StrJoin(sorted, ", "), "'");
}

std::string ShapeString(const TensorShapeProto& shape) {
  if (shape.unknown_rank()) return "unknown_rank";
  std::vector<int64_t> dims;
  for (const auto& d : shape.dim()) dims.push_back(d.size());
  return absl::StrCat("(", absl::StrJoin(dims, ", "), ")");
}

void DescribeTensors(const google::protobuf::Map<std::string, TensorInfo>& tensors,
                     absl::string_view kind, absl::string_view indent, std::ostream& out) {
  out << indent << "The given SavedModel SignatureDef contains the following " << kind << "(s):\n";
  const std::map<std::string, TensorInfo> sorted(tensors.begin(), tensors.end());
  for (const auto& [key, info] : sorted) {
    out << indent << "  " << kind << "s['" << key << "'] tensor_info:\n"
        << indent << "      dtype: " << DataType_Name(info.dtype()) << "\n"
        << indent << "      shape: " << ShapeString(info.tensor_shape()) << "\n"
        << indent << "      name: " << info.name() << "\n";
  }
}

void DescribeSignature(const SignatureDef& sig, absl::string_view indent, std::ostream& out) {
  DescribeTensors(sig.inputs(), "input", indent, out);
  DescribeTensors(sig.outputs(), "output", indent, out);
  out << indent << "Method name is: " << sig.method_name() << "\n";
}

absl::StatusOr<const SignatureDef*> FindSignature(const MetaGraphDef& m, const std::string& key) {
  auto it = m.signature_def().find(key);
  if (it != m.signature_def().end()) return &it->second;
  std::set<std::string> keys;
  for (const auto& [k, v] : m.signature_def()) keys.insert(k);
  return errors::NotFound("no signature '", key, "'; the signatures are: ",
                          keys.empty() ? "none" : absl::StrJoin(keys, ", "));
}

// Every op of the graph and of its function library, with how many nodes
// use it; those distflow has no definition of are marked.
void ListOps(const MetaGraphDef& m, std::ostream& out) {
  std::map<std::string, int> counts;
  for (const NodeDef& n : m.graph_def().node()) ++counts[n.op()];
  std::set<std::string> functions;
  for (const FunctionDef& f : m.graph_def().library().function()) {
    functions.insert(f.signature().name());
    for (const NodeDef& n : f.node_def()) ++counts[n.op()];
  }
  int missing = 0;
  for (const auto& [op, count] : counts) {
    const bool known = OpRegistry::Global()->LookUp(op) != nullptr || functions.contains(op);
    if (!known) ++missing;
    out << op << "\t" << count << (known ? "" : "\t(not in distflow)") << "\n";
  }
  out << counts.size() << " ops, " << missing << " not in distflow\n";
}

absl::Status Show(const SavedModelFlags& flags, std::ostream& out) {
  DF_ASSIGN_OR_RETURN(const std::string dir, ResolveSavedModelDir(flags.dir));
  DF_ASSIGN_OR_RETURN(const SavedModel model, ReadSavedModel(dir));
  if (flags.all) {
    for (const MetaGraphDef& m : model.meta_graphs()) {
      out << "MetaGraphDef with tag-set: " << QuotedTags(m.meta_info_def().tags())
          << " contains the following SignatureDefs:\n";
      const std::map<std::string, SignatureDef> sorted(m.signature_def().begin(),
                                                       m.signature_def().end());
      for (const auto& [key, sig] : sorted) {
        out << "\nsignature_def['" << key << "']:\n";
        DescribeSignature(sig, "  ", out);
      }
    }
    return absl::OkStatus();
  }
  if (flags.tag_set.empty() && !flags.ops) {
    if (!flags.signature_def.empty()) {
      return errors::InvalidArgument("--signature-def needs --tag-set");
    }
    out << "The given SavedModel contains the following tag-sets:\n";
    for (const MetaGraphDef& m : model.meta_graphs()) {
      out << QuotedTags(m.meta_info_def().tags()) << "\n";
    }
    return absl::OkStatus();
  }
  const std::string tags = flags.tag_set.empty() ? "serve" : flags.tag_set;
  DF_ASSIGN_OR_RETURN(const MetaGraphDef* m, FindMetaGraph(model, ParseTagSet(tags), dir));
  if (flags.ops) {
    ListOps(*m, out);
    return absl::OkStatus();
  }
  if (flags.signature_def.empty()) {
    out << "The given SavedModel MetaGraphDef contains SignatureDefs with the following keys:\n";
    const std::set<std::string> keys = [m] {
      std::set<std::string> k;
      for (const auto& [key, sig] : m->signature_def()) k.insert(key);
      return k;
    }();
    for (const std::string& key : keys) out << "SignatureDef key: \"" << key << "\"\n";
    return absl::OkStatus();
  }
  DF_ASSIGN_OR_RETURN(const SignatureDef* sig, FindSignature(*m, flags.signature_def));
  DescribeSignature(*sig, "", out);
  return absl::OkStatus();
}

// Replaces every {"b64": "..."} object in `value` by the bytes it encodes.
absl::Status DecodeBase64Objects(nlohmann::json* value, const std::string& key) {
  if (value->is_array()) {
    for (nlohmann::json& v : *value) DF_RETURN_IF_ERROR(DecodeBase64Objects(&v, key));
    return absl::OkStatus();
  }
  if (!value->is_object()) return absl::OkStatus();
  auto it = value->find("b64");
  if (value->size() != 1 || it == value->end() || !it->is_string()) {
    return errors::InvalidArgument("input '", key, "': an object must be {\"b64\": \"...\"}, got ",
                                   value->dump());
  }
  std::string bytes;
  if (!absl::Base64Unescape(it->get<std::string>(), &bytes)) {
    return errors::InvalidArgument("input '", key, "': '", it->get<std::string>(),
                                   "' is not base64");
  }
  *value = std::move(bytes);
  return absl::OkStatus();
}

// The tensor a flag's VALUE spells for an input of `dtype`.
absl::StatusOr<Tensor> InputValue(const std::string& key, const std::string& value, DataType dtype,
                                  bool npy_file) {
  if (npy_file || (!value.empty() && value[0] == '@')) {
    const std::string path = npy_file ? value : value.substr(1);
    DF_ASSIGN_OR_RETURN(Tensor t, ReadNpyFile(path));
    if (t.dtype() != dtype) {
      return errors::InvalidArgument("input '", key, "': npy file '", path, "' holds ",
                                     DataTypeString(t.dtype()), " but the signature takes ",
                                     DataTypeString(dtype));
    }
    return t;
  }
  DF_RETURN_IF_ERROR(CheckJsonNesting(value, kMaxFeedRank, key));
  nlohmann::json parsed = nlohmann::json::parse(value, nullptr, /*allow_exceptions=*/false);
  if (parsed.is_discarded()) {
    return errors::InvalidArgument("input '", key, "': '", value, "' is not valid JSON");
  }
  if (dtype == DT_STRING) DF_RETURN_IF_ERROR(DecodeBase64Objects(&parsed, key));
  return TensorFromJson(parsed, dtype, key);
}

// The signature's inputs from the three input flags, by tensor name.
absl::StatusOr<std::vector<std::pair<std::string, Tensor>>> Feeds(const SavedModelFlags& flags,
                                                                  const SignatureDef& sig) {
  std::set<std::string> keys;
  for (const auto& [k, v] : sig.inputs()) keys.insert(k);
  std::map<std::string, Tensor> given;
  auto add = [&](const std::string& flag, bool npy_file) -> absl::Status {
    const size_t eq = flag.find('=');
    if (eq == std::string::npos || eq == 0) {
      return errors::InvalidArgument("input '", flag, "' is not KEY=VALUE");
    }
    const std::string key = flag.substr(0, eq);
    auto info = sig.inputs().find(key);
    if (info == sig.inputs().end()) {
      return errors::InvalidArgument("the signature has no input '", key,
                                     "'; its inputs are: ", absl::StrJoin(keys, ", "));
    }
    if (given.contains(key)) return errors::InvalidArgument("input '", key, "' is given twice");
    DF_ASSIGN_OR_RETURN(given[key],
                        InputValue(key, flag.substr(eq + 1), info->second.dtype(), npy_file));
    return absl::OkStatus();
  };
  for (const std::string& f : flags.input) DF_RETURN_IF_ERROR(add(f, false));
  for (const std::string& f : flags.input_exprs) DF_RETURN_IF_ERROR(add(f, false));
  for (const std::string& f : flags.inputs) DF_RETURN_IF_ERROR(add(f, true));
  std::vector<std::string> missing;
  for (const std::string& k : keys) {
    if (!given.contains(k)) missing.push_back(k);
  }
  if (!missing.empty()) {
    return errors::InvalidArgument("missing input(s) ", absl::StrJoin(missing, ", "),
                                   " (give each as --input KEY=VALUE)");
  }
  std::vector<std::pair<std::string, Tensor>> feeds;
  for (auto& [key, t] : given) feeds.emplace_back(sig.inputs().at(key).name(), std::move(t));
  return feeds;
}

absl::Status Run(const SavedModelFlags& flags, std::ostream& out) {
  if (flags.output != "text" && flags.output != "json") {
    return errors::InvalidArgument("--output must be text or json, got '", flags.output, "'");
  }
  const std::string tags = flags.tag_set.empty() ? "serve" : flags.tag_set;
  SavedModelBundle bundle;
  DF_RETURN_IF_ERROR(
      LoadSavedModel(SessionOptions(), RunOptions(), flags.dir, ParseTagSet(tags), &bundle));
  const std::string key = flags.signature_def.empty() ? "serving_default" : flags.signature_def;
  DF_ASSIGN_OR_RETURN(const SignatureDef* sig, FindSignature(bundle.meta_graph_def, key));
  DF_ASSIGN_OR_RETURN(auto feeds, Feeds(flags, *sig));
  const std::map<std::string, TensorInfo> outputs(sig->outputs().begin(), sig->outputs().end());
  std::vector<std::string> fetches;
  for (const auto& [k, info] : outputs) fetches.push_back(info.name());
  std::vector<Tensor> values;
  DF_RETURN_IF_ERROR(errors::Annotate(bundle.session->Run(feeds, fetches, {}, &values),
                                      absl::StrCat("signature '", key, "': ")));
  if (!flags.output_dir.empty()) {
    std::vector<std::string> keys;
    for (const auto& [k, info] : outputs) keys.push_back(k);
    DF_RETURN_IF_ERROR(WriteNpyFiles(flags.output_dir, keys, values));
  }
  if (flags.output == "json") {
    nlohmann::ordered_json result = nlohmann::ordered_json::object();
    size_t i = 0;
    for (const auto& [k, info] : outputs) {
      const Tensor& t = values[i++];
      result[JsonSafeString(k)] = {{"dtype", DataTypeString(t.dtype())},
                                   {"shape", t.shape().dim_sizes()},
                                   {"values", TensorToNestedJson(t)}};
    }
    out << result.dump() << "\n";
    return absl::OkStatus();
  }
  size_t i = 0;
  for (const auto& [k, info] : outputs) {
    const Tensor& t = values[i++];
    out << k << " " << DataTypeString(t.dtype()) << " " << t.shape().DebugString() << " "
        << TensorToTextSummary(t) << "\n";
  }
  return absl::OkStatus();
}

}  // namespace

void AddSavedModelCommand(CLI::App* app, SavedModelCommand* command) {
  SavedModelFlags& f = command->flags;
  command->command = app->add_subcommand(
      "saved-model", "Inspect and run a TensorFlow SavedModel (as TensorFlow's saved_model_cli)");
  command->command->require_subcommand(1);
  CLI::App* show = command->command->add_subcommand(
      "show", "Tag sets, signatures and their inputs and outputs (or the ops, --ops)");
  CLI::App* run = command->command->add_subcommand("run", "Run one signature on given inputs");
  for (CLI::App* sub : {show, run}) {
    sub->add_option("DIR", f.dir, "the SavedModel directory (or a base of numbered versions)");
    sub->add_option("--dir", f.dir, "the same as DIR");
    sub->add_option("--tag-set,--tag_set", f.tag_set,
                    "the MetaGraphDef's tags, comma-separated (run: serve by default)");
    sub->add_option("--signature-def,--signature_def", f.signature_def,
                    "the signature's key (run: serving_default by default)");
  }
  show->add_flag("--all", f.all, "every tag set's signatures with their inputs and outputs");
  show->add_flag("--ops", f.ops, "the ops the graph and its functions use, with counts");
  run->add_option("--input", f.input,
                  "KEY=JSON, KEY=@FILE.npy; for strings {\"b64\": \"...\"} elements; repeatable");
  run->add_option("--inputs", f.inputs, "KEY=FILE.npy (saved_model_cli's form); repeatable");
  run->add_option("--input-exprs,--input_exprs", f.input_exprs,
                  "KEY=JSON (a number or nested list); repeatable");
  run->add_option("--output", f.output, "text or json")->capture_default_str();
  run->add_option("--output-dir,--outdir", f.output_dir, "write each output as KEY.npy here");
  command->show = show;
  command->run = run;
}

absl::Status RunSavedModelCommand(const SavedModelCommand& command, std::ostream& out) {
  if (command.flags.dir.empty()) {
    return errors::InvalidArgument("give the SavedModel directory (DIR or --dir)");
  }
  return command.show->parsed() ? Show(command.flags, out) : Run(command.flags, out);
}

}  // namespace distflow
