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

# cpu_wall CMD...: "wall_ms cpu_ms" of one run of CMD (a function or a program): its wall time,
# and the user+sys CPU of it and every process it waited for; output discarded; a failure stops
# the script.
cpu_wall() {
	local TIMEFORMAT='%R %U %S' t
	if ! t=$({ time "$@" >/dev/null 2>&1; } 2>&1); then
		echo "failed: $*" >&2
		"$@" >&2
		exit 1
	fi
	echo "$t" | awk '{printf "%d %d\n", $1*1000, ($2+$3)*1000}'
}

# build_vx DIR builds vx into DIR with vx-sandbox beside it, as vx is installed (README): without
# the small supervisor next to it, each task vx starts pays a start of the whole of vx instead.
# Both are static (CGO_ENABLED=0), as the npm packages hold them.
build_vx() {
	(cd "$repo" && CGO_ENABLED=0 go build -o "$1/vx" ./cmd/vx && CGO_ENABLED=0 go build -o "$1/vx-sandbox" ./cmd/vx-sandbox)
}
