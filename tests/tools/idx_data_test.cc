// Tests of the IDX data path: IdxFile, LoadIdxImages, ExampleOrder, BatchPrefetcher and the
// IdxImageInput op, on small IDX files each test writes itself, plus the real Fashion-MNIST files
// when the dataset-fashion-mnist package is installed.
#include <gtest/gtest.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "braid/status.h"
#include "ops/data/batch_prefetcher.h"
#include "ops/data/labeled_images.h"
#include "runtime/core/shape_inference.h"
#include "runtime/core/workspace.h"
#include "runtime/exec/net.h"
#include "runtime/io/idx_file.h"
#include "runtime/io/proto_io.h"

namespace braid {
namespace {

namespace fs = std::filesystem;

const char kFashionMnistDir[] = "/usr/share/datasets/fashion-mnist";

std::string IdxBytes(const std::vector<uint32_t>& dims, const std::vector<uint8_t>& data,
                     uint8_t type = 0x08) {
  std::string bytes = {0, 0, static_cast<char>(type), static_cast<char>(dims.size())};
  for (uint32_t d : dims) {
    for (int shift = 24; shift >= 0; shift -= 8) bytes.push_back(static_cast<char>(d >> shift));
  }
  bytes.append(data.begin(), data.end());
  return bytes;
}

void WriteRaw(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary) << bytes;
}

void WriteGzip(const std::string& path, const std::string& bytes) {
  gzFile file = gzopen(path.c_str(), "wb");
  ASSERT_NE(file, nullptr) << path;
  ASSERT_EQ(gzwrite(file, bytes.data(), static_cast<unsigned>(bytes.size())),
            static_cast<int>(bytes.size()));
  ASSERT_EQ(gzclose(file), Z_OK);
}

std::string ReadAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// What fn throws, as a Status (OK if it throws nothing).
template <typename Fn>
Status ErrorOf(Fn&& fn) {
  return StatusFromCall(std::forward<Fn>(fn));
}

class IdxDataTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("braid_idx_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string Path(const std::string& name) const { return (dir_ / name).string(); }

  // n images of h x w where every pixel of image i is i, labels i % classes; gzip-compressed.
  void WriteNumberedSet(int n, int h, int w, int classes, std::string* images,
                        std::string* labels) {
    std::vector<uint8_t> pixels, label_bytes;
    for (int i = 0; i < n; ++i) {
      pixels.insert(pixels.end(), h * w, static_cast<uint8_t>(i));
      label_bytes.push_back(static_cast<uint8_t>(i % classes));
    }
    *images = Path("images.gz");
    *labels = Path("labels.gz");
    WriteGzip(*images, IdxBytes({uint32_t(n), uint32_t(h), uint32_t(w)}, pixels));
    WriteGzip(*labels, IdxBytes({uint32_t(n)}, label_bytes, 0x08));
  }

  fs::path dir_;
};

TEST_F(IdxDataTest, ReadsRawAndGzipFilesAlike) {
  const std::string bytes = IdxBytes({2, 3}, {1, 2, 3, 4, 5, 6});
  WriteRaw(Path("a.idx"), bytes);
  WriteGzip(Path("a.idx.gz"), bytes);
  for (const std::string& path : {Path("a.idx"), Path("a.idx.gz")}) {
    IdxFile file = IdxFile::Load(path);
    EXPECT_EQ(file.dims(), (std::vector<int64_t>{2, 3})) << path;
    EXPECT_EQ(file.bytes(), (std::vector<uint8_t>{1, 2, 3, 4, 5, 6})) << path;
    EXPECT_EQ(file.dims(), (std::vector<int64_t>{2, 3}));
  }
}

TEST_F(IdxDataTest, MissingFileIsNotFoundNamingThePath) {
  const Status s = ErrorOf([&] { IdxFile::Load(Path("absent.gz")); });
  EXPECT_EQ(s.code(), StatusCode::kNotFound) << s.ToString();
  EXPECT_NE(s.message().find(Path("absent.gz")), std::string::npos) << s.ToString();
}

TEST_F(IdxDataTest, BadMagicUnsupportedTypeAndZeroDimsAreRejected) {
  WriteRaw(Path("text"), "hello, this is not IDX");
  WriteRaw(Path("floats"), IdxBytes({1}, {0, 0, 0, 0}, 0x0d));
  WriteRaw(Path("zero"), IdxBytes({0, 4}, {}));
  const std::map<std::string, std::string> expected = {
      {"text", "bad magic"}, {"floats", "element type 0x0d"}, {"zero", "dim 0 is 0"}};
  for (const auto& [name, phrase] : expected) {
    const Status s = ErrorOf([&] { IdxFile::Load(Path(name)); });
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << s.ToString();
    EXPECT_NE(s.message().find(phrase), std::string::npos) << s.ToString();
    EXPECT_NE(s.message().find(Path(name)), std::string::npos) << s.ToString();
  }
}

TEST_F(IdxDataTest, TruncatedBodyNamesExpectedAndActualSizes) {
  const std::string bytes = IdxBytes({4, 4}, std::vector<uint8_t>(16, 7));
  WriteRaw(Path("short.idx"), bytes.substr(0, bytes.size() - 6));
  WriteGzip(Path("short.idx.gz"), bytes.substr(0, bytes.size() - 6));
  WriteRaw(Path("header_only.idx"), bytes.substr(0, 6));
  for (const char* name : {"short.idx", "short.idx.gz"}) {
    const Status s = ErrorOf([&] { IdxFile::Load(Path(name)); });
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << s.ToString();
    EXPECT_NE(s.message().find("truncated: dims [4,4] need 16 bytes of data, the file has 10"),
              std::string::npos)
        << s.ToString();
  }
  const Status s = ErrorOf([&] { IdxFile::Load(Path("header_only.idx")); });
  EXPECT_NE(s.message().find("truncated header"), std::string::npos) << s.ToString();
}

TEST_F(IdxDataTest, TrailingDataIsRejected) {
  WriteRaw(Path("long.idx"), IdxBytes({2}, {1, 2, 3}));
  const Status s = ErrorOf([&] { IdxFile::Load(Path("long.idx")); });
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("more data than its dims [2]"), std::string::npos) << s.ToString();
}

