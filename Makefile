# Entry points of the harness; README.md documents them.
.PHONY: run check regen bench bites deps shellcheck clean help

run:
	./qemu-run.sh

check:
	scripts/check.sh

# One check or a few: make check-only CHECKS="sparse checkpatch"
check-only:
	scripts/check.sh $(CHECKS)

# Regenerate patches/ and series from the kernel tree (build/series).
regen:
	scripts/regen-patches.sh

bench:
	scripts/bench.sh

# Each kselftest fails on v7.3 for the bug it names, and passes with the
# series (not part of make check: about half an hour of guests).
bites:
	scripts/bites.sh

deps:
	scripts/install-deps.sh

clean:
	-git -C build/linux worktree prune 2>/dev/null
	rm -rf build

help:
	@echo "make run | check | check-only CHECKS=... | regen | bench | bites | deps | clean"
