#!/bin/bash
# Usage: profile.sh [FS [CASE [PROFILE [AGAINST]]]]
# Where the instructions of a bench case go, function by function: boot
# a kernel of PROFILE (default nodebug; built as make bench builds it)
# under QEMU -icount with the scripts/qemu-tbprof.c plugin, run make
# bench's instruction pass on FS (default xfs: bench-guest.sh reads, the
# same cases in the same order) with DAX_BENCH_MARK=FS-CASE, so that case
# CASE marks its timed window, and print the instructions per write (or
# per page read or unmapped) of each kernel function that ran between the marks.
# Without AGAINST: v7.3 against the series on CASE, two boots. With
# AGAINST: the series on AGAINST against the series on CASE, two boots.
# The difference printed is the second minus the first: the series
# minus v7.3, or CASE minus AGAINST.
# CASE is a write case (default write-mapped; on xfs also
# cowwrite-unmapped, cowwrite-mapped, cowwrite-other: the timed writes),
# or a 128 MiB read case of make bench (dax-pte-seq-128m,
# dax-pte-rand-128m, dax-pmd-seq-128m, dax-populate-seq-128m,
# dax-pteonpmd-seq-128m, dax-ptefalloc-seq-128m, dax-ptefalloc-rand-128m,
# pagecache-pte-seq-128m, pagecache-pte-rand-128m)
# with -first, -reread or -third (the timed mmap and reads of that pass)
# or -munmap1, -munmap2 or -munmap3 (the munmap() after it).
# The functions are those of System.map; the guest boots with nokaslr.
# Everything that ran counts: kernel workers, interrupts and the user
# side ("<user>") as well as the bench. Prints the 40 largest
# differences; all of them are in $BUILD/profile/report.txt.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

fs=${1:-xfs} case=${2:-write-mapped} profile=${3:-nodebug} against=${4:-}
case $fs in ext4 | xfs) ;; *) die "FS must be ext4 or xfs, not '$fs'" ;; esac

# Is $1 a case that marks its window on $fs?
known_case() {
	case $1 in
	write-mapped) return 0 ;;
	cowwrite-unmapped | cowwrite-mapped | cowwrite-other) [ "$fs" = xfs ] ;;
	*-first | *-reread | *-third | *-munmap[123])
		case ${1%-*} in
		dax-pte-seq-128m | dax-pte-rand-128m | dax-pmd-seq-128m | \
			dax-populate-seq-128m | dax-pteonpmd-seq-128m | \
			dax-ptefalloc-seq-128m | dax-ptefalloc-rand-128m | \
			pagecache-pte-seq-128m | \
			pagecache-pte-rand-128m) return 0 ;;
		esac
		return 1
		;;
	*) return 1 ;;
	esac
}
for c in "$case" ${against:+"$against"}; do
	known_case "$c" || die "CASE must be write-mapped (on xfs also cowwrite-unmapped," \
		"cowwrite-mapped, cowwrite-other) or a 128 MiB read case with -first," \
		"-reread, -third or -munmapN (dax-pte-seq-128m-reread, ...; see the usage)," \
		"not '$c'"
done
[ "$case" != "$against" ] || die "CASE and AGAINST are the same case, '$case'"
if [ "$profile" = base ] || [ ! -f "$TOP/kernel-config/$profile.config" ]; then
	die "no kernel config '$profile' in kernel-config/"
fi
need_tools python3
plugin=$("$TOP/scripts/get-qemu-plugin.sh")
out=$BUILD/profile
mkdir -p "$out"
# The user page that dax-bench calls around its timed window (PROFILE_MARK).
mark=5a5a00000000

# Each run: kernel, case and the report's name for it.
declare -A image=()
if [ -n "$against" ]; then
	runs="series:$against:$against series:$case:$case"
	ab_kernels image "$profile" series
else
	runs="base:$case:v7.3 series:$case:series"
	ab_kernels image "$profile" base series