TEST_F(IdxDataTest, CutOrCorruptGzipStreamIsIoError) {
  std::vector<uint8_t> noise(5000);
  for (size_t i = 0; i < noise.size(); ++i) noise[i] = static_cast<uint8_t>(i * 2654435761u >> 13);
  WriteGzip(Path("good.gz"), IdxBytes({50, 100}, noise));
  const std::string gz = ReadAll(Path("good.gz"));
  WriteRaw(Path("cut.gz"), gz.substr(0, gz.size() / 2));
  std::string corrupt = gz;
  for (size_t i = 20; i < 60; ++i) corrupt[i] = static_cast<char>(corrupt[i] ^ 0x5a);
  WriteRaw(Path("corrupt.gz"), corrupt);
  for (const char* name : {"cut.gz", "corrupt.gz"}) {
    const Status s = ErrorOf([&] { IdxFile::Load(Path(name)); });
    EXPECT_FALSE(s.ok()) << name;
    EXPECT_NE(s.message().find(Path(name)), std::string::npos) << s.ToString();
  }
  const Status cut = ErrorOf([&] { IdxFile::Load(Path("cut.gz")); });
  EXPECT_NE(cut.message().find("truncated"), std::string::npos) << cut.ToString();
}

TEST_F(IdxDataTest, ImagesAndLabelsMustAgree) {
  WriteGzip(Path("images.gz"), IdxBytes({3, 2, 2}, std::vector<uint8_t>(12, 1)));
  WriteGzip(Path("labels2.gz"), IdxBytes({2}, {0, 1}));
  WriteGzip(Path("labels_big.gz"), IdxBytes({3}, {0, 1, 12}));
  Status s = ErrorOf([&] { LoadIdxImages(Path("images.gz"), Path("labels2.gz")); });
  EXPECT_NE(s.message().find("different numbers of examples"), std::string::npos) << s.ToString();
  EXPECT_NE(s.message().find(Path("labels2.gz")), std::string::npos) << s.ToString();
  s = ErrorOf([&] { LoadIdxImages(Path("images.gz"), Path("labels_big.gz"), 10); });
  EXPECT_NE(s.message().find("label 12 of example 2"), std::string::npos) << s.ToString();
  const LabeledImages ok = LoadIdxImages(Path("images.gz"), Path("labels_big.gz"), 13);
  EXPECT_EQ(ok.count, 3);
  EXPECT_EQ(ok.height, 2);
  EXPECT_EQ(ok.labels, (std::vector<int32_t>{0, 1, 12}));
}

