# Entry points of the harness; README.md documents them.
.PHONY: run check regen bench deps shellcheck clean help

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

deps:
	scripts/install-deps.sh

clean:
	-git -C build/linux worktree prune 2>/dev/null
	rm -rf build

help:
	@echo "make run | check | check-only CHECKS=... | regen | bench | deps | clean"
