# wmap-webhook: the TLS admission server (webhook/*.c over libwmap-kube.a and libwmap.a), its certificates and
# its TLS tests. Included by the top-level Makefile.

WEBHOOK_SRC := $(wildcard webhook/*.c)
WEBHOOK_OBJ := $(WEBHOOK_SRC:webhook/%.c=$(BUILD)/webhook/%.o)
WEBHOOK     := $(BUILD)/wmap-webhook

all: $(WEBHOOK)

$(BUILD)/webhook/%.o: webhook/%.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -c $< -o $@

# The API client (libwmap-kube.a) watches Kartas and WorkloadPolicies; it comes before
# libwmap.a, whose utilities it uses.
$(WEBHOOK): $(WEBHOOK_OBJ) $(LIBKUBE) $(LIBWMAP)
	$(CC) $(LDFLAGS) -o $@ $(WEBHOOK_OBJ) $(LIBKUBE) $(LIBWMAP) $(CORE_LIBS) -lmicrohttpd -lgnutls

# A CA and an ECDSA serving certificate for SERVICE.NAMESPACE.svc (openssl CLI); prints the
# caBundle for the webhook configurations.
CERTS_DIR ?= $(BUILD)/certs
SERVICE   ?= wmap-webhook
NAMESPACE ?= wmap-system
.PHONY: certs check-webhook
certs:
	sh certs/gen-certs.sh --service $(SERVICE) --namespace $(NAMESPACE) --out $(CERTS_DIR)

# The webhook's parts in process (Criterion): the state in force, the metrics providers and
# the Prometheus writer, linked with their two objects only.
WEBHOOK_PARTS := $(BUILD)/webhook-parts-tests
$(BUILD)/obj/tests/webhook/test_parts.o: CFLAGS += -Iwebhook
$(WEBHOOK_PARTS): $(BUILD)/obj/tests/webhook/test_parts.o $(BUILD)/webhook/inforce.o $(BUILD)/webhook/metrics.o $(LIBWMAP)
	$(CC) $(LDFLAGS) -o $@ $^ $(CORE_LIBS) -lcriterion

# The parts first, then the TLS tests against a running server (real curl, real
# AdmissionReviews from tests/fixtures). With the plugin built, its offline `mutate` is
# checked against the server as well.
check-webhook: $(WEBHOOK) $(WEBHOOK_PARTS)
	LSAN_OPTIONS=suppressions=$(CURDIR)/tests/lsan.supp $(WEBHOOK_PARTS) --jobs 2
	sh tests/webhook/run.sh $(WEBHOOK) --plugin $(PLUGIN)

# The TLS tests first; the simulator's e2e:: rule (tests/apiserver-sim/sim.mk, included after
# this file) then runs every tests/e2e/scenarios/*.sh, webhook-*.sh among them, which find
# the server through $WEBHOOK.
e2e: export WEBHOOK := $(abspath $(WEBHOOK))
e2e:: check-webhook
