// A BufferSet's buffers where a device's run() can use them: the set's own
// memory on a host-memory device (cpu, the ascend simulator), else copies in
// the device's memory (cuda), uploaded and downloaded on request and released
// with this object whatever happens. Session::run(plan, BufferSet&) copies
// around one run; a timed run uploads once and then times only launches.
#pragma once

#include <cstddef>
#include <vector>

#include "superkernel/session/BufferSet.h"
#include "superkernel/support/Error.h"

namespace sk {

class Device;

class DeviceBuffers {
 public:
  DeviceBuffers(Device& device, BufferSet& buffers) : device_(device), buffers_(buffers) {}
  DeviceBuffers(const DeviceBuffers&) = delete;
  DeviceBuffers& operator=(const DeviceBuffers&) = delete;
  ~DeviceBuffers();

  /// Allocate the device copies (first call) and copy the set's bytes into them.
  Status upload();
  /// Copy the device copies back into the set.
  Status download();
  /// Base pointers in list order, for Session::run(plan, pointers, size).
  void* const* pointers() const;
  size_t size() const { return buffers_.size(); }

 private:
  Device& device_;
  BufferSet& buffers_;
  std::vector<void*> copies_;  // empty on a host-memory device
};

}  // namespace sk
