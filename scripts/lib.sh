# Common helpers for the harness scripts. Source it; do not run it.
# shellcheck shell=bash

TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD=${BUILD_DIR:-$TOP/build}
export TOP BUILD
# shellcheck source=scripts/base.env
. "$TOP/scripts/base.env"

# Exit codes shared by every script (README documents them).
EX_PASS=0
EX_FAIL=1
EX_SETUP=2
EX_SKIP=4
export EX_PASS EX_FAIL EX_SETUP EX_SKIP

log() { printf '%s: %s\n' "${0##*/}" "$*" >&2; }
die() { log "error: $*"; exit "$EX_SETUP"; }

need_tools() {
	local t missing=
	for t in "$@"; do
		command -v "$t" >/dev/null 2>&1 || missing="$missing $t"
	done
	[ -z "$missing" ] || die "missing tool(s):$missing (run: sudo scripts/install-deps.sh)"
}

# Run a long command with its output in LOGFILE, printing only a
# heartbeat, and show the tail of the log when it fails.
run_logged() {
	local logfile=$1; shift
	local start=$SECONDS
	"$@" >"$logfile" 2>&1 &
	local pid=$!
	while kill -0 "$pid" 2>/dev/null; do
		sleep 10
		kill -0 "$pid" 2>/dev/null &&
			log "  ... $((SECONDS - start))s, $(wc -l <"$logfile") log lines"
	done
	if ! wait "$pid"; then
		log "failed: $* (full log: $logfile)"
		grep -E 'error|Error|ERROR' "$logfile" | head -n 20 >&2
		tail -n 20 "$logfile" >&2
		return 1
	fi
}

# One TAP line for a harness test: ok when exit status RC is WANT and
# FILE has a line matching PATTERN (shown), else not ok with FILE's last
# lines. Counts in the caller's n and failed.
tap_check() {
	local desc=$1 rc=$2 want=$3 pattern=$4 file=$5
	n=$((n + 1))
	if [ "$rc" = "$want" ] && grep -q -- "$pattern" "$file"; then
		echo "ok $n - $desc: exit $rc, $(grep -- "$pattern" "$file" | head -n 1)"
	else
		echo "not ok $n - $desc: exit $rc (want $want and '$pattern'):"
		sed 's/^/#   /' "$file" | tail -n 20
		failed=$((failed + 1))
	fi
}

# The kernel log lines that fail a run (scripts/kernel-complaints.txt),
# as one extended regular expression for grep -E.
kernel_complaints() {
	sed -e '/^#/d' -e '/^$/d' "$TOP/scripts/kernel-complaints.txt" | paste -sd '|'
}

# The patch files named in ./series, in order, one per line.
series_patches() {
	sed 's/#.*//; /^[[:space:]]*$/d' "$TOP/series"
}

# What identifies an applied series: the base commit and the patches'
# content. apply-series.sh stores it with the resulting HEAD in TREE.stamp.
series_hash() {
	local base=$1
	{ echo "$base"; series_patches | (cd "$TOP/patches" && xargs cat --); } |
		sha256sum | cut -d' ' -f1
}

# make in kernel tree SRC, out of tree in OBJ, through ccache when it is
# installed: make check builds the same objects at several commits.
# The cache lives outside the clone, so that a fresh clone on the same
# machine (CI) reuses it.
export CCACHE_DIR=${CCACHE_DIR:-${XDG_CACHE_HOME:-${HOME:-/root}/.cache}/dax-series-ccache}
# Paths below the clone hash as relative ones: clones share the cache.
export CCACHE_BASEDIR=${CCACHE_BASEDIR:-$TOP}
kmake() {
	local src=$1 obj=$2 cc=gcc
	shift 2
	command -v ccache >/dev/null 2>&1 && cc="ccache gcc"
	make -C "$src" O="$obj" -j"$(nproc)" CC="$cc" "$@"
}

