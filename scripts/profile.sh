#!/bin/bash
# Usage: profile.sh [FS [CASE [PROFILE]]]
# Where the instructions of a 4 KiB write(2) go, v7.3 against the series:
# boot each kernel of PROFILE (default nodebug; built as make bench builds
# it) once under QEMU -icount with the scripts/qemu-tbprof.c plugin, run
# make bench's instruction pass on FS (default xfs: bench-guest.sh reads,
# the same cases in the same order) with DAX_BENCH_MARK=FS-CASE, so that
# the write case CASE (default write-mapped; or cowwrite-unmapped,
# cowwrite-mapped, cowwrite-other on xfs) marks its timed writes, and
# print the instructions per write of each kernel function that ran
# between the marks, for both kernels, the largest differences first.
# The functions are those of System.map; the guest boots with nokaslr.
# Everything that ran counts: kernel workers, interrupts and the user
# side ("<user>") as well as the writer. Prints the 40 largest
# differences; all of them are in $BUILD/profile/report.txt.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

fs=${1:-xfs} case=${2:-write-mapped} profile=${3:-nodebug}
case $fs in ext4 | xfs) ;; *) die "FS must be ext4 or xfs, not '$fs'" ;; esac
case $fs-$case in
*-write-mapped | xfs-cowwrite-unmapped | xfs-cowwrite-mapped | xfs-cowwrite-other) ;;
*) die "CASE must be write-mapped (or on xfs cowwrite-unmapped, cowwrite-mapped, cowwrite-other), not '$case'" ;;
esac
if [ "$profile" = base ] || [ ! -f "$TOP/kernel-config/$profile.config" ]; then
	die "no kernel config '$profile' in kernel-config/"
fi
need_tools python3
plugin=$("$TOP/scripts/get-qemu-plugin.sh")
out=$BUILD/profile
mkdir -p "$out"
# The user page that dax-bench calls around its timed writes (PROFILE_MARK).
mark=5a5a00000000

for k in base series; do
	image=$(built_kernel "$k" "$profile")
	rm -f "$out/$k.tb"
	log "profiling $k ($profile) on $fs: $case"
	ICOUNT=1 ACCEL=tcg QEMU_PLUGIN="$plugin,mark=$mark,out=$out/$k.tb" \
		"$TOP/qemu-run.sh" --kernel "$image" --fs "$fs" \
		--append nokaslr --timeout 1800 -- \
		"DAX_BENCH_MARK=$fs-$case /harness/bench-guest.sh $fs reads" \
		>"$out/$k.log" 2>&1 || base_only_warned "$k" "$out/$k.log" ||
		die "$k: the guest failed, see $out/$k.log"
	grep -q '^# marks 2$' "$out/$k.tb" 2>/dev/null ||
		die "$k: the plugin saw no marked window (see $out/$k.log)"
	grep "^BENCH $fs-$case " "$out/$k.log" | cut -d' ' -f2- >"$out/$k.bench" ||
		die "$k: no BENCH line for $fs-$case in $out/$k.log"
	cp "${image%/arch/x86/boot/bzImage}/System.map" "$out/$k.map"
done

python3 - "$out" >"$out/report.txt" <<'PY'
import bisect, collections, sys
out = sys.argv[1]
bench = {k: dict(kv.split("=") for kv in open(f"{out}/{k}.bench").read().split()[1:])
         for k in ("base", "series")}
pages = int(bench["base"]["pages"])

def profile(k):
    syms = sorted((int(a, 16), n) for a, t, n in
                  (l.split()[:3] for l in open(f"{out}/{k}.map")) if t in "tTwW")
    addrs = [a for a, _ in syms]
    funcs = collections.Counter()
    for line in open(f"{out}/{k}.tb"):
        if line.startswith("#"):
            continue
        vaddr, insns = (int(x, 16) if i == 0 else int(x) for i, x in enumerate(line.split()))
        if vaddr < 0xffff800000000000:
            funcs["<user>"] += insns
            continue
        i = bisect.bisect_right(addrs, vaddr) - 1
        funcs[syms[i][1] if i >= 0 else "?"] += insns
    return funcs

b, s = profile("base"), profile("series")
for k, name in (("base", "v7.3"), ("series", "series")):
    print(f"{name}: the bench's clock {int(bench[k]['ns1']) / pages:.1f}, the writer's "
          f"{int(bench[k]['cpu1']) / pages:.1f} instructions per write")
print(f"counted between the marks: v7.3 {sum(b.values()) / pages:.1f}, "
      f"series {sum(s.values()) / pages:.1f}")
print(f"{'v7.3':>9} {'series':>9} {'diff':>8}  function")
for f in sorted(set(b) | set(s), key=lambda f: (-abs(s[f] - b[f]), f)):
    if s[f] != b[f]:
        print(f"{b[f] / pages:9.2f} {s[f] / pages:9.2f} {(s[f] - b[f]) / pages:8.2f}  {f}")
PY
head -n 42 "$out/report.txt"
log "all of it: $out/report.txt"
