// Stream: an owned CUstream.
#pragma once
#include <cuda.h>

namespace tessel::rt {

// A CUDA stream of the current context. Movable, not copyable. Launch on the legacy
// default stream by passing nullptr wherever a CUstream is taken.
class Stream {
 public:
  explicit Stream(unsigned flags = CU_STREAM_DEFAULT);
  ~Stream();
  Stream(Stream&& other) noexcept;
  Stream& operator=(Stream&& other) noexcept;
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;

  void synchronize() const;
  CUstream handle() const { return stream_; }
  operator CUstream() const { return stream_; }  // so a Stream passes where CUstream is taken

 private:
  CUstream stream_ = nullptr;
};

}  // namespace tessel::rt
