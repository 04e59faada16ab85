# onyxd on Debian 12, built from this repository.
#   docker build -t onyx . && docker run -p 8001:8001 -p 8002:8002 onyx
FROM debian:12 AS build
WORKDIR /src
COPY . .
RUN bash scripts/install-deps.sh \
 && cmake -S . -B build -G Ninja -DONYX_BUILD_TESTS=OFF -DONYX_BUILD_BENCH=OFF \
 && cmake --build build --target onyxd onyx demo_models

FROM debian:12
RUN apt-get update -qq && apt-get install -y -qq --no-install-recommends \
      libgrpc++1.51 libprotobuf32 libonnx1 libdnnl2 libspdlog1.10 libprometheus-cpp-pull1.0 \
      libyaml-cpp0.7 libgomp1 libabsl20220623 \
 && rm -rf /var/lib/apt/lists/*
COPY --from=build /src/build/onyxd /src/build/onyx /opt/onyx/
COPY --from=build /src/build/demo_models /opt/onyx/demo_models
EXPOSE 8001 8002
ENTRYPOINT ["/opt/onyx/onyxd", "--grpc-address", "0.0.0.0:8001", "--metrics-address", "0.0.0.0:8002"]
