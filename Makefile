# Entry points of the harness; README.md documents them.
.PHONY: run check check-kasan regen postings bench profile fails-on-base fstests fstests-posting ndctl fuzz deps shellcheck clean help

run:
	./qemu-run.sh

check:
	scripts/check.sh

# One check or a few: make check-only CHECKS="sparse checkpatch"
check-only:
	scripts/check.sh $(CHECKS)

# Every dax kselftest on ext4 and xfs under KASAN (and lockdep): a build
# and a run of their own, too long to sit in make check next to the rest.
check-kasan:
	./qemu-run.sh --config kasan

# Regenerate patches/, series and selftests/dax/ (the kselftests as the
# series leaves them) from the kernel tree (build/series). Nothing here
# signs off: only make postings does, for the person who posts.
regen:
	scripts/regen-patches.sh

# The postings for git send-email, signed off by POSTER="Name <address>"
# or git's user.name and user.email: build/postings/NAME/
# (Documentation/posting.md).
postings:
	scripts/postings.sh

bench:
	scripts/bench.sh

# Instructions per write(2) by kernel function, v7.3 vs the series (a QEMU
# plugin under -icount): PROFILE_ARGS="FS CASE PROFILE", by default
# "xfs write-mapped nodebug".
profile:
	scripts/profile.sh $(PROFILE_ARGS)

# Each kselftest fails on v7.3 for the bug it names, and passes with the
# series (not part of make check: about half an hour of guests).
fails-on-base:
	scripts/fails-on-base.sh

# fstests (FSTESTS_SRC=your checkout) on v7.3 and the series, ext4 and
# xfs -o dax=always, in QEMU on a Debian root disk: hours under TCG, not
# part of make check. FSTESTS_ARGS="--configs xfs -- generic/413" narrows it.
fstests:
	scripts/install-deps.sh fstests
	scripts/fstests.sh $(FSTESTS_ARGS)

# The fstests posting of our DAX tests (fstests/) on FSTESTS_SRC, for git
# send-email: build/postings/fstests-dax/ (Documentation/fstests.md).
fstests-posting:
	scripts/fstests-posting.sh

# ndctl's own DAX tests (its destructive "dax" suite, ndctl pinned in
# scripts/base.env) on v7.3 and the series, in QEMU on a Debian root disk
# with a legacy e820 pmem region. NDCTL_ARGS="-- dax-ext4.sh" narrows it.
ndctl:
	scripts/install-deps.sh ndctl
	scripts/ndctl.sh $(NDCTL_ARGS)

# dax-fuzz on v7.3 and the series (or FUZZ_KERNELS="NAME=BZIMAGE ..."),
# ext4, xfs and xfs -d su=2m, FUZZ_SECONDS each (default 150): a table in
# Documentation/results-fuzz.md. FUZZ_ARGS="--configs xfs" narrows it.
fuzz:
	scripts/fuzz.sh $(FUZZ_ARGS)

deps:
	scripts/install-deps.sh

clean:
	-git -C build/linux worktree prune 2>/dev/null
	rm -rf build

help:
	@echo "make run | check | check-only CHECKS=... | check-kasan | regen | postings | bench | profile | fails-on-base | fstests | fstests-posting | ndctl | fuzz | deps | clean"
