# shellcheck shell=bash
# Sourced by lab/bin/lab-up and lab/mirror/mirror-up: how they judge the processes they start.
#
# A process started with `setsid CMD ... &` is, until it has exec'd, a copy of the starting shell: for that moment
# /proc/<pid>/cmdline is the shell's, not CMD's (and setsid itself may fork once more). So whether a pid runs one of
# the lab's programs (proc_cmdline) says something only about a process started earlier (a recycled pid is not
# ours); right after a start, "still starting" means "the process exists" (proc_exists), and only its death, or
# the time running out, is a failure (proc_wait). No message is printed for a pid that is gone.

# proc_cmdline PID: its command line (arguments joined by spaces); status 1, silently, when there is no such
# process or it has exited (a zombie's cmdline is empty).
proc_cmdline() {
  local cmd
  [[ ${1:-} =~ ^[0-9]+$ ]] || return 1
  cmd=$( { tr '\0' ' ' < "/proc/$1/cmdline"; } 2>/dev/null) || return 1
  [ -n "$cmd" ] || return 1
  printf '%s\n' "$cmd"
}

# proc_exists PID: the process exists and has not exited (a zombie, not yet reaped, has exited).
proc_exists() {
  local stat
  [[ ${1:-} =~ ^[0-9]+$ ]] || return 1
  kill -0 "$1" 2>/dev/null || return 1
  stat=$( { cat "/proc/$1/stat"; } 2>/dev/null) || return 1
  stat=${stat##*) }
  [ "${stat%% *}" != Z ]
}

# proc_wait PIDFILE TRIES INTERVAL CHECK...: run CHECK until it succeeds (status 0), at most TRIES times INTERVAL
# seconds apart, while the process whose pid PIDFILE records exists. Status 1: the process is gone (it failed);
# status 2: it still runs but CHECK never succeeded in time.
proc_wait() {
  local pidfile=$1 tries=$2 interval=$3 pid
  shift 3
  for ((i = 0; i < tries; i++)); do
    "$@" && return 0
    pid=$( { cat "$pidfile"; } 2>/dev/null) || pid=
    proc_exists "$pid" || return 1
    sleep "$interval"
  done
  "$@" && return 0
  return 2
}
