# herd in a small image, for `herd k8s render --image ...` and any container runner.
#   docker build -t registry.example/herd:0.1 .
#   docker run --rm registry.example/herd:0.1 run --rate 100 -d 10s http://target.example/
# Stage 1 builds the release binary; stage 2 is a distroless base with glibc only (herd's TLS
# roots are compiled in), running as an unprivileged user.

FROM rust:1-bookworm AS build
WORKDIR /src
COPY . .
RUN cargo build --release --locked -p herd-cli \
 && strip target/release/herd

FROM gcr.io/distroless/cc-debian12:nonroot
COPY --from=build /src/target/release/herd /usr/local/bin/herd
# The same unprivileged user the Kubernetes manifests ask for (runAsUser 10001).
USER 10001:10001
ENTRYPOINT ["/usr/local/bin/herd"]
CMD ["--help"]
