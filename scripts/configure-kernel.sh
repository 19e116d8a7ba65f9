#!/bin/bash
# Usage: configure-kernel.sh SRC OBJ PROFILE
# tinyconfig + the fragments of PROFILE (kernel-config/) + the dax
# kselftests' own config fragment from the tree with the series (the same
# for every SRC, so that base, series and bisect builds share one config),
# merged with the kernel's merge_config.sh, then olddefconfig. Fails,
# listing them, if any requested option did not survive. Skips the work
# when OBJ/.config was made from the same fragments.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

[ $# -eq 3 ] || die "usage: configure-kernel.sh SRC OBJ PROFILE"
src=$(cd "$1" && pwd) obj=$2 profile=$3
mkdir -p "$obj"
obj=$(cd "$obj" && pwd)
series=$("$TOP/scripts/apply-series.sh") || exit "$EX_SETUP"
kselftest_frag=$series/tools/testing/selftests/dax/config
[ -f "$kselftest_frag" ] || die "$kselftest_frag is missing"
frags=("$TOP/kernel-config/base.config" "$TOP/kernel-config/default.config" "$kselftest_frag")
case $profile in
default) ;;
*)
	[ -f "$TOP/kernel-config/$profile.config" ] ||
		die "unknown config profile '$profile' (see kernel-config/)"
	frags+=("$TOP/kernel-config/$profile.config")
	;;
esac

stamp=$obj/.harness-config-stamp
want=$(cat "${frags[@]}" | sha256sum | cut -d' ' -f1)
if [ -f "$obj/.config" ] && [ "$(cat "$stamp" 2>/dev/null)" = "$want" ]; then
	exit 0
fi
mkdir -p "$obj"
rm -f "$stamp"
kmake "$src" "$obj" -s tinyconfig >/dev/null
(cd "$obj" && "$src/scripts/kconfig/merge_config.sh" -m .config "${frags[@]}") \
	>"$obj/merge_config.log" 2>&1 || die "merge_config.sh failed (see $obj/merge_config.log)"
kmake "$src" "$obj" -s olddefconfig >/dev/null

# Every option the fragments ask for must be in the final .config, as
# the last fragment that names it says (a profile may turn off what
# default turns on).
dropped=
while IFS= read -r line; do
	case $line in
	CONFIG_*=n)
		opt=${line%%=*}
		grep -q "^$opt=" "$obj/.config" && dropped="$dropped $line" ;;
	CONFIG_*=*)
		grep -qxF -- "$line" "$obj/.config" || dropped="$dropped $line" ;;
	esac
done < <(cat "${frags[@]}" | sed 's/[[:space:]]*#.*//' |
	awk -F= '/^CONFIG_/ { if (!($1 in v)) order[n++] = $1; v[$1] = $0 }
		END { for (i = 0; i < n; i++) print v[order[i]] }')
[ -z "$dropped" ] || die "config options dropped by olddefconfig (missing dependencies?):$dropped"
echo "$want" >"$stamp"
