#include "demo/trainer.h"

#include <chrono>
#include <cmath>
#include <random>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "distflow/cc/client_session.h"
#include "distflow/cc/op_builder.h"
#include "distflow/cc/ops/data_flow_ops.h"
#include "distflow/cc/ops/standard_ops.h"
#include "distflow/core/status.h"
#include "distflow/gradients/gradients.h"
#include "distflow/training/device_setter.h"
#include "distflow/training/gradient_descent.h"
#include "distflow/training/saver.h"
#include "distflow/training/variable.h"

namespace distflow {
namespace {

using ops::internal::BuildOp;
using Clock = std::chrono::steady_clock;

std::string WorkerDevice(int i) { return absl::StrCat("/job:worker/task:", i); }

// The graph one client builds. Every client builds the same variables (same
// shared names on the same ps tasks), so they all train one model.
struct Model {
  Scope root = Scope::NewRootScope();
  Variable weight, bias, global_step;
  Output w_read, b_read, gs_read;
  Output x, y, loss;
  Output initialized;    // all three variables initialized
  Operation init_fresh;  // w = 0, b = 0, global_step = 0
  // async
  Operation train;  // apply both gradients, global_step += 1
  Output gs_after_train;
  // sync
  Output local_step;
  Operation push_gradients;  // into the accumulators
  Output token;              // next step, from the token queue
  Operation sync_round;      // chief: average, apply, step, release
  Output gs_after_round;
  Operation set_acc_steps;  // chief: accumulators' step = global_step
  Operation close_tokens;
  std::unique_ptr<Saver> saver;
};

absl::Status BuildModel(const TrainerOptions& o, int worker, Model* m) {
  const Scope& root = m->root;
  // Between-graph replication: the replica device setter puts the variables
  // round-robin on the ps tasks (weight on ps 0, bias on ps 1 % M, the global
  // step on ps 2 % M) and everything else on this worker. Reads, updates and
  // anything colocated with a variable run on its ps.
  const Scope scope = ReplicaDeviceSetter(root, o.ps, WorkerDevice(worker));
  m->weight = Variable(scope.WithOpName("weight"), 0.0f);
  m->bias = Variable(scope.WithOpName("bias"), 0.0f);
  m->global_step = CreateGlobalStep(scope);
  DF_RETURN_IF_ERROR(root.status());
  const Scope at_w = scope.ColocateWith(m->weight.handle());
  const Scope at_b = scope.ColocateWith(m->bias.handle());
  const Scope at_gs = scope.ColocateWith(m->global_step.handle());

  m->w_read = m->weight.Read(scope);
  m->b_read = m->bias.Read(scope);
  m->gs_read = m->global_step.Read(scope);
  m->init_fresh = ops::NoOp(scope.WithControlDependencies(
      {m->weight.initializer(), m->bias.initializer(), m->global_step.initializer()}));
  auto is_init = [](const Scope& s, const Variable& v) {
    return Output(BuildOp(s, "VarIsInitializedOp", {Input(v.handle())}), 0);
  };
  m->saver = std::make_unique<Saver>(
      root, std::vector<Saver::Variable>{
                {"weight", m->weight.handle(), DT_FLOAT, TensorShape({})},
                {"bias", m->bias.handle(), DT_FLOAT, TensorShape({})},
                {"global_step", m->global_step.handle(), DT_INT64, TensorShape({})}});
  m->initialized = ops::LogicalAnd(
      scope, ops::LogicalAnd(scope, is_init(at_w, m->weight), is_init(at_b, m->bias)),
      is_init(at_gs, m->global_step));

  // The model and its loss, on the worker.
  m->x = ops::Placeholder(scope.WithOpName("x"), DT_FLOAT);
  m->y = ops::Placeholder(scope.WithOpName("y"), DT_FLOAT);
  auto pred = ops::AddV2(scope, ops::Mul(scope, m->x, m->w_read), m->b_read);
  m->loss =
      ops::Mean(scope.WithOpName("loss"), ops::Square(scope, ops::Sub(scope, pred, m->y)), {0});
  GradientDescentOptimizer optimizer(scope, o.learning_rate);
  const std::vector<Variable> vars = {m->weight, m->bias};

  if (o.mode == "async") {
    // Each worker applies its own gradients as soon as it has them.
    DF_ASSIGN_OR_RETURN(m->train, optimizer.Minimize(m->loss, vars, &m->global_step));
    m->gs_after_train = m->global_step.Read(scope.WithControlDependencies({m->train}));
    return root.status();
  }

  // Sync replicas (--mode sync): every worker pushes its gradients
  // into accumulators on the ps, tagged with the step it computed them at;
  // the chief takes the average of `workers` fresh ones, applies it once,
  // advances the global step and releases one token per worker.
  DF_ASSIGN_OR_RETURN(std::vector<GradAndVar> grads, optimizer.ComputeGradients(m->loss, vars));
  ops::ConditionalAccumulator acc_w(at_w, DT_FLOAT, PartialTensorShape({}), "weight_accumulator");
  ops::ConditionalAccumulator acc_b(at_b, DT_FLOAT, PartialTensorShape({}), "bias_accumulator");
  ops::FIFOQueue tokens(at_gs, {DT_INT64}, ops::FIFOQueue::Attrs().SharedName("sync_tokens"));
  m->local_step = ops::Placeholder(scope.WithOpName("local_step"), DT_INT64);
  auto push_w = ops::AccumulatorApplyGradient(at_w, acc_w, m->local_step, grads[0].gradient);
  auto push_b = ops::AccumulatorApplyGradient(at_b, acc_b, m->local_step, grads[1].gradient);
  m->push_gradients =
      ops::NoOp(scope.WithControlDependencies({push_w.operation, push_b.operation}));
  m->token = ops::QueueDequeue(at_gs, tokens, {DT_INT64}).components[0];
  const int n = o.workers;
  ops::AccumulatorTakeGradient avg_w(at_w, acc_w, n, DT_FLOAT);
  ops::AccumulatorTakeGradient avg_b(at_b, acc_b, n, DT_FLOAT);
  DF_ASSIGN_OR_RETURN(Operation update,
                      optimizer.ApplyGradients(
                          {{avg_w.average, m->weight}, {avg_b.average, m->bias}}, &m->global_step));
  m->gs_after_round = m->global_step.Read(scope.WithControlDependencies({update}));
  ops::AccumulatorSetGlobalStep set_w(at_w, acc_w, m->gs_after_round);
  ops::AccumulatorSetGlobalStep set_b(at_b, acc_b, m->gs_after_round);
  auto release = ops::QueueEnqueueMany(
      at_gs.WithControlDependencies({set_w.operation, set_b.operation}), tokens,
      {ops::Fill(at_gs, ops::Const(at_gs, {n}), m->gs_after_round).output});
  m->sync_round = release.operation;
  ops::AccumulatorSetGlobalStep start_w(at_w, acc_w, m->gs_read);
  ops::AccumulatorSetGlobalStep start_b(at_b, acc_b, m->gs_read);
  m->set_acc_steps =
      ops::NoOp(scope.WithControlDependencies({start_w.operation, start_b.operation}));
  m->close_tokens = ops::QueueClose(at_gs, tokens, /*cancel_pending_enqueues=*/true).operation;
  return root.status();
}

// One worker's batches of y = 2x + 10 + noise.
class DataSource {
 public:
  DataSource(const TrainerOptions& o, int worker)
      : rng_(static_cast<uint64_t>(o.seed) * 7919 + worker),
        batch_(o.batch_size),
        noise_(o.noise) {}
  void Next(Tensor* x, Tensor* y) {
    *x = Tensor(DT_FLOAT, TensorShape({batch_}));
    *y = Tensor(DT_FLOAT, TensorShape({batch_}));
    std::uniform_real_distribution<float> u(-1.0f, 1.0f);
    std::normal_distribution<float> n(0.0f, 1.0f);
    for (int i = 0; i < batch_; ++i) {
      const float xv = u(rng_);
      x->flat<float>()[i] = xv;
      y->flat<float>()[i] = 2.0f * xv + 10.0f + noise_ * n(rng_);
    }
  }

