# gcscale -- GNU make build.
#
#   make                  build/libgcscale.{a,so}, build/gcscale, build/gcscale.pc and
#                         build/gcscale-uninstalled.pc (pkg-config against this tree)
#   make check            unit and CLI tests (prints "N passed, N failed"); it also
#                         links the fuzz targets without libFuzzer (fuzz-standalone)
#   make check-sanitize   the same tests under ASan+UBSan, threaded ones under TSan
#   make man              build/man/*.1 from the program's --help (help2man)
#   make install PREFIX=/usr/local
#
# Sources are discovered by directory: every .c in the library directories
# goes into libgcscale, cli/ is the program, tests/test_*.c are test binaries.
# BUILD selects the output directory and SAN a sanitizer set, which is how
# check-sanitize builds separate trees without touching the normal build.

PREFIX   ?= /usr/local
BUILD    ?= build
SAN      ?=
CC       ?= cc

PKGS      := hwloc gsl jansson numa papi zlib libzstd libdeflate
PKG_CFLAGS := $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
# PAPI is compiled against but not linked: common/papi.c loads it by its
# soname the first time counters are asked for (the dynamic loader's work
# for libpapi and libpfm4 was ~2.5 ms at every gcscale start).
PKGS_LINKED := $(filter-out papi,$(PKGS))
PKG_LIBS   := $(shell pkg-config --libs $(PKGS_LINKED) 2>/dev/null) -ldl
PAPI_SONAME := $(shell objdump -p $$(pkg-config --variable=libdir papi 2>/dev/null)/libpapi.so 2>/dev/null | awk '/SONAME/ {print $$2}')
TEST_CFLAGS := $(shell pkg-config --cflags cmocka 2>/dev/null)
TEST_LIBS   := $(shell pkg-config --libs cmocka 2>/dev/null)

OPT      ?= -O2
CFLAGS   ?= $(OPT) -g
# -fvisibility=hidden: only what include/gcscale/ marks GCS_API leaves
# libgcscale.so (tests/cli/test_layers.sh checks it).
ALL_CFLAGS := -std=gnu11 -Wall -Wextra -Werror -fPIC -fvisibility=hidden -pthread -Iinclude $(PKG_CFLAGS) $(CFLAGS)
ALL_LDFLAGS := -pthread $(LDFLAGS)
ifneq ($(SAN),)
# the sanitizer builds also turn on the library's own invariant checks
# (gcs_assert_internal, common/internal.h); release builds compile them out
ALL_CFLAGS  += -fsanitize=$(SAN) -fno-omit-frame-pointer -fno-sanitize-recover=all -DGCS_ASSERT=1
ALL_LDFLAGS += -fsanitize=$(SAN)
endif
LIBS     := $(PKG_LIBS) -lm
# OpenMP (libgomp) for the data-parallel passes of heap inspection and of the
# snapshot reader (docs/model.md, "Cost"); never in the collector (gc/).
# OPENMP=0 builds without it: the pragmas are then ignored and every pass runs
# on the calling thread, with the same results.  The ThreadSanitizer build is
# always OPENMP=0: libgomp is not TSan-instrumented, so its barriers and
# thread pool would be reported as races that are not there, and the passes
# it runs share nothing but read-only input and per-thread output.
OPENMP   ?= 1
ifeq ($(SAN),thread)
OPENMP   := 0
endif
ifeq ($(OPENMP),1)
ALL_CFLAGS  += -fopenmp
ALL_LDFLAGS += -fopenmp
else
ALL_CFLAGS  += -Wno-unknown-pragmas
endif

