# The mediaspec image: the static binary built by `make build` (CGO_ENABLED=0) on scratch, so
# nothing is pulled from a registry. `make image` builds it as mediaspec:dev; it serves the mock.
#
# The build context holds only what .dockerignore lets through: bin/mediaspec and the CA bundle
# that `make image` copies from the build machine to bin/ca-certificates.crt, and bin/rootfs (an
# empty /tmp).
FROM scratch

ARG VERSION=dev
LABEL org.opencontainers.image.title="mediaspec" \
      org.opencontainers.image.description="Contract kit for the media generation API: the stateful mock, the conformance suite, the webhook receiver and the live proxy" \
      org.opencontainers.image.version="${VERSION}"

COPY bin/ca-certificates.crt /etc/ssl/certs/ca-certificates.crt
COPY bin/mediaspec /mediaspec
# /tmp for the mock's upload spool files (scratch has no file system of its own).
COPY --chown=65534:65534 bin/rootfs/ /

# nobody:nogroup; scratch has no /etc/passwd, so the ids are numeric.
USER 65534:65534
EXPOSE 8080
ENTRYPOINT ["/mediaspec"]
CMD ["mock", "--addr", "0.0.0.0:8080"]
