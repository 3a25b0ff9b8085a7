# The API server simulator, its test webhook and the end-to-end harness.
# Included by the top-level Makefile; uses its $(BUILD), $(CC), $(CFLAGS), $(LDFLAGS), $(PLUGIN).

SIM          := $(BUILD)/apiserver-sim
SIM_HOOK     := $(BUILD)/sim-testhook
SIM_SRC      := $(filter-out tests/apiserver-sim/testhook.c,$(wildcard tests/apiserver-sim/*.c))
SIM_OBJ      := $(SIM_SRC:%.c=$(BUILD)/%.o)
SIM_HOOK_OBJ := $(BUILD)/tests/apiserver-sim/testhook.o
SIM_LIBS     := -lmicrohttpd -lgnutls -ljansson -lcurl -lssl -lcrypto -lyaml -lpthread -lm

$(SIM): $(SIM_OBJ)
	$(CC) $(LDFLAGS) -o $@ $(SIM_OBJ) $(SIM_LIBS)

$(SIM_HOOK): $(SIM_HOOK_OBJ)
	$(CC) $(LDFLAGS) -o $@ $(SIM_HOOK_OBJ) -lmicrohttpd -ljansson -lpthread

.PHONY: sim
sim: $(SIM) $(SIM_HOOK)

# The plugin is built too, so scenarios can put it on PATH (plugin_on_path in lib.sh).
e2e:: $(SIM) $(SIM_HOOK) $(PLUGIN)
	SIM=$(abspath $(SIM)) SIM_TESTHOOK=$(abspath $(SIM_HOOK)) PLUGIN=$(abspath $(PLUGIN)) bash tests/e2e/run.sh

# Only the scenarios named in E2E_ONLY, e.g. make e2e-scenarios E2E_ONLY="webhook-gang-volcano"
# (.ci/run runs the ones that need ../shared again under SANITIZE=1 this way).
.PHONY: e2e-scenarios
e2e-scenarios: $(SIM) $(SIM_HOOK) $(PLUGIN) $(WEBHOOK)
	SIM=$(abspath $(SIM)) SIM_TESTHOOK=$(abspath $(SIM_HOOK)) PLUGIN=$(abspath $(PLUGIN)) \
	  WEBHOOK=$(abspath $(WEBHOOK)) bash tests/e2e/run.sh $(E2E_ONLY)
