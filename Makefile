# SPDX-License-Identifier: ISC
# agent-sandbox: GNU make.  make, make test, make test-asan, make install.
PREFIX	?= /usr/local
DESTDIR	?=
BINDIR	?= $(PREFIX)/bin
LIBEXECDIR ?= $(PREFIX)/libexec/agent-sandbox
DATADIR	?= $(PREFIX)/share/agent-sandbox
MANDIR	?= $(PREFIX)/share/man
SYSCONFDIR ?= /etc/agent-sandbox
STATEDIR ?= /var/lib/agent-sandbox
LOGDIR	?= /var/log/agent-sandbox
SYSTEMDDIR ?= /lib/systemd/system
BUILD	?= obj
CC	?= cc

# The library flags are asked of pkg-config when a recipe first uses
# them, not when make reads this file: in `make deps demo` the libraries
# are installed by then.  Each is then kept, so pkg-config runs once.
PKGS	 = jansson yaml-0.1 sqlite3 libbsd-overlay libseccomp openssl libcurl
PKG_CFLAGS = $(eval PKG_CFLAGS := $(shell pkg-config --cflags $(PKGS)))$(PKG_CFLAGS)
PKG_LIBS   = $(eval PKG_LIBS := $(shell pkg-config --libs $(PKGS)))$(PKG_LIBS)
ATF_LIBS   = $(eval ATF_LIBS := $(shell pkg-config --libs atf-c))$(ATF_LIBS)

# With deps among the goals nothing is compiled before it has run, also
# under -j.
DEPS_FIRST := $(filter deps,$(MAKECMDGOALS))

CFLAGS	?= -O2 -g
override CFLAGS += -std=gnu11 -Wall -Wextra -Werror $(WARN_EXTRA) -D_GNU_SOURCE -Icommon $(PKG_CFLAGS)
# The sanitizer build is the debug build: AS_DEBUG turns a broken
# internal invariant from a logged refusal into a fatal error.
ifeq ($(SAN),1)
override CFLAGS += -DAS_DEBUG
override CFLAGS += -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all
override LDFLAGS += -fsanitize=address,undefined
endif
LDLIBS	+= $(PKG_LIBS)

MANPAGES := $(wildcard */*.[158])
DAEMONS	 = mcpd runnerd approvald brokerd auditd notifyd
CTLS	 = approvalctl auditctl runnerctl
PROGS	 = $(DAEMONS) $(CTLS)

ifeq ($(SAN),1)
PROG_SAN_OBJS := $(BUILD)/regress/san/daemon_options.o
TEST_SAN_OBJS := $(BUILD)/regress/san/suppressions.o
endif

COMMON_SRCS := $(wildcard common/*.c)
COMMON_OBJS := $(COMMON_SRCS:%.c=$(BUILD)/%.o)
LIBCOMMON   := $(BUILD)/libcommon.a

# What runnerd puts in every gVisor sandbox (runnerd(8)).
SANDBOX_CFLAGS = -std=gnu11 -Wall -Wextra -Werror -D_GNU_SOURCE -O2 -g
SANDBOX_FILES = $(BUILD)/bin/sandbox-init $(BUILD)/bin/sandbox-stat.so

all: $(PROGS:%=$(BUILD)/bin/%) $(SANDBOX_FILES) tests

$(BUILD)/%.o: %.c $(wildcard common/*.h) $(wildcard */*.h) | $(DEPS_FIRST)
	@mkdir -p $(dir $@)
	@echo "  CC      $<"
	@$(CC) $(CFLAGS) $(INCS) -c -o $@ $<

$(LIBCOMMON): $(COMMON_OBJS)
	@rm -f $@
	@$(AR) rcs $@ $^

# runnerd is one program built from the directories of its processes
# (README "Layout"): the engine, the root launcher, the kubernetes
# helper, and the library both helpers link.  Their objects, and the
# unit tests that link them, find each other's headers.
PROG_DIRS_runnerd := runnerd launcher kube helperlib
RUNNERD_INCS := $(PROG_DIRS_runnerd:%=-I%)
$(foreach d,$(PROG_DIRS_runnerd) regress/runnerd regress/k8s,$(eval \
    $(BUILD)/$(d)/%.o: INCS = $(RUNNERD_INCS)))

