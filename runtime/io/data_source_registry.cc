#include "runtime/io/data_source_registry.h"

#include <exception>
#include <map>
#include <utility>

namespace braid {
namespace {

struct Registry {
  std::mutex mu;
  std::map<std::string, std::shared_ptr<const RegisteredDataSource>> by_name;  // guarded by mu
  // Each registered object's read mutex, while some entry holds it; guarded by mu. An object
  // stays alive while its mutex does (every holder also holds the object), so its address is
  // not reused by another while it is here.
  std::map<const DataSource*, std::weak_ptr<std::mutex>> read_mu;
  int64_t scoped = 0;  // ScopedDataSource's counter; guarded by mu
};

Registry& TheRegistry() {
  static Registry* registry = new Registry;  // never destroyed: readers may outlive main
  return *registry;
}

// Checks the contract's first point and copies the source's size and fields into an entry.
Status Describe(const std::string& name, std::shared_ptr<DataSource> source,
                RegisteredDataSource* entry) {
  const std::string where = "data source '" + name + "'";
  if (name.empty()) return Status::InvalidArgument("a data source needs a non-empty name");
  if (source == nullptr) return Status::InvalidArgument(where + " is null");
  try {
    entry->size = source->size();
    entry->fields = source->fields();
  } catch (const std::exception& e) {
    return Status::InvalidArgument(where + ": size() or fields() threw: " + e.what());
  }
  if (entry->size <= 0) {
    return Status::InvalidArgument(where + " holds " + std::to_string(entry->size) +
                                   " examples; it needs at least one");
  }
  if (entry->fields.empty()) return Status::InvalidArgument(where + " has no fields");
  for (size_t i = 0; i < entry->fields.size(); ++i) {
    const DataField& f = entry->fields[i];
    const std::string field = where + " field " + std::to_string(i);
    if (f.name.empty()) return Status::InvalidArgument(field + " has no name");
    for (int64_t d : f.dims) {
      if (d < 0) return Status::InvalidArgument(field + " ('" + f.name + "') has a negative dim");
    }
  }
  entry->name = name;
  entry->source = std::move(source);
  return Status::OK();
}

Status Register(Registry& r, const std::string& name, std::shared_ptr<DataSource> source) {
  auto entry = std::make_shared<RegisteredDataSource>();
  Status described = Describe(name, std::move(source), entry.get());  // the application's code:
  if (!described.ok()) return described;                              // not under the lock
  std::lock_guard<std::mutex> lock(r.mu);
  if (r.by_name.count(name) != 0) {
    return Status::InvalidArgument("data source '" + name + "' is already registered");
  }
  std::weak_ptr<std::mutex>& object_mu = r.read_mu[entry->source.get()];
  entry->read_mu = object_mu.lock();
  if (entry->read_mu == nullptr) {
    entry->read_mu = std::make_shared<std::mutex>();
    object_mu = entry->read_mu;
  }
  r.by_name.emplace(name, std::move(entry));
  return Status::OK();
}

}  // namespace

Status RegisteredDataSource::Read(int64_t index, const std::vector<void*>& slots) const {
  std::lock_guard<std::mutex> lock(*read_mu);
  try {
    return source->Read(index, slots);
  } catch (const Error& e) {
    return e.status();
  } catch (const std::exception& e) {
    return Status::Internal(std::string("Read threw: ") + e.what());
  }
}

std::string RegisteredDataSource::Describe() const { return "data source '" + name + "'"; }

Status RegisterDataSource(const std::string& name, std::shared_ptr<DataSource> source) {
  return Register(TheRegistry(), name, std::move(source));
}

Status UnregisterDataSource(const std::string& name) {
  Registry& r = TheRegistry();
  std::lock_guard<std::mutex> lock(r.mu);
  auto it = r.by_name.find(name);
  if (it == r.by_name.end()) {
    return Status::NotFound("data source '" + name + "' is not registered");
  }
  const DataSource* object = it->second->source.get();
  r.by_name.erase(it);
  auto object_mu = r.read_mu.find(object);
  if (object_mu != r.read_mu.end() && object_mu->second.expired()) r.read_mu.erase(object_mu);
  return Status::OK();
}

std::shared_ptr<const RegisteredDataSource> FindDataSource(const std::string& name) {
  Registry& r = TheRegistry();
  std::lock_guard<std::mutex> lock(r.mu);
  auto it = r.by_name.find(name);
  return it == r.by_name.end() ? nullptr : it->second;
}

ScopedDataSource::ScopedDataSource(const std::string& prefix, std::shared_ptr<DataSource> source) {
  Registry& r = TheRegistry();
  for (;;) {
    {
      std::lock_guard<std::mutex> lock(r.mu);
      name_ = prefix + "/" + std::to_string(r.scoped++);
    }
    const Status registered = Register(r, name_, source);
    if (registered.ok()) return;
    if (FindDataSource(name_) == nullptr) throw Error(registered);  // a bad source, not the name
  }
}

ScopedDataSource::~ScopedDataSource() { (void)UnregisterDataSource(name_); }

}  // namespace braid
