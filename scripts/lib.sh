# shellcheck shell=bash
# What the scripts share, sourced by each of them (. "$(dirname "$0")/lib.sh", after set -euo
# pipefail): the project root; builds of what they run, made whenever the sources are newer, so
# that nothing measures or runs stale code; the reference harness and its nsd upstream, which a
# script stops only if it started it. Messages start with the calling script's name.

# From this file's place rather than the caller's working directory.
sluice_lib_root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

# sluice_root: the project's directory
sluice_root() { printf '%s\n' "$sluice_lib_root"; }

# mvn_build WHAT MAVEN_ARG... : one line saying so on stderr, then Maven in the project root (tests
# never run); exit 1 when it fails. Maven 3.8 prints terminal resets even with -B -q, so its output
# is kept and shown only for a failed build.
mvn_build() {
  local what=$1 log
  shift
  echo "${0##*/}: building $what" >&2
  if ! log=$(cd "$sluice_lib_root" && mvn -B -q -DskipTests "$@" 2>&1); then
    printf '%s\n' "$log" >&2
    echo "${0##*/}: the build failed" >&2
    exit 1
  fi
}

# newer_than FILE PATH... : whether any file under the PATHs is newer than FILE
newer_than() {
  local file=$1
  shift
  [ -n "$(find "$@" -newer "$file" -print -quit)" ]
}

# build_if_stale: target/sluice.jar, rebuilt when it is missing or anything under src/main, or
# pom.xml, is newer
build_if_stale() {
  local r=$sluice_lib_root since
  if [ -f "$r/target/sluice.jar" ] && ! newer_than "$r/target/sluice.jar" "$r/src/main" "$r/pom.xml"; then
    return 0
  fi
  since=$(date +%s.%N)
  mvn_build target/sluice.jar package
  # package compiles the test classes too (-DskipTests only skips running them)
  touch -d "@$since" "$r/target/test-classes.stamp"
}

# build_tests_if_stale: target/test-classes (and target/classes), rebuilt when anything under
# src/main or src/test, or pom.xml, is newer than the last build. Maven rewrites no one file there
# on every build, hence the stamp, dated from the build's start so that an edit made during the
# build still counts as newer.
build_tests_if_stale() {
  local r=$sluice_lib_root stamp=$sluice_lib_root/target/test-classes.stamp since
  if [ -f "$stamp" ] && [ -d "$r/target/test-classes" ] \
     && ! newer_than "$stamp" "$r/src/main" "$r/src/test" "$r/pom.xml"; then
    return 0
  fi
  since=$(date +%s.%N)
  mvn_build target/test-classes test-compile
  touch -d "@$since" "$stamp"
}

# test_classpath: the classpath of the test classes, sluice's and every dependency's, built first
# when stale. The dependencies' list only pom.xml changes; Maven leaves its file alone when the
# content would not change, hence the touch.
test_classpath() {
  local r=$sluice_lib_root
  build_tests_if_stale
  if [ ! -f "$r/target/test.classpath" ] || [ "$r/pom.xml" -nt "$r/target/test.classpath" ]; then
    mvn_build target/test.classpath dependency:build-classpath -Dmdep.outputFile=target/test.classpath
    touch "$r/target/test.classpath"
  fi
  printf '%s
' "$r/target/test-classes:$r/target/classes:$(cat "$r/target/test.classpath")"
}

# harness_dir: the reference harness, $BENCH_HARNESS or ../shared/bench beside the project
harness_dir() { printf '%s\n' "${BENCH_HARNESS:-$sluice_lib_root/../shared/bench}"; }

# need_harness: harness_dir, or what is missing on stderr and exit 2; as harness=$(need_harness),
# whose failure set -e turns into the script's exit 2
need_harness() {
  local h
  h=$(harness_dir)
  if [ ! -f "$h/lib.sh" ] || [ ! -x "$h/upstream.sh" ]; then
    echo "${0##*/}: needs the reference harness ($h, or BENCH_HARNESS)" >&2
    exit 2
  fi
  printf '%s\n' "$h"
}

# The harness's nsd upstream on 127.0.0.1:5300. A script stops it at exit only if it started it, as
# the harness's run.sh does: an upstream someone else runs (another bench, a run.sh) stays up.
started_upstream=0

# start_upstream: nsd started unless the harness's upstream is running; non-zero when it could not
start_upstream() {
  local h
  h=$(harness_dir)
  "$h/upstream.sh" status >/dev/null 2>&1 && return 0
  "$h/upstream.sh" start nsd >/dev/null 2>&1 || return 1
  started_upstream=1
}

# stop_upstream: for the script's EXIT trap; stops the upstream only if start_upstream started it
stop_upstream() {
  [ "$started_upstream" = 1 ] || return 0
  "$(harness_dir)/upstream.sh" stop >/dev/null 2>&1 || true
  started_upstream=0
}

# Background processes a script started, stopped by stop_background (from its EXIT trap).
background=()

# stop_background: TERM to each process in background, then wait for them
stop_background() {
  local p
  for p in "${background[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
}

# wait_for_line PID LOG TEXT WHO [SECONDS]: until LOG holds TEXT (10 s at most); exit 1, showing the
# log, when PID dies first or the time runs out. WHO names the script in the message.
wait_for_line() {
  local pid=$1 log=$2 text=$3 who=$4 tenths=$(( ${5:-10} * 10 )) i
  for ((i = 0; i < tenths; i++)); do
    grep -q "$text" "$log" 2>/dev/null && return 0
    kill -0 "$pid" 2>/dev/null || { echo "$who: it did not start:" >&2; cat "$log" >&2; exit 1; }
    sleep 0.1
  done
  echo "$who: '$text' not in $log after ${5:-10} s:" >&2
  cat "$log" >&2
  exit 1
}

# process_ticks PID: CPU the process has used, user and system, in clock ticks (100 a second)
process_ticks() { awk '{ sub(/^.*\) /, ""); split($0, f, " "); print f[12] + f[13] }' "/proc/$1/stat"; }

# wait_redis PORT: until a Redis on 127.0.0.1:PORT answers PING
wait_redis() { until redis-cli -p "$1" ping >/dev/null 2>&1; do sleep 0.1; done; }