 private:
  std::mt19937_64 rng_;
  int batch_;
  float noise_;
};

// Shared state of one training run.
struct Run {
  const TrainerOptions* options;
  const std::atomic<bool>* stop;
  std::function<void(const TrainerProgress&)> on_progress;
  absl::Mutex mu;
  absl::Status error ABSL_GUARDED_BY(mu);
  std::atomic<bool> failed{false};

  bool Stopping() const { return failed.load() || (stop != nullptr && stop->load()); }
  void Fail(const absl::Status& s) {
    absl::MutexLock lock(&mu);
    if (error.ok()) error = s;
    failed = true;
  }
};

int64_t Scalar64(const Tensor& t) { return t.scalar<int64_t>(); }

// InvalidArgument when the loss, weight or bias is NaN or infinite (unless
// the options allow it): diverged training must not end "successfully".
absl::Status CheckFinite(const TrainerOptions& o, absl::string_view where, double loss,
                         double weight, double bias) {
  if (o.allow_nonfinite || (std::isfinite(loss) && std::isfinite(weight) && std::isfinite(bias))) {
    return absl::OkStatus();
  }
  return errors::InvalidArgument(where, ": non-finite value (loss ", loss, ", weight ", weight,
                                 ", bias ", bias,
                                 "); training diverged or the checkpoint is damaged "
                                 "(pass --allow-nonfinite to continue anyway)");
}

}  // namespace

absl::StatusOr<TrainerResult> TrainLinearRegression(
    const TrainerOptions& o, const ClusterDef& cluster,
    const std::function<void(const TrainerProgress&)>& on_progress, const std::atomic<bool>* stop) {
  if (o.mode != "async" && o.mode != "sync") {
    return errors::InvalidArgument("--mode must be async or sync, got '", o.mode, "'");
  }
  if (o.workers < 1 || o.ps < 1 || o.steps < 1 || o.batch_size < 1) {
    return errors::InvalidArgument("workers, ps, steps and batch size must be at least 1");
  }
  const auto start_time = Clock::now();
  ConfigProto config;
  *config.mutable_cluster_def() = cluster;
  config.set_operation_timeout_in_ms(o.step_timeout_ms);

  // One client per worker, each talking to the master in its own task.
  std::vector<std::unique_ptr<Model>> models(o.workers);
  std::vector<std::unique_ptr<ClientSession>> sessions(o.workers);
  for (int i = 0; i < o.workers; ++i) {
    models[i] = std::make_unique<Model>();
    DF_RETURN_IF_ERROR(BuildModel(o, i, models[i].get()));
    SessionOptions opts;
    for (const JobDef& job : cluster.job()) {
      if (job.name() == "worker" && job.tasks().contains(i)) {
        opts.target = absl::StrCat("grpc://", job.tasks().at(i));
      }
    }
    opts.config = config;
    sessions[i] = std::make_unique<ClientSession>(models[i]->root, opts);
    DF_RETURN_IF_ERROR(sessions[i]->status());
  }

  // The chief initialises the variables: from the latest checkpoint when
  // there is one, else fresh.
  TrainerResult result;
  result.mode = o.mode;
  Model& chief = *models[0];
  const ClientSession& chief_session = *sessions[0];
  std::vector<Tensor> out;
  if (!o.checkpoint_dir.empty()) {
    absl::StatusOr<std::string> latest = Saver::LatestCheckpoint(o.checkpoint_dir);
    if (latest.ok()) {
      DF_RETURN_IF_ERROR(chief.saver->Restore(chief_session, *latest));
      result.restored_from = *latest;
      DF_RETURN_IF_ERROR(chief_session.Run({chief.w_read, chief.b_read}, &out));
      DF_RETURN_IF_ERROR(CheckFinite(o, absl::StrCat("checkpoint ", *latest), 0,
                                     out[0].scalar<float>(), out[1].scalar<float>()));
    } else if (!absl::IsNotFound(latest.status())) {
      // A damaged checkpoint state must not silently restart from step 0.
      return latest.status();
    }
  }
  if (result.restored_from.empty()) {
    DF_RETURN_IF_ERROR(chief_session.Run({}, {}, {chief.init_fresh}, &out));
  }
  DF_RETURN_IF_ERROR(chief_session.Run({chief.gs_read}, &out));
  result.start_step = Scalar64(out[0]);
  // A restored global step outside [0, 2^62] would never reach --steps (or
  // overflow on the next increment).
  constexpr int64_t kMaxGlobalStep = int64_t{1} << 62;
  if (result.start_step < 0 || result.start_step > kMaxGlobalStep) {
    return errors::OutOfRange("checkpoint ", result.restored_from, " has global_step ",
                              result.start_step, ", outside [0, 2^62]");
  }
  if (o.mode == "sync") DF_RETURN_IF_ERROR(chief_session.Run({}, {}, {chief.set_acc_steps}, &out));

  Run run;
  run.options = &o;
  run.stop = stop;
  run.on_progress = on_progress;
  std::atomic<int64_t> last_saved{result.start_step};
  std::atomic<int64_t> rounds{0};
  // Async mode: the training steps the workers have started, so that
  // together they start exactly the ones from the restored global step up to
  // --steps (a worker that only checked the global step after its own update
  // could start one more while another finished the last).
  std::atomic<int64_t> steps_started{result.start_step};
  TrainerProgress latest{result.start_step, 0, 0, 0};
  absl::Mutex latest_mu;

  auto maybe_save = [&](int64_t step, bool force) {
    if (o.checkpoint_dir.empty()) return;
    const int64_t prev = last_saved.load();
    if (!force && step / o.checkpoint_every <= prev / o.checkpoint_every) return;
    if (force && step == prev) return;
    absl::StatusOr<std::string> saved = chief.saver->Save(chief_session, o.checkpoint_dir, step);
    if (!saved.ok()) {
      run.Fail(saved.status());
      return;
    }
    last_saved = step;
  };

  auto worker_loop = [&](int i) {
    Model& m = *models[i];
    auto fail = [&run, i](const absl::Status& s) {
      run.Fail(errors::Annotate(
          s, absl::StrCat("worker ", i, " (/job:worker/replica:0/task:", i, "): ")));
    };
    const ClientSession& session = *sessions[i];
    DataSource data(o, i);
    std::vector<Tensor> out;
    // Non-chief workers wait for the chief's initialisation.
    for (int tries = 0; i != 0; ++tries) {
      absl::Status s = session.Run({m.initialized}, &out);
      if (!s.ok()) return fail(s);
      if (out[0].scalar<bool>()) break;
      if (tries > 600) return fail(errors::DeadlineExceeded("variables were not initialized"));
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    int64_t local_step = 0;
    if (o.mode == "sync") {
      absl::Status s = session.Run({m.gs_read}, &out);
      if (!s.ok()) return fail(s);
      local_step = Scalar64(out[0]);
    }
    while (!run.Stopping()) {
      Tensor x, y;
      data.Next(&x, &y);
      absl::Status s;
      int64_t step;
      if (o.mode == "async") {
        if (steps_started.fetch_add(1) >= o.steps) return;
        s = session.Run({{m.x, x}, {m.y, y}}, {m.loss, m.gs_after_train, m.w_read, m.b_read},
                        {m.train}, &out);
        if (!s.ok()) return fail(s);
        step = Scalar64(out[1]);
      } else {
        s = session.Run({{m.x, x}, {m.y, y}, {m.local_step, local_step}},
                        {m.loss, m.w_read, m.b_read}, {m.push_gradients}, &out);
        if (!s.ok()) return fail(s);
        std::vector<Tensor> token;
        s = session.Run({m.token}, &token);
        if (s.code() == absl::StatusCode::kOutOfRange || s.code() == absl::StatusCode::kCancelled) {
          return;  // the chief closed the token queue: training is over
        }
        if (!s.ok()) return fail(s);
        local_step = step = Scalar64(token[0]);
        out.insert(out.begin() + 1, token[0]);
      }
      s = CheckFinite(o, absl::StrCat("step ", step), out[0].scalar<float>(),
                      out[2].scalar<float>(), out[3].scalar<float>());
      if (!s.ok()) return fail(s);
      if (i == 0) {
        TrainerProgress p{step, out[0].scalar<float>(), out[2].scalar<float>(),
                          out[3].scalar<float>()};
        {
          absl::MutexLock lock(&latest_mu);
          latest = p;
        }
        if (run.on_progress) run.on_progress(p);
        if (o.mode == "async") maybe_save(step, false);
      }
      if (step >= o.steps) return;
    }
  };

  // In sync mode the chief also runs the aggregation rounds.
  auto sync_loop = [&] {
    Model& m = chief;
    std::vector<Tensor> out;
    int64_t step = result.start_step;
    while (step < o.steps && !run.Stopping()) {
      absl::Status s = chief_session.Run({}, {m.gs_after_round}, {m.sync_round}, &out);
      if (!s.ok()) return run.Fail(s);
      step = Scalar64(out[0]);
      rounds++;
      maybe_save(step, false);
    }
    // Release workers waiting for a token; they see the queue closed.
    std::vector<Tensor> unused;
    absl::Status s = chief_session.Run({}, {}, {m.close_tokens}, &unused);
    if (!s.ok()) run.Fail(s);
  };

  std::vector<std::thread> threads;
  for (int i = 0; i < o.workers; ++i) threads.emplace_back(worker_loop, i);
  if (o.mode == "sync") threads.emplace_back(sync_loop);
  for (auto& t : threads) t.join();
  {
    absl::MutexLock lock(&run.mu);
    if (!run.error.ok()) return run.error;
  }

  DF_RETURN_IF_ERROR(chief_session.Run({chief.gs_read, chief.w_read, chief.b_read}, &out));
  result.steps = Scalar64(out[0]);
  result.weight = out[1].scalar<float>();
  result.bias = out[2].scalar<float>();
  maybe_save(result.steps, true);
  {
    absl::MutexLock lock(&run.mu);
    if (!run.error.ok()) return run.error;
  }
  {
    absl::MutexLock lock(&latest_mu);
    result.loss = latest.loss;
  }
  result.updates = o.mode == "sync" ? rounds.load() : result.steps - result.start_step;
  result.seconds = std::chrono::duration<double>(Clock::now() - start_time).count();
  return result;
}

}  // namespace distflow
