#include "distflow/monitoring/event_file.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <system_error>

#include "absl/strings/str_cat.h"
#include "distflow/core/env.h"
#include "distflow/core/status.h"
#include "distflow/monitoring/record_io.h"

namespace distflow {
namespace {

constexpr int kMaxSameSecondWriters = 1000;

std::string HostName() {
  char host[256] = {0};
  if (gethostname(host, sizeof(host) - 1) != 0 || host[0] == '\0') return "localhost";
  return host;
}

}  // namespace

absl::StatusOr<std::unique_ptr<EventFileWriter>> EventFileWriter::Open(const std::string& logdir) {
  if (logdir.empty()) return errors::InvalidArgument("the event file directory is empty");
  std::error_code ec;
  std::filesystem::create_directories(logdir, ec);
  if (ec) {
    return errors::FailedPrecondition("cannot create the event file directory '", logdir,
                                      "': ", ec.message());
  }
  const std::string base = absl::StrCat(logdir, "/events.out.tfevents.", NowMicros() / 1000000, ".",
                                        HostName(), ".", getpid());
  // "x": never append to (or replace) another writer's file; a writer
  // opened in the same second takes the next free suffix.
  std::string path = base;
  std::FILE* file = nullptr;
  for (int n = 1; file == nullptr; ++n) {
    file = std::fopen(path.c_str(), "wbx");
    if (file == nullptr && (errno != EEXIST || n > kMaxSameSecondWriters)) {
      return errors::FailedPrecondition("cannot create the event file '", path,
                                        "': ", std::strerror(errno));
    }
    if (file == nullptr) path = absl::StrCat(base, ".", n);
  }
  std::unique_ptr<EventFileWriter> writer(new EventFileWriter(path, file));
  Event version;
  version.set_file_version(kEventFileVersion);
  DF_RETURN_IF_ERROR(writer->Write(std::move(version)));
  return writer;
}

EventFileWriter::~EventFileWriter() { std::fclose(file_); }

absl::Status EventFileWriter::Write(Event event) {
  if (event.wall_time() == 0) event.set_wall_time(static_cast<double>(NowMicros()) / 1e6);
  buffer_.clear();
  AppendRecord(event.SerializeAsString(), &buffer_);
  if (std::fwrite(buffer_.data(), 1, buffer_.size(), file_) != buffer_.size() ||
      std::fflush(file_) != 0) {
    return errors::Unavailable("cannot write the event file '", path_, "': ", std::strerror(errno));
  }
  return absl::OkStatus();
}

absl::Status EventFileWriter::WriteScalars(
    int64_t step, const std::vector<std::pair<std::string, double>>& scalars) {
  Event event;
  event.set_step(step);
  for (const auto& [tag, value] : scalars) {
    Summary::Value* v = event.mutable_summary()->add_value();
    v->set_tag(tag);
    v->set_simple_value(static_cast<float>(value));
  }
  return Write(std::move(event));
}

absl::StatusOr<std::vector<Event>> ReadEventFile(const std::string& path) {
  DF_ASSIGN_OR_RETURN(std::string contents, ReadFileToString(path));
  DF_ASSIGN_OR_RETURN(std::vector<std::string> records, ParseRecords(contents, path));
  std::vector<Event> events(records.size());
  for (size_t i = 0; i < records.size(); ++i) {
    if (!events[i].ParseFromString(records[i])) {
      return errors::DataLoss(path, ": record ", i, " is not an Event");
    }
  }
  return events;
}

absl::StatusOr<std::vector<std::string>> ListEventFiles(const std::string& logdir) {
  std::error_code ec;
  if (!std::filesystem::is_directory(logdir, ec)) {
    return errors::NotFound("'", logdir, "' is not a directory");
  }
  std::vector<std::string> files;
  for (const auto& entry : std::filesystem::directory_iterator(logdir, ec)) {
    const std::string name = entry.path().filename().string();
    if (name.find(".tfevents.") != std::string::npos) files.push_back(entry.path().string());
  }
  if (ec) return errors::Unavailable("cannot list '", logdir, "': ", ec.message());
  std::sort(files.begin(), files.end());
  return files;
}

}  // namespace distflow
