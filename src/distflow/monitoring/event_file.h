// TensorBoard event files. EventFileWriter appends Events (event.proto, in
// TFRecord framing, record_io.h) to a new file
// LOGDIR/events.out.tfevents.<unix seconds>.<host>.<pid>, whose first record
// is the file_version event TensorBoard looks for, and flushes every write so
// that a TensorBoard watching the directory sees each point as it comes.
// ReadEventFile and ListEventFiles read them back (tests, tools).
//
// An EventFileWriter is used by one thread at a time; the free functions are
// thread-safe.
#ifndef DISTFLOW_MONITORING_EVENT_FILE_H_
#define DISTFLOW_MONITORING_EVENT_FILE_H_

#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "distflow/event.pb.h"

namespace distflow {

// The file_version of the first record, as TensorFlow writes it.
inline constexpr char kEventFileVersion[] = "brain.Event:2";

class EventFileWriter {
 public:
  // Creates `logdir` (with its parents) when missing and opens a new event
  // file in it. InvalidArgument for an empty logdir; the file system's error,
  // naming the path, when the directory or file cannot be made.
  static absl::StatusOr<std::unique_ptr<EventFileWriter>> Open(const std::string& logdir);
  ~EventFileWriter();
  EventFileWriter(const EventFileWriter&) = delete;
  EventFileWriter& operator=(const EventFileWriter&) = delete;

  // Appends `event` (its wall_time set to now when zero) and flushes.
  // The write's error, naming the file.
  absl::Status Write(Event event);
  // One event at `step` holding each (tag, value) as a scalar (simple_value).
  absl::Status WriteScalars(int64_t step,
                            const std::vector<std::pair<std::string, double>>& scalars);

  const std::string& path() const { return path_; }

 private:
  EventFileWriter(std::string path, std::FILE* file) : path_(std::move(path)), file_(file) {}

  const std::string path_;
  std::FILE* const file_;
  std::string buffer_;
};

// The events of the file at `path`, in order. NotFound when it is missing;
// DataLoss naming the file and byte offset for a corrupt or cut record, or a
// record that is not an Event.
absl::StatusOr<std::vector<Event>> ReadEventFile(const std::string& path);

// The event files of `logdir` (names holding ".tfevents."), sorted by name.
// NotFound when `logdir` is not a directory.
absl::StatusOr<std::vector<std::string>> ListEventFiles(const std::string& logdir);

}  // namespace distflow

#endif  // DISTFLOW_MONITORING_EVENT_FILE_H_
