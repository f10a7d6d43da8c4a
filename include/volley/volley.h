/* volley: batched incoherent spatial queries. Include this one header. */
#ifndef VOLLEY_VOLLEY_H
#define VOLLEY_VOLLEY_H

#include <volley/base.h>
#include <volley/types.h>
#include <volley/broadphase.h>
#include <volley/bvh.h>
#include <volley/tasks.h>

#endif
