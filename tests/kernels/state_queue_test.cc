// FIFO queue kernels: ordering, batches, blocking dequeues and enqueues
// released from another thread, cancellation through the step's
// CancellationManager, close semantics, and validation errors.
#include <string>
#include <thread>
#include <vector>

#include "state_test_util.h"

namespace distflow {
namespace {

using test::AsTensor;
using test::ExpectError;
using test::ExpectTensorEqual;
using test::KernelInput;
using test::KernelRun;
using test::StateKernelRunner;

constexpr absl::Duration kBlocked = absl::Milliseconds(50);
constexpr absl::Duration kLong = absl::Seconds(10);

class QueueTest : public ::testing::Test {
 protected:
  // A queue of (int32, string) elements of shapes ([], []).
  Tensor Queue(int64_t capacity = -1, bool with_shapes = true, const std::string& name = "q") {
    std::vector<PartialTensorShape> shapes;
    if (with_shapes) shapes = {PartialTensorShape({}), PartialTensorShape({})};
    return r_.RunOne("FIFOQueueV2", {},
                     {{"component_types", types_}, {"shapes", shapes}, {"capacity", capacity}},
                     name);
  }
  std::shared_ptr<KernelRun> StartEnqueue(const Tensor& q, int32_t i, const std::string& s,
                                          CancellationManager* cm = nullptr) {
    return r_.Start("QueueEnqueueV2",
                    {q, Tensor::Scalar<int32_t>(i), Tensor::Scalar<std::string>(s)},
                    {{"Tcomponents", types_}}, "enqueue", cm);
  }
  void Enqueue(const Tensor& q, int32_t i, const std::string& s) {
    auto run = StartEnqueue(q, i, s);
    ASSERT_TRUE(run->WaitFor(kLong));
    ASSERT_TRUE(run->status().ok()) << run->status();
  }
  std::shared_ptr<KernelRun> StartDequeue(const Tensor& q, CancellationManager* cm = nullptr) {
    return r_.Start("QueueDequeueV2", {q}, {{"component_types", types_}}, "dequeue", cm);
  }
  std::shared_ptr<KernelRun> StartDequeueMany(const Tensor& q, int32_t n,
                                              CancellationManager* cm = nullptr) {
    return r_.Start("QueueDequeueManyV2", {q, Tensor::Scalar<int32_t>(n)},
                    {{"component_types", types_}}, "dequeue_many", cm);
  }
  // Dequeues one element that must be there.
  void ExpectDequeue(const Tensor& q, int32_t i, const std::string& s) {
    auto run = StartDequeue(q);
    ASSERT_TRUE(run->WaitFor(kLong));
    ASSERT_TRUE(run->status().ok()) << run->status();
    EXPECT_EQ(run->outputs()[0].scalar<int32_t>(), i);
    EXPECT_EQ(run->outputs()[1].scalar<std::string>(), s);
  }
  int32_t Size(const Tensor& q) { return r_.RunOne("QueueSizeV2", {q}, {}).scalar<int32_t>(); }
  void Close(const Tensor& q, bool cancel_pending_enqueues = false) {
    r_.RunOk("QueueCloseV2", {q}, {{"cancel_pending_enqueues", cancel_pending_enqueues}});
  }

