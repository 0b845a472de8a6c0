#include "runtime/io/onnx/onnx_constants.h"

#include <cstring>
#include <numeric>

#include "braid/dtype.h"
#include "braid/status.h"
#include "runtime/core/element_count.h"

namespace braid {
namespace {

[[noreturn]] void Throw(const std::string& message) {
  throw Error(Status::InvalidArgument(message));
}

// Refuses a fold of more than kMaxFoldedElements elements; `fold` says what would be folded.
void CheckFoldedCount(int64_t count, const std::string& fold) {
  if (count <= kMaxFoldedElements) return;
  Throw(fold + " would fold " + std::to_string(count) + " elements, more than braid folds (" +
        std::to_string(kMaxFoldedElements) + ")");
}

// The product of dims[begin, end), overflow-checked (runtime/core/element_count.h).
int64_t Product(const std::vector<int64_t>& dims, size_t begin, size_t end) {
  return ElementCount(std::vector<int64_t>(dims.begin() + begin, dims.begin() + end));
}

// Throws unless `count` elements fill `dims` exactly: every ConstantTensor holds its dims' count.
void CheckCount(const std::vector<int64_t>& dims, size_t count) {
  const int64_t want = ElementCount(dims);
  if (static_cast<size_t>(want) != count) {
    Throw("constant of dims " + DimsText(dims) + " needs " + std::to_string(want) +
          " values, has " + std::to_string(count));
  }
}

// The elements of `tensor`, from raw_data (little-endian) or from `typed` (the typed field).
template <typename Raw, typename Out, typename Field>
std::vector<Out> ReadElements(const onnx::TensorProto& tensor, const Field& typed, int64_t count) {
  std::vector<Out> values;
  if (tensor.has_raw_data()) {
    const std::string& raw = tensor.raw_data();
    if (raw.size() % sizeof(Raw) != 0 || raw.size() / sizeof(Raw) != static_cast<size_t>(count)) {
      Throw("tensor '" + tensor.name() + "' has " + std::to_string(raw.size()) + " raw bytes, its dims " +
            DimsText({tensor.dims().begin(), tensor.dims().end()}) + " need " +
            std::to_string(count) + " elements of " + std::to_string(sizeof(Raw)) + " bytes");
    }
    values.resize(count);
    for (int64_t i = 0; i < count; ++i) {
      Raw v;
      std::memcpy(&v, raw.data() + i * sizeof(Raw), sizeof(Raw));
      values[i] = static_cast<Out>(v);
    }
    return values;
  }
  if (typed.size() != count) {
    Throw("tensor '" + tensor.name() + "' holds " + std::to_string(typed.size()) +
          " values, its dims " + DimsText({tensor.dims().begin(), tensor.dims().end()}) +
          " need " + std::to_string(count));
  }
  for (const auto& v : typed) values.push_back(static_cast<Out>(v));
  return values;
}

}  // namespace

int64_t ConstantTensor::numel() const { return Product(dims, 0, dims.size()); }

std::vector<int64_t> ConstantTensor::AsInts() const {
  if (!is_float) return ints;
  std::vector<int64_t> values;
  values.reserve(floats.size());
  for (float f : floats) {
    // int64's range is [-2^63, 2^63); a float outside it (or NaN) has no int64 value.
    if (!(f >= -9.223372036854775808e18f && f < 9.223372036854775808e18f)) {
      Throw("constant value " + std::to_string(f) + " is not an int64");
    }
    values.push_back(static_cast<int64_t>(f));
  }
  return values;
}

std::vector<float> ConstantTensor::AsFloats() const {
  if (is_float) return floats;
  return std::vector<float>(ints.begin(), ints.end());
}

void CheckConstant(const ConstantTensor& c) {
  CheckCount(c.dims, c.is_float ? c.floats.size() : c.ints.size());
}

ConstantTensor FloatConstant(std::vector<int64_t> dims, std::vector<float> values) {
  CheckCount(dims, values.size());
  ConstantTensor c;
  c.dims = std::move(dims);
  c.floats = std::move(values);
  return c;
}

ConstantTensor IntConstant(std::vector<int64_t> dims, std::vector<int64_t> values) {
  CheckCount(dims, values.size());
  ConstantTensor c;
  c.is_float = false;
  c.dims = std::move(dims);
  c.ints = std::move(values);
  return c;
}

ConstantTensor ConstantFromOnnx(const onnx::TensorProto& tensor) {
  if (tensor.data_location() == onnx::TensorProto::EXTERNAL) {
    Throw("tensor '" + tensor.name() + "' is stored in an external file, which braid reads only " +
          "when it imports the model from its file");
  }
  std::vector<int64_t> dims(tensor.dims().begin(), tensor.dims().end());
  int64_t count = 0;
  try {
    count = ElementCount(dims);
  } catch (const Error& e) {
    Throw("tensor '" + tensor.name() + "': " + e.status().message());
  }
  using T = onnx::TensorProto;
  switch (tensor.data_type()) {
    case T::FLOAT:
      return FloatConstant(dims, ReadElements<float, float>(tensor, tensor.float_data(), count));
    case T::DOUBLE:
      return FloatConstant(dims, ReadElements<double, float>(tensor, tensor.double_data(), count));
    case T::INT64:
      return IntConstant(dims, ReadElements<int64_t, int64_t>(tensor, tensor.int64_data(), count));
    case T::INT32:
      return IntConstant(dims, ReadElements<int32_t, int64_t>(tensor, tensor.int32_data(), count));
    case T::INT8:
      return IntConstant(dims, ReadElements<int8_t, int64_t>(tensor, tensor.int32_data(), count));
    case T::UINT8:
      return IntConstant(dims, ReadElements<uint8_t, int64_t>(tensor, tensor.int32_data(), count));
    case T::BOOL:
      return IntConstant(dims, ReadElements<uint8_t, int64_t>(tensor, tensor.int32_data(), count));
    case T::FLOAT16: {  // widened to float, exactly (ONNX keeps the bits in int32_data)
      std::vector<float> values;
      for (int64_t bits : ReadElements<uint16_t, int64_t>(tensor, tensor.int32_data(), count)) {
        if (bits < 0 || bits > 0xffff) {
          Throw("tensor '" + tensor.name() + "' (float16) holds " + std::to_string(bits) +
                ", not the 16 bits of a half");
        }
        values.push_back(HalfBitsToFloat(static_cast<uint16_t>(bits)));
      }
      return FloatConstant(dims, std::move(values));
    }
    default:
      Throw("tensor '" + tensor.name() + "' has ONNX data type " +
            std::to_string(tensor.data_type()) +
            ", braid reads float, float16, double, int8, uint8, int32, int64 and bool");
  }
}

int64_t NormalizeAxis(int64_t axis, int64_t rank, const std::string& what) {
  if (axis < -rank || axis >= rank) {
    Throw(what + " axis " + std::to_string(axis) + " is outside [" + std::to_string(-rank) + ", " +
          std::to_string(rank) + ")");
  }
  return axis < 0 ? axis + rank : axis;
}

ConstantTensor GatherConstant(const ConstantTensor& data, const ConstantTensor& indices,
                              int64_t axis) {
  CheckConstant(data);
  CheckConstant(indices);
  const int64_t rank = static_cast<int64_t>(data.dims.size());
  axis = NormalizeAxis(axis, rank, "Gather");
  const int64_t outer = Product(data.dims, 0, axis);
  const int64_t inner = Product(data.dims, axis + 1, rank);
  const int64_t extent = data.dims[axis];
  ConstantTensor out;
  out.is_float = data.is_float;
  out.dims.assign(data.dims.begin(), data.dims.begin() + axis);
  out.dims.insert(out.dims.end(), indices.dims.begin(), indices.dims.end());
  out.dims.insert(out.dims.end(), data.dims.begin() + axis + 1, data.dims.end());
  const int64_t count = ElementCount(out.dims);
  if (count == 0) return out;  // no loop over dims whose product is empty
  CheckFoldedCount(count,
                   "Gather of constants " + DimsText(data.dims) + " by " + DimsText(indices.dims));
  if (data.is_float) {
    out.floats.reserve(count);
  } else {
    out.ints.reserve(count);
  }
  const std::vector<int64_t> index_values = indices.AsInts();
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t index : index_values) {
      if (index < -extent || index >= extent) {
        Throw("Gather index " + std::to_string(index) + " is outside a dim of " +
              std::to_string(extent));
      }
      if (index < 0) index += extent;
      const int64_t base = (o * extent + index) * inner;
      for (int64_t i = 0; i < inner; ++i) {
        if (data.is_float) {
          out.floats.push_back(data.floats[base + i]);
        } else {
          out.ints.push_back(data.ints[base + i]);
        }
      }
    }
  }
  return out;
}

