/* Stand-ins for the Bullet peer when the tool is built without Bullet. */
#include "tool.h"

int tool_bullet_built(void) { return 0; }
tool_peer* tool_bullet_create(const scene_mesh* m, double* seconds) {
    (void)m, (void)seconds;
    return NULL;
}
uint32_t tool_bullet_trace(tool_peer* p, const vl_ray* rays, uint32_t count) {
    (void)p, (void)rays, (void)count;
    return 0;
}
void tool_bullet_destroy(tool_peer* p) { (void)p; }