fi
n=0
for run in $runs; do
	IFS=: read -r k c name <<<"$run"
	n=$((n + 1))
	rm -f "$out/$n.tb"
	log "profiling $k ($profile) on $fs: $c"
	ICOUNT=1 ACCEL=tcg QEMU_PLUGIN="$plugin,mark=$mark,out=$out/$n.tb" \
		"$TOP/qemu-run.sh" --kernel "${image[$k]}" --fs "$fs" \
		--append nokaslr --timeout 1800 -- \
		"DAX_BENCH_MARK=$fs-$c /harness/bench-guest.sh $fs reads" \
		>"$out/$n.log" 2>&1 || base_only_warned "$k" "$out/$n.log" ||
		die "$k: the guest failed, see $out/$n.log"
	grep -q '^# marks 2$' "$out/$n.tb" 2>/dev/null ||
		die "$k: the plugin saw no marked window (see $out/$n.log)"
	# A read case's BENCH line is named without its pass.
	case $c in write-mapped | cowwrite-*) bench=$c ;; *) bench=${c%-*} ;; esac
	grep "^BENCH $fs-$bench " "$out/$n.log" | cut -d' ' -f2- >"$out/$n.bench" ||
		die "$k: no BENCH line for $fs-$bench in $out/$n.log"
	echo "$name $c" >"$out/$n.name"
	cp "${image[$k]%/arch/x86/boot/bzImage}/System.map" "$out/$n.map"
done

python3 - "$out" >"$out/report.txt" <<'PY'
import bisect, collections, sys
out = sys.argv[1]

def run(n):
    name, case = open(f"{out}/{n}.name").read().split()
    bench = dict(kv.split("=") for kv in open(f"{out}/{n}.bench").read().split()[1:])
    syms = sorted((int(a, 16), f) for a, t, f in
                  (l.split()[:3] for l in open(f"{out}/{n}.map")) if t in "tTwW")
    addrs = [a for a, _ in syms]
    funcs = collections.Counter()
    for line in open(f"{out}/{n}.tb"):
        if line.startswith("#"):
            continue
        vaddr, insns = line.split()
        vaddr, insns = int(vaddr, 16), int(insns)
        if vaddr < 0xffff800000000000:
            funcs["<user>"] += insns
            continue
        i = bisect.bisect_right(addrs, vaddr) - 1
        funcs[syms[i][1] if i >= 0 else "?"] += insns
    return name, case, bench, funcs

runs = [run(1), run(2)]
for name, case, bench, funcs in runs:
    pages = int(bench["pages"])
    what = "" if name == case else f" ({case})"
    passes = {"first": "ns1", "reread": "ns2", "third": "ns3",
              "munmap1": "unmap_ns1", "munmap2": "unmap_ns2", "munmap3": "unmap_ns3"}
    if case.rsplit("-", 1)[-1] in passes:
        ns = bench[passes[case.rsplit("-", 1)[-1]]]
        print(f"{name}: the bench's clock {int(ns) / pages:.1f} instructions per page"
              f"{what}, counted between the marks {sum(funcs.values()) / pages:.1f}")
    else:
        print(f"{name}: the bench's clock {int(bench['ns1']) / pages:.1f}, the writer's "
              f"{int(bench['cpu1']) / pages:.1f} instructions per write{what}, "
              f"counted between the marks {sum(funcs.values()) / pages:.1f}")
(n1, _, b1, f1), (n2, _, b2, f2) = runs
p1, p2 = int(b1["pages"]), int(b2["pages"])
w1, w2 = max(9, len(n1)), max(9, len(n2))
print(f"{n1:>{w1}} {n2:>{w2}} {'diff':>8}  function")
for f in sorted(set(f1) | set(f2), key=lambda f: (-abs(f2[f] / p2 - f1[f] / p1), f)):
    a, b = f1[f] / p1, f2[f] / p2
    if a != b:
        print(f"{a:{w1}.2f} {b:{w2}.2f} {b - a:8.2f}  {f}")
PY
head -n 42 "$out/report.txt"
log "all of it: $out/report.txt"