# A program is every .c in its directory (or directories), linked with
# common/.
define prog_rule
$(1)_OBJS := $$(patsubst %.c,$(BUILD)/%.o,$$(wildcard $$(addsuffix /*.c,$$(or $$(PROG_DIRS_$(1)),$(1)))))
$(BUILD)/bin/$(1): $$($(1)_OBJS) $(PROG_SAN_OBJS) $(LIBCOMMON)
	@mkdir -p $$(dir $$@)
	@echo "  LD      $$@"
	@$$(CC) $$(LDFLAGS) -o $$@ $$^ $$(LDLIBS)
endef
$(foreach p,$(PROGS),$(eval $(call prog_rule,$(p))))

# The first program of every gVisor sandbox (runnerd(8)), run in
# whatever root file system the sandbox has: static, without a C
# library (sandbox-init.c says why), and so without the sanitizers.
$(BUILD)/bin/sandbox-init: sandbox-init/sandbox-init.c | $(DEPS_FIRST)
	@mkdir -p $(dir $@)
	@echo "  LD      $@"
	@$(CC) $(SANDBOX_CFLAGS) -static -nostdlib -ffreestanding \
	    -fno-stack-protector -fno-builtin -o $@ $<

# Preloaded into the sandbox's dynamic programs (sandbox-stat.c).
$(BUILD)/bin/sandbox-stat.so: sandbox-init/sandbox-stat.c | $(DEPS_FIRST)
	@mkdir -p $(dir $@)
	@echo "  LD      $@"
	@$(CC) $(SANDBOX_CFLAGS) -shared -fPIC -o $@ $<

# Unit tests: regress/<area>/t_*.c, each linked with common/ and with the
# area's daemon objects except its main (<area>/<area>.c).  regress/k8s
# tests runnerd's kubernetes backend.
AREA_DAEMON_k8s := runnerd
area_daemon = $(or $(AREA_DAEMON_$(1)),$(1))
TEST_SRCS := $(wildcard regress/*/t_*.c)
TEST_BINS := $(TEST_SRCS:%.c=$(BUILD)/%)

define test_rule
$(BUILD)/$(1): $(BUILD)/$(1).o $$(filter-out $(BUILD)/$(2)/$(2).o,$$($(2)_OBJS)) $(TEST_SAN_OBJS) $(LIBCOMMON)
	@echo "  LD      $$@"
	@$$(CC) $$(LDFLAGS) -o $$@ $$^ $$(ATF_LIBS) $$(LDLIBS)
endef
$(foreach t,$(TEST_SRCS:%.c=%),$(eval $(call test_rule,$(t),$(call area_daemon,$(word 2,$(subst /, ,$(t)))))))

# Test tools (regress/lib/*.c, regress/*/bench_*.c): clients the shell
# tests and benchmarks drive daemons with.
TOOL_SRCS := $(wildcard regress/lib/*.c regress/*/bench_*.c)
TOOL_BINS := $(TOOL_SRCS:%.c=$(BUILD)/%)
$(TOOL_BINS): $(BUILD)/%: $(BUILD)/%.o $(LIBCOMMON)
	@echo "  LD      $@"
	@$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

# kyua runs from a copy of regress/ that holds the built test programs.
REGRESS_FILES := $(filter-out %.c,$(shell find regress -name __pycache__ -prune -o -type f -print))
tests: $(PROGS:%=$(BUILD)/bin/%) $(TEST_BINS) $(TOOL_BINS) $(REGRESS_FILES:%=$(BUILD)/%)

$(BUILD)/regress/%: regress/%
	@mkdir -p $(dir $@)
	@cp -p $< $@

# Fuzzing (clang-14 libFuzzer): regress/<area>/fuzz_<name>.c, seeded from
# regress/<area>/corpus-<name>/ (and fuzz_<name>.dict if there), each run
# FUZZ_TIME seconds.  The targets' own logging is silenced (-close_fd_mask).
FUZZ_SRCS := $(wildcard regress/*/fuzz_*.c)
FUZZ_BINS := $(FUZZ_SRCS:%.c=$(BUILD)/%)
FUZZ_TIME ?= 60
# clang-14 flags the { NULL } sentinels of the yfield tables, gcc does not.
FUZZ_FLAGS = -O1 -g -fsanitize=fuzzer-no-link,address,undefined

# A target may stand in for some of its daemon's files with stubs.
FUZZ_STUBBED_fuzz_jsonrpc := mcpd/runner.o

define fuzz_rule
$(BUILD)/$(1): $(BUILD)/$(1).o $$(filter-out $(BUILD)/$(2)/$(2).o $$(addprefix $(BUILD)/,$$(FUZZ_STUBBED_$$(notdir $(1)))),$$($(2)_OBJS)) $(LIBCOMMON)
	@echo "  LD      $$@"
	@$$(CC) -fsanitize=fuzzer,address,undefined -o $$@ $$^ $$(LDLIBS)
endef
$(foreach t,$(FUZZ_SRCS:%.c=%),$(eval $(call fuzz_rule,$(t),$(word 2,$(subst /, ,$(t))))))

fuzz-bins: $(FUZZ_BINS)

fuzz:
	$(MAKE) BUILD=obj-fuzz CC=clang-14 CFLAGS="$(FUZZ_FLAGS)" \
	    WARN_EXTRA=-Wno-missing-field-initializers fuzz-bins
	@for f in $(FUZZ_SRCS:%.c=%); do \
		name=$${f##*/fuzz_}; seed=$${f%/*}/corpus-$$name; \
		work=obj-fuzz/corpus/$$name; mkdir -p $$work; \
		dict=; [ -f $$f.dict ] && dict=-dict=$$f.dict; \
		echo "fuzz: $$f for $(FUZZ_TIME)s"; \
		obj-fuzz/$$f -max_total_time=$(FUZZ_TIME) -max_len=1048576 \
		    -timeout=10 -rss_limit_mb=2048 -close_fd_mask=2 $$dict \
		    -print_final_stats=1 $$work $$seed 2>obj-fuzz/$${name}.log || \
		    { tail -40 obj-fuzz/$${name}.log; exit 1; }; \
		grep -E 'stat::number_of_executed_units|stat::peak_rss' obj-fuzz/$${name}.log; \
	done

KYUA_VARS = -v test_suites.agent-sandbox.bindir=$(abspath $(BUILD)/bin) \
	    -v test_suites.agent-sandbox.srcdir=$(abspath .)

# TEST_JOBS kyua processes at once, one test program each (scripts/
# run-tests); each runs its cases one at a time (regress/kyua.conf).
TEST_JOBS ?= 4
test: all
	scripts/run-tests -j $(TEST_JOBS) $(BUILD)/regress \
	    --config=kyua.conf $(KYUA_VARS)

test-asan:
	$(MAKE) BUILD=obj-asan SAN=1 test

# Debian packages, then the MCP SDK for the test and demo clients,
# installed from the lock file outside the source tree.
deps:
	apt-get update
	scripts/install-deps
	mkdir -p $(BUILD)/node
	cp regress/mcpd/package.json regress/mcpd/package-lock.json $(BUILD)/node/
	npm ci --prefix $(BUILD)/node --no-audit --no-fund

# The isolation claims, each PASS or FAIL, on real sandboxes (root).
verify: all
	scripts/verify-local $(BUILD)

bench: all
	@echo "== mcpd: tools/list round trips, ping latency"
	@python3 regress/mcpd/bench.py $(BUILD)/bin/mcpd
	@echo "== approvald: decisions and durable spends per second"
	@regress/approvald/bench.sh $(BUILD)
	@echo "== notifyd: approval requested -> signed notification (p95 <= 2 s)"
	@regress/notifyd/bench.sh $(BUILD) 200
	@echo "== auditd: durable events per second, 1, 8 and 64 writers"
	@$(BUILD)/regress/auditd/bench_audit -t 5 $(abspath $(BUILD)/bin)
	@echo "== auditd: the scrubber's cost per record"
	@$(BUILD)/regress/auditd/bench_scrub
	@echo "== brokerd: added latency of issue + revoke against the Vault double"
	@python3 regress/brokerd/bench.py $(BUILD)/bin 300
	@echo "== runnerd: cold start against bare runsc; sandboxes per second"
	@scripts/bench-runnerd $(BUILD)
	@echo "== kubernetes backend: per-call overhead, sessions warm against cold, against the API double"
	@sh regress/k8s/bench.sh $(BUILD) 20
	@echo "== sessions: warm-pool claim against a cold start; run_python(\"1+1\") through mcpd"
	@regress/runnerd/bench_sessions.sh $(BUILD) 10 500
	@echo "== terraform_plan / terraform_apply through the suite against bare terraform"
	@python3 regress/runnerd/bench_terraform.py $(BUILD) 10
	@echo "== terraform: the plan store's growth over 50 plans of a changing module"
	@python3 regress/runnerd/bench_tfstore.py $(BUILD) 50
	@echo "== sessions beside credentials from a Vault taking 200 ms each; 64 clients' calls per second"
	@python3 regress/runnerd/bench_vault.py $(BUILD) 200

# Not in CI: SOAK_MIN minutes of 64 MCP clients, misbehaving ones beside.
soak: all
	python3 regress/soak/soak.py $(BUILD) $${SOAK_MIN:-30} 64

# Not in CI: the differential suite, CPython's test modules and the shell
# set on the host against the sandboxes (regress/compat; long).
compat: all
	python3 regress/compat/compat.py $(COMPAT_ARGS) $(abspath $(BUILD)/bin) \
	    $(BUILD)/compat

# Not in CI: the kubernetes backend on a real one-node cluster, RK a
# work folder of ../shared/realnode's recipe with its node and suite up:
# each tool's result and time; where a one-shot call's time goes.
k8s-real-check: all
	@test -n "$(RK)" || { echo "k8s-real-check: set RK" >&2; exit 2; }
	python3 scripts/k8s-real-check $(RK)

k8s-real-bench: all
	@test -n "$(RK)" || { echo "k8s-real-bench: set RK" >&2; exit 2; }
	python3 scripts/k8s-real-bench $(RK) $${N:-10}

run: all
	scripts/run-dev $(BUILD)

demo: all
	scripts/demo $(BUILD)

# The layout (README "Installing"): the daemons in LIBEXECDIR, off every
# PATH, so that ours never shadow Debian's Linux Audit auditd and
# auditctl; mcpd and the operators' tools in BINDIR, auditctl as
# as-auditctl.  Paths in the units and the example configuration follow
# the directories given here.  Run it again at will: it changes nothing
# of an existing configuration or policy.
INSTALL_NAME_auditctl := as-auditctl
INSTALL_MAN_auditd.8  := as-auditd.8
INSTALL_MAN_auditctl.8 := as-auditctl.8
INSTALL_PATHS = sed -e 's|/usr/local/libexec/agent-sandbox|$(LIBEXECDIR)|g' \
	    -e 's|/usr/local/share/agent-sandbox|$(DATADIR)|g' \
	    -e 's|/usr/local/bin|$(BINDIR)|g' \
	    -e 's|/etc/agent-sandbox|$(SYSCONFDIR)|g' \
	    -e 's|/var/lib/agent-sandbox|$(STATEDIR)|g' \
	    -e 's|/var/log/agent-sandbox|$(LOGDIR)|g'

install: $(PROGS:%=$(BUILD)/bin/%) $(SANDBOX_FILES)
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(LIBEXECDIR) \
	    $(DESTDIR)$(DATADIR) $(DESTDIR)$(SYSCONFDIR) $(DESTDIR)$(SYSTEMDDIR)
	for p in $(filter-out mcpd,$(DAEMONS)) sandbox-init; do \
		install -m 0755 $(BUILD)/bin/$$p $(DESTDIR)$(LIBEXECDIR)/; done
	install -m 0644 $(BUILD)/bin/sandbox-stat.so $(DESTDIR)$(LIBEXECDIR)/
	install -m 0755 $(BUILD)/bin/mcpd $(DESTDIR)$(BINDIR)/
	install -m 0755 $(BUILD)/bin/approvalctl $(DESTDIR)$(BINDIR)/
	install -m 0755 $(BUILD)/bin/runnerctl $(DESTDIR)$(BINDIR)/
	install -m 0755 $(BUILD)/bin/auditctl \
	    $(DESTDIR)$(BINDIR)/$(INSTALL_NAME_auditctl)
	for m in $(MANPAGES); do \
		n=$${m##*/}; case $$n in \
		auditd.8) n=$(INSTALL_MAN_auditd.8) ;; \
		auditctl.8) n=$(INSTALL_MAN_auditctl.8) ;; \
		esac; \
		d=$(DESTDIR)$(MANDIR)/man$${m##*.}; \
		install -d $$d && install -m 0644 $$m $$d/$$n; \
	done
	install -m 0644 sandbox-init/session-agent.py $(DESTDIR)$(DATADIR)/
	for u in etc/systemd/*.service; do \
		$(INSTALL_PATHS) $$u > $(DESTDIR)$(SYSTEMDDIR)/$${u##*/} && \
		chmod 0644 $(DESTDIR)$(SYSTEMDDIR)/$${u##*/}; done
	for f in agent-sandbox.yaml policy.yaml; do \
		test -e $(DESTDIR)$(SYSCONFDIR)/$$f || { \
		$(INSTALL_PATHS) etc/$$f > $(DESTDIR)$(SYSCONFDIR)/$$f && \
		chmod 0644 $(DESTDIR)$(SYSCONFDIR)/$$f; }; done
	if [ -z "$(DESTDIR)" ]; then scripts/create-users && \
	    scripts/audit-key $(STATEDIR)/auditd $(SYSCONFDIR); fi

clean:
	rm -rf obj obj-asan obj-fuzz

.PHONY: all tests test test-asan run demo install clean fuzz fuzz-bins deps bench soak verify compat \
	k8s-real-check k8s-real-bench