TEST(ExampleOrderTest, VisitsEveryIndexOncePerEpochAndReshuffles) {
  for (bool shuffle : {false, true}) {
    ExampleOrder order(7, shuffle, /*seed=*/3);
    std::vector<std::vector<int64_t>> epochs(3);
    for (auto& epoch : epochs) {
      for (int i = 0; i < 7; ++i) epoch.push_back(order.Next());
      std::vector<int64_t> sorted = epoch;
      std::sort(sorted.begin(), sorted.end());
      EXPECT_EQ(sorted, (std::vector<int64_t>{0, 1, 2, 3, 4, 5, 6})) << "shuffle " << shuffle;
    }
    EXPECT_EQ(order.epoch(), 2);
    if (shuffle) {
      EXPECT_NE(epochs[0], epochs[1]);
      EXPECT_NE(epochs[1], epochs[2]);
    } else {
      EXPECT_EQ(epochs[0], epochs[1]);
    }
  }
}

TEST(ExampleOrderTest, IsDeterministicAndResumesAtAnyExample) {
  ExampleOrder a(10, true, 42), b(10, true, 42), c(10, true, 43);
  std::vector<int64_t> stream_a, stream_b, stream_c;
  for (int i = 0; i < 35; ++i) {
    stream_a.push_back(a.Next());
    stream_b.push_back(b.Next());
    stream_c.push_back(c.Next());
  }
  EXPECT_EQ(stream_a, stream_b);
  EXPECT_NE(stream_a, stream_c);
  ExampleOrder resumed(10, true, 42, /*start_example=*/23);
  for (int i = 23; i < 35; ++i) EXPECT_EQ(resumed.Next(), stream_a[i]) << "example " << i;
}

// A synthetic dataset whose byte count overflows int64 is refused: IdxImageInput's arguments reach
// it, and it used to multiply them unchecked.
TEST(SyntheticImagesTest, ASizeThatOverflowsIsAnError) {
  SyntheticImagesSpec spec;
  spec.count = int64_t{1} << 40;
  spec.height = spec.width = int64_t{1} << 20;
  try {
    MakeSyntheticImages(spec);
    FAIL() << "an overflowing synthetic dataset was accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.status().code(), StatusCode::kInvalidArgument) << e.what();
  }
}

TEST(BatchPrefetcherTest, NormalisesPixelsAndIsDeterministicForASeed) {
  SyntheticImagesSpec spec;
  spec.count = 50;
  spec.height = spec.width = 4;
  auto images = std::make_shared<const LabeledImages>(MakeSyntheticImages(spec));
  BatchPrefetcher::Options options;
  options.batch_size = 8;
  options.seed = 5;
  options.mean = 0.5f;
  options.std = 0.25f;
  BatchPrefetcher a(images, options), b(images, options);
  options.seed = 6;
  BatchPrefetcher other(images, options);
  std::vector<float> data_a(8 * 16), data_b(8 * 16), data_other(8 * 16);
  std::vector<int32_t> labels_a(8), labels_b(8), labels_other(8);
  bool differs = false;
  for (int step = 0; step < 20; ++step) {  // 160 examples: crosses three epoch boundaries
    a.NextBatch(data_a.data(), labels_a.data());
    b.NextBatch(data_b.data(), labels_b.data());
    other.NextBatch(data_other.data(), labels_other.data());
    ASSERT_EQ(data_a, data_b) << "step " << step;
    ASSERT_EQ(labels_a, labels_b) << "step " << step;
    differs = differs || data_a != data_other;
  }
  EXPECT_TRUE(differs) << "seeds 5 and 6 served the same batches";
  for (float v : data_a) {
    const float pixel = (v * 0.25f + 0.5f) * 255.f;
    EXPECT_NEAR(pixel, std::round(pixel), 1e-3);
    EXPECT_GE(pixel, -1e-3);
    EXPECT_LE(pixel, 255.001);
  }
}

