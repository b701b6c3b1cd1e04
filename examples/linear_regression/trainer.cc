#include "trainer.h"

#include <chrono>
#include <random>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "distflow/cc/client_session.h"
#include "distflow/cc/gradients.h"
#include "distflow/cc/op_builder.h"
#include "distflow/cc/ops/data_flow_ops.h"
#include "distflow/cc/ops/standard_ops.h"
#include "distflow/cc/training/saver.h"
#include "distflow/core/status.h"

namespace distflow {
namespace {

using ops::internal::BuildOp;
using Clock = std::chrono::steady_clock;

std::string PsDevice(int i) { return absl::StrCat("/job:ps/task:", i); }
std::string WorkerDevice(int i) { return absl::StrCat("/job:worker/task:", i); }

Output VarHandle(const Scope& s, const std::string& name, DataType dtype) {
  return Output(BuildOp(s.WithOpName(name), "VarHandleOp", {},
                        {{"dtype", dtype}, {"shape", PartialTensorShape({})}, {"shared_name", name}}),
                0);
}
Output Read(const Scope& s, const Output& handle, DataType dtype) {
  return Output(BuildOp(s, "ReadVariableOp", {Input(handle)}, {{"dtype", dtype}}), 0);
}
Operation Assign(const Scope& s, const Output& handle, const Input& value) {
  return Operation(BuildOp(s, "AssignVariableOp", {Input(handle), value}));
}
Operation ApplyGradientDescent(const Scope& s, const Output& handle, float lr, const Output& grad) {
  return Operation(
      BuildOp(s, "ResourceApplyGradientDescent", {Input(handle), Input(lr), Input(grad)}));
}

// The graph one client builds. Every client builds the same variables (same
// shared names on the same ps tasks), so they all train one model.
struct Model {
  Scope root = Scope::NewRootScope();
  Output w, b, gs;                // variable handles
  Output w_read, b_read, gs_read;
  Output x, y, loss;
  Output initialized;             // all three variables initialized
  Operation init_fresh;           // w = 0, b = 0, global_step = 0
  // async
  Operation train;                // apply both gradients, global_step += 1
  Output gs_after_train;
  // sync
  Output local_step;
  Operation push_gradients;       // into the accumulators
  Output token;                   // next step, from the token queue
  Operation sync_round;           // chief: average, apply, step, release
  Output gs_after_round;
  Operation set_acc_steps;        // chief: accumulators' step = global_step
  Operation close_tokens;
  std::unique_ptr<Saver> saver;
};

absl::Status BuildModel(const TrainerOptions& o, int worker, Model* m) {
  const Scope& root = m->root;
  // Variables round-robin over the ps tasks, everything else on the worker.
  const Scope ps_w = root.WithDevice(PsDevice(0));
  const Scope ps_b = root.WithDevice(PsDevice(1 % o.ps));
  const Scope ps_gs = root.WithDevice(PsDevice(2 % o.ps));
  const Scope local = root.WithDevice(WorkerDevice(worker));

  m->w = VarHandle(ps_w, "weight", DT_FLOAT);
  m->b = VarHandle(ps_b, "bias", DT_FLOAT);
  m->gs = VarHandle(ps_gs, "global_step", DT_INT64);
  m->w_read = Read(ps_w, m->w, DT_FLOAT);
  m->b_read = Read(ps_b, m->b, DT_FLOAT);
  m->gs_read = Read(ps_gs, m->gs, DT_INT64);
  auto init_w = Assign(ps_w, m->w, 0.0f);
  auto init_b = Assign(ps_b, m->b, 0.0f);
  auto init_gs = Assign(ps_gs, m->gs, int64_t{0});
  m->init_fresh = ops::NoOp(root.WithControlDependencies({init_w, init_b, init_gs}));
  auto is_init = [&](const Scope& s, const Output& h) {
    return Output(BuildOp(s, "VarIsInitializedOp", {Input(h)}), 0);
  };
  m->initialized = ops::LogicalAnd(
      local, ops::LogicalAnd(local, is_init(ps_w, m->w), is_init(ps_b, m->b)), is_init(ps_gs, m->gs));

  // The model and its loss, on the worker.
  m->x = ops::Placeholder(local.WithOpName("x"), DT_FLOAT);
  m->y = ops::Placeholder(local.WithOpName("y"), DT_FLOAT);
  auto pred = ops::AddV2(local, ops::Mul(local, m->x, m->w_read), m->b_read);
  m->loss = ops::Mean(local.WithOpName("loss"), ops::Square(local, ops::Sub(local, pred, m->y)), {0});
  std::vector<Output> grads;
  DF_RETURN_IF_ERROR(AddSymbolicGradients(local, {m->loss}, {m->w_read, m->b_read}, &grads));

  if (o.mode == "async") {
    auto apply_w = ApplyGradientDescent(ps_w, m->w, o.learning_rate, grads[0]);
    auto apply_b = ApplyGradientDescent(ps_b, m->b, o.learning_rate, grads[1]);
    auto step = Operation(BuildOp(ps_gs.WithControlDependencies({apply_w, apply_b}),
                                  "AssignAddVariableOp", {Input(m->gs), Input(int64_t{1})}));
    m->train = step;
    m->gs_after_train = Read(ps_gs.WithControlDependencies({step}), m->gs, DT_INT64);
  } else {
    ops::ConditionalAccumulator acc_w(ps_w, DT_FLOAT, PartialTensorShape({}), "weight_accumulator");
    ops::ConditionalAccumulator acc_b(ps_b, DT_FLOAT, PartialTensorShape({}), "bias_accumulator");
    ops::FIFOQueue tokens(ps_gs, {DT_INT64}, ops::FIFOQueue::Attrs().SharedName("sync_tokens"));
    m->local_step = ops::Placeholder(local.WithOpName("local_step"), DT_INT64);
    auto push_w = ops::AccumulatorApplyGradient(ps_w, acc_w, m->local_step, grads[0]);
    auto push_b = ops::AccumulatorApplyGradient(ps_b, acc_b, m->local_step, grads[1]);
    m->push_gradients = ops::NoOp(local.WithControlDependencies({push_w.operation, push_b.operation}));
    m->token = ops::QueueDequeue(ps_gs, tokens, {DT_INT64}).components[0];
    // The chief's round: one update from the average of all replicas.
    const int n = o.workers;
    ops::AccumulatorTakeGradient avg_w(ps_w, acc_w, n, DT_FLOAT);
    ops::AccumulatorTakeGradient avg_b(ps_b, acc_b, n, DT_FLOAT);
    auto apply_w = ApplyGradientDescent(ps_w, m->w, o.learning_rate, avg_w);
    auto apply_b = ApplyGradientDescent(ps_b, m->b, o.learning_rate, avg_b);
    auto step = Operation(BuildOp(ps_gs.WithControlDependencies({apply_w, apply_b}),
                                  "AssignAddVariableOp", {Input(m->gs), Input(int64_t{1})}));
    m->gs_after_round = Read(ps_gs.WithControlDependencies({step}), m->gs, DT_INT64);
    ops::AccumulatorSetGlobalStep set_w(ps_w, acc_w, m->gs_after_round);
    ops::AccumulatorSetGlobalStep set_b(ps_b, acc_b, m->gs_after_round);
    auto release = ops::QueueEnqueueMany(
        ps_gs.WithControlDependencies({set_w.operation, set_b.operation}), tokens,
        {ops::Fill(ps_gs, ops::Const(ps_gs, {n}), m->gs_after_round).output});
    m->sync_round = release.operation;
    ops::AccumulatorSetGlobalStep start_w(ps_w, acc_w, m->gs_read);
    ops::AccumulatorSetGlobalStep start_b(ps_b, acc_b, m->gs_read);
    m->set_acc_steps = ops::NoOp(root.WithControlDependencies({start_w.operation, start_b.operation}));
    m->close_tokens = ops::QueueClose(ps_gs, tokens, /*cancel_pending_enqueues=*/true).operation;
  }
  m->saver = std::make_unique<Saver>(
      root, std::vector<Saver::Variable>{{"weight", m->w, DT_FLOAT, TensorShape({})},
                                         {"bias", m->b, DT_FLOAT, TensorShape({})},
                                         {"global_step", m->gs, DT_INT64, TensorShape({})}});
  return root.status();
}

// One worker's batches of y = 2x + 10 + noise.
class DataSource {
 public:
  DataSource(const TrainerOptions& o, int worker)
      : rng_(static_cast<uint64_t>(o.seed) * 7919 + worker), batch_(o.batch_size), noise_(o.noise) {}
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

}  // namespace

absl::StatusOr<TrainerResult> TrainLinearRegression(
    const TrainerOptions& o, const ClusterDef& cluster,
    const std::function<void(const TrainerProgress&)>& on_progress,
    const std::atomic<bool>* stop) {
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
    }
  }
  if (result.restored_from.empty()) {
    DF_RETURN_IF_ERROR(chief_session.Run({}, {}, {chief.init_fresh}, &out));
  }
  DF_RETURN_IF_ERROR(chief_session.Run({chief.gs_read}, &out));
  result.start_step = Scalar64(out[0]);
  if (o.mode == "sync") DF_RETURN_IF_ERROR(chief_session.Run({}, {}, {chief.set_acc_steps}, &out));

  Run run;
  run.options = &o;
  run.stop = stop;
  run.on_progress = on_progress;
  std::atomic<int64_t> last_saved{result.start_step};
  std::atomic<int64_t> rounds{0};
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
      run.Fail(errors::Annotate(s, absl::StrCat("worker ", i, " (/job:worker/replica:0/task:", i, "): ")));
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
