#include "fashion_mnist/cluster_trainer.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <list>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/cleanup/cleanup.h"
#include "absl/strings/str_cat.h"
#include "distflow/cc/client_session.h"
#include "distflow/cc/dataset.h"
#include "distflow/cc/ops/dataset_ops.h"
#include "distflow/cc/ops/standard_ops.h"
#include "distflow/coordinator/failure.h"
#include "distflow/core/logging.h"
#include "distflow/core/status.h"
#include "distflow/training/adam.h"
#include "distflow/training/variable.h"
#include "fashion_mnist/checkpoint_writer.h"
#include "fashion_mnist/chief_session.h"
#include "fashion_mnist/export.h"
#include "fashion_mnist/model.h"
#include "fashion_mnist/pipeline.h"
#include "fashion_mnist/training_state.h"

namespace distflow {
namespace fashion_mnist {
namespace {

// An epoch's closures (or an evaluation's) finish within this; every call
// inside is bounded by the call deadline and the attempt limit, so this only
// catches a cluster that makes no progress at all.
constexpr absl::Duration kJoinTimeout = absl::Hours(1);

// How often a chief call that failed with a ps task runs again after the ps
// recovery.
constexpr int kChiefCallAttempts = 5;

// While the epoch's last closures run, the trainer waits this long at most
// for the oldest one still pending before it takes what others returned.
constexpr absl::Duration kResultPoll = absl::Milliseconds(50);

// A background checkpoint write makes two calls (the shards' SaveV2 with the
// merge, then the release of the snapshots), each bounded by the call
// timeout, plus file work on the chief: the slack.
constexpr int kWriteCalls = 2;
constexpr absl::Duration kWriteSlack = absl::Seconds(30);

// The graph of a cluster training job: variables on the ps tasks, the
// per-worker dataset function, the training step function and the
// evaluation function.
struct ClusterJob {
  Scope root = Scope::NewRootScope();
  std::unique_ptr<Classifier> model;
  std::unique_ptr<AdamOptimizer> adam;
  std::unique_ptr<TrainingState> state;

