#!/bin/sh
# tool_options.sh GX -- the gx tool's command line: every subcommand answers --help
# and -h with its usage (exit 0), rejects an unknown option with a pointer to --help
# (exit 2), and a one-case benchmark keeps stdout for JSON and progress on stderr.
gx=$1
fail=0
t=$(mktemp -d "${TMPDIR:-/tmp}/gxt-tool-XXXXXX") || exit 1
trap 'rm -rf "$t"' EXIT
bad() { echo "FAILED: $*"; fail=1; }
for cmd in info tour bench ptx sass; do
  for h in --help -h; do
    "$gx" $cmd $h >"$t/out" 2>"$t/err"; rc=$?
    [ $rc = 0 ] || bad "gx $cmd $h exited $rc"
    grep -q "usage: gx" "$t/out" || bad "gx $cmd $h printed no usage line"
  done
  "$gx" $cmd --bogus >"$t/out" 2>"$t/err"; rc=$?
  [ $rc = 2 ] || bad "gx $cmd --bogus exited $rc, want 2"
  grep -q -- "--help" "$t/err" || bad "gx $cmd --bogus does not point at --help"
done
"$gx" --help >"$t/out" 2>&1 || bad "gx --help failed"
for cmd in info tour bench ptx sass; do grep -q "$cmd" "$t/out" || bad "gx --help does not list $cmd"; done
"$gx" bogus >/dev/null 2>&1; [ $? = 2 ] || bad "gx bogus did not exit 2"
GX_BACKEND=cpu "$gx" bench --filter =fill_f32 --sizes 10 --reps 1 --json >"$t/out" 2>"$t/err" || bad "gx bench one case failed"
[ -s "$t/out" ] || bad "gx bench --json printed nothing"
grep -qv '^{' "$t/out" && bad "gx bench --json printed a non-JSON line on stdout"
grep -q '\[[0-9]*/[0-9]*\]' "$t/err" || bad "gx bench printed no [k/N] progress on stderr"
# gx info --timing: each stage named; the second run finds the kernel in the disk cache
for run in cold warm; do
  GX_BACKEND=cpu GX_CACHE_DIR="$t/cache" "$gx" info --timing >"$t/out" 2>"$t/err" || bad "gx info --timing ($run) failed"
  for stage in "driver load + init" "device context" "context creation" "module compile" "module load" \
               "first map call" "first launch" "total" "gx's own part"; do
    grep -q "$stage" "$t/out" || bad "gx info --timing ($run) does not print '$stage'"
  done
done
grep -q "warm: from the disk cache" "$t/out" || bad "gx info --timing: the second run did not find the kernel cached"
# the latency cases write checked rows
GX_BACKEND=cpu GX_CACHE_DIR="$t/cache" "$gx" bench --filter floor_,lat_ --sizes 10 --reps 3 --json >"$t/out" 2>"$t/err" ||
  bad "gx bench floor_,lat_ failed"
for c in floor_launch_sync floor_launch_d2h_sync lat_sum_to_host lat_scan_sync lat_filter_new lat_map_sync; do
  grep "\"$c\"" "$t/out" | grep -q '"ok":true' || bad "gx bench $c wrote no checked row"
done
[ $fail = 0 ] && echo "PASS tool_options" || cat "$t/err"
exit $fail
