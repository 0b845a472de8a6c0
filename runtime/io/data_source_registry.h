// The process's registry of the application's data sources (<braid/data_source.h>): what
// RegisterDataSource and UnregisterDataSource change and what readers (the DataSourceInput op)
// look up, and a scoped registration under a fresh name for braid's own callers (the Trainer).
//
//   std::shared_ptr<const RegisteredDataSource> s = FindDataSource("squares");  // null: none
//   s->fields;                          // checked once, at registration
//   Status read = s->Read(7, slots);    // serialised with every other Read of the same object
//
//   ScopedDataSource train("trainer/train", source);  // throws braid::Error for a bad source
//   train.name();                                       // "trainer/train/3", unregistered with it
//   train.entry().fields;                               // held, whoever unregisters the name
//
// Ownership and threads: the registry (one per process) maps names to shared entries under its
// mutex; an entry shares ownership of the source and of the source object's read mutex (one per
// object, so an object registered under several names still sees one Read at a time). An entry
// outlives its name when a reader still holds it. Every function here is thread-safe.
#ifndef BRAID_RUNTIME_IO_DATA_SOURCE_REGISTRY_H_
#define BRAID_RUNTIME_IO_DATA_SOURCE_REGISTRY_H_

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "braid/data_source.h"
#include "braid/status.h"

namespace braid {

// The most fields a source may have (DataSourceInput's outputs).
inline constexpr int kMaxDataFields = 64;

struct RegisteredDataSource {
  std::string name;
  std::shared_ptr<DataSource> source;
  int64_t size = 0;
  std::vector<DataField> fields;
  std::shared_ptr<std::mutex> read_mu;  // the source object's, shared by all its names

  // source->Read under read_mu; an exception it throws becomes a Status (a braid::Error's own, or
  // Internal with the exception's text).
  Status Read(int64_t index, const std::vector<void*>& slots) const;
  // "data source 'NAME'".
  std::string Describe() const;
};

// The entry registered as `name`, or null.
std::shared_ptr<const RegisteredDataSource> FindDataSource(const std::string& name);

// A registration under a name no other holds ("PREFIX/N"), undone by the destructor. It holds its
// entry: entry() stays valid even if the application unregisters the name.
class ScopedDataSource {
 public:
  ScopedDataSource(const std::string& prefix, std::shared_ptr<DataSource> source);
  ~ScopedDataSource();
  ScopedDataSource(const ScopedDataSource&) = delete;
  ScopedDataSource& operator=(const ScopedDataSource&) = delete;

  const std::string& name() const { return name_; }
  const RegisteredDataSource& entry() const { return *entry_; }

 private:
  std::string name_;
  std::shared_ptr<const RegisteredDataSource> entry_;
};

}  // namespace braid

#endif  // BRAID_RUNTIME_IO_DATA_SOURCE_REGISTRY_H_
