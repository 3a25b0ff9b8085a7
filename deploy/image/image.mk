# The wmap-webhook container image (deploy/image/README.md). Included by the top-level Makefile.
#
#   make image        build/image/wmap-webhook-VERSION.oci.tar and .docker.tar (buildah, as root)
#   make image-test   unpack the image into a root filesystem and run its entrypoint there
#                     (chroot as 65532): /readyz over TLS, the simulator, a 12-GPU JobSet stamped

IMAGE_DIR := $(BUILD)/image
IMAGE_OCI := $(IMAGE_DIR)/wmap-webhook-$(VERSION).oci.tar

.PHONY: image image-test check-image

image: $(IMAGE_OCI)

$(IMAGE_OCI): $(WEBHOOK) deploy/image/build.sh deploy/image/Containerfile
	sh deploy/image/build.sh $(WEBHOOK) $(IMAGE_DIR) $(VERSION)
	@ls -l $(IMAGE_DIR)/*.tar

image-test: $(IMAGE_OCI) $(SIM)
	SIM=$(abspath $(SIM)) bash tests/image/run.sh $(IMAGE_OCI)

# What make check runs: the image is built from the binary the tests run, which a sanitizer
# build is not, and buildah and chroot need root.
check-image:
	@if [ -n "$(SANFLAGS)" ]; then \
	  echo "image-test: skipped: SANITIZE=1 builds are not shipped (run make image-test)"; \
	elif [ "$$(id -u)" != 0 ]; then \
	  echo "image-test: skipped: buildah's vfs storage and chroot need root (run sudo make image-test)"; \
	else \
	  $(MAKE) --no-print-directory image-test; \
	fi
