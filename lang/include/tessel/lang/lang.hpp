// The tessel DSL: everything a kernel author needs (`using namespace tessel::lang;`).
#pragma once
#include "tessel/lang/builtins.hpp"
#include "tessel/lang/control.hpp"
#include "tessel/lang/dot.hpp"
#include "tessel/lang/hints.hpp"
#include "tessel/lang/math.hpp"
#include "tessel/lang/meta.hpp"
#include "tessel/lang/operators.hpp"
#include "tessel/lang/params.hpp"
#include "tessel/lang/reduce.hpp"
#include "tessel/lang/shape.hpp"
#include "tessel/lang/tile.hpp"
#include "tessel/lang/trace.hpp"
