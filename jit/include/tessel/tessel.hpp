// tessel: the DSL and the JIT in one include.
#pragma once
#include "tessel/jit/device.hpp"
#include "tessel/jit/kernel.hpp"
#include "tessel/lang/lang.hpp"
