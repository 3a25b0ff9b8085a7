# wmap-webhook: the TLS admission server (webhook/*.c over libwmap.a), its certificates and
# its TLS tests. Included by the top-level Makefile.

WEBHOOK_SRC := $(wildcard webhook/*.c)
WEBHOOK_OBJ := $(WEBHOOK_SRC:webhook/%.c=$(BUILD)/webhook/%.o)
WEBHOOK     := $(BUILD)/wmap-webhook

all: $(WEBHOOK)

$(BUILD)/webhook/%.o: webhook/%.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -c $< -o $@

$(WEBHOOK): $(WEBHOOK_OBJ) $(LIBWMAP)
	$(CC) $(LDFLAGS) -o $@ $(WEBHOOK_OBJ) $(LIBWMAP) $(CORE_LIBS) -lmicrohttpd -lgnutls

# A CA and an ECDSA serving certificate for SERVICE.NAMESPACE.svc (openssl CLI); prints the
# caBundle for the webhook configurations.
CERTS_DIR ?= $(BUILD)/certs
SERVICE   ?= wmap-webhook
NAMESPACE ?= wmap-system
.PHONY: certs check-webhook
certs:
	sh certs/gen-certs.sh --service $(SERVICE) --namespace $(NAMESPACE) --out $(CERTS_DIR)

# TLS tests against a running server (real curl, real AdmissionReviews from tests/fixtures).
check-webhook: $(WEBHOOK)
	sh tests/webhook/run.sh $(WEBHOOK)

e2e:: check-webhook
