// ExternalMemory: the registration of caller-owned memory, ended with the guard.
#include "tessel/jit/device.hpp"

namespace tessel::jit {

ExternalMemory::~ExternalMemory() {
  // A destructor must not throw (it may run while another exception unwinds). The only failure
  // is an unknown pointer, which means the registration was already undone by hand: nothing is
  // left to release, so the error is dropped.
  try {
    dev_->unregister_external(p_);
  } catch (...) {
  }
}

}  // namespace tessel::jit
