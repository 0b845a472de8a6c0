#include "runtime/io/data_source_registry.h"

#include <exception>
#include <map>
#include <utility>

#include "runtime/core/element_count.h"

namespace braid {
namespace {

struct Registry {
  std::mutex mu;
  std::map<std::string, std::shared_ptr<const RegisteredDataSource>> by_name;  // guarded by mu
  // Each registered object's read mutex, while some entry holds it; guarded by mu. An object
  // stays alive while its mutex does (every holder also holds the object), so its address is not
  // reused by another while the mutex lives; expired ones are swept at each registration.
  std::map<const DataSource*, std::weak_ptr<std::mutex>> read_mu;
  int64_t scoped = 0;  // ScopedDataSource's counter; guarded by mu
};

Registry& TheRegistry() {
  static Registry* registry = new Registry;  // never destroyed: readers may outlive main
  return *registry;
}

// The read mutex of `source`'s object: the one its other entries share, or a new one.
std::shared_ptr<std::mutex> ReadMutexOf(Registry& r, const DataSource* source) {
  std::lock_guard<std::mutex> lock(r.mu);
  for (auto it = r.read_mu.begin(); it != r.read_mu.end();) {
    it = it->second.expired() && it->first != source ? r.read_mu.erase(it) : std::next(it);
  }
  std::weak_ptr<std::mutex>& object_mu = r.read_mu[source];
  std::shared_ptr<std::mutex> mu = object_mu.lock();
  if (mu == nullptr) {
    mu = std::make_shared<std::mutex>();
    object_mu = mu;
  }
  return mu;
}

// Checks the contract's first point on what size() and fields() say.
Status CheckDescription(const std::string& where, const RegisteredDataSource& entry) {
  if (entry.size <= 0) {
    return Status::InvalidArgument(where + " holds " + std::to_string(entry.size) +
                                   " examples; it needs at least one");
  }
  if (entry.fields.empty()) return Status::InvalidArgument(where + " has no fields");
  if (entry.fields.size() > kMaxDataFields) {
    return Status::InvalidArgument(where + " has " + std::to_string(entry.fields.size()) +
                                   " fields; at most " + std::to_string(kMaxDataFields));
  }
  for (size_t i = 0; i < entry.fields.size(); ++i) {
    const DataField& f = entry.fields[i];
    const std::string field = where + " field " + std::to_string(i);
    if (f.name.empty()) return Status::InvalidArgument(field + " has no name");
    if (DTypeSize(f.dtype) == 0) {
      return Status::InvalidArgument(field + " ('" + f.name + "') has no dtype braid knows (" +
                                     std::to_string(static_cast<int>(f.dtype)) + ")");
    }
    for (int64_t d : f.dims) {
      if (d < 0) return Status::InvalidArgument(field + " ('" + f.name + "') has a negative dim");
    }
    try {
      ElementCount(f.dims, f.dtype);
    } catch (const Error& e) {
      return Status::InvalidArgument(field + " ('" + f.name + "'): " + e.status().message());
    }
  }
  return Status::OK();
}

// An entry for `source`: its size and fields, asked under its read mutex (so never beside a
// Read of the same object) and checked.
Status Describe(Registry& r, const std::string& name, std::shared_ptr<DataSource> source,
                std::shared_ptr<RegisteredDataSource>* entry) {
  const std::string where = "data source '" + name + "'";
  if (name.empty()) return Status::InvalidArgument("a data source needs a non-empty name");
  if (source == nullptr) return Status::InvalidArgument(where + " is null");
  auto e = std::make_shared<RegisteredDataSource>();
  e->read_mu = ReadMutexOf(r, source.get());
  try {
    std::lock_guard<std::mutex> lock(*e->read_mu);
    e->size = source->size();
    e->fields = source->fields();
  } catch (const std::exception& error) {
    return Status::InvalidArgument(where + ": size() or fields() threw: " + error.what());
  } catch (...) {
    return Status::InvalidArgument(where + ": size() or fields() threw");
  }
  const Status checked = CheckDescription(where, *e);
  if (!checked.ok()) return checked;
  e->name = name;
  e->source = std::move(source);
  *entry = std::move(e);
  return Status::OK();
}

// Registers `source` as `name` and sets *registered to its entry; *name_taken tells a refusal for
// the name from one for the source.
Status Register(Registry& r, const std::string& name, std::shared_ptr<DataSource> source,
                bool* name_taken, std::shared_ptr<const RegisteredDataSource>* registered) {
  *name_taken = false;
  std::shared_ptr<RegisteredDataSource> entry;
  const Status described = Describe(r, name, std::move(source), &entry);  // the application's
  if (!described.ok()) return described;                                  // code, not under mu
  std::lock_guard<std::mutex> lock(r.mu);
  if (!r.by_name.emplace(name, entry).second) {
    *name_taken = true;
    return Status::InvalidArgument("data source '" + name + "' is already registered");
  }
  *registered = std::move(entry);
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
  } catch (...) {
    return Status::Internal("Read threw an exception that is no std::exception");
  }
}

std::string RegisteredDataSource::Describe() const { return "data source '" + name + "'"; }

Status RegisterDataSource(const std::string& name, std::shared_ptr<DataSource> source) {
  bool name_taken = false;
  std::shared_ptr<const RegisteredDataSource> entry;
  return Register(TheRegistry(), name, std::move(source), &name_taken, &entry);
}

Status UnregisterDataSource(const std::string& name) {
  Registry& r = TheRegistry();
  std::lock_guard<std::mutex> lock(r.mu);
  if (r.by_name.erase(name) == 0) {
    return Status::NotFound("data source '" + name + "' is not registered");
  }
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
  for (bool name_taken = true; name_taken;) {  // a name the application took: the next one
    {
      std::lock_guard<std::mutex> lock(r.mu);
      name_ = prefix + "/" + std::to_string(r.scoped++);
    }
    const Status registered = Register(r, name_, source, &name_taken, &entry_);
    if (!registered.ok() && !name_taken) throw Error(registered);
  }
}

ScopedDataSource::~ScopedDataSource() { (void)UnregisterDataSource(name_); }

}  // namespace braid
