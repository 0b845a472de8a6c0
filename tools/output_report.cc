#include "tools/output_report.h"

#include <algorithm>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <numeric>
#include <vector>

#include "planner/fnv1a.h"

namespace braid {
namespace {

template <typename T>
void SumValues(const Tensor& tensor, double* sum, double* abs_sum) {
  const T* data = tensor.data<T>();
  for (int64_t i = 0; i < tensor.numel(); ++i) {
    const double value = static_cast<double>(data[i]);
    *sum += value;
    *abs_sum += std::fabs(value);
  }
}

// The sum and the sum of absolute values of every element, added in index order as doubles.
void SumElements(const Tensor& tensor, double* sum, double* abs_sum) {
  switch (tensor.dtype()) {
    case DType::kFloat32:
      SumValues<float>(tensor, sum, abs_sum);
      break;
    case DType::kFloat64:
      SumValues<double>(tensor, sum, abs_sum);
      break;
    case DType::kInt32:
      SumValues<int32_t>(tensor, sum, abs_sum);
      break;
    case DType::kInt64:
      SumValues<int64_t>(tensor, sum, abs_sum);
      break;
    case DType::kUInt8:
      SumValues<uint8_t>(tensor, sum, abs_sum);
      break;
    case DType::kBool:
      SumValues<bool>(tensor, sum, abs_sum);
      break;
    case DType::kFloat16:
      SumValues<Float16>(tensor, sum, abs_sum);
      break;
  }
}

// The element at `index` as a double; NaN ranks below every score.
double Score(const Tensor& host, int64_t index) {
  const double value =
      host.dtype() == DType::kFloat32 ? host.data<float>()[index] : host.data<double>()[index];
  return std::isnan(value) ? -INFINITY : value;
}

}  // namespace

std::string ChecksumLine(const std::string& name, const Tensor& host) {
  double sum = 0, abs_sum = 0;
  SumElements(host, &sum, &abs_sum);
  const uint64_t fnv =
      host.numel() > 0 ? Fnv1a64(host.raw_data(), host.nbytes()) : Fnv1a64(nullptr, 0);
  char numbers[128];
  std::snprintf(numbers, sizeof(numbers), "sum=%.9g abs_sum=%.9g fnv=%016" PRIx64, sum, abs_sum,
                fnv);
  return "output " + name + " shape " + host.ShapeString() + " " + numbers;
}

std::string TopClassesLines(const std::string& name, const Tensor& host, int k) {
  if (host.dtype() != DType::kFloat32 && host.dtype() != DType::kFloat64) return "";
  if (host.ndim() < 2 || host.dim(1) < k) return "";
  for (int d = 2; d < host.ndim(); ++d) {
    if (host.dim(d) != 1) return "";
  }
  const int64_t images = host.dim(0), classes = host.dim(1);
  std::string lines;
  std::vector<int64_t> order(classes);
  for (int64_t n = 0; n < images; ++n) {
    std::iota(order.begin(), order.end(), 0);
    std::partial_sort(order.begin(), order.begin() + k, order.end(), [&](int64_t a, int64_t b) {
      const double sa = Score(host, n * classes + a), sb = Score(host, n * classes + b);
      return sa > sb || (sa == sb && a < b);
    });
    lines += "top-" + std::to_string(k) + " " + name + " image " + std::to_string(n) + ":";
    for (int i = 0; i < k; ++i) {
      char entry[64];
      std::snprintf(entry, sizeof(entry), "%s %lld (%.6g)", i ? "," : "",
                    static_cast<long long>(order[i]), Score(host, n * classes + order[i]));
      lines += entry;
    }
    lines += "\n";
  }
  return lines;
}

std::string OutputFileName(const std::string& blob) {
  std::string file = blob.empty() ? "_" : blob;
  for (char& c : file) {
    const bool plain = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                       c == '_' || c == '-' || c == '.';
    if (!plain) c = '_';
  }
  if (file[0] == '.') file[0] = '_';
  return file + ".npy";
}

}  // namespace braid
