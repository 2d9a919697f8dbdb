# Shared by the scripts in stress/peers (sourced, never run): timing and medians.

# now prints the time in nanoseconds.
now() { date +%s%N; }

# time_ms CMD...: wall milliseconds of one run, output discarded; a failure stops the script.
time_ms() {
	local t0 t1
	t0=$(now)
	"$@" >/dev/null 2>&1 || { echo "failed: $*" >&2; "$@" >&2; exit 1; }
	t1=$(now)
	echo $(((t1 - t0) / 1000000))
}

# median reads numbers, one a line, and prints their median (the mean of the two middle ones for
# an even count).
median() { sort -n | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
