/* api.h: what the public context (api.c) builds on: the flow, the plan's table, step options. */
#ifndef GPUIMG_API_H
#define GPUIMG_API_H

#include "flow.h"
#include "plan.h"
#include "report.h"

#endif
