# Strait's container image: the static binary and CA roots on an empty base, so that the
# image needs no registry to build and holds nothing but Strait.
#
# Build it with `make image` (scripts/image.sh build), which puts into the build context a
# linux binary built with CGO_ENABLED=0 (`strait`) and the build host's CA bundle
# (`ca-certificates.crt`, from /etc/ssl/certs/ca-certificates.crt). Go's TLS reads that
# bundle when a cluster's ssl.truststore.* is unset, as Java trusts the JDK's roots.
FROM scratch

ARG VERSION=unknown
ARG COMMIT=unknown
LABEL org.opencontainers.image.title="strait" \
      org.opencontainers.image.description="Kafka cross-cluster replication, a drop-in replacement for MirrorMaker 2" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.revision="${COMMIT}"

COPY ca-certificates.crt /etc/ssl/certs/ca-certificates.crt
COPY strait /strait

# Not root: 65532 is the conventional "nonroot" id of distroless images. It needs no
# /etc/passwd entry; Kubernetes' runAsNonRoot accepts it because it is numeric.
USER 65532:65532

# The REST API and health probes (strait.api.listen; loopback unless the file says otherwise).
EXPOSE 8083

ENTRYPOINT ["/strait"]
CMD ["run", "-c", "/etc/strait/mm2.properties"]
