/* tools.h -- the subcommands of the gx tool. */
#ifndef GX_TOOLS_H
#define GX_TOOLS_H

#include "gx.h"

int gx_tool_tour(int argc, char **argv);
int gx_tool_bench(int argc, char **argv);
int gx_tool_ptx(int argc, char **argv);    /* tools/ptx.c */
int gx_tool_sass(int argc, char **argv);

/* Prints "what: STATUS: message" and returns 1 when s is not GX_OK. */
int gx_tool_fail(const char *what, gx_status s);

#endif
