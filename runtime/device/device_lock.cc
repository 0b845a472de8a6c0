#include "runtime/device/device_lock.h"

#include <algorithm>
#include <atomic>
#include <map>
#include <utility>

#include "runtime/core/device_context.h"

namespace braid {
namespace {

std::atomic<bool> g_exclusion{true};

// The mutex of `device`'s physical device: logical devices on one card share it.
std::mutex& MutexOf(const Device& physical) {
  static std::mutex* const made_mu = new std::mutex();
  // Never destroyed: detached stream threads and static destructors may still lock them.
  static auto* const mutexes = new std::map<std::pair<int, int>, std::mutex>();
  std::lock_guard<std::mutex> lock(*made_mu);
  return (*mutexes)[{static_cast<int>(physical.type), physical.id}];
}

}  // namespace

std::unique_lock<std::mutex> LockDevice(const Device& device) {
  if (!g_exclusion.load(std::memory_order_acquire)) return {};
  return std::unique_lock<std::mutex>(MutexOf(PhysicalDevice(device)));
}

DevicesLock::DevicesLock(std::vector<Device> devices) {
  if (!g_exclusion.load(std::memory_order_acquire)) return;
  for (Device& device : devices) device = PhysicalDevice(device);
  auto key = [](const Device& d) { return std::make_pair(static_cast<int>(d.type), d.id); };
  std::sort(devices.begin(), devices.end(),
            [&](const Device& a, const Device& b) { return key(a) < key(b); });
  devices.erase(std::unique(devices.begin(), devices.end()), devices.end());
  for (const Device& device : devices) locks_.emplace_back(MutexOf(device));
}

void SetCollectiveAllocationExclusion(bool on) { g_exclusion.store(on, std::memory_order_release); }

bool CollectiveAllocationExclusion() { return g_exclusion.load(std::memory_order_acquire); }

}  // namespace braid