  DataTypeVector types_ = {DT_INT32, DT_STRING};
  StateKernelRunner r_;
};

TEST_F(QueueTest, FirstInFirstOut) {
  Tensor q = Queue();
  EXPECT_EQ(q.scalar<ResourceHandle>().name(), "q");
  Enqueue(q, 1, "a");
  Enqueue(q, 2, "b");
  // A later step's FIFOQueueV2 finds the same queue.
  Tensor again = Queue();
  Enqueue(again, 3, "c");
  EXPECT_EQ(Size(q), 3);
  ExpectDequeue(q, 1, "a");
  ExpectDequeue(again, 2, "b");
  ExpectDequeue(q, 3, "c");
  EXPECT_EQ(Size(q), 0);
}

TEST_F(QueueTest, EnqueueManyDequeueMany) {
  Tensor q = Queue();
  auto many = r_.Run("QueueEnqueueManyV2",
                     {q, AsTensor<int32_t>({1, 2, 3}), test::StringVector({"a", "b", "c"})},
                     {{"Tcomponents", types_}});
  ASSERT_TRUE(many.ok()) << many.status();
  EXPECT_EQ(Size(q), 3);
  auto two = StartDequeueMany(q, 2);
  ASSERT_TRUE(two->WaitFor(kLong));
  ASSERT_TRUE(two->status().ok()) << two->status();
  ExpectTensorEqual(AsTensor<int32_t>({1, 2}), two->outputs()[0]);
  ExpectTensorEqual(test::StringVector({"a", "b"}), two->outputs()[1]);
  auto zero = StartDequeueMany(q, 0);
  ASSERT_TRUE(zero->WaitFor(kLong));
  ASSERT_TRUE(zero->status().ok());
  EXPECT_EQ(zero->outputs()[0].shape(), TensorShape({0}));
  ExpectDequeue(q, 3, "c");
}

TEST_F(QueueTest, BlockingDequeueReleasedByEnqueueFromAnotherThread) {
  Tensor q = Queue();
  auto dequeue = StartDequeue(q);
  EXPECT_FALSE(dequeue->WaitFor(kBlocked));
  std::thread producer([&] { Enqueue(q, 7, "x"); });
  ASSERT_TRUE(dequeue->WaitFor(kLong));
  producer.join();
  ASSERT_TRUE(dequeue->status().ok()) << dequeue->status();
  EXPECT_EQ(dequeue->outputs()[0].scalar<int32_t>(), 7);
  EXPECT_EQ(Size(q), 0);
}

TEST_F(QueueTest, DequeueManyTakesElementsAsTheyCome) {
  Tensor q = Queue(/*capacity=*/1);
  auto many = StartDequeueMany(q, 3);
  std::thread producer([&] {
    for (int i = 0; i < 3; ++i) Enqueue(q, i, std::to_string(i));
  });
  ASSERT_TRUE(many->WaitFor(kLong));
  producer.join();
  ASSERT_TRUE(many->status().ok()) << many->status();
  ExpectTensorEqual(AsTensor<int32_t>({0, 1, 2}), many->outputs()[0]);
}

TEST_F(QueueTest, FullQueueBlocksEnqueue) {
  Tensor q = Queue(/*capacity=*/1);
  Enqueue(q, 1, "a");
  auto blocked = StartEnqueue(q, 2, "b");
  EXPECT_FALSE(blocked->WaitFor(kBlocked));
  ExpectDequeue(q, 1, "a");
  ASSERT_TRUE(blocked->WaitFor(kLong));
  EXPECT_TRUE(blocked->status().ok());
  ExpectDequeue(q, 2, "b");
}

TEST_F(QueueTest, CancelledDequeueEndsWithCancelled) {
  Tensor q = Queue();
  CancellationManager cm;
  auto dequeue = StartDequeue(q, &cm);
  EXPECT_FALSE(dequeue->WaitFor(kBlocked));
  cm.StartCancel();
  ASSERT_TRUE(dequeue->WaitFor(kLong));
  ExpectError(dequeue->status(), absl::StatusCode::kCancelled, {"'q'"});
  // The cancelled dequeue takes nothing later.
  Enqueue(q, 1, "a");
  EXPECT_EQ(Size(q), 1);
  // A dequeue on an already cancelled step fails at once.
  auto late = StartDequeue(q, &cm);
  ASSERT_TRUE(late->WaitFor(kLong));
  EXPECT_EQ(late->status().code(), absl::StatusCode::kCancelled);
  ExpectDequeue(q, 1, "a");
}

TEST_F(QueueTest, CancelledDequeueManyGivesBackWhatItTook) {
  Tensor q = Queue();
  CancellationManager cm;
  auto many = StartDequeueMany(q, 3, &cm);
  Enqueue(q, 1, "a");
  Enqueue(q, 2, "b");
  EXPECT_FALSE(many->WaitFor(kBlocked));
  cm.StartCancel();
  ASSERT_TRUE(many->WaitFor(kLong));
  EXPECT_EQ(many->status().code(), absl::StatusCode::kCancelled);
  EXPECT_EQ(Size(q), 2);
  ExpectDequeue(q, 1, "a");
  ExpectDequeue(q, 2, "b");
}

TEST_F(QueueTest, CloseSemantics) {
  Tensor q = Queue();
  auto waiting = StartDequeue(q);
  Enqueue(q, 1, "a");
  ASSERT_TRUE(waiting->WaitFor(kLong));
  Enqueue(q, 2, "b");
  auto pending_many = StartDequeueMany(q, 2);
  EXPECT_FALSE(pending_many->WaitFor(kBlocked));
  Close(q);
  // Not enough elements will ever come: OutOfRange, and the element is back.
  ASSERT_TRUE(pending_many->WaitFor(kLong));
  ExpectError(pending_many->status(), absl::StatusCode::kOutOfRange,
              {"'q'", "closed", "requested 2"});
  // Enqueues fail; what is left can still be dequeued; then OutOfRange.
  auto enqueue = StartEnqueue(q, 3, "c");
  ASSERT_TRUE(enqueue->WaitFor(kLong));
  ExpectError(enqueue->status(), absl::StatusCode::kCancelled, {"'q'", "closed"});
  ExpectDequeue(q, 2, "b");
  auto empty = StartDequeue(q);
  ASSERT_TRUE(empty->WaitFor(kLong));
  EXPECT_EQ(empty->status().code(), absl::StatusCode::kOutOfRange);
  Close(q);  // idempotent
}

TEST_F(QueueTest, CloseLetsPendingEnqueuesFinishUnlessCancelled) {
  Tensor q = Queue(/*capacity=*/1);
  Enqueue(q, 1, "a");
  auto pending = StartEnqueue(q, 2, "b");
  Close(q);
  EXPECT_FALSE(pending->WaitFor(kBlocked));
  ExpectDequeue(q, 1, "a");
  ASSERT_TRUE(pending->WaitFor(kLong));
  EXPECT_TRUE(pending->status().ok());

  Tensor q2 = Queue(/*capacity=*/1, true, "q2");
  Enqueue(q2, 1, "a");
  auto cancelled = StartEnqueue(q2, 2, "b");
  Close(q2, /*cancel_pending_enqueues=*/true);
  ASSERT_TRUE(cancelled->WaitFor(kLong));
  ExpectError(cancelled->status(), absl::StatusCode::kCancelled, {"'q2'"});
  ExpectDequeue(q2, 1, "a");
}

TEST_F(QueueTest, ValidationErrors) {
  Tensor q = Queue();
  auto wrong_type =
      r_.Run("QueueEnqueueV2", {q, Tensor::Scalar<float>(1), Tensor::Scalar<std::string>("a")},
             {{"Tcomponents", DataTypeVector{DT_FLOAT, DT_STRING}}});
  ExpectError(wrong_type.status(), absl::StatusCode::kInvalidArgument, {"'q'", "int32", "float32"});
  auto wrong_shape =
      r_.Run("QueueEnqueueV2", {q, AsTensor<int32_t>({1, 2}), Tensor::Scalar<std::string>("a")},
             {{"Tcomponents", types_}});
  ExpectError(wrong_shape.status(), absl::StatusCode::kInvalidArgument, {"'q'", "[2]"});
  auto ragged =
      r_.Run("QueueEnqueueManyV2", {q, AsTensor<int32_t>({1, 2}), test::StringVector({"a"})},
             {{"Tcomponents", types_}});
  ExpectError(ragged.status(), absl::StatusCode::kInvalidArgument, {"'q'", "elements"});
  EXPECT_EQ(Size(q), 0);

  Tensor shapeless = Queue(-1, /*with_shapes=*/false, "shapeless");
  auto many = StartDequeueMany(shapeless, 1);
  ASSERT_TRUE(many->WaitFor(kLong));
  ExpectError(many->status(), absl::StatusCode::kInvalidArgument, {"'shapeless'", "shapes"});

  auto other_attrs =
      r_.Run("FIFOQueueV2", {},
             {{"component_types", DataTypeVector{DT_FLOAT}}, {"shared_name", "q"}}, "other");
  ExpectError(other_attrs.status(), absl::StatusCode::kInvalidArgument, {"'q'"});
  auto timeout =
      r_.Run("QueueDequeueV2", {q}, {{"component_types", types_}, {"timeout_ms", int64_t{5}}});
  EXPECT_EQ(timeout.status().code(), absl::StatusCode::kUnimplemented);
}

}  // namespace
}  // namespace distflow
