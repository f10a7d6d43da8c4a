/* Status strings, version and build facts. */
#include <volley/base.h>

#include "simd/simd.h"

const char* vl_status_string(vl_status status) {
    switch (status) {
    case VL_OK: return "ok";
    case VL_ERR_INVALID_ARGUMENT: return "invalid argument (NULL pointer or zero count)";
    case VL_ERR_INVALID_FLAGS: return "invalid flags or kind";
    case VL_ERR_OUT_OF_MEMORY: return "out of memory";
    case VL_ERR_INVALID_BOUNDS: return "invalid bounds (NaN or min > max)";
    case VL_ERR_INVALID_QUERY: return "some queries were invalid and answered as misses";
    case VL_ERR_INVALID_HANDLE: return "unknown or removed handle";
    case VL_ERR_DUPLICATE_HANDLE: return "handle repeated in one batch";
    case VL_ERR_TOO_LARGE: return "count too large";
    case VL_ERR_INVALID_GEOMETRY: return "invalid geometry (non-finite vertex or index out of range)";
    }
    return "unknown status";
}

uint32_t vl_get_version(void) { return VL_VERSION; }

const char* vl_get_version_string(void) { return VL_VERSION_STRING; }

const char* vl_get_simd_backend(void) { return VL_SIMD_BACKEND_NAME; }

uint32_t vl_get_simd_width(void) { return VL_SIMD_PREFERRED_WIDTH; }
