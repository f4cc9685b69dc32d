/* device_header.c -- the text of include/gx/device.h, which gx hands to NVRTC as an
 * in-memory header for user kernels (no include path at run time).  The build
 * embeds the file's bytes (cmake/embed.cmake), so the two cannot drift apart. */
#include "gx.h"
#include "gx_device_h.inc"

const char *gx_device_header(void) { return (const char *)gx_device_h; }
