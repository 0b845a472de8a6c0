#include "runtime/core/tensor.h"

#include <gtest/gtest.h>

#include "braid/status.h"
#include "runtime/core/element_count.h"

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

// 2^32 * 2^32 * 16 wraps to 0 in int64; the check sees it before the shape changes.
TEST(TensorTest, ShapeWhoseElementCountOverflowsIsRejected) {
  Tensor t(DType::kFloat32, {2});
  try {
    t.Reshape({4294967296, 4294967296, 16});
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(e.status().message().find("shape [4294967296,4294967296,16] has more elements"),
              std::string::npos)
        << e.status().message();
  }
  EXPECT_EQ(t.shape(), (std::vector<int64_t>{2}));
  EXPECT_EQ(t.numel(), 2);
  t.Reshape({4294967296, 4294967296, 0});  // empty: the other dims' product does not matter
  EXPECT_EQ(t.numel(), 0);
}

// 2^61 elements fit int64 as a count; as float64 they take 2^64 bytes, which does not.
TEST(TensorTest, ShapeWhoseByteSizeOverflowsIsRejectedForItsType) {
  const int64_t n = int64_t{1} << 61;
  Tensor t(DType::kUInt8, {n});
  EXPECT_EQ(t.numel(), n);
  EXPECT_THROW(t.set_dtype(DType::kFloat64), Error);
  EXPECT_EQ(t.dtype(), DType::kUInt8);
  EXPECT_THROW(t.Resize(DType::kInt64, {n}), Error);
  Tensor wide(DType::kFloat64, {1});
  wide.Resize(DType::kUInt8, {n});  // the new type's size counts, not the old one's
  EXPECT_EQ(wide.numel(), n);
  EXPECT_EQ(ElementCount({n, 3}), 3 * n);
  EXPECT_EQ(ElementCount({n / 2}, DType::kInt32), n / 2);  // 2^62 bytes
  EXPECT_THROW(ElementCount({n}, DType::kInt32), Error);    // 2^63 bytes
  EXPECT_THROW(ElementCount({n, 4}), Error);
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
