#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# su for the fstests guests (installed as /usr/local/sbin/su), run by
# root only: become USER without PAM. The guest kernel has no networking
# (CONFIG_NET=n), so libpam cannot open its audit socket (socket() fails
# with ENOSYS, which it takes for resource exhaustion) and fails every
# Debian su and runuser with "System error". fstests uses su only to run
# commands as its test users (_su, _user_do; generic/462 needs it).
# Takes the forms fstests uses: su [-] [-s SHELL] USER [-c CMD] [ARGS],
# the commands on standard input when there is no -c.
set -eu

die() { echo "su: $*" >&2; exit 1; }
[ "$(id -u)" = 0 ] || die "only root may use this su"
shell='' cmd='' login=0 user=''
while [ $# -gt 0 ]; do
	case $1 in
	-|-l|--login) login=1 ;;
	-m|-p|--preserve-environment) ;;
	-s|--shell) [ $# -ge 2 ] || die "$1 needs a shell"; shell=$2; shift ;;
	--shell=*) shell=${1#--shell=} ;;
	-c|--command) [ $# -ge 2 ] || die "$1 needs a command"; cmd=$2; shift ;;
	--command=*) cmd=${1#--command=} ;;
	--) shift; [ -n "$user" ] || [ $# -eq 0 ] || { user=$1; shift; }; break ;;
	-*) die "option $1 is not supported here" ;;
	*) [ -z "$user" ] || break; user=$1 ;;
	esac
	shift
done
user=${user:-root}
entry=$(getent passwd "$user") || die "user $user does not exist"
IFS=: read -r _ _ uid gid _ home ushell <<EOF
$entry
EOF
shell=${shell:-${ushell:-/bin/sh}}
export HOME="$home" USER="$user" LOGNAME="$user" SHELL="$shell"
# A login shell starts in the user's home, or in / as su does without one.
[ "$login" = 0 ] || cd "$home" 2>/dev/null || cd /
if [ -n "$cmd" ]; then
	exec setpriv --reuid="$uid" --regid="$gid" --init-groups "$shell" -c "$cmd" "$@"
fi
exec setpriv --reuid="$uid" --regid="$gid" --init-groups "$shell" "$@"