LIB_DIRS := common formats trace accounting microbench calibrate model gc adaptive gc-predict workloads gcbench schedtrace validate
LIB_SRCS := $(foreach d,$(LIB_DIRS),$(wildcard $(d)/*.c))
CLI_SRCS := $(wildcard cli/*.c)
TEST_SRCS := $(wildcard tests/test_*.c)
HEADERS  := $(wildcard include/gcscale/*.h) $(wildcard cli/*.h) $(wildcard tests/*.h) \
            $(foreach d,$(LIB_DIRS),$(wildcard $(d)/*.h))

LIB_OBJS := $(LIB_SRCS:%.c=$(BUILD)/obj/%.o)
CLI_OBJS := $(CLI_SRCS:%.c=$(BUILD)/obj/%.o)
TEST_BINS := $(TEST_SRCS:tests/%.c=$(BUILD)/tests/%)

VERSION := $(shell sed -n 's/^\#define GCSCALE_VERSION "\(.*\)"/\1/p' include/gcscale/common.h)

.PHONY: all demo check check-sanitize check-asan check-tsan install clean tests man check-readme
all: $(BUILD)/gcscale $(BUILD)/libgcscale.so $(BUILD)/gcscale.pc $(BUILD)/gcscale-uninstalled.pc

$(BUILD)/obj/%.o: %.c $(HEADERS) Makefile
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -c $< -o $@

# The mark loop (gc/mark.c) is the hot loop everything is measured by: its
# loop heads and branch targets go on 32-byte fetch blocks, so that its speed
# (and the measured cost of its instrumentation) does not move with code
# added elsewhere in the file; see docs/collector.md "Instrumentation".
$(BUILD)/obj/gc/mark.o: ALL_CFLAGS += -falign-loops=32 -falign-jumps=32

# The PAPI this tree was compiled against, by soname (common/papi.c).
$(BUILD)/obj/common/papi.o: ALL_CFLAGS += $(if $(PAPI_SONAME),-DGCS_PAPI_SONAME='"$(PAPI_SONAME)"')

# The build's git revision, which corpus entries record (validate/corpus_record.c);
# the header is rewritten only when the revision changes.
GIT_REVISION := $(shell git describe --always --dirty 2>/dev/null || echo unknown)
.PHONY: FORCE
$(BUILD)/gen/git-revision.h: FORCE
	@mkdir -p $(dir $@)
	@printf '#define GCS_GIT_REVISION "%s"\n' '$(GIT_REVISION)' > $@.tmp
	@if cmp -s $@.tmp $@; then rm -f $@.tmp; else mv -f $@.tmp $@; fi
# Where the installed reference profiles are (formats/profile_path.c): the
# header follows PREFIX, so `make install PREFIX=...` rebuilds what names it.
$(BUILD)/gen/gcs-datadir.h: FORCE
	@mkdir -p $(dir $@)
	@printf '#define GCS_DATADIR "%s"\n' '$(PREFIX)/share/gcscale' > $@.tmp
	@if cmp -s $@.tmp $@; then rm -f $@.tmp; else mv -f $@.tmp $@; fi
$(BUILD)/obj/formats/profile_path.o: $(BUILD)/gen/gcs-datadir.h
$(BUILD)/obj/formats/profile_path.o: ALL_CFLAGS += -I$(BUILD)/gen
$(BUILD)/obj/common/version.o: $(BUILD)/gen/git-revision.h
$(BUILD)/obj/common/version.o: ALL_CFLAGS += -I$(BUILD)/gen
$(BUILD)/obj/validate/corpus_record.o: $(BUILD)/gen/git-revision.h
$(BUILD)/obj/validate/corpus_record.o: ALL_CFLAGS += -I$(BUILD)/gen

$(BUILD)/libgcscale.a: $(LIB_OBJS)
	@mkdir -p $(dir $@)
	rm -f $@ && ar rcs $@ $^

$(BUILD)/libgcscale.so: $(LIB_OBJS)
	$(CC) -shared -Wl,-soname,libgcscale.so.0 $(ALL_LDFLAGS) -o $@ $^ $(LIBS)
	ln -sf libgcscale.so $(BUILD)/libgcscale.so.0

$(BUILD)/gcscale: $(CLI_OBJS) $(BUILD)/libgcscale.a
	$(CC) $(ALL_LDFLAGS) -o $@ $(CLI_OBJS) $(BUILD)/libgcscale.a $(LIBS)

# The pkg-config file names PREFIX, so install writes it afresh for the PREFIX it installs to.
write_pc = printf 'prefix=%s\nlibdir=$${prefix}/lib\nincludedir=$${prefix}/include\n\nName: gcscale\nDescription: GC scalability measurement and prediction\nVersion: %s\nRequires.private: %s\nCflags: -I$${includedir}\nLibs: -L$${libdir} -lgcscale\nLibs.private: -lm -pthread $(if $(filter 1,$(OPENMP)),-lgomp)\n' \
	  '$(PREFIX)' '$(VERSION)' '$(PKGS_LINKED)' > $(1)

# pkg-config's convention for a library used from its build tree: with
# PKG_CONFIG_PATH=build, `pkg-config gcscale` picks gcscale-uninstalled.pc,
# which points at include/ and build/ here (tests/cli/test_layers.sh builds
# a program against libgcscale.so through it).
$(BUILD)/gcscale-uninstalled.pc: Makefile include/gcscale/common.h
	@mkdir -p $(dir $@)
	printf 'srcdir=%s\nbuilddir=%s\n\nName: gcscale\nDescription: GC scalability measurement and prediction (build tree)\nVersion: %s\nRequires.private: %s\nCflags: -I$${srcdir}/include\nLibs: -L$${builddir} -lgcscale\nLibs.private: -lm -pthread $(if $(filter 1,$(OPENMP)),-lgomp)\n' \
	  '$(CURDIR)' '$(abspath $(BUILD))' '$(VERSION)' '$(PKGS_LINKED)' > $@

$(BUILD)/gcscale.pc: Makefile include/gcscale/common.h
	@mkdir -p $(dir $@)
	$(call write_pc,$@)

$(BUILD)/tests/%: tests/%.c $(BUILD)/libgcscale.a $(HEADERS)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) $(TEST_CFLAGS) -Itests -o $@ $< $(BUILD)/libgcscale.a $(TEST_LIBS) $(LIBS) $(ALL_LDFLAGS)
# the fuzz targets, included and run on fixed inputs
$(BUILD)/tests/test_fuzz_harness: $(wildcard tests/fuzz/fuzz_*.c) $(wildcard tests/fuzz/*.h)
# makes malloc/realloc fail during collections (the mark stack cannot grow)
$(BUILD)/tests/test_gc_oom: private ALL_LDFLAGS += -Wl,--wrap=malloc,--wrap=realloc

# The main job on this machine: calibrate it (data/machines/HOSTNAME.json),
# then check the model and the adaptive mode against the collector on the
# paper's workloads (gcscale validate --quick; report in validation-HOSTNAME/).
demo: all
	$(BUILD)/gcscale calibrate
	$(BUILD)/gcscale validate --quick

tests: all $(TEST_BINS)

# Unit tests (tests/test_*.c, cmocka) and CLI tests (tests/cli/*.sh).
# The build uses every CPU (a third of CI's time was three serial builds);
# the tests then run one at a time, as their timings assume.
JOBS ?= $(shell nproc 2>/dev/null || echo 2)
check:
	$(MAKE) -j$(JOBS) tests fuzz-standalone
	scripts/run-tests $(BUILD)

# ASan+UBSan over everything; TSan over the tests that start threads
# (their names are listed in tests/tsan-tests; a CLI script may leave its
# single-threaded checks out when GCSCALE_TEST_SANITIZER=thread, or widen a
# timing bound under either sanitizer: GCSCALE_TEST_SANITIZER=address|thread).
check-sanitize: check-asan check-tsan
check-asan:
	GCSCALE_TEST_SANITIZER=address $(MAKE) BUILD=build/asan SAN=address,undefined OPT=-O1 check
check-tsan:
	$(MAKE) -j$(JOBS) BUILD=build/tsan SAN=thread OPT=-O1 tests
	GCSCALE_TEST_SANITIZER=thread scripts/run-tests build/tsan --only-listed tests/tsan-tests

# The README's examples as written, the slow ones too (tests/cli/test_readme.sh).
check-readme: all
	README_TESTS=all GCSCALE=$(BUILD)/gcscale tests/cli/test_readme.sh | tee $(BUILD)/readme.tap
	! grep -q '^not ok' $(BUILD)/readme.tap

# Man pages, generated from each command's --help (scripts/make-man).
man: all
	scripts/make-man $(BUILD)

install: all man $(BUILD)/libgcscale.a
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/lib/pkgconfig $(DESTDIR)$(PREFIX)/include/gcscale
	install -m 755 $(BUILD)/gcscale $(DESTDIR)$(PREFIX)/bin/
	install -m 644 $(BUILD)/libgcscale.a $(DESTDIR)$(PREFIX)/lib/
	install -m 755 $(BUILD)/libgcscale.so $(DESTDIR)$(PREFIX)/lib/libgcscale.so.0
	ln -sf libgcscale.so.0 $(DESTDIR)$(PREFIX)/lib/libgcscale.so
	install -m 644 include/gcscale/*.h $(DESTDIR)$(PREFIX)/include/gcscale/
	install -d $(DESTDIR)$(PREFIX)/share/man/man1
	install -m 644 $(BUILD)/man/*.1 $(DESTDIR)$(PREFIX)/share/man/man1/
	install -d $(DESTDIR)$(PREFIX)/share/bash-completion/completions
	install -m 644 scripts/gcscale-completion.bash $(DESTDIR)$(PREFIX)/share/bash-completion/completions/gcscale
	install -d $(DESTDIR)$(PREFIX)/share/gcscale/machines
	install -m 644 data/machines/o2k.json data/machines/e10k.json $(DESTDIR)$(PREFIX)/share/gcscale/machines/
	$(call write_pc,$(DESTDIR)$(PREFIX)/lib/pkgconfig/gcscale.pc)

clean:
	rm -rf build

# make bench: gcscale gc-bench on the four canonical shapes and, where
# pkg-config finds bdw-gc (Debian libgc-dev), the same shapes in Boehm GC
# (build/gcscale-boehm-bench); prints them side by side (scripts/bench-compare,
# needs jq) and keeps the JSON under build/bench/.  BENCH_REPS: collections per P.
HAVE_BDW := $(shell pkg-config --exists bdw-gc 2>/dev/null && echo 1)
BENCH_REPS ?= 7
.PHONY: bench
ifeq ($(HAVE_BDW),1)
BENCH_BOEHM := $(BUILD)/gcscale-boehm-bench
$(BUILD)/gcscale-boehm-bench: gcbench/boehm/boehm_bench.c $(BUILD)/libgcscale.a $(HEADERS) Makefile
	$(CC) $(ALL_CFLAGS) $(shell pkg-config --cflags bdw-gc) -o $@ $< $(BUILD)/libgcscale.a \
	  $(shell pkg-config --libs bdw-gc) $(LIBS) $(ALL_LDFLAGS)
endif
bench: all $(BENCH_BOEHM)
	BENCH_REPS=$(BENCH_REPS) scripts/bench-compare $(BUILD)

# make fuzz: libFuzzer (clang) over the readers of user files, each for
# FUZZ_SECONDS: the heap snapshot reader, from a seed corpus of small valid
# snapshots (tests/fuzz/make_seeds.c); the machine-profile loader, from
# data/machines/*.json and tests/data/profile/every-key.json with the
# dictionary tests/fuzz/profile.dict; the
# thread-state trace reader and its accounting, from tests/fuzz/trace-seeds;
# the HotSpot GC log reader (stack --gc-log), from tests/fuzz/gclog-seeds;
# the gc-bench result reader (predict --measured), from the committed gc-bench
# JSON in data/results/; the corpus floor check (corpus accuracy --floor),
# from data/corpus/floor.json; the HPROF importer, from small synthetic dumps
# (tests/fuzz/hprof_gen.h); the V8 heap snapshot importer, from small
# synthetic snapshots (tests/fuzz/v8_gen.h) and tests/fuzz/v8-seeds (element
# edges and backing stores) with tests/fuzz/v8.dict.  The
# corpora they grow are kept in $(BUILD)/fuzz/corpus, corpus-profile,
# corpus-trace, corpus-gclog, corpus-gcbench, corpus-floor, corpus-hprof and corpus-v8; a
# crash leaves its input as
# $(BUILD)/fuzz/crash-*.  `make
# check` runs the same targets without libFuzzer on fixed inputs (seeds, their
# prefixes and corruptions, past findings: tests/test_fuzz_harness.c).  Like
# the sanitizer builds, the fuzz builds turn on gcs_assert_internal.
FUZZ_CC      ?= clang
FUZZ_SECONDS ?= 60
FUZZ_DIR     := $(BUILD)/fuzz
FUZZ_FLAGS   := -std=gnu11 -Wall -Wextra -Werror -g -O1 -fsanitize=fuzzer,address,undefined \
                -fno-sanitize-recover=all -DGCS_ASSERT=1 -Iinclude $(PKG_CFLAGS)
# the heap dump importers (the snapshot reader reads dumps too)
# (by wildcard, so that a reader split into more files needs no edit here)
FUZZ_DUMP_SRCS := $(wildcard formats/hprof*.c) $(wildcard formats/v8snap*.c) formats/dumpstream.c formats/par.c \
                formats/heapdump.c
FUZZ_SNAP    := $(wildcard formats/snapshot*.c) formats/crc32c.c common/hugemem.c
FUZZ_SRCS    := tests/fuzz/fuzz_snapshot.c $(FUZZ_SNAP) formats/zstd.c $(FUZZ_DUMP_SRCS) \
                common/err.c common/outfile.c
FUZZ_HPROF_SRCS := tests/fuzz/fuzz_hprof.c $(FUZZ_DUMP_SRCS) $(FUZZ_SNAP) \
                formats/zstd.c \
                common/err.c common/outfile.c
FUZZ_V8_SRCS := tests/fuzz/fuzz_v8.c $(FUZZ_DUMP_SRCS) $(FUZZ_SNAP) \
                formats/zstd.c common/err.c common/outfile.c
FUZZ_PROFILE_SRCS := tests/fuzz/fuzz_profile.c $(filter-out formats/profile_path.c,$(wildcard formats/profile*.c)) \
                common/err.c common/outfile.c common/table.c common/parse.c common/stats.c
FUZZ_GCBENCH_SRCS := tests/fuzz/fuzz_gcbench_result.c formats/gcbench_result.c common/err.c common/outfile.c common/pumap.c \
                common/table.c common/stats.c common/parse.c
FUZZ_FLOOR_SRCS := tests/fuzz/fuzz_corpus_floor.c validate/corpus_floor.c common/err.c
FUZZ_ENTRY_SRCS := tests/fuzz/fuzz_corpus_entry.c validate/corpus_entry.c gcbench/shapes.c common/err.c common/stats.c
FUZZ_TRACE_SRCS := tests/fuzz/fuzz_trace.c trace/trace_file.c accounting/acct.c accounting/bottle.c \
                accounting/stack.c accounting/runtime.c common/err.c common/outfile.c common/table.c common/plot.c
FUZZ_GCLOG_SRCS := tests/fuzz/fuzz_gclog.c $(filter-out tests/fuzz/fuzz_trace.c,$(FUZZ_TRACE_SRCS))
# The fuzz targets linked with the C compiler and a plain main
# (tests/fuzz/standalone_main.c) from the same source lists: `make check`
# builds them, so a list that lacks a source fails there and not first where
# clang is; each replays the files it is given (a crash input, without clang).
FUZZ_SA_DIR   := $(BUILD)/fuzz-standalone
FUZZ_SA_FLAGS := -std=gnu11 -Wall -Wextra -Werror -Wno-unknown-pragmas -g -O1 -DGCS_ASSERT=1 -Iinclude $(PKG_CFLAGS)
define fuzz_standalone
$(FUZZ_SA_DIR)/$(1): tests/fuzz/standalone_main.c $(2) $(wildcard tests/fuzz/*.h) $(HEADERS) Makefile
	@mkdir -p $$(dir $$@)
	$$(CC) $$(FUZZ_SA_FLAGS) -o $$@ tests/fuzz/standalone_main.c $(2) $(3)
FUZZ_SA_BINS += $(FUZZ_SA_DIR)/$(1)
endef
$(eval $(call fuzz_standalone,fuzz_snapshot,$(FUZZ_SRCS),-ljansson -lz -lzstd -ldeflate -lm))
$(eval $(call fuzz_standalone,fuzz_profile,$(FUZZ_PROFILE_SRCS),-ljansson -lm))
$(eval $(call fuzz_standalone,fuzz_trace,$(FUZZ_TRACE_SRCS),-ljansson -lm))
$(eval $(call fuzz_standalone,fuzz_gclog,$(FUZZ_GCLOG_SRCS),-ljansson -lm))
$(eval $(call fuzz_standalone,fuzz_gcbench_result,$(FUZZ_GCBENCH_SRCS),-ljansson -lm))
$(eval $(call fuzz_standalone,fuzz_corpus_floor,$(FUZZ_FLOOR_SRCS),-ljansson -lm))
$(eval $(call fuzz_standalone,fuzz_corpus_entry,$(FUZZ_ENTRY_SRCS),-ljansson -lm))
$(eval $(call fuzz_standalone,fuzz_hprof,$(FUZZ_HPROF_SRCS),-ljansson -lz -lzstd -ldeflate -lm))
$(eval $(call fuzz_standalone,fuzz_v8,$(FUZZ_V8_SRCS),-ljansson -lz -lzstd -ldeflate -lm))
.PHONY: fuzz-standalone
fuzz-standalone: $(FUZZ_SA_BINS)

.PHONY: fuzz
# The fuzz builds' first step: say what to install when clang is missing.
FUZZ_NEED_CC  = @command -v $(FUZZ_CC) >/dev/null || \
                { echo "make fuzz: $(FUZZ_CC) not found: run scripts/install-deps --fuzz" >&2; exit 2; }
$(FUZZ_DIR)/fuzz_snapshot: $(FUZZ_SRCS) $(HEADERS) Makefile
	$(FUZZ_NEED_CC)
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_FLAGS) -o $@ $(FUZZ_SRCS) -ljansson -lz -lzstd -ldeflate
$(FUZZ_DIR)/fuzz_profile: $(FUZZ_PROFILE_SRCS) $(HEADERS) Makefile
	$(FUZZ_NEED_CC)
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_FLAGS) -o $@ $(FUZZ_PROFILE_SRCS) -ljansson -lm
$(FUZZ_DIR)/fuzz_trace: $(FUZZ_TRACE_SRCS) tests/fuzz/trace_check.h $(HEADERS) Makefile
	$(FUZZ_NEED_CC)
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_FLAGS) -o $@ $(FUZZ_TRACE_SRCS) -ljansson -lm
$(FUZZ_DIR)/fuzz_gclog: $(FUZZ_GCLOG_SRCS) tests/fuzz/trace_check.h $(HEADERS) Makefile
	$(FUZZ_NEED_CC)
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_FLAGS) -o $@ $(FUZZ_GCLOG_SRCS) -ljansson -lm
$(FUZZ_DIR)/fuzz_gcbench_result: $(FUZZ_GCBENCH_SRCS) $(HEADERS) Makefile
	$(FUZZ_NEED_CC)
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_FLAGS) -o $@ $(FUZZ_GCBENCH_SRCS) -ljansson -lm
$(FUZZ_DIR)/fuzz_corpus_floor: $(FUZZ_FLOOR_SRCS) $(HEADERS) Makefile
	$(FUZZ_NEED_CC)
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_FLAGS) -o $@ $(FUZZ_FLOOR_SRCS) -ljansson -lm
$(FUZZ_DIR)/fuzz_corpus_entry: $(FUZZ_ENTRY_SRCS) $(HEADERS) Makefile
	$(FUZZ_NEED_CC)
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_FLAGS) -o $@ $(FUZZ_ENTRY_SRCS) -ljansson -lm
$(FUZZ_DIR)/fuzz_hprof: $(FUZZ_HPROF_SRCS) $(HEADERS) Makefile
	$(FUZZ_NEED_CC)
	@mkdir -p $(FUZZ_DIR)
	$(FUZZ_CC) $(FUZZ_FLAGS) -o $@ $(FUZZ_HPROF_SRCS) -ljansson -lz -lzstd -ldeflate
$(FUZZ_DIR)/fuzz_v8: $(FUZZ_V8_SRCS) $(HEADERS) Makefile
	$(FUZZ_NEED_CC)
	@mkdir -p $(FUZZ_DIR)
	$(FUZZ_CC) $(FUZZ_FLAGS) -o $@ $(FUZZ_V8_SRCS) -ljansson -lz -lzstd -ldeflate
$(FUZZ_DIR)/make_seeds: tests/fuzz/make_seeds.c tests/fuzz/v8_gen.h $(BUILD)/libgcscale.a $(HEADERS)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -o $@ $< $(BUILD)/libgcscale.a $(LIBS) $(ALL_LDFLAGS)
fuzz: $(FUZZ_DIR)/fuzz_snapshot $(FUZZ_DIR)/fuzz_profile $(FUZZ_DIR)/fuzz_trace $(FUZZ_DIR)/fuzz_gclog \
      $(FUZZ_DIR)/fuzz_gcbench_result \
      $(FUZZ_DIR)/fuzz_corpus_floor $(FUZZ_DIR)/fuzz_corpus_entry $(FUZZ_DIR)/fuzz_hprof $(FUZZ_DIR)/fuzz_v8 \
      $(FUZZ_DIR)/make_seeds
	rm -rf $(FUZZ_DIR)/seeds $(FUZZ_DIR)/seeds-hprof $(FUZZ_DIR)/seeds-v8
	mkdir -p $(FUZZ_DIR)/seeds $(FUZZ_DIR)/seeds-hprof $(FUZZ_DIR)/seeds-v8 $(FUZZ_DIR)/corpus \
	  $(FUZZ_DIR)/corpus-profile $(FUZZ_DIR)/corpus-trace $(FUZZ_DIR)/corpus-hprof $(FUZZ_DIR)/corpus-v8 \
	  $(FUZZ_DIR)/corpus-gcbench $(FUZZ_DIR)/corpus-floor $(FUZZ_DIR)/corpus-entry $(FUZZ_DIR)/corpus-gclog
	$(FUZZ_DIR)/make_seeds $(FUZZ_DIR)/seeds $(FUZZ_DIR)/seeds-hprof $(FUZZ_DIR)/seeds-v8
	$(FUZZ_DIR)/fuzz_snapshot -max_total_time=$(FUZZ_SECONDS) -max_len=8192 -print_final_stats=1 \
	  -artifact_prefix=$(FUZZ_DIR)/ $(FUZZ_DIR)/corpus $(FUZZ_DIR)/seeds
	rm -rf $(FUZZ_DIR)/seeds-profile && mkdir -p $(FUZZ_DIR)/seeds-profile && cp data/machines/*.json $(FUZZ_DIR)/seeds-profile/
	cp tests/data/profile/every-key.json $(FUZZ_DIR)/seeds-profile/
	$(FUZZ_DIR)/fuzz_profile -max_total_time=$(FUZZ_SECONDS) -max_len=16384 -print_final_stats=1 \
	  -dict=tests/fuzz/profile.dict -artifact_prefix=$(FUZZ_DIR)/ $(FUZZ_DIR)/corpus-profile $(FUZZ_DIR)/seeds-profile
	$(FUZZ_DIR)/fuzz_trace -max_total_time=$(FUZZ_SECONDS) -max_len=4096 -print_final_stats=1 \
	  -artifact_prefix=$(FUZZ_DIR)/ $(FUZZ_DIR)/corpus-trace tests/fuzz/trace-seeds
	$(FUZZ_DIR)/fuzz_gclog -max_total_time=$(FUZZ_SECONDS) -max_len=4096 -print_final_stats=1 \
	  -artifact_prefix=$(FUZZ_DIR)/ $(FUZZ_DIR)/corpus-gclog tests/fuzz/gclog-seeds
	$(FUZZ_DIR)/fuzz_gcbench_result -max_total_time=$(FUZZ_SECONDS) -max_len=32768 -print_final_stats=1 \
	  -artifact_prefix=$(FUZZ_DIR)/ $(FUZZ_DIR)/corpus-gcbench data/results/lent-16cpu-xeon/model-validation
	$(FUZZ_DIR)/fuzz_corpus_floor -max_total_time=$(FUZZ_SECONDS) -max_len=8192 -print_final_stats=1 \
	  -artifact_prefix=$(FUZZ_DIR)/ $(FUZZ_DIR)/corpus-floor data/corpus
	rm -rf $(FUZZ_DIR)/seeds-entry && mkdir -p $(FUZZ_DIR)/seeds-entry
	for e in data/corpus/*/entry.json; do cp $$e $(FUZZ_DIR)/seeds-entry/$$(basename $$(dirname $$e)).json; done
	$(FUZZ_DIR)/fuzz_corpus_entry -max_total_time=$(FUZZ_SECONDS) -max_len=16384 -print_final_stats=1 \
	  -artifact_prefix=$(FUZZ_DIR)/ $(FUZZ_DIR)/corpus-entry $(FUZZ_DIR)/seeds-entry
	$(FUZZ_DIR)/fuzz_hprof -max_total_time=$(FUZZ_SECONDS) -max_len=16384 -print_final_stats=1 \
	  -artifact_prefix=$(FUZZ_DIR)/ $(FUZZ_DIR)/corpus-hprof $(FUZZ_DIR)/seeds-hprof
	$(FUZZ_DIR)/fuzz_v8 -max_total_time=$(FUZZ_SECONDS) -max_len=16384 -print_final_stats=1 \
	  -dict=tests/fuzz/v8.dict -artifact_prefix=$(FUZZ_DIR)/ $(FUZZ_DIR)/corpus-v8 $(FUZZ_DIR)/seeds-v8 \
	  tests/fuzz/v8-seeds

# make model-validation: the model against the collector on this machine --
# predicted versus measured speedup of the gc-bench heaps (scripts/model-validation;
# PROFILE: the machine profile, default data/machines/$(hostname).json).
.PHONY: model-validation
MV_PROFILE ?= data/machines/$(shell hostname).json
model-validation: all
	scripts/model-validation $(BUILD) $(MV_PROFILE)

# make model-accuracy: the current model against the measured corpus
# (data/corpus/*/, docs/corpus.md): per machine and P, measured and predicted
# speedup, errors, recommended against best P, P = 1 times; fails when any
# figure of the base model is worse than data/corpus/floor.json, then the
# same for model v2 (the default) against data/corpus/floor-v2.json and for
# v2 with the profile's fitted steal count (the fast predictor's) against
# data/corpus/floor-v2-fitted.json.
# The CI test (tests/cli/test_corpus.sh) runs the same checks.
.PHONY: model-accuracy
model-accuracy: all
	$(BUILD)/gcscale corpus accuracy --model base --floor data/corpus/floor.json
	$(BUILD)/gcscale corpus accuracy --model v2 --floor data/corpus/floor-v2.json
	$(BUILD)/gcscale corpus accuracy --model v2 --steal-count fitted --floor data/corpus/floor-v2-fitted.json

# make bench-model: the cache simulator's accesses per second and what the
# fast and slow heap inspection cost against the serial mark time of the
# gc-bench shapes (model/bench/bench_model.c): load, Tinf walk, fast and slow
# predictor, each in a fresh process, with its peak RSS against the snapshot,
# and the adaptive decision.  BENCH_MODEL_ARGS: its options (--profile FILE,
# --shapes tree,list, --depth D, --reps N, --phase-reps N, --quick, ...).
.PHONY: bench-model
$(BUILD)/bench-model: model/bench/bench_model.c $(BUILD)/libgcscale.a $(HEADERS) Makefile
	$(CC) $(ALL_CFLAGS) -o $@ $< $(BUILD)/libgcscale.a $(LIBS) $(ALL_LDFLAGS)
bench-model: $(BUILD)/bench-model
	$(BUILD)/bench-model $(BENCH_MODEL_ARGS)

# make bench-import: the HPROF importer's speed (MB/s of uncompressed dump,
# by wall clock and per CPU second, median and min-max, on every thread; the
# kernel's share of that CPU time and the page faults) and
# its peak memory beyond the snapshot it makes, against 16 B/object +
# 8 B/edge, on synthetic dumps (list, tree and random graph of 10^5, 10^6,
# 10^7 objects, tests/fuzz/hprof_gen.h), and the dumps of 10^6 from a plain
# and a gzip file (formats/bench/bench_import.c; docs/heap-dumps.md,
# "Performance").  BENCH_IMPORT_ARGS: its options (--shapes list,tree,random,
# --objects 1e5,1e6,1e7, --reps N, --order shuffled|address, --refs K,
# --gzip-objects N|0, --gzip-block BYTES|0 (HotSpot's -gz members, "gzm"),
# --plain-objects N|0, --threads N, --dir DIR, --json;
# --format v8: the V8 importer on tests/fuzz/v8_gen.h's snapshots, which
# `make bench-import` runs too; --file DUMP, repeatable: real dumps instead,
# e.g. BENCH_IMPORT_ARGS="--file app.hprof --reps 5").
BENCH_IMPORT_ARGS ?= --reps 3 --plain-objects 1e6
BENCH_IMPORT_V8_ARGS ?= --reps 3 --plain-objects 1e6
.PHONY: bench-import
$(BUILD)/bench-import: formats/bench/bench_import.c tests/fuzz/hprof_gen.h tests/fuzz/v8_gen.h $(BUILD)/libgcscale.a \
                       $(HEADERS) Makefile
	$(CC) $(ALL_CFLAGS) -o $@ $< $(BUILD)/libgcscale.a $(LIBS) $(ALL_LDFLAGS)
bench-import: $(BUILD)/bench-import
	$(BUILD)/bench-import $(BENCH_IMPORT_ARGS)
	$(BUILD)/bench-import --format v8 $(BENCH_IMPORT_V8_ARGS)