TEST(BatchPrefetcherTest, ShardsAreDisjointSlicesOfTheGlobalBatchesInTheirOrder) {
  SyntheticImagesSpec spec;
  spec.count = 30;
  spec.height = spec.width = 2;
  auto images = std::make_shared<const LabeledImages>(MakeSyntheticImages(spec));
  for (const int64_t start : {int64_t{0}, int64_t{24}}) {  // 24: resuming mid-epoch
    SCOPED_TRACE("start_example " + std::to_string(start));
    BatchPrefetcher::Options global;
    global.batch_size = 12;  // 3 shards of 4
    global.seed = 3;
    global.start_example = start;
    BatchPrefetcher whole(images, global);
    std::vector<std::unique_ptr<BatchPrefetcher>> shards;
    for (int r = 0; r < 3; ++r) {
      BatchPrefetcher::Options o = global;
      o.batch_size = 4;
      o.num_shards = 3;
      o.shard_id = r;
      shards.push_back(std::make_unique<BatchPrefetcher>(images, o));
    }
    for (int step = 0; step < 7; ++step) {  // 84 examples: crosses epoch boundaries
      std::vector<float> data(12 * 4), part(4 * 4);
      std::vector<int32_t> labels(12), part_labels(4);
      whole.NextBatch(data.data(), labels.data());
      for (int r = 0; r < 3; ++r) {
        shards[r]->NextBatch(part.data(), part_labels.data());
        EXPECT_EQ(part, std::vector<float>(data.begin() + r * 16, data.begin() + (r + 1) * 16))
            << "shard " << r << " step " << step;
        EXPECT_EQ(part_labels,
                  std::vector<int32_t>(labels.begin() + r * 4, labels.begin() + (r + 1) * 4));
      }
    }
  }
  BatchPrefetcher::Options bad;
  bad.num_shards = 2;
  bad.shard_id = 2;
  const Status s = ErrorOf([&] { BatchPrefetcher(images, bad); });
  EXPECT_NE(s.message().find("shard_id must be in [0, num_shards), got shard 2 of 2"),
            std::string::npos)
      << s.ToString();
}

TEST(BatchPrefetcherTest, DestroysCleanlyWhileTheProducerWaits) {
  auto images = std::make_shared<const LabeledImages>(MakeSyntheticImages({}));
  BatchPrefetcher::Options options;
  options.batch_size = 4;
  options.queue_capacity = 2;
  for (int i = 0; i < 20; ++i) BatchPrefetcher prefetcher(images, options);  // never consumed
  BatchPrefetcher prefetcher(images, options);
  std::vector<float> data(4 * 28 * 28);
  std::vector<int32_t> labels(4);
  prefetcher.NextBatch(data.data(), labels.data());
}

TEST(BatchPrefetcherTest, RejectsBadOptions) {
  auto images = std::make_shared<const LabeledImages>(MakeSyntheticImages({}));
  BatchPrefetcher::Options options;
  options.batch_size = 0;
  const Status s = ErrorOf([&] { BatchPrefetcher(images, options); });
  EXPECT_NE(s.message().find("batch_size must be positive"), std::string::npos) << s.ToString();
}

std::string ReaderOp(const std::string& images, const std::string& labels, int batch_size,
                     const std::string& extra = "") {
  return "op { type: 'IdxImageInput' output: 'data' output: 'label' "
         "arg { name: 'images' s: '" +
         images + "' } arg { name: 'labels' s: '" + labels +
         "' } arg { name: 'batch_size' i: " + std::to_string(batch_size) + " } " + extra + " }";
}

NetDef ParseNet(const std::string& text) {
  NetDef net;
  ParseTextProto("name: 'reader' " + text, "<test>", &net);
  return net;
}

TEST_F(IdxDataTest, OpServesEveryExampleOncePerEpochWithInferredShapes) {
  std::string images, labels;
  WriteNumberedSet(12, 3, 2, 5, &images, &labels);
  const NetDef def = ParseNet(ReaderOp(images, labels, 4,
                                       "arg { name: 'height' i: 3 } "
                                       "arg { name: 'width' i: 2 } "
                                       "arg { name: 'seed' i: 9 }"));
  const auto shapes = InferBlobShapes(def, {});
  EXPECT_EQ(shapes.at("data").dims, (std::vector<int64_t>{4, 1, 3, 2}));
  EXPECT_EQ(shapes.at("label").dims, (std::vector<int64_t>{4}));
  EXPECT_EQ(shapes.at("label").dtype, DType::kInt32);
  Workspace ws;
  Net* net = ws.CreateNet(def);
  for (int epoch = 0; epoch < 2; ++epoch) {
    std::multiset<int> seen;
    for (int step = 0; step < 3; ++step) {
      ASSERT_TRUE(net->Run().ok());
      const Tensor& data = *ws.GetBlob("data");
      const Tensor& label = *ws.GetBlob("label");
      ASSERT_EQ(data.shape(), (std::vector<int64_t>{4, 1, 3, 2}));
      for (int b = 0; b < 4; ++b) {
        const int example = static_cast<int>(std::lround(data.data<float>()[b * 6] * 255.f));
        EXPECT_EQ(label.data<int32_t>()[b], example % 5);
        seen.insert(example);
      }
    }
    std::multiset<int> all;
    for (int i = 0; i < 12; ++i) all.insert(i);
    EXPECT_EQ(seen, all) << "epoch " << epoch;
  }
}

