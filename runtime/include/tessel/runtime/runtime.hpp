// Umbrella header for tessel's CUDA driver runtime (no LLVM, no compiler).
#pragma once
#include "tessel/runtime/buffer.hpp"
#include "tessel/runtime/context.hpp"
#include "tessel/runtime/device.hpp"
#include "tessel/runtime/driver.hpp"
#include "tessel/runtime/error.hpp"
#include "tessel/runtime/event.hpp"
#include "tessel/runtime/function.hpp"
#include "tessel/runtime/launch.hpp"
#include "tessel/runtime/linker.hpp"
#include "tessel/runtime/module.hpp"
#include "tessel/runtime/stream.hpp"
#include "tessel/runtime/tensor_map.hpp"
