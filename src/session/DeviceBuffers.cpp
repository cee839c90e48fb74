// Device copies of a BufferSet (see DeviceBuffers.h).
#include "superkernel/session/DeviceBuffers.h"

#include "superkernel/target/Backend.h"

namespace sk {

DeviceBuffers::~DeviceBuffers() {
  for (void* p : copies_)
    if (p) device_.release(p);
}

Status DeviceBuffers::upload() {
  if (device_.hostMemory()) return Status::success();
  if (copies_.empty()) {
    copies_.assign(buffers_.size(), nullptr);
    for (size_t i = 0; i < buffers_.size(); ++i) {
      SK_ASSIGN_OR_RETURN(copies_[i], device_.allocate(buffers_.bytes(i)));
    }
  }
  for (size_t i = 0; i < buffers_.size(); ++i)
    SK_RETURN_IF_ERROR(device_.upload(copies_[i], buffers_.data(i), buffers_.bytes(i)));
  return Status::success();
}

Status DeviceBuffers::download() {
  if (device_.hostMemory()) return Status::success();
  for (size_t i = 0; i < copies_.size(); ++i)
    SK_RETURN_IF_ERROR(device_.download(buffers_.data(i), copies_[i], buffers_.bytes(i)));
  return Status::success();
}

void* const* DeviceBuffers::pointers() const {
  return device_.hostMemory() ? buffers_.pointers() : copies_.data();
}

}  // namespace sk