ConstantTensor ConcatConstants(const std::vector<const ConstantTensor*>& parts, int64_t axis) {
  if (parts.empty()) Throw("Concat of no inputs");
  const ConstantTensor& first = *parts[0];
  const int64_t rank = static_cast<int64_t>(first.dims.size());
  axis = NormalizeAxis(axis, rank, "Concat");
  ConstantTensor out;
  out.is_float = first.is_float;
  out.dims = first.dims;
  out.dims[axis] = 0;
  for (const ConstantTensor* part : parts) {
    if (part->dims.size() != first.dims.size() || part->is_float != first.is_float) {
      Throw("Concat of constants " + DimsText(first.dims) + " and " + DimsText(part->dims) +
            " of different ranks or types");
    }
    for (int64_t d = 0; d < rank; ++d) {
      if (d != axis && part->dims[d] != first.dims[d]) {
        Throw("Concat of constants " + DimsText(first.dims) + " and " + DimsText(part->dims) +
              " on axis " + std::to_string(axis) + ": dim " + std::to_string(d) + " differs");
      }
    }
    if (__builtin_add_overflow(out.dims[axis], part->dims[axis], &out.dims[axis])) {
      Throw("Concat of constants: axis " + std::to_string(axis) + " overflows");
    }
  }
  const int64_t count = ElementCount(out.dims);  // throws when the joined count overflows
  if (count == 0) return out;
  // A part may be one constant listed many times, or a folded Concat of it: the result's size is
  // bounded by the cap, not by the file's.
  CheckFoldedCount(count, "Concat of constants into " + DimsText(out.dims));
  const int64_t outer = Product(first.dims, 0, axis);
  std::vector<int64_t> blocks;
  for (const ConstantTensor* part : parts) {
    CheckConstant(*part);
    blocks.push_back(Product(part->dims, axis, part->dims.size()));
  }
  for (int64_t o = 0; o < outer; ++o) {
    for (size_t p = 0; p < parts.size(); ++p) {
      const ConstantTensor* part = parts[p];
      const int64_t block = blocks[p];
      for (int64_t i = 0; i < block; ++i) {
        if (out.is_float) {
          out.floats.push_back(part->floats[o * block + i]);
        } else {
          out.ints.push_back(part->ints[o * block + i]);
        }
      }
    }
  }
  return out;
}

ConstantTensor TransposeMatrix(const ConstantTensor& matrix) {
  if (matrix.dims.size() != 2) Throw("cannot transpose " + DimsText(matrix.dims) + ": not 2-D");
  CheckConstant(matrix);
  const int64_t rows = matrix.dims[0], cols = matrix.dims[1];
  const std::vector<float> in = matrix.AsFloats();
  if (in.empty()) return FloatConstant({cols, rows}, {});  // no loop over an empty matrix's rows
  std::vector<float> out(in.size());
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t c = 0; c < cols; ++c) out[c * rows + r] = in[r * cols + c];
  }
  return FloatConstant({cols, rows}, std::move(out));
}

}  // namespace braid
