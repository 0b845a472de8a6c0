#include "runtime/tensor.h"

#include <gtest/gtest.h>

#include "runtime/status.h"

namespace braid {
namespace {

TEST(TensorTest, FirstWriteAllocatesExactlyTheShape) {
  Tensor t(DType::kFloat32, {2, 3});
  EXPECT_EQ(t.capacity(), 0u);
  float* p = t.mutable_data<float>();
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(t.capacity(), 24u);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % kCpuAlignment, 0u);
}

TEST(TensorTest, ReshapeWithinCapacityNeverReallocates) {
  Tensor t(DType::kFloat32, {4, 4});
  float* p = t.mutable_data<float>();
  int64_t allocations = CpuAllocator()->stats().allocations;
  t.Reshape({2, 8});
  EXPECT_EQ(t.mutable_data<float>(), p);
  t.Reshape({3});
  EXPECT_EQ(t.mutable_data<float>(), p);
  t.Reshape({16});
  EXPECT_EQ(t.mutable_data<float>(), p);
  EXPECT_EQ(CpuAllocator()->stats().allocations, allocations);
}

TEST(TensorTest, StorageOnlyGrowsUntilFreed) {
  Tensor t(DType::kFloat32, {100});
  t.mutable_data<float>();
  t.Reshape({1});
  t.mutable_data<float>();
  EXPECT_EQ(t.capacity(), 400u);  // a smaller shape keeps the memory
  t.Reshape({200});
  t.mutable_data<float>();
  EXPECT_EQ(t.capacity(), 800u);
  t.FreeMemory();
  EXPECT_EQ(t.capacity(), 0u);
  EXPECT_FALSE(t.has_storage());
}

TEST(TensorTest, SharedStorageSeesWrites) {
  Tensor a(DType::kInt32, {3});
  int32_t* p = a.mutable_data<int32_t>();
  p[0] = 1, p[1] = 2, p[2] = 3;
  Tensor b;
  b.ShareData(a);
  EXPECT_EQ(b.data<int32_t>(), a.data<int32_t>());
  b.mutable_data<int32_t>()[1] = 42;
  EXPECT_EQ(a.data<int32_t>()[1], 42);
}

TEST(TensorTest, ViewUsesExternalMemoryAndRefusesToGrow) {
  alignas(64) float arena[8] = {};
  Tensor t(DType::kFloat32, {8});
  t.SetExternalStorage(arena, sizeof(arena));
  int64_t allocations = CpuAllocator()->stats().allocations;
  EXPECT_EQ(t.mutable_data<float>(), arena);
  t.Reshape({9});
  EXPECT_THROW(t.mutable_data<float>(), Error);
  EXPECT_EQ(CpuAllocator()->stats().allocations, allocations);
}

TEST(TensorTest, ReadingWrongTypeOrUnwrittenTensorIsAnError) {
  Tensor t(DType::kFloat32, {2});
  EXPECT_THROW(t.data<float>(), Error);
  t.mutable_data<float>();
  EXPECT_THROW(t.data<int64_t>(), Error);
  EXPECT_NO_THROW(t.data<float>());
}

TEST(TensorTest, EveryDtypeHasASizeAndName) {
  for (DType d : {DType::kFloat32, DType::kFloat64, DType::kInt32, DType::kInt64, DType::kUInt8,
                  DType::kBool}) {
    Tensor t(d, {5});
    t.raw_mutable_data(d);
    EXPECT_EQ(t.nbytes(), 5 * DTypeSize(d));
    EXPECT_STRNE(DTypeName(d), "unknown");
  }
}

TEST(TensorTest, NegativeDimensionIsRejected) {
  Tensor t;
  EXPECT_THROW(t.Reshape({2, -1}), Error);
}

TEST(TensorTest, CopyFromCopiesShapeTypeAndBytes) {
  Tensor a(DType::kFloat64, {2});
  a.mutable_data<double>()[0] = 1.5;
  a.mutable_data<double>()[1] = -2.5;
  Tensor b;
  b.CopyFrom(a);
  EXPECT_EQ(b.shape(), a.shape());
  EXPECT_EQ(b.data<double>()[1], -2.5);
  EXPECT_NE(b.data<double>(), a.data<double>());
}

}  // namespace
}  // namespace braid
