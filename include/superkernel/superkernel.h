// superkernel: the public C++ API in one include.
//
//   #include <superkernel/superkernel.h>
//   auto session = sk::Session::create();
//   auto list = sk::loadOpList("model.json");
//   auto plan = (*session)->compile(*list);
//   auto buffers = sk::BufferSet::create(*list);
//   (*session)->run(*plan, *buffers);
#pragma once

#include "superkernel/cache/Cache.h"
#include "superkernel/cache/Key.h"
#include "superkernel/cache/Trust.h"
#include "superkernel/codegen/Emitter.h"
#include "superkernel/codegen/Template.h"
#include "superkernel/driver/Driver.h"
#include "superkernel/driver/Process.h"
#include "superkernel/driver/Toolchain.h"
#include "superkernel/frontend/Graph.h"
#include "superkernel/frontend/OpList.h"
#include "superkernel/frontend/Options.h"
#include "superkernel/plan/Plan.h"
#include "superkernel/plan/MachineModel.h"
#include "superkernel/runtime/Executor.h"
#include "superkernel/codegen/SyncLayout.h"
#include "superkernel/session/BufferSet.h"
#include "superkernel/session/DeviceBuffers.h"
#include "superkernel/session/Session.h"
#include "superkernel/target/Backend.h"
#include "superkernel/target/Targets.h"
#include "superkernel/target/cpu/Cpu.h"
#include "superkernel/support/Error.h"
#include "superkernel/support/Log.h"
#include "superkernel/support/Paths.h"
#include "superkernel/support/Sha256.h"
#include "superkernel/support/Size.h"
