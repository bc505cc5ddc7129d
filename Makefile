# sensim - a plain Makefile in the style of lz4 and zstd: objects out of tree
# (BUILD ?= build), dependencies from -MMD -MP, quiet unless V=1, PREFIX and
# DESTDIR, install and a mirroring uninstall, a generated sensim.pc.
#
#   make                 library (static + shared), the sensim program, sensim.pc
#   make gpu             the CUDA kernels as PTX (clang-16; warnings are errors), embedded in the library
#   make check           the test suite (Check), tests/runner
#   make check-asan      the same suite under AddressSanitizer + UBSan
#   make check-valgrind  a subset of the suites and a few runs of the program under valgrind memcheck
#   make fuzz            libFuzzer targets in tests/fuzz/ (clang-16, ASan + UBSan)
#   make fuzz-smoke      each fuzz target briefly on its committed corpus
#   make bench           benchmarks in bench/, printing throughput
#   make demo            sensim demo on the bundled data
#   make lint-man        mandoc -T lint and groff -ww on every man page
#   make format          clang-format-16 -i on the sources (style: .clang-format)
#   make check-examples  every example of README.md and the man pages, run
#   make check-install   install to a temporary DESTDIR and PREFIX and use it
#   make python          the Python package (cffi) in $(BUILD)/python: PYTHONPATH=$(BUILD)/python
#   make check-python    its pytest suite (python/tests), against the CLI and the C library
#   make check-slurm     a private one-node Slurm cluster runs a sharded job (tests/slurm.sh)
#   make install / uninstall  (PREFIX=/usr/local, DESTDIR=)

VERSION   = 0.1.0
SOVERSION = 0

PREFIX     ?= /usr/local
BINDIR     ?= $(PREFIX)/bin
LIBDIR     ?= $(PREFIX)/lib
INCLUDEDIR ?= $(PREFIX)/include
MANDIR     ?= $(PREFIX)/share/man
DATADIR    ?= $(PREFIX)/share/sensim
LIBEXECDIR ?= $(PREFIX)/libexec/sensim
DESTDIR    ?=
BUILD      ?= build

CC     ?= cc
CXX    ?= c++
CFLAGS ?= -O2 -g
CXXFLAGS ?= $(CFLAGS)
SAN    ?=

PKGS       = hdf5 yaml-0.1 gsl libpng libjpeg liblz4 libzstd sqlite3 zlib draco assimp
DEP_CFLAGS := $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
# meshoptimizer (glTF EXT_meshopt_compression) ships no .pc file; libdraco is
# C++ (render/draco.cc), hence libstdc++ for static links.
DEP_LIBS   := $(shell pkg-config --libs-only-L $(PKGS) 2>/dev/null) -lhdf5_hl \
              $(shell pkg-config --libs-only-l $(PKGS) 2>/dev/null) -lembree3 -lbz2 -lmeshoptimizer -lstdc++ -lm -lpthread
CHECK_LIBS := $(shell pkg-config --libs check 2>/dev/null)

ALL_CFLAGS = -std=c11 -D_DEFAULT_SOURCE -Wall -Wextra -Wmissing-prototypes -fopenmp -fPIC -Iinclude $(CPPFLAGS) \
             -DSENSIM_VERSION='"$(VERSION)"' -DSENSIM_DATADIR='"$(DATADIR)"' $(DEP_CFLAGS) $(CFLAGS) $(SAN)
ALL_LDFLAGS = -fopenmp $(LDFLAGS) $(SAN)
# The one C++ file (render/draco.cc, a C interface to libdraco): no
# exceptions cross it, and it sees the same include paths and sanitizers.
ALL_CXXFLAGS = -std=c++17 -Wall -Wextra -fPIC -Iinclude $(CPPFLAGS) $(DEP_CFLAGS) $(CXXFLAGS) $(SAN)

ifeq ($(V),1)
Q =
else
Q = @
endif