TEST_F(IdxDataTest, OpBuildFailsNamingTheFileOrTheShape) {
  std::string images, labels;
  WriteNumberedSet(4, 3, 2, 5, &images, &labels);
  Workspace ws;
  Status s = ErrorOf([&] { ws.CreateNet(ParseNet(ReaderOp(Path("nope.gz"), labels, 2))); });
  EXPECT_EQ(s.code(), StatusCode::kNotFound) << s.ToString();
  EXPECT_NE(s.message().find(Path("nope.gz")), std::string::npos) << s.ToString();
  s = ErrorOf([&] { ws.CreateNet(ParseNet(ReaderOp(images, labels, 2))); });
  EXPECT_NE(s.message().find("holds images of shape [1,3,2] but the op's channels/height/width "
                             "arguments say [1,28,28]"),
            std::string::npos)
      << s.ToString();
}

TEST(IdxImageInputTest, SyntheticModeNeedsNoFiles) {
  const NetDef def = ParseNet(
      "op { type: 'IdxImageInput' output: 'data' output: 'label' arg { name: 'batch_size' i: 16 } "
      "arg { name: 'synthetic' i: 1 } arg { name: 'height' i: 32 } arg { name: 'width' i: 32 } "
      "arg { name: 'channels' i: 3 } arg { name: 'num_classes' i: 100 } }");
  Workspace ws;
  Net* net = ws.CreateNet(def);
  ASSERT_TRUE(net->Run().ok());
  EXPECT_EQ(ws.GetBlob("data")->shape(), (std::vector<int64_t>{16, 3, 32, 32}));
  const int32_t* labels = ws.GetBlob("label")->data<int32_t>();
  for (int i = 0; i < 16; ++i) {
    EXPECT_GE(labels[i], 0);
    EXPECT_LT(labels[i], 100);
  }
}

TEST(FashionMnistTest, RealPackageFilesHaveKnownFirstExamplesAndStats) {
  const std::string dir = kFashionMnistDir;
  if (!fs::exists(dir + "/t10k-images-idx3-ubyte.gz")) {
    GTEST_SKIP() << dir << " is absent: install the Debian package dataset-fashion-mnist";
  }
  for (const auto& [split, count, first_sum] :
       {std::tuple<std::string, int64_t, int64_t>{"train", 60000, 76247},
        std::tuple<std::string, int64_t, int64_t>{"t10k", 10000, 33456}}) {
    const LabeledImages set = LoadIdxImages(dir + "/" + split + "-images-idx3-ubyte.gz",
                                            dir + "/" + split + "-labels-idx1-ubyte.gz", 10);
    ASSERT_EQ(set.count, count);
    EXPECT_EQ(set.height, 28);
    EXPECT_EQ(set.width, 28);
    EXPECT_EQ(set.labels[0], 9) << split << ": the first example is an ankle boot";
    int64_t sum = 0;
    for (int p = 0; p < 784; ++p) sum += set.Image(0)[p];
    EXPECT_EQ(sum, first_sum) << split;
    std::vector<int64_t> per_class(10);
    for (int32_t label : set.labels) ++per_class[label];
    EXPECT_EQ(per_class, std::vector<int64_t>(10, count / 10)) << split << " is balanced";
    double mean = 0;
    for (uint8_t p : set.pixels) mean += p;
    mean /= 255.0 * set.pixels.size();
    EXPECT_NEAR(mean, split == "train" ? 0.28604 : 0.28685, 1e-4);
  }
}

}  // namespace
}  // namespace braid