  // Per-worker dataset: initialize the worker's iterator, return its handle.
  Operation make_iterator;
  Output iterator_string;
  // Training step(s): iterator handle in; summed loss, correct count and
  // examples out.
  Output iterator_arg, loss_sum, correct, examples;
  Operation train_op;
  // Evaluation of one test batch: batch index in, correct count out.
  Output eval_index, eval_correct;
  Operation eval_done;
  // The model's variables, read by the chief for an export.
  std::vector<Output> variable_values;
};

absl::Status BuildTrainStep(const ClusterTrainOptions& o, const Dataset& data, ClusterJob* job) {
  const Scope step = job->root.NewSubScope("train");
  job->iterator_arg = ops::Placeholder(step.WithOpName("iterator_handle"), DT_STRING);
  ops::IteratorFromStringHandleV2 iterator(step, job->iterator_arg, data.structure());
  std::vector<Operation> previous;
  OutputList losses, corrects, counts;
  for (int64_t k = 0; k < o.steps_per_execution; ++k) {
    // Step k+1 reads the variables after step k's update.
    const Scope s = step.NewSubScope(absl::StrCat("step_", k)).WithControlDependencies(previous);
    ops::IteratorGetNext next(s, iterator, data.structure());
    const DecodedBatch batch = Decode(s, next.components);
    DF_RETURN_IF_ERROR(s.status());
    const Output logits = job->model->Logits(s, batch.images);
    auto xent = ops::SparseSoftmaxCrossEntropyWithLogits(s, logits, batch.labels);
    const Output loss = ops::Mean(s, xent.loss, {0});
    DF_ASSIGN_OR_RETURN(std::vector<GradAndVar> grads,
                        job->adam->ComputeGradients(loss, job->model->variables()));
    DF_ASSIGN_OR_RETURN(Operation update,
                        job->adam->ApplyGradients(grads, &job->state->global_step(), previous));
    previous = {update};
    losses.push_back(loss);
    corrects.push_back(CorrectCount(s, logits, batch.labels));
    counts.push_back(ops::Cast(s, ops::Size(s, batch.labels), DT_FLOAT));
  }
  job->loss_sum = ops::AddN(step.WithOpName("loss_sum"), losses);
  job->correct = ops::AddN(step.WithOpName("correct"), corrects);
  job->examples = ops::AddN(step.WithOpName("examples"), counts);
  job->train_op = previous.front();
  return step.status();
}

absl::Status BuildEvaluation(const TrainOptions& o, const FashionMnistFiles& files,
                             ClusterJob* job) {
  const Scope ev = job->root.NewSubScope("eval");
  job->eval_index = ops::Placeholder(ev.WithOpName("batch_index"), DT_INT64);
  Dataset test = Records(ev, files.test);
  if (o.test_limit > 0) test = test.Take(o.test_limit);
  test = test.Skip(ops::Mul(ev, job->eval_index, int64_t{kEvalBatch}))
             .Take(kEvalBatch)
             .Batch(kEvalBatch);
  ops::AnonymousIteratorV2 iterator(ev, test.structure());
  ops::MakeIterator make(ev, test.handle(), iterator.handle);
  ops::IteratorGetNext next(ev.WithControlDependencies({make.operation}), iterator.handle,
                            test.structure());
  const DecodedBatch batch = Decode(ev, next.components);
  DF_RETURN_IF_ERROR(ev.status());
  job->eval_correct = CorrectCount(ev, job->model->Logits(ev, batch.images), batch.labels);
  job->eval_done = ops::DeleteIterator(ev.WithControlDependencies({next.operation}),
                                       iterator.handle, iterator.deleter);
  return ev.status();
}

absl::Status BuildClusterJob(const ParameterServerStrategy& strategy, const ClusterTrainOptions& co,
                             const FashionMnistFiles& files, ClusterJob* job) {
  const TrainOptions& o = co.train;
  const Scope& root = job->root;
  const Scope vars = strategy.VariableScope(root);
  DF_ASSIGN_OR_RETURN(job->model,
                      MakeClassifier(vars, o.model, o.seed,
                                     Sharding{strategy.min_shard_bytes(), strategy.MaxShards()}));
  job->state = std::make_unique<TrainingState>(vars);
  job->adam =
      std::make_unique<AdamOptimizer>(vars, ScheduledLearningRate(vars, o, files, *job->state));

  // Each worker's own pass order: fresh shuffle seeds per iterator.
  const Scope data = root.NewSubScope("train_data");
  Dataset train = Records(data, files.train);
  if (o.train_limit > 0) train = train.Take(o.train_limit);
  train = train.Shuffle(kShuffleBuffer).Repeat().Batch(o.batch_size).Prefetch(kPrefetch);
  DatasetIterator iterator = train.MakeIterator("train_iterator");
  DF_RETURN_IF_ERROR(data.status());
  job->make_iterator = iterator.initializer;
  job->iterator_string = ops::IteratorToStringHandle(data, iterator.handle);

  DF_RETURN_IF_ERROR(BuildTrainStep(co, train, job));
  DF_RETURN_IF_ERROR(BuildEvaluation(o, files, job));
  for (const Variable& v : job->model->variables()) {
    job->variable_values.push_back(v.Read(root.NewSubScope("export")));
  }

  return job->state->Finish(root, job->model->variables(), *job->adam);
}

double Seconds(std::chrono::steady_clock::duration d) {
  return std::chrono::duration<double>(d).count();
}

int64_t CeilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

// The functions the coordinator runs, registered once.
struct Functions {
  ClusterCoordinator::FunctionId dataset, step, eval;
};

absl::StatusOr<Functions> RegisterFunctions(const ClusterJob& job, ClusterCoordinator* coord) {
  // The whole graph joins every worker's session with the first function;
  // the others name nodes in it.
  GraphDef graph;
  DF_RETURN_IF_ERROR(job.root.ToGraphDef(&graph));
  Functions f;
  DF_ASSIGN_OR_RETURN(
      f.dataset,
      coord->RegisterFunction(WorkerFunction{
          std::move(graph), {}, {job.iterator_string.name()}, {job.make_iterator.node()->name()}}));
  DF_ASSIGN_OR_RETURN(f.step, coord->RegisterFunction(WorkerFunction{
                                  GraphDef(),
                                  {job.iterator_arg.name()},
                                  {job.loss_sum.name(), job.correct.name(), job.examples.name()},
                                  {job.train_op.node()->name()}}));
  DF_ASSIGN_OR_RETURN(f.eval,
                      coord->RegisterFunction(WorkerFunction{GraphDef(),
                                                             {job.eval_index.name()},
                                                             {job.eval_correct.name()},
                                                             {job.eval_done.node()->name()}}));
  return f;
}

// Test images (as limited) and the fraction the model classifies right,
// one closure per batch.
absl::StatusOr<double> Evaluate(ClusterCoordinator* coord, ClusterCoordinator::FunctionId eval,
                                int64_t test_examples) {
  std::vector<RemoteValue> values;
  for (int64_t b = 0; b < CeilDiv(test_examples, kEvalBatch); ++b) {
    Tensor index(DT_INT64, TensorShape());
    index.scalar<int64_t>() = b;
    DF_ASSIGN_OR_RETURN(RemoteValue v, coord->Schedule(eval, {index}));
    values.push_back(std::move(v));
  }
  DF_RETURN_IF_ERROR(coord->Join(kJoinTimeout));
  DF_ASSIGN_OR_RETURN(std::vector<std::vector<Tensor>> results, FetchAll(values, absl::Seconds(1)));
  double correct = 0;
  for (const std::vector<Tensor>& out : results) correct += out[0].scalar<float>();
  return test_examples > 0 ? correct / test_examples : 0;
}

absl::Status CheckClusterOptions(const ClusterTrainOptions& o) {
  DF_RETURN_IF_ERROR(CheckTrainOptions(o.train));
  DF_RETURN_IF_ERROR(CheckExportDir(o.train.export_saved_model));
  if (o.steps_per_execution < 1 || o.steps_per_execution > kMaxStepsPerExecution) {
    return errors::InvalidArgument("steps per execution must be in [1, ", kMaxStepsPerExecution,
                                   "], got ", o.steps_per_execution);
  }
  if (o.max_inflight_closures < 1 || o.max_inflight_closures > kMaxInflightClosures) {
    return errors::InvalidArgument("closures in flight per worker must be in [1, ",
                                   kMaxInflightClosures, "], got ", o.max_inflight_closures);
  }
  if (o.call_timeout <= absl::ZeroDuration() || o.worker_wait <= absl::ZeroDuration() ||
      o.startup_deadline <= absl::ZeroDuration()) {
    return errors::InvalidArgument(
        "the call timeout, the worker wait and the startup deadline must be positive");
  }
  if (o.checkpoint_every_steps < 0 || o.checkpoint_every < absl::ZeroDuration() ||
      o.ps_recovery_timeout < absl::ZeroDuration()) {
    return errors::InvalidArgument(
        "the checkpoint intervals and the ps recovery timeout must be >= 0");
  }
  if ((o.checkpoint_every_steps > 0 || o.checkpoint_every > absl::ZeroDuration()) &&
      o.train.checkpoint_dir.empty()) {
    return errors::InvalidArgument(
        "checkpoints every N steps or seconds need a checkpoint directory");
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<ClusterTrainResult> TrainOnCluster(
    const ParameterServerStrategy& strategy, const ClusterTrainOptions& co,
    const std::function<void(const ClusterTrainProgress&)>& on_progress) {
  DF_RETURN_IF_ERROR(CheckClusterOptions(co));
  const TrainOptions& o = co.train;
  DF_ASSIGN_OR_RETURN(FashionMnistFiles files, OpenFashionMnist(o.data_dir));
  ClusterJob job;
  DF_RETURN_IF_ERROR(BuildClusterJob(strategy, co, files, &job));

  // The chief's session, on ps task 0's master with only the ps job: it
  // initializes, restores, saves and reads the step, none of which needs a
  // worker, so it keeps working while workers come and go.
  SessionOptions chief_options;
  JobDef ps_job;
  for (const JobDef& j : strategy.cluster().job()) {
    if (j.name() == "ps") ps_job = j;
  }
  chief_options.target = absl::StrCat("grpc://", ps_job.tasks().at(0));
  *chief_options.config.mutable_cluster_def()->add_job() = ps_job;
  chief_options.config.set_operation_timeout_in_ms(absl::ToInt64Milliseconds(co.call_timeout));
  ChiefSession chief(job.root, chief_options, job.state.get(), job.variable_values,
                     o.checkpoint_dir);
  DF_RETURN_IF_ERROR(chief.status());

  // Declared before the coordinator, whose ps recovery calls it, and after
  // the chief's session, which it uses.
  CheckpointWriter writer(&chief, job.state.get(), o.checkpoint_dir,
                          kWriteCalls * co.call_timeout + kWriteSlack);
  chief.set_before_restore([&writer] { writer.Finish(); });

  ClusterTrainResult result;
  TrainResult& r = result.train;
  r.model = o.model;
  TrainingState::Start from;
  DF_RETURN_IF_ERROR(chief.Call([&](const ClientSession& session) -> absl::Status {
    DF_ASSIGN_OR_RETURN(from, job.state->RestoreOrInitialize(session, o.checkpoint_dir));
    return absl::OkStatus();
  }));
  r.restored_from = from.restored_from;
  r.start_epoch = from.epoch;
  if (!from.restored_from.empty() && o.on_resumed) o.on_resumed(from.restored_from, from.epoch);
  int64_t step = from.step;

  const bool ps_recovery = co.ps_recovery_timeout > absl::ZeroDuration();
  CoordinatorOptions coord_options = strategy.MakeCoordinatorOptions();
  coord_options.call_timeout = co.call_timeout;
  coord_options.max_inflight_closures = co.max_inflight_closures;
  coord_options.worker_wait = co.worker_wait;
  coord_options.startup_deadline = co.startup_deadline;
  if (ps_recovery) {
    coord_options.ps_recovery_timeout = co.ps_recovery_timeout;
    coord_options.probe_ps = [&chief](int task, int64_t generation) {
      return chief.Probe(task, generation);
    };
  }
  DF_ASSIGN_OR_RETURN(std::unique_ptr<ClusterCoordinator> coord,
                      ClusterCoordinator::Create(std::move(coord_options)));
  if (co.on_coordinator) co.on_coordinator(coord.get());
  absl::Cleanup forget_coordinator = [&co] {
    if (co.on_coordinator) co.on_coordinator(nullptr);
  };
  // The chief's own calls: one that fails because a ps task is gone waits
  // for the ps recovery, as a closure would, and runs again (a few times: the
  // ps may die again meanwhile; each wait is bounded by the recovery timeout).
  auto chief_call = [&](const std::function<absl::Status(const ClientSession&)>& fn) {
    for (int attempt = 1;; ++attempt) {
      const int64_t generation = coord->ps_generation();
      absl::Status s = chief.Call(fn);
      const int lost_state = LostPsStateTask(s, "ps");
      if (s.ok() || !ps_recovery || (!IsRetryableFailure(s) && lost_state < 0) ||
          attempt >= kChiefCallAttempts) {
        return s;
      }
      const int task = lost_state >= 0 ? lost_state : ClassifyFailure(s, "ps").ps_task;
      DF_RETURN_IF_ERROR(coord->RecoverPs(std::max(task, 0), generation, s).status());
    }
  };
  DF_ASSIGN_OR_RETURN(Functions fns, RegisterFunctions(job, coord.get()));
  DF_ASSIGN_OR_RETURN(PerWorkerValues iterators, coord->CreatePerWorkerDataset(fns.dataset));

  const int64_t train_examples = TrainExamples(o, files);
  const int64_t test_examples =
      o.test_limit > 0 ? std::min(o.test_limit, files.test.count) : files.test.count;
  const int64_t closures_per_epoch =
      CeilDiv(CeilDiv(train_examples, o.batch_size), co.steps_per_execution);
  auto report = [&](const TrainProgress& p, double test_accuracy) {
    ClusterTrainProgress progress;
    progress.train = p;
    progress.counters = coord->counters();
    progress.workers = coord->num_workers();
    progress.test_accuracy = test_accuracy;
    on_progress(progress);
  };

  // Checkpoints within epochs are written off the training path
  // (checkpoint_writer.h): the pause is how long the chief holds back
  // scheduling for a snapshot of the variables (the workers train on from
  // the queue meanwhile). A write still running at the next interval is
  // waited for, inside the pause, rather than skipped: a skipped interval
  // would silently double the work a ps restore can lose, while a pause that
  // grows shows that the interval is shorter than a write.
  int64_t last_save_step = step;
  auto last_save_time = std::chrono::steady_clock::now();
  double pause_sum = 0;
  int64_t snapshots = 0;
  auto report_checkpoints = [&] {
    for (const auto& [prefix, at_step] : writer.TakeCommitted()) {
      ++result.checkpoints;
      if (o.on_checkpoint) o.on_checkpoint(prefix, at_step);
    }
  };
  auto save = [&](int64_t at_step) -> absl::Status {
    writer.Finish();
    report_checkpoints();
    std::string prefix;
    DF_RETURN_IF_ERROR(chief_call([&](const ClientSession& session) -> absl::Status {
      DF_ASSIGN_OR_RETURN(prefix, job.state->Save(session, o.checkpoint_dir, at_step));
      return absl::OkStatus();
    }));
    last_save_step = at_step;
    last_save_time = std::chrono::steady_clock::now();
    if (o.on_checkpoint) o.on_checkpoint(prefix, at_step);
    return absl::OkStatus();
  };
  auto periodic_save = [&]() -> absl::Status {
    if (o.checkpoint_dir.empty()) return absl::OkStatus();
    report_checkpoints();
    const bool by_steps =
        co.checkpoint_every_steps > 0 && step - last_save_step >= co.checkpoint_every_steps;
    const bool by_time = co.checkpoint_every > absl::ZeroDuration() &&
                         std::chrono::steady_clock::now() - last_save_time >=
                             absl::ToChronoNanoseconds(co.checkpoint_every);
    if (!by_steps && !by_time) return absl::OkStatus();
    const auto begin = std::chrono::steady_clock::now();
    writer.Finish();
    report_checkpoints();
    const int64_t generation = coord->ps_generation();
    DF_RETURN_IF_ERROR(chief_call(
        [&](const ClientSession& session) { return job.state->saver()->Snapshot(session); }));
    const double pause = Seconds(std::chrono::steady_clock::now() - begin);
    ++snapshots;
    pause_sum += pause;
    result.checkpoint_pause_max = std::max(result.checkpoint_pause_max, pause);
    last_save_step = step;
    last_save_time = std::chrono::steady_clock::now();
    // A ps failure during the snapshot may have restored the variables to
    // an older checkpoint than `step` says: that snapshot is not written.
    if (coord->ps_generation() != generation) {
      internal::LogLine(
          'W', absl::StrCat("the snapshot at step ", step, " met a ps failure and is not written"));
      return absl::OkStatus();
    }
    writer.Write(step);
    return absl::OkStatus();
  };

  int64_t examples = 0;
  // Values of closures that began before this ps generation ran before the
  // latest restore.
  int64_t restore_generation = 0;
  const auto start = std::chrono::steady_clock::now();
  for (int64_t epoch = r.start_epoch; epoch < o.epochs; ++epoch) {
    double epoch_loss = 0, window_loss = 0, window_correct = 0;
    int64_t epoch_steps = 0, window_steps = 0, window_examples = 0, last_report = step;
    // Closures of this epoch whose results were taken (fewer again after a
    // restore undid some of them).
    int64_t epoch_closures = 0;
    const int64_t epoch_start_step = step;
    auto window_start = std::chrono::steady_clock::now();
    auto flush = [&] {
      if (window_steps == 0) return;
      report(
          TrainProgress{epoch + 1, step,
                        window_examples / Seconds(std::chrono::steady_clock::now() - window_start),
                        window_loss / window_steps, window_correct / window_examples},
          -1);
      window_loss = window_correct = 0;
      window_steps = window_examples = 0;
      window_start = std::chrono::steady_clock::now();
      last_report = step;
    };
    // A ps restore took the global step back to its checkpoint's: the steps
    // since are lost, and this epoch does them again. Results of closures
    // that ran before it and arrive later are dropped (their updates are in
    // the checkpoint or lost) and counted as lost.
    auto take_restore = [&] {
      std::optional<ChiefSession::Restore> restored = chief.TakeRestore();
      if (!restored.has_value()) return;
      const int64_t lost = std::max<int64_t>(0, step - restored->step);
      result.steps_lost += lost;
      internal::LogLine(
          'W',
          absl::StrCat("the ps tasks were restored from ",
                       restored->from.empty() ? "nothing (initialized)" : restored->from,
                       ": training resumes at step ", restored->step, " (", lost, " steps lost)"));
      restore_generation = restored->generation;
      epoch_closures =
          std::max<int64_t>(0, (restored->step - epoch_start_step) / co.steps_per_execution);
      step = restored->step;
      last_save_step = std::min(last_save_step, step);
      last_report = std::min(last_report, step);
    };
    // Results are taken as they arrive, in any order: a closure that waits
    // to be re-run after a worker failure holds back nothing else.
    std::list<RemoteValue> pending;
    auto take_results = [&](bool wait) -> absl::Status {
      take_restore();
      for (auto it = pending.begin(); it != pending.end();) {
        if (!wait && it->state() == RemoteValue::State::kPending) {
          ++it;
          continue;
        }
        DF_ASSIGN_OR_RETURN(std::vector<Tensor> t, it->Fetch(absl::Seconds(1)));
        const bool before_restore = it->ps_generation() < restore_generation;
        it = pending.erase(it);
        if (before_restore) {
          result.steps_lost += co.steps_per_execution;
          continue;
        }
        const double loss = t[0].scalar<float>() / co.steps_per_execution;
        if (!std::isfinite(loss)) {
          return errors::InvalidArgument("the loss became ", loss, " near step ", step,
                                         " (training diverged; try a lower learning rate)");
        }
        const int64_t n = static_cast<int64_t>(t[2].scalar<float>());
        step += co.steps_per_execution;
        ++epoch_closures;
        epoch_loss += loss;
        ++epoch_steps;
        window_loss += loss;
        window_correct += t[1].scalar<float>();
        ++window_steps;
        window_examples += n;
        examples += n;
        // Right after the step that crosses the interval, so that a restore
        // loses at most one interval. Not on the epoch's last result: the
        // end-of-epoch save comes next and writes that step, epoch count
        // included; a snapshot there too would be written over in place, its
        // index and data out of step for as long as the rewrite took.
        if (epoch_closures < closures_per_epoch) DF_RETURN_IF_ERROR(periodic_save());
      }
      // At most one report per call: results arrive in bursts (after Join,
      // or after Schedule waited on a full queue), and a report's rate
      // covers the wall time since the previous one.
      if (step - last_report >= o.progress_every) flush();
      return absl::OkStatus();
    };
    // The epoch's last closures (up to the coordinator's queue, 256 by
    // default): their results are taken as they arrive, as while scheduling,
    // so that checkpoints keep their interval to the end of the epoch. A Join
    // would hold back every result, and so every checkpoint, until the last
    // closure ended: a ps restore then lost the whole queue on top of the
    // interval.
    auto take_remaining_results = [&]() -> absl::Status {
      const auto deadline =
          std::chrono::steady_clock::now() + absl::ToChronoNanoseconds(kJoinTimeout);
      for (;;) {
        DF_ASSIGN_OR_RETURN(const bool done, coord->Done());
        DF_RETURN_IF_ERROR(take_results(done));
        if (done) return absl::OkStatus();
        if (std::chrono::steady_clock::now() >= deadline) {
          return errors::DeadlineExceeded("the epoch's closures did not finish within ",
                                          absl::FormatDuration(kJoinTimeout));
        }
        auto waiting = std::find_if(pending.begin(), pending.end(), [](const RemoteValue& v) {
          return v.state() == RemoteValue::State::kPending;
        });
        if (waiting == pending.end()) {
          // Nothing of ours is pending, yet the coordinator is not done.
          DF_RETURN_IF_ERROR(coord->Join(kJoinTimeout));
        } else {
          waiting->WaitReady(kResultPoll);
        }
      }
    };
    for (;;) {
      while (epoch_closures + static_cast<int64_t>(pending.size()) < closures_per_epoch) {
        DF_ASSIGN_OR_RETURN(RemoteValue v, coord->Schedule(fns.step, {iterators}));
        pending.push_back(std::move(v));
        DF_RETURN_IF_ERROR(take_results(false));
      }
      DF_RETURN_IF_ERROR(take_remaining_results());
      if (epoch_closures < closures_per_epoch) continue;
      flush();
      DF_ASSIGN_OR_RETURN(r.test_accuracy, Evaluate(coord.get(), fns.eval, test_examples));
      // A restore during the evaluation undid steps of this epoch.
      take_restore();
      if (epoch_closures < closures_per_epoch) continue;
      // The end of the epoch: count it, read the step, save. A restore
      // during these calls took the variables back into this epoch (its
      // counter included): the count goes back and the undone steps are done
      // again, as after a restore during the epoch.
      auto set_epochs_done = [&](int64_t epochs) {
        return chief_call([&](const ClientSession& session) {
          return job.state->SetEpochsDone(session, epochs);
        });
      };
      int64_t end_step = 0;
      DF_RETURN_IF_ERROR(set_epochs_done(epoch + 1));
      DF_RETURN_IF_ERROR(chief_call([&](const ClientSession& session) -> absl::Status {
        DF_ASSIGN_OR_RETURN(end_step, job.state->ReadStep(session));
        return absl::OkStatus();
      }));
      take_restore();
      if (epoch_closures >= closures_per_epoch && !o.checkpoint_dir.empty()) {
        DF_RETURN_IF_ERROR(save(end_step));
        take_restore();
      }
      if (epoch_closures >= closures_per_epoch) {
        step = end_step;
        break;
      }
      DF_RETURN_IF_ERROR(set_epochs_done(epoch));
    }
    r.train_loss = epoch_steps > 0 ? epoch_loss / epoch_steps : 0;
    report(TrainProgress{epoch + 1, step, 0, r.train_loss, 0}, r.test_accuracy);
  }
  r.seconds = Seconds(std::chrono::steady_clock::now() - start);
  r.examples_per_second = r.seconds > 0 ? examples / r.seconds : 0;
  r.steps = step;
  r.epochs = std::max(o.epochs, r.start_epoch);
  r.test_examples = test_examples;
  if (r.start_epoch >= o.epochs) {
    DF_ASSIGN_OR_RETURN(r.test_accuracy, Evaluate(coord.get(), fns.eval, test_examples));
  }
  if (!o.export_saved_model.empty()) {
    std::vector<Tensor> values;
    DF_RETURN_IF_ERROR(chief_call(
        [&](const ClientSession& session) { return session.Run(job.variable_values, &values); }));
    DF_RETURN_IF_ERROR(ExportClassifier(o.model, values, o.export_saved_model));
    r.exported_to = o.export_saved_model;
  }
  writer.Finish();
  report_checkpoints();
  result.counters = coord->counters();
  result.checkpoint_pause_mean = snapshots > 0 ? pause_sum / snapshots : 0;
  return result;
}

}  // namespace fashion_mnist
}  // namespace distflow
