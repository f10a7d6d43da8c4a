/* The public validity checks. */
#include <volley/base.h>

#include "core/valid.h"

bool vl_aabb_is_valid(const vl_aabb* box) { return box && vl_box_valid(box); }

bool vl_ray_is_valid(const vl_ray* ray) { return ray && vl_ray_valid(ray); }
