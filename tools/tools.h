/* tools.h -- the subcommands of the gx tool. */
#ifndef GX_TOOLS_H
#define GX_TOOLS_H

#include "gx.h"

#include <stdbool.h>

int gx_tool_tour(int argc, char **argv);
int gx_tool_bench(int argc, char **argv);
int gx_tool_ptx(int argc, char **argv); /* tools/ptx.c */
int gx_tool_sass(int argc, char **argv);

/* Prints "what: STATUS: message" and returns 1 when s is not GX_OK. */
int gx_tool_fail(const char *what, gx_status s);

/* Every subcommand answers -h and --help with its usage on stdout, exit status 0
 * (tools/gx.c). */
bool gx_tool_wants_help(const char *arg);
/* "gx CMD: unknown option 'ARG' (see gx CMD --help)" on stderr; returns 2, the
 * exit status of a usage error. */
int gx_tool_bad_option(const char *cmd, const char *arg);

#endif