LIB_SRC   := $(sort $(wildcard lib/*.c io/*.c models/*.c calib/*.c metrics/*.c render/*.c))
LIB_CXX   := $(sort $(wildcard render/*.cc))
CLI_SRC   := $(sort $(wildcard cli/*.c cli/*/*.c))
TEST_SRC  := $(sort $(wildcard tests/*.c))
BENCH_SRC := $(sort $(wildcard bench/*.c))
HEADERS   := $(sort $(wildcard include/sensim/*.h))
MAN1      := $(sort $(wildcard man/*.1))
MAN3      := $(sort $(wildcard man/*.3))

LIB_OBJ   := $(LIB_SRC:%.c=$(BUILD)/%.o) $(LIB_CXX:%.cc=$(BUILD)/%.o)
CLI_OBJ   := $(CLI_SRC:%.c=$(BUILD)/%.o)
TEST_OBJ  := $(TEST_SRC:%.c=$(BUILD)/%.o)
BENCH_BIN := $(BENCH_SRC:bench/%.c=$(BUILD)/bench/%)

STATIC = $(BUILD)/libsensim.a
SHARED = $(BUILD)/libsensim.so.$(VERSION)
PROG   = $(BUILD)/sensim
PLUGIN = $(BUILD)/sensim-render.so
PROG_PLUGIN = $(if $(SAN),,$(PLUGIN))
RUNNER = $(BUILD)/tests/runner
PCFILE = $(BUILD)/sensim.pc

.PHONY: all gpu check check-examples check-install check-slurm check-python python check-asan check-valgrind fuzz fuzz-bins fuzz-smoke bench demo lint-man format install uninstall clean FORCE
all: $(STATIC) $(SHARED) $(PROG) $(PROG_PLUGIN) $(PCFILE)

$(BUILD)/%.o: %.c
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CC      $<")
	$(Q)$(CC) $(ALL_CFLAGS) -MMD -MP -c $< -o $@

$(BUILD)/%.o: %.cc
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CXX     $<")
	$(Q)$(CXX) $(ALL_CXXFLAGS) -MMD -MP -c $< -o $@

$(STATIC): $(LIB_OBJ)
	@$(if $(Q),echo "  AR      $@")
	$(Q)rm -f $@ && ar rcs $@ $^

$(SHARED): $(LIB_OBJ) lib/libsensim.map
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) -shared -Wl,-soname,libsensim.so.$(SOVERSION) -Wl,--version-script,lib/libsensim.map $(ALL_LDFLAGS) \
	  -o $@ $(LIB_OBJ) $(DEP_LIBS)
	$(Q)ln -sf libsensim.so.$(VERSION) $(BUILD)/libsensim.so.$(SOVERSION)
	$(Q)ln -sf libsensim.so.$(VERSION) $(BUILD)/libsensim.so

# The program without the renderer: render (and the demo's render step) run
# from $(PLUGIN), which the program loads when they are asked for
# (cli/render_plugin.c), so that every other verb starts without Embree,
# Assimp, Draco, meshoptimizer and libstdc++ (a third of the dynamic linking
# at start). The program exports its symbols; the plugin's references to the
# library resolve to them, one copy of everything.
# The sanitizer builds link the renderer into the program as before: with
# the renderer's libraries opened by dlopen, GCC 12's LeakSanitizer crashes
# now and then at the program's exit ("Tracer caught signal 11" while it
# stops the threads to scan them).
RENDER_OBJ = $(filter $(BUILD)/render/%,$(LIB_OBJ))
PLUGIN_CLI = $(BUILD)/cli/cmd_render.o $(BUILD)/cli/demo/demo_render.o
ifeq ($(SAN),)
PROG_OBJ   = $(filter-out $(PLUGIN_CLI),$(CLI_OBJ)) $(filter-out $(RENDER_OBJ),$(LIB_OBJ))
$(PROG): $(PROG_OBJ) | $(PLUGIN)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(ALL_LDFLAGS) -Wl,--export-dynamic -o $@ $(PROG_OBJ) -Wl,--as-needed $(DEP_LIBS) -ldl
else
PROG_OBJ   = $(filter-out $(BUILD)/cli/render_plugin.o,$(CLI_OBJ)) $(LIB_OBJ)
$(PROG): $(PROG_OBJ)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(ALL_LDFLAGS) -o $@ $(PROG_OBJ) $(DEP_LIBS)
endif

$(PLUGIN): $(RENDER_OBJ) $(PLUGIN_CLI)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) -shared $(ALL_LDFLAGS) -o $@ $(RENDER_OBJ) $(PLUGIN_CLI) -Wl,--as-needed $(DEP_LIBS)

$(BUILD)/cli/render_plugin.o: ALL_CFLAGS += -DSENSIM_LIBEXECDIR='"$(LIBEXECDIR)"'

# sensim.pc with paths relative to ${prefix} where they lie under PREFIX, so
# that `pkg-config --define-prefix` and PKG_CONFIG_SYSROOT_DIR relocate it.
# Written by the build (for the build's PREFIX) and again by install, from
# the PREFIX, LIBDIR and INCLUDEDIR given there.
pc_rel = $(patsubst $(PREFIX)/%,$${prefix}/%,$(patsubst $(PREFIX),$${prefix},$(1)))
define write_pc
printf '%s\n' 'prefix=$(PREFIX)' 'libdir=$(call pc_rel,$(LIBDIR))' 'includedir=$(call pc_rel,$(INCLUDEDIR))' '' \
  'Name: sensim' 'Description: sensor-noise simulation, calibration and sim2real metrics' \
  'Version: $(VERSION)' 'Requires.private: $(PKGS)' \
  'Libs: -L$${libdir} -lsensim' 'Libs.private: -lhdf5_hl -lembree3 -lbz2 -lmeshoptimizer -lstdc++ -fopenmp -lm' \
  'Cflags: -I$${includedir}' > $(1)
endef

$(PCFILE): FORCE
	@mkdir -p $(BUILD)
	$(Q)$(call write_pc,$@.tmp)
	$(Q)if cmp -s $@.tmp $@; then rm -f $@.tmp; else mv $@.tmp $@; fi
FORCE:

# The test runner registers every `Suite *suite_NAME(void)` found in tests/*.c.
$(BUILD)/gen/suites.h: $(TEST_SRC)
	@mkdir -p $(dir $@)
	$(Q)grep -ho '^Suite \*suite_[a-z0-9_]*(void)' $(TEST_SRC) | \
	  sed 's/^Suite \*\(suite_[a-z0-9_]*\)(void)/SENSIM_SUITE(\1)/' > $@.tmp
	$(Q)if cmp -s $@.tmp $@; then rm -f $@.tmp; else mv $@.tmp $@; fi

$(BUILD)/tests/runner.o: $(BUILD)/gen/suites.h

# The lidar presets are the data files data/lidars/*.yaml, embedded.
LIDAR_DEFS := $(sort $(wildcard data/lidars/*.yaml))
$(BUILD)/gen/lidar_presets.h: $(LIDAR_DEFS) scripts/embed_text.sh
	@mkdir -p $(dir $@)
	$(Q)sh scripts/embed_text.sh lidar_presets $(LIDAR_DEFS) > $@.tmp && mv $@.tmp $@
$(BUILD)/render/scene_yaml.o: $(BUILD)/gen/lidar_presets.h
$(BUILD)/render/scene_yaml.o: ALL_CFLAGS += -I$(BUILD)/gen
# The renderer's CUDA kernels (render/gpu/*.cu) as PTX for sm_90 and the
# portable sm_60, by clang-16 in CUDA device-only mode (no NVIDIA package;
# --cuda-path names none so that a CUDA toolkit lying around is not used),
# warnings as errors, the arithmetic kept IEEE as the C twin's
# (render/gpu/sg_kernels.cu). Embedded into the library (render/cuda_loader.c)
# when clang-16 is present; without it the library has no PTX and
# `--backend cuda` says so. `make gpu` insists on clang-16.
CUDA_CC   ?= clang-16
HAVE_CUDA_CC := $(shell command -v $(CUDA_CC) >/dev/null 2>&1 && echo 1)
PTX_ARCHS  = sm_90 sm_60
PTX       := $(PTX_ARCHS:%=$(BUILD)/gen/sg_kernels_%.ptx)
CUDA_FLAGS = -x cuda --cuda-device-only --cuda-path=/nonexistent -nocudainc -nocudalib -S -O3 -std=c++17 \
             -ffp-contract=off -fno-gpu-flush-denormals-to-zero -fno-cuda-approx-transcendentals \
             -Wall -Wextra -Werror -Iinclude -Irender/gpu
$(BUILD)/gen/sg_kernels_%.ptx: render/gpu/sg_kernels.cu $(wildcard render/gpu/*.h) models/lens_math.h
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  PTX     $@")
	$(Q)$(CUDA_CC) $(CUDA_FLAGS) --cuda-gpu-arch=$* -MMD -MP -MF $@.d -MT $@ $< -o $@.tmp && mv $@.tmp $@
# Rewritten only when its content changes (clang-16 installed later counts).
$(BUILD)/gen/cuda_ptx.h: $(if $(HAVE_CUDA_CC),$(PTX)) scripts/embed_text.sh FORCE
	@mkdir -p $(dir $@)
	$(Q)sh scripts/embed_text.sh sensim_cuda_ptx_text $(if $(HAVE_CUDA_CC),$(PTX)) > $@.tmp
	$(Q)if cmp -s $@.tmp $@; then rm -f $@.tmp; else mv $@.tmp $@; fi
$(BUILD)/render/cuda_loader.o: $(BUILD)/gen/cuda_ptx.h
$(BUILD)/render/cuda_loader.o: ALL_CFLAGS += -I$(BUILD)/gen
$(BUILD)/render/cuda.o: ALL_CFLAGS += -ffp-contract=off
gpu:
	@command -v $(CUDA_CC) >/dev/null || { echo "make gpu: $(CUDA_CC) not found (apt-get install clang-16)"; exit 1; }
	$(Q)$(MAKE) --no-print-directory $(PTX) all
# cli/ sub-folders (fit/, demo/) include the shared headers of cli/.
$(BUILD)/cli/%.o: ALL_CFLAGS += -Icli

# testutil.h declares the suites from it (rewritten only when the list changes).
$(TEST_OBJ): $(BUILD)/gen/suites.h
$(BUILD)/tests/%.o: ALL_CFLAGS += -I$(BUILD)/gen -Itests
# The camera's per-pixel loops call sqrt (on values never negative) and floor
# and compare doubles: GCC 12 vectorizes them only without errno and without
# trapping math (fixed per file; a pragma cannot change them). The values
# computed are the same.
$(BUILD)/models/camera.o: ALL_CFLAGS += -fno-math-errno -fno-trapping-math
$(BUILD)/lib/rng_poisson.o: ALL_CFLAGS += -fno-math-errno -fno-trapping-math
# The twin and the lidar and camera loops compile the shared render/gpu/
# headers: no a*b+c contraction, so their bits are the CUDA kernels' (built
# with -fmad=false).
$(BUILD)/render/twin.o $(BUILD)/render/twin_bvh.o $(BUILD)/render/lidar.o $(BUILD)/render/camera.o: ALL_CFLAGS += -ffp-contract=off

# A stand-in for libcuda.so.1 (tests/fakecuda/): the CUDA backend's host
# side tested without a GPU, its kernels' bodies run on the CPU.
FAKECUDA = $(BUILD)/tests/libfakecuda.so
$(FAKECUDA): tests/fakecuda/fakecuda.c $(wildcard render/gpu/*.h) models/lens_math.h
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CC      $@")
	$(Q)$(CC) -std=c11 -D_DEFAULT_SOURCE -O2 -g -Wall -Wextra -fPIC -shared -ffp-contract=off -Irender/gpu -o $@ $<

$(RUNNER): $(TEST_OBJ) $(STATIC) $(FAKECUDA)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(ALL_LDFLAGS) -o $@ $(TEST_OBJ) $(STATIC) $(DEP_LIBS) $(CHECK_LIBS)

# Tests run from the source root; they find the program and data from here.
# Then, outside the sanitizer builds (whose library a plain program cannot
# load): the man-page lint, every documented example, and an install to a
# temporary prefix.
check: $(RUNNER) $(PROG) $(PROG_PLUGIN) $(SHARED) $(PCFILE)
	$(Q)SENSIM_BIN=$(abspath $(PROG)) SENSIM_SRCDIR=$(CURDIR) CK_DEFAULT_TIMEOUT=$${CK_DEFAULT_TIMEOUT:-900} \
	  $(RUNNER)
	$(Q)sh tests/exports.sh $(BUILD)/libsensim.so
	$(Q)/usr/bin/python3 tests/man-api.py check $(BUILD)/libsensim.so man/libsensim.3
	$(Q)/usr/bin/python3 tests/layering.py $(CURDIR)
	$(Q)/usr/bin/python3 tests/funclen.py $(CURDIR)
ifeq ($(SAN),)
	$(Q)sh tests/lint-man.sh $(MAN1) $(MAN3)
	$(Q)/usr/bin/python3 tests/examples.py run --sensim $(PROG) --build $(BUILD) README.md $(MAN1) $(MAN3)
	$(Q)MAKE="$(MAKE)" sh tests/install.sh $(BUILD)
endif

# Every example in README.md and the man pages, run as written (tests/examples.py).
check-examples: $(PROG) $(SHARED) $(PCFILE)
	$(Q)/usr/bin/python3 tests/examples.py run --sensim $(PROG) --build $(BUILD) README.md $(MAN1) $(MAN3)

# make install to a temporary DESTDIR and PREFIX, then use the installed tree.
check-install: all
	$(Q)MAKE="$(MAKE)" sh tests/install.sh $(BUILD)

# The Python package: python/sensim (pure Python) and its cffi extension
# (API mode, python/sensim_build.py) linked with this build's libsensim.a,
# both into $(BUILD)/python, so that PYTHONPATH=$(BUILD)/python imports it.
PYTHON  ?= /usr/bin/python3
PYBUILD  = $(abspath $(BUILD))/python
python: $(STATIC)
	@$(if $(Q),echo "  PY      $(PYBUILD)/sensim")
	$(Q)cd python && SENSIM_BUILD=$(abspath $(BUILD)) $(PYTHON) setup.py -q build_py --build-lib $(PYBUILD) \
	  build_ext --build-lib $(PYBUILD) --build-temp $(PYBUILD)/tmp >$(PYBUILD).log 2>&1 || { cat $(PYBUILD).log; exit 1; }

check-python: python $(PROG) $(STATIC)
	$(Q)SENSIM_BIN=$(abspath $(PROG)) SENSIM_SRCDIR=$(CURDIR) SENSIM_BUILD=$(abspath $(BUILD)) \
	  PYTHONPATH=$(PYBUILD) $(PYTHON) -m pytest -q -p no:cacheprovider python/tests
# A real Slurm: a 4-task job array and a dependent stitch on a private
# one-node cluster; SKIPPED (with the reason) where the daemons cannot start.
check-slurm: $(PROG)
	$(Q)sh tests/slurm.sh $(PROG)

# tests/lsan.supp: leaks inside Debian's libraries, not sensim's (assimp).
check-asan:
	$(Q)LSAN_OPTIONS=suppressions=$(CURDIR)/tests/lsan.supp $(MAKE) --no-print-directory BUILD=build-asan CFLAGS="-O1 -g" \
	  SAN="-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined" check

# Fuzzing: every tests/fuzz/fuzz_*.c is a libFuzzer target, linked with the
# library and the program's objects (main renamed, for in-process runs of a
# verb); fuzz_log.c makes one target per verb reading HDF5 logs.
FUZZ_CC   ?= clang-16
FUZZ_CXX  ?= clang++-16
# vptr off: its C++ runtime (render/draco.cc) is not linked by the C driver.
FUZZ_SAN   = -fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer
FUZZ_VERBS = info inject allan fit judge vepd
FUZZ_NAMES = $(filter-out log,$(patsubst tests/fuzz/fuzz_%.c,%,$(wildcard tests/fuzz/fuzz_*.c))) \
             $(addprefix log_,$(FUZZ_VERBS))
FUZZ_BIN   = $(addprefix $(BUILD)/fuzz/fuzz_,$(FUZZ_NAMES))
FUZZ_SECS ?= 20

fuzz:
	$(Q)$(MAKE) --no-print-directory BUILD=build-fuzz CC=$(FUZZ_CC) CXX=$(FUZZ_CXX) CFLAGS="-O1 -g" \
	  SAN="$(FUZZ_SAN) -fno-sanitize=vptr -fsanitize=fuzzer-no-link" fuzz-bins

fuzz-bins: $(FUZZ_BIN)

$(BUILD)/fuzz/cli.a: $(filter-out $(BUILD)/cli/main.o $(BUILD)/cli/render_plugin.o,$(CLI_OBJ)) cli/main.c
	@mkdir -p $(dir $@)
	$(Q)$(CC) $(ALL_CFLAGS) -Dmain=sensim_cli_main -c cli/main.c -o $(BUILD)/fuzz/cli_main.o
	$(Q)rm -f $@ && ar rcs $@ $(filter %.o,$^) $(BUILD)/fuzz/cli_main.o

$(BUILD)/fuzz/fuzz_log_%: tests/fuzz/fuzz_log.c tests/fuzz/fuzz.c tests/fuzz/fuzz.h $(BUILD)/fuzz/cli.a $(STATIC)
	@$(if $(Q),echo "  FUZZ    $@")
	$(Q)$(CC) $(ALL_CFLAGS) -DFUZZ_VERB='"$*"' -fsanitize=fuzzer $(ALL_LDFLAGS) -o $@ tests/fuzz/fuzz_log.c \
	  tests/fuzz/fuzz.c $(BUILD)/fuzz/cli.a $(STATIC) $(DEP_LIBS)

$(BUILD)/fuzz/fuzz_%: tests/fuzz/fuzz_%.c tests/fuzz/fuzz.c tests/fuzz/fuzz.h $(BUILD)/fuzz/cli.a $(STATIC)
	@$(if $(Q),echo "  FUZZ    $@")
	$(Q)$(CC) $(ALL_CFLAGS) -fsanitize=fuzzer $(ALL_LDFLAGS) -o $@ $< tests/fuzz/fuzz.c $(BUILD)/fuzz/cli.a \
	  $(STATIC) $(DEP_LIBS)

# Each target for FUZZ_SECS seconds on its committed corpus (new inputs go
# to a scratch directory, not into the corpus); any crash fails the stage.
fuzz-smoke: fuzz
	$(Q)sh tests/fuzz/run.sh build-fuzz/fuzz $(FUZZ_SECS) $(FUZZ_NAMES)

# valgrind memcheck: the library-level suites in one process each (CK_FORK=no,
# so the tests run under valgrind, not just check's parent), then a few runs
# of the program itself. The whole suite is too slow under valgrind for CI.
VALGRIND_SUITES ?= afile csv png pointcloud yaml units log gltf
VALGRIND = valgrind -q --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite \
           --child-silent-after-fork=yes
check-valgrind: $(RUNNER) $(PROG)
	$(Q)for s in $(VALGRIND_SUITES); do echo "valgrind: suite $$s"; \
	  CK_FORK=no CK_RUN_SUITE=$$s SENSIM_BIN=$(abspath $(PROG)) SENSIM_SRCDIR=$(CURDIR) \
	  CK_DEFAULT_TIMEOUT=$${CK_DEFAULT_TIMEOUT:-900} $(VALGRIND) $(RUNNER) >$(BUILD)/valgrind-$$s.log 2>&1 \
	  || { cat $(BUILD)/valgrind-$$s.log; exit 1; }; done
	$(Q)VALGRIND="$(VALGRIND)" sh tests/valgrind-cli.sh $(PROG)

$(BUILD)/bench/%: bench/%.c $(STATIC)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CC      $<")
	$(Q)$(CC) $(ALL_CFLAGS) -Ibench $(ALL_LDFLAGS) -o $@ $< $(STATIC) $(DEP_LIBS)

bench: $(BENCH_BIN) $(PROG)
	$(Q)for b in $(BENCH_BIN); do echo "== $$b"; SENSIM_BIN=$(abspath $(PROG)) SENSIM_SRCDIR=$(CURDIR) $$b || exit 1; done

demo: $(PROG)
	$(Q)SENSIM_DATA=$(CURDIR)/data $(PROG) demo --dir $(BUILD)/demo

lint-man:
	$(Q)sh tests/lint-man.sh $(MAN1) $(MAN3)

# The house style (.clang-format) applied in place; generated tables
# (scripts/*.py write them) are left as their generator wrote them.
CLANG_FORMAT ?= clang-format-16
FORMAT_SRC = $(filter-out io/rosmsg_defs.h lib/ziggurat_table.h lib/ziggurat_k.h,\
               $(LIB_SRC) $(CLI_SRC) $(TEST_SRC) $(BENCH_SRC) $(HEADERS) $(wildcard */*.h cli/*/*.h tests/fuzz/*.[ch]))
format:
	@command -v $(CLANG_FORMAT) >/dev/null || { echo "make format: $(CLANG_FORMAT) not found (apt-get install clang-format-16)"; exit 1; }
	$(Q)$(CLANG_FORMAT) -i $(sort $(FORMAT_SRC))

install: all
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(LIBDIR)/pkgconfig $(DESTDIR)$(INCLUDEDIR)/sensim \
	  $(DESTDIR)$(MANDIR)/man1 $(DESTDIR)$(MANDIR)/man3 $(DESTDIR)$(DATADIR)
	install -m 755 $(PROG) $(DESTDIR)$(BINDIR)/sensim
	install -d $(DESTDIR)$(LIBEXECDIR)
	install -m 644 $(PLUGIN) $(DESTDIR)$(LIBEXECDIR)/sensim-render.so
	install -m 644 $(STATIC) $(DESTDIR)$(LIBDIR)/libsensim.a
	install -m 755 $(SHARED) $(DESTDIR)$(LIBDIR)/libsensim.so.$(VERSION)
	ln -sf libsensim.so.$(VERSION) $(DESTDIR)$(LIBDIR)/libsensim.so.$(SOVERSION)
	ln -sf libsensim.so.$(VERSION) $(DESTDIR)$(LIBDIR)/libsensim.so
	$(call write_pc,$(DESTDIR)$(LIBDIR)/pkgconfig/sensim.pc)
	install -m 644 $(HEADERS) $(DESTDIR)$(INCLUDEDIR)/sensim/
	install -m 644 $(MAN1) $(DESTDIR)$(MANDIR)/man1/
	install -m 644 $(MAN3) $(DESTDIR)$(MANDIR)/man3/
	cp -R data/. $(DESTDIR)$(DATADIR)/

uninstall:
	rm -f $(DESTDIR)$(LIBEXECDIR)/sensim-render.so
	-rmdir $(DESTDIR)$(LIBEXECDIR)
	rm -f $(DESTDIR)$(BINDIR)/sensim $(DESTDIR)$(LIBDIR)/libsensim.a \
	  $(DESTDIR)$(LIBDIR)/libsensim.so $(DESTDIR)$(LIBDIR)/libsensim.so.$(SOVERSION) \
	  $(DESTDIR)$(LIBDIR)/libsensim.so.$(VERSION) $(DESTDIR)$(LIBDIR)/pkgconfig/sensim.pc
	rm -f $(addprefix $(DESTDIR)$(INCLUDEDIR)/sensim/,$(notdir $(HEADERS)))
	-rmdir $(DESTDIR)$(INCLUDEDIR)/sensim
	rm -f $(addprefix $(DESTDIR)$(MANDIR)/man1/,$(notdir $(MAN1)))
	rm -f $(addprefix $(DESTDIR)$(MANDIR)/man3/,$(notdir $(MAN3)))
	rm -rf $(DESTDIR)$(DATADIR)

clean:
	rm -rf $(BUILD) build-asan build-fuzz

-include $(LIB_OBJ:.o=.d) $(CLI_OBJ:.o=.d) $(TEST_OBJ:.o=.d) $(PTX:=.d)
