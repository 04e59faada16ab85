# onyxd on Debian 12. Two targets share the runtime stage (deploy/README.md, The image):
#
#   runtime (the default): compiles onyxd, onyx and the demo models in the build stage.
#     podman build --format docker -t onyx .
#   runtime-prebuilt: copies them from a build tree staged by scripts/image-context.sh,
#   which is then the whole build context; nothing is compiled.
#     bash scripts/image-context.sh build /tmp/onyx-context
#     podman build --format docker --target runtime-prebuilt -f Dockerfile -t onyx /tmp/onyx-context
#
# --format docker keeps the HEALTHCHECK (the OCI image format has no field for it).
# Run: podman run -p 8001:8001 -p 8002:8002 onyx [onyxd flags...]

# Runtime libraries only: what `ldd onyxd` and `ldd onyx` resolve, by Debian package.
FROM debian:12 AS runtime-base
RUN apt-get update -qq \
 && apt-get install -y -qq --no-install-recommends \
      libgrpc++1.51 libgrpc29 libprotobuf32 libonnx1 libdnnl2 libhwy1 libspdlog1.10 libfmt9 \
      libprometheus-cpp-core1.0 libprometheus-cpp-pull1.0 libyaml-cpp0.7 libgomp1 libabsl20220623 \
 && apt-get clean && rm -rf /var/lib/apt/lists/* \
 && groupadd --gid 65532 onyx \
 && useradd --uid 65532 --gid 65532 --no-create-home --home-dir /nonexistent --shell /usr/sbin/nologin onyx
ARG ONYX_VERSION=0.1.0
ARG REVISION=unknown
LABEL org.opencontainers.image.title="onyxd" \
      org.opencontainers.image.description="gRPC model server (KServe v2 protocol) with an embedded ONNX engine; serves the demo models unless given --model-repository" \
      org.opencontainers.image.version="${ONYX_VERSION}" \
      org.opencontainers.image.revision="${REVISION}" \
      org.opencontainers.image.base.name="debian:12"
# Listen beyond loopback inside the container. Variables, not flags, so that
# flags appended to `podman run IMAGE` add to them; a --config file or a flag
# that sets an address wins (README.md, onyxd flags).
ENV ONYX_GRPC_ADDRESS=0.0.0.0:8001 \
    ONYX_METRICS_ADDRESS=0.0.0.0:8002
EXPOSE 8001 8002
# Numeric, so that Kubernetes' runAsNonRoot can verify it (deployment.yaml runs as 65532).
USER 65532:65532
# onyx health reads ONYX_GRPC_ADDRESS too. Models load and warm before
# SERVING: the start period covers that; the timeout covers a busy server.
HEALTHCHECK --interval=10s --timeout=5s --start-period=300s --retries=3 \
  CMD ["/opt/onyx/onyx", "health", "--timeout", "3"]
ENTRYPOINT ["/opt/onyx/onyxd"]
CMD []

# Before the build stage, so that even a builder that runs every stage up to
# --target compiles nothing for this one.
FROM runtime-base AS runtime-prebuilt
COPY onyx /opt/onyx

FROM debian:12 AS build
WORKDIR /src
# Dependencies first: their layer is reused while only sources change.
COPY scripts/install-deps.sh scripts/install-deps.sh
RUN bash scripts/install-deps.sh --serve
COPY . .
RUN cmake -S . -B build -G Ninja -DONYX_BUILD_TESTS=OFF -DONYX_BUILD_BENCH=OFF \
 && cmake --build build --target onyxd onyx demo_models \
 && bash scripts/image-context.sh build /context

FROM runtime-base AS runtime
COPY --from=build /context/onyx /opt/onyx