# The Debian mirror this machine already uses, unless DEBIAN_MIRROR says.
debian_mirror() {
	local m=${DEBIAN_MIRROR:-}
	[ -n "$m" ] || m=$(sed -n 's/^URIs:[[:space:]]*\([^[:space:]]*\/debian\)\/*$/\1/p' \
		/etc/apt/sources.list.d/*.sources 2>/dev/null | head -n 1)
	[ -n "$m" ] || m=$(sed -n 's/^deb[[:space:]]\+\(\[[^]]*\][[:space:]]\+\)\?\([^[:space:]]*\/debian\)\/\?[[:space:]].*/\2/p' \
		/etc/apt/sources.list 2>/dev/null | head -n 1)
	echo "${m:-http://deb.debian.org/debian}"
}

# private_apt DIR "deb|deb-src MIRROR SUITE main": apt state and a sources
# list of its own under DIR, so that the machine's apt configuration is
# never touched; sets the array aptopts for apt-get and apt-cache.
private_apt() {
	local dir=$1 line=$2
	mkdir -p "$dir/lists/partial" "$dir/archives/partial"
	echo "${line%% *} [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] ${line#* }" \
		>"$dir/sources.list"
	# shellcheck disable=SC2034 # for the caller
	aptopts=(-o "Dir::Etc::sourcelist=$dir/sources.list"
		 -o Dir::Etc::sourceparts=/nonexistent
		 -o "Dir::State::Lists=$dir/lists"
		 -o "Dir::Cache::archives=$dir/archives")
}

# built_kernel base|series [PROFILE]: build PROFILE (default: default) of
# plain v7.3 (obj-PROFILE-base) or of the series (obj-PROFILE), showing
# progress on stderr; print the bzImage path.
built_kernel() {
	local profile=${2:-default} src obj
	case $1 in
	series) src=$("$TOP/scripts/apply-series.sh") obj=$BUILD/obj-$profile ;;
	base) src=$("$TOP/scripts/get-base.sh") obj=$BUILD/obj-$profile-base ;;
	*) die "built_kernel: unknown kernel '$1' (base, series)" ;;
	esac || return
	"$TOP/scripts/build-kernel.sh" "$src" "$obj" "$profile" >&2 || return
	echo "$obj/arch/x86/boot/bzImage"
}

# The A/B runs (make bench, fails-on-base, fstests, ndctl, profile) boot
# plain v7.3, "base", against "series". ab_names LIST: the names of the
# comma-separated LIST into the caller's array kernels; dies on others.
ab_names() {
	local k
	IFS=, read -r -a kernels <<<"$1"
	for k in "${kernels[@]}"; do
		case $k in base|series) ;; *) die "unknown kernel '$k' (base, series)" ;; esac
	done
}

# ab_kernels IMAGES PROFILE NAME...: for each NAME (base or series), set
# IMAGES[NAME] (IMAGES: the caller's associative array) to the bzImage of
# PROFILE to boot, built by built_kernel, unless the caller has already
# put one there (its --kernel NAME=BZIMAGE).
ab_kernels() {
	local -n ab_images=$1
	local profile=$2 k
	shift 2
	for k in "$@"; do
		[ -z "${ab_images["$k"]:-}" ] || continue
		ab_images["$k"]=$(built_kernel "$k" "$profile") || return
	done
}

# base_only_warned KERNEL LOG: whether a boot of KERNEL (base or series)
# that qemu-run.sh failed, logged in LOG, failed only because v7.3's
# kernel log reports a problem (it warns where the series fixes it: a
# CoW write(2) under a mapping drops a mapped folio's association).
base_only_warned() {
	[ "$1" = base ] &&
		grep -q '^VERDICT [a-z0-9]*: FAIL (kernel log reports a problem) ' "$2"
}

# quote_base_warnings FILE: the paragraph of a bench report that quotes
# the warnings of v7.3's boots (scripts/bench.sh, base_warned()); nothing
# without any.
quote_base_warnings() {
	[ -s "$1" ] || return 0
	printf '\nv7.3 warned in %s of its boots (the series fixes these; the\n' "$(wc -l <"$1")"
	printf 'numbers of those boots stand):\n\n'
	sed 's/^/    /' "$1"
}
